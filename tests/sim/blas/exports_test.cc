// What the two library variants export: read from each file's ELF dynamic symbol table (an
// nm-style check) and through dlopen/dlsym, and the legacy variant's GemmEx used through its
// mangled name.
#include <mublas.h>

#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace {

const char kGemmEx[] =
    "_Z12mublasGemmExP15_mublasHandle_t17mublasOperation_tS1_iiiPKvS3_14musaDataType_tiS3_S4_iS3_"
    "PvS4_i19mublasComputeType_t16mublasGemmAlgo_t";
const char kGemmExDataType[] =
    "_Z12mublasGemmExP15_mublasHandle_t17mublasOperation_tS1_iiiPKvS3_14musaDataType_tiS3_S4_iS3_"
    "PvS4_iS4_16mublasGemmAlgo_t";

// Defined global / weak symbols of an ELF64 shared object's .dynsym.
std::set<std::string> defined_dynamic_symbols(const char* path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::set<std::string> out;
  if (b.size() < sizeof(Elf64_Ehdr)) return out;
  Elf64_Ehdr eh;
  std::memcpy(&eh, b.data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    return out;
  auto shdr = [&](size_t i) {
    Elf64_Shdr s;
    std::memcpy(&s, b.data() + eh.e_shoff + i * eh.e_shentsize, sizeof s);
    return s;
  };
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr s = shdr(i);
    if (s.sh_type != SHT_DYNSYM) continue;
    const Elf64_Shdr str = shdr(s.sh_link);
    for (size_t off = 0; off + sizeof(Elf64_Sym) <= s.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, b.data() + s.sh_offset + off, sizeof sym);
      const int bind = ELF64_ST_BIND(sym.st_info);
      if (sym.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK)) continue;
      out.insert(b.data() + str.sh_offset + sym.st_name);
    }
  }
  return out;
}

bool allowed_name(const std::string& s) {
  for (const char* p :
       {"mublas", "_Z12mublasGemmEx", "_Z19mublasGemmBatchedEx", "_Z26mublasGemmStridedBatchedEx"})
    if (s.rfind(p, 0) == 0) return true;
  return false;
}

struct Variant {
  const char* path;
  bool legacy;
};
const Variant kVariants[] = {{MUBLAS_SIM_PATH, false}, {MUBLAS_SIM_LEGACY_PATH, true}};

TEST(Exports, OnlyMublasNamesAndTheGemmExFamily) {
  for (const Variant& v : kVariants) {
    const auto syms = defined_dynamic_symbols(v.path);
    ASSERT_GT(syms.size(), 250u) << v.path;
    for (const std::string& s : syms) EXPECT_TRUE(allowed_name(s)) << v.path << ": " << s;
    EXPECT_EQ(!v.legacy, syms.count("mublasGetStatusString") == 1) << v.path;
    EXPECT_EQ(v.legacy, syms.count("mublasStatus_to_string") == 1) << v.path;
    EXPECT_EQ(!v.legacy, syms.count(kGemmEx) == 1) << v.path;
    EXPECT_EQ(1u, syms.count(kGemmExDataType)) << v.path;
    const auto n_mangled = std::count_if(
        syms.begin(), syms.end(), [](const std::string& s) { return s.rfind("_Z", 0) == 0; });
    EXPECT_EQ(v.legacy ? 3 : 6, n_mangled) << v.path;
    // Everything else is common to both: the same C entry points.
    EXPECT_EQ(1u, syms.count("mublasSgemm"));
    EXPECT_EQ(1u, syms.count("mublasZgetrsBatched"));
    EXPECT_EQ(0u, syms.count("mublasSgemm_v2")) << "muBLAS has no _v2 names";
    EXPECT_EQ(0u, syms.count("mublasSgemm_64")) << "muBLAS has no _64 names";
  }
}

TEST(Exports, DlsymOfBothVariantsAndLegacyGemmExWorks) {
  for (const Variant& v : kVariants) {
    void* lib = dlopen(v.path, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(nullptr, lib) << dlerror();
    EXPECT_EQ(!v.legacy, dlsym(lib, "mublasGetStatusString") != nullptr);
    EXPECT_EQ(v.legacy, dlsym(lib, "mublasStatus_to_string") != nullptr);
    using StatusText = const char* (*)(mublasStatus_t);
    auto text = reinterpret_cast<StatusText>(
        dlsym(lib, v.legacy ? "mublasStatus_to_string" : "mublasGetStatusString"));
    ASSERT_NE(nullptr, text);
    EXPECT_NE(std::string(text(MUBLAS_STATUS_SUCCESS)), text(MUBLAS_STATUS_INVALID_VALUE));
    // The data-type compute form of GemmEx, through its mangled name, in both variants.
    using Create = mublasStatus_t (*)(mublasHandle_t*);
    using Destroy = mublasStatus_t (*)(mublasHandle_t);
    using GemmExDt = mublasStatus_t (*)(mublasHandle_t, mublasOperation_t, mublasOperation_t, int,
                                        int, int, const void*, const void*, musaDataType_t, int,
                                        const void*, musaDataType_t, int, const void*, void*,
                                        musaDataType_t, int, musaDataType_t, mublasGemmAlgo_t);
    auto create = reinterpret_cast<Create>(dlsym(lib, "mublasCreate"));
    auto destroy = reinterpret_cast<Destroy>(dlsym(lib, "mublasDestroy"));
    auto gemm = reinterpret_cast<GemmExDt>(dlsym(lib, kGemmExDataType));
    ASSERT_TRUE(create && destroy && gemm);
    mublasHandle_t h = nullptr;
    ASSERT_EQ(MUBLAS_STATUS_SUCCESS, create(&h));
    const double A[4] = {1, 2, 3, 4}, B[4] = {5, 6, 7, 8}, alpha = 1, beta = 0;
    double C[4] = {};
    ASSERT_EQ(MUBLAS_STATUS_SUCCESS,
              gemm(h, MUBLAS_OP_N, MUBLAS_OP_N, 2, 2, 2, &alpha, A, MUSA_R_64F, 2, B, MUSA_R_64F, 2,
                   &beta, C, MUSA_R_64F, 2, MUSA_R_64F, MUBLAS_GEMM_DEFAULT));
    ASSERT_EQ(MUBLAS_STATUS_SUCCESS, destroy(h));  // waits for the stream
    // Column-major [1 3; 2 4] [5 7; 6 8] = [23 31; 34 46].
    EXPECT_EQ(23, C[0]);
    EXPECT_EQ(34, C[1]);
    EXPECT_EQ(31, C[2]);
    EXPECT_EQ(46, C[3]);
    dlclose(lib);
  }
}

}  // namespace
