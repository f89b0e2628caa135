// symbols/*.txt against reality: NVIDIA's libcudart/libcublas/libcublasLt .so.12 and .13 and
// libnccl.so.2 export tables (read from their ELF dynamic symbol tables) and the built
// libtorchada.so's.
//  - every function NVIDIA exports has a row for that ABI (a new CUDA release fails here);
//  - no row names a function NVIDIA does not export;
//  - libtorchada.so exports each in the version node of its ABI, and nothing else.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "elf_exports.h"

namespace {

std::set<std::string> table_names(const std::string& abi,
                                  const std::string& table = TORCHADA_SYMBOLS_TABLE) {
  std::ifstream in(table);
  EXPECT_TRUE(in.good()) << table;
  std::set<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, abis;
    fields >> name >> abis;
    if (("," + abis + ",").find("," + abi + ",") != std::string::npos) out.insert(name);
  }
  return out;
}

std::set<std::string> nvidia_names(const char* path, const std::string& node) {
  ElfExports e = read_elf_exports(path);
  EXPECT_EQ(e.error, "");
  std::set<std::string> out;
  for (const std::string& n : e.names) {
    auto at = n.find('@');
    EXPECT_NE(at, std::string::npos) << n << " is unversioned in NVIDIA's library";
    if (at != std::string::npos && n.substr(n.rfind('@') + 1) == node) out.insert(n.substr(0, at));
  }
  return out;
}

void check_abi(const char* nvidia_path, const std::string& abi) {
  const std::string node = "libcudart.so." + abi;
  std::set<std::string> nvidia = nvidia_names(nvidia_path, node);
  std::set<std::string> table = table_names(abi);
  ASSERT_GT(nvidia.size(), 400u);
  for (const auto& n : nvidia) EXPECT_TRUE(table.count(n)) << n << "@" << node << " has no row";
  for (const auto& n : table)
    EXPECT_TRUE(nvidia.count(n)) << n << " (" << abi << ") is not NVIDIA's";

  ElfExports ours = read_elf_exports(TORCHADA_SHIM_PATH);
  ASSERT_EQ(ours.error, "");
  for (const auto& n : table) {
    const bool exported = ours.names.count(n + "@@" + node) || ours.names.count(n + "@" + node);
    EXPECT_TRUE(exported) << "libtorchada.so lacks " << n << "@" << node;
  }
}

TEST(Exports, Cudart13TableMatchesNvidiaAndShim) { check_abi(TORCHADA_CUDART13, "13"); }
TEST(Exports, Cudart12TableMatchesNvidiaAndShim) { check_abi(TORCHADA_CUDART12, "12"); }

// cuBLAS, cuBLASLt: versioned like libcudart. NVIDIA also exports a few non-API names from the
// same node (the table lists them as unsupported, so every export has a row).
void check_library(const char* nvidia_path, const std::string& lib, const std::string& abi,
                   std::size_t at_least) {
  const std::string node = lib + ".so." + abi;
  const std::string table_path = std::string(TORCHADA_SYMBOLS_DIR) + "/" + lib.substr(3) + ".txt";
  std::set<std::string> nvidia = nvidia_names(nvidia_path, node);
  std::set<std::string> table = table_names(abi, table_path);
  ASSERT_GT(nvidia.size(), at_least);
  for (const auto& n : nvidia) EXPECT_TRUE(table.count(n)) << n << "@" << node << " has no row";
  for (const auto& n : table)
    EXPECT_TRUE(nvidia.count(n)) << n << " (" << abi << ") is not NVIDIA's";
  ElfExports ours = read_elf_exports(TORCHADA_SHIM_PATH);
  ASSERT_EQ(ours.error, "");
  for (const auto& n : table) {
    const bool exported = ours.names.count(n + "@@" + node) || ours.names.count(n + "@" + node);
    EXPECT_TRUE(exported) << "libtorchada.so lacks " << n << "@" << node;
  }
}

TEST(Exports, Cublas13) { check_library(TORCHADA_CUBLAS13, "libcublas", "13", 700); }
TEST(Exports, Cublas12) { check_library(TORCHADA_CUBLAS12, "libcublas", "12", 700); }
TEST(Exports, CublasLt13) { check_library(TORCHADA_CUBLASLT13, "libcublasLt", "13", 150); }
TEST(Exports, CublasLt12) { check_library(TORCHADA_CUBLASLT12, "libcublasLt", "12", 150); }

// libnccl.so.2 is unversioned: every nccl*/pnccl* function it exports has a row, and ours carries
// them (in a node named after the library, which unversioned references bind to).
TEST(Exports, Nccl2) {
  ElfExports e = read_elf_exports(TORCHADA_NCCL2);
  ASSERT_EQ(e.error, "");
  std::set<std::string> nvidia;
  for (const std::string& n : e.names)
    if (n.rfind("nccl", 0) == 0 || n.rfind("pnccl", 0) == 0)
      nvidia.insert(n.substr(0, n.find('@')));
  std::set<std::string> table = table_names("2", std::string(TORCHADA_SYMBOLS_DIR) + "/nccl.txt");
  ASSERT_GT(nvidia.size(), 50u);
  for (const auto& n : nvidia) EXPECT_TRUE(table.count(n)) << n << " has no row in nccl.txt";
  for (const auto& n : table) EXPECT_TRUE(nvidia.count(n)) << n << " is not NVIDIA's";
  ElfExports ours = read_elf_exports(TORCHADA_SHIM_PATH);
  for (const auto& n : table)
    EXPECT_TRUE(ours.names.count(n + "@@libnccl.so.2")) << "libtorchada.so lacks " << n;
}

// The names in the first column of one of symbols/'s tables.
std::set<std::string> row_names(const char* file) {
  std::ifstream in(std::string(TORCHADA_SYMBOLS_DIR) + "/" + file);
  EXPECT_TRUE(in.good()) << file;
  std::set<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name;
    fields >> name;
    out.insert(name);
  }
  return out;
}

// The CUDA driver: NVIDIA's libcuda.so.1 is unversioned; the toolkit's stub lists every function
// of its release. Each has a row, and libtorchada.so exports every row in node libcuda.so.1
// (the rows also cover what newer cuda.h headers declare: symbols/gen_driver.py checks those).
TEST(Exports, Driver) {
  ElfExports stub = read_elf_exports(TORCHADA_LIBCUDA_STUB);
  ASSERT_EQ(stub.error, "") << TORCHADA_LIBCUDA_STUB;
  std::set<std::string> nvidia;
  for (const std::string& n : stub.names)
    if (n.rfind("cu", 0) == 0) nvidia.insert(n.substr(0, n.find('@')));
  const std::set<std::string> rows = row_names("driver.txt");
  ASSERT_GT(nvidia.size(), 600u);
  for (const auto& n : nvidia) EXPECT_TRUE(rows.count(n)) << n << " has no row in driver.txt";
  ElfExports ours = read_elf_exports(TORCHADA_SHIM_PATH);
  ASSERT_EQ(ours.error, "");
  for (const auto& n : rows)
    EXPECT_TRUE(ours.names.count(n + "@@libcuda.so.1")) << "libtorchada.so lacks " << n;
}

// CUPTI: every cupti* function NVIDIA's libcupti.so.13 exports has a row in cupti.txt (NVTX's
// injection entry points, InitializeInjectionNvtx*, are left out on purpose: see the table), no
// row names a function NVIDIA's lacks, and libtorchada.so exports every row in node
// libcupti.so.13.
TEST(Exports, Cupti) {
  ElfExports lib = read_elf_exports(TORCHADA_CUPTI13);
  ASSERT_EQ(lib.error, "") << TORCHADA_CUPTI13;
  std::set<std::string> nvidia;
  for (const std::string& n : lib.names)
    if (n.rfind("cupti", 0) == 0) nvidia.insert(n.substr(0, n.find('@')));
  const std::set<std::string> rows = row_names("cupti.txt");
  ASSERT_GT(nvidia.size(), 150u);
  for (const auto& n : nvidia) EXPECT_TRUE(rows.count(n)) << n << " has no row in cupti.txt";
  for (const auto& n : rows) EXPECT_TRUE(nvidia.count(n)) << n << " is not NVIDIA's";
  ElfExports ours = read_elf_exports(TORCHADA_SHIM_PATH);
  ASSERT_EQ(ours.error, "");
  for (const auto& n : rows)
    EXPECT_TRUE(ours.names.count(n + "@@libcupti.so.13")) << "libtorchada.so lacks " << n;
}

TEST(Exports, ShimExportsNothingOutsideTheVersionNodes) {
  ElfExports ours = read_elf_exports(TORCHADA_SHIM_PATH);
  ASSERT_EQ(ours.error, "");
  for (const auto& n : ours.names) {
    const std::string node = n.substr(n.rfind('@') + 1);
    const bool known =
        node == "libcudart.so.12" || node == "libcudart.so.13" || node == "libcublas.so.12" ||
        node == "libcublas.so.13" || node == "libcublasLt.so.12" || node == "libcublasLt.so.13" ||
        node == "libnccl.so.2" || node == "libcuda.so.1" || node == "libcupti.so.13" ||
        // the ops library's way in (shim/cupti/private.cc)
        node == "TORCHADA_PRIVATE_1";
    EXPECT_TRUE(known) << n << " leaks from libtorchada.so";
  }
}

TEST(Exports, MalformedFilesGiveErrors) {
  EXPECT_NE(read_elf_exports("/nonexistent").error, "");
  EXPECT_NE(read_elf_exports(TORCHADA_SYMBOLS_TABLE).error, "");  // a text file
}

}  // namespace
