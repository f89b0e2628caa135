// torchada-check's pieces on inputs whose right answer is known by construction: table parsing,
// the fat binary walk, and whole-file scans of synthetic ELF files (tools/check/testing).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <fstream>
#include <sstream>

#include "check.h"
#include "classify.h"
#include "elf_builder.h"
#include "elf_scan.h"
#include "fatbin.h"
#include "report.h"
#include "tables.h"

namespace torchada::check {
namespace {

namespace tb = testing;

const char kTable[] = R"(# a table
# name abi disposition target note
cudaMalloc            12,13  forward      musaMalloc
cudaGetDeviceProperties 12,13 translate   musaGetDeviceProperties   field by field
cudaCreateTextureObject 12,13 unsupported -        textures are read by kernels
cudaLaunchKernel      12,13  kernel       -        takes a kernel
cudaOnlyIn13          13     forward      musaX
cudaSplit             12     forward      musaSplit12
cudaSplit             13     unsupported  -        changed in 13
__cudaRegisterFatBinary 12,13 shim        -
cudaFuture            12,13  teleport     -        a disposition from the future
)";

Tables MakeTables(std::initializer_list<std::pair<const char*, const char*>> files) {
  char dir[] = "/tmp/torchada-check-tables-XXXXXX";
  EXPECT_NE(mkdtemp(dir), nullptr);
  for (const auto& [name, text] : files) {
    std::ofstream(std::string(dir) + "/" + name) << text;
  }
  Tables t;
  std::string err;
  EXPECT_TRUE(t.LoadDirectory(dir, &err)) << err;
  for (const auto& [name, text] : files) std::remove((std::string(dir) + "/" + name).c_str());
  rmdir(dir);
  return t;
}

TEST(Tables, ParsesRowsNotesAndVersions) {
  Table t;
  ASSERT_TRUE(ParseTable("cudart", "cudart.txt", kTable, &t));
  EXPECT_EQ(t.library, "cudart");
  EXPECT_EQ(t.rows.size(), 9u);
  EXPECT_TRUE(t.warnings.empty());
  const Row& tex = t.rows[t.by_name.find("cudaCreateTextureObject")->second];
  EXPECT_EQ(tex.disposition, "unsupported");
  EXPECT_EQ(tex.note, "textures are read by kernels");
  EXPECT_EQ(tex.line, 5);
  EXPECT_EQ(tex.abis, (std::vector<std::string>{"12", "13"}));
  EXPECT_EQ(t.by_name.count("cudaSplit"), 2u);
  EXPECT_TRUE(t.uses_abi("12"));
  EXPECT_TRUE(t.uses_abi("13"));
  EXPECT_FALSE(t.uses_abi("2"));
}

TEST(Tables, MalformedLinesAreReportedAndSkipped) {
  Table t;
  ASSERT_TRUE(ParseTable("x", "x.txt",
                         "cudaA 12 forward musaA\n"
                         "9bad 12 forward musaB\n"
                         "cudaC twelve forward musaC\n"
                         "cudaD 12,,13 forward musaD\n"
                         "cudaE 12 forward\n"
                         "cudaA 12 unsupported - duplicate\n",
                         &t));
  EXPECT_EQ(t.rows.size(), 1u);
  ASSERT_EQ(t.warnings.size(), 5u);
  EXPECT_NE(t.warnings[0].find("x.txt:2:"), std::string::npos) << t.warnings[0];
  EXPECT_NE(t.warnings[4].find("already has a row"), std::string::npos) << t.warnings[4];
}

TEST(Tables, FilesWithoutRowsAreNotTables) {
  Table t;
  EXPECT_FALSE(ParseTable("musart_extra", "musart_extra.txt", "# names\nmusaA\nmusaB\n", &t));
  EXPECT_FALSE(ParseTable("enum_map", "enum_map.txt", "CUDA_A MUSA_A\nCUDA_B MUSA_B\n", &t));
  EXPECT_FALSE(ParseTable("empty", "empty.txt", "", &t));
}

// driver.txt describes libcuda.so.1, whose functions libtorchada.so exports: a direct import is
// classified by its row, and a name without a row is one the replacement does not define.
TEST(Tables, DriverTableServesLibcudaExports) {
  Tables ts = MakeTables({{"driver.txt", "cuInit 2000 forward muInit\n"},
                          {"cudart.txt", "cudaGetDriverEntryPoint 12,13 shim -\n"}});
  const Table* driver = ts.ForLibrary("cuda");
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->stem, "driver");
  EXPECT_TRUE(driver->exported);
  ElfScan scan;
  scan.needed = {"libcuda.so.1"};
  scan.imports = {{"cuInit", "", "", false}, {"cuNoSuchDriverCall", "", "", false}};
  const FileReport r = Classify("x", scan, ts);
  ASSERT_EQ(r.imports.size(), 2u);
  const ImportReport& init = r.imports[0].name == "cuInit" ? r.imports[0] : r.imports[1];
  const ImportReport& none = r.imports[0].name == "cuInit" ? r.imports[1] : r.imports[0];
  EXPECT_EQ(init.library, "libcuda.so.1");
  EXPECT_EQ(init.disposition, "forward");
  EXPECT_EQ(init.category, Category::kForwarded);
  EXPECT_TRUE(none.undefined) << none.reason;
  EXPECT_EQ(r.verdict, Verdict::kWillNotLoad);
}

TEST(Tables, EmbeddedTablesAreTheSourceFilesParsedCleanly) {
  Tables ts;
  ts.LoadEmbedded();
  const Table* cudart = ts.ForLibrary("cudart");
  ASSERT_NE(cudart, nullptr);
  for (const Table& t : ts.tables()) {
    EXPECT_TRUE(t.warnings.empty()) << t.file << ": " << t.warnings.front();
    // Independent count: the source file's non-comment, non-blank lines.
    std::ifstream in(std::string(TORCHADA_SYMBOLS_DIR) + "/" + t.file);
    ASSERT_TRUE(in) << t.file;
    size_t rows = 0;
    for (std::string line; std::getline(in, line);) {
      const size_t b = line.find_first_not_of(" \t\r");
      if (b != std::string::npos && line[b] != '#') ++rows;
    }
    EXPECT_EQ(t.rows.size(), rows) << t.file;
  }
}

TEST(Names, CudaLookingNamesAndFamilies) {
  EXPECT_TRUE(IsCudaName("cudaMalloc"));
  EXPECT_TRUE(IsCudaName("__cudaRegisterFatBinary"));
  EXPECT_TRUE(IsCudaName("cublasLtMatmul"));
  EXPECT_TRUE(IsCudaName("ncclAllReduce"));
  EXPECT_TRUE(IsCudaName("cuMemAlloc_v2"));
  EXPECT_FALSE(IsCudaName("curl_easy_init"));
  EXPECT_FALSE(IsCudaName("cu"));
  EXPECT_FALSE(IsCudaName("malloc"));
  EXPECT_EQ(FamilyFromName("cublasLtMatmul"), "cublasLt");
  EXPECT_EQ(FamilyFromName("cublasSgemm_v2"), "cublas");
  EXPECT_EQ(FamilyFromName("pncclAllReduce"), "nccl");
  EXPECT_EQ(FamilyFromName("cuInit"), "cuda");
  EXPECT_EQ(FamilyFromName("__cudaPushCallConfiguration"), "cudart");
  EXPECT_EQ(LibraryFamily("/x/libcudart.so.13"), "cudart");
  EXPECT_EQ(LibraryFamily("libcuda.so.1"), "cuda");
  EXPECT_EQ(LibraryFamily("libfoo.so"), "foo");
  EXPECT_EQ(LibraryFamily("libfoo.sox"), "");
  EXPECT_EQ(LibraryFamily("foo.so.1"), "");
  EXPECT_EQ(LibraryMajor("libcudart.so.13.0.88"), "13");
  EXPECT_EQ(LibraryMajor("libcudart.so"), "");
}

// --- fat binaries -------------------------------------------------------------------------

TEST(Fatbin, CountsDistinctKernelsInCubins) {
  const std::string fb = tb::Fatbin({
      {{2, 80, false, tb::Cubin({"_Z3addPfi", "_Z3mulPfi"}, {"_Z6helperv"})},
       {2, 90, false, tb::Cubin({"_Z3addPfi", "_Z3mulPfi"})},
       {1, 90, true, "ptx"}},
      {{2, 80, false, tb::Cubin({})}},
      {{2, 80, false, tb::Cubin({"kernel_c"})}},
  });
  FatbinSummary s;
  WalkFatbin(reinterpret_cast<const unsigned char*>(fb.data()), fb.size(), &s);
  EXPECT_TRUE(s.error.empty()) << s.error;
  EXPECT_EQ(s.containers, 3u);
  EXPECT_EQ(s.entries, 5u);
  EXPECT_EQ(s.elf_entries, 4u);
  EXPECT_EQ(s.ptx_entries, 1u);
  EXPECT_EQ(s.compressed_entries, 1u);
  EXPECT_EQ(s.kernels, (std::set<std::string>{"_Z3addPfi", "_Z3mulPfi", "kernel_c"}));
  EXPECT_EQ(s.architectures, (std::set<std::string>{"compute_90", "sm_80", "sm_90"}));
  EXPECT_TRUE(s.exact);
}

TEST(Fatbin, CompressedOnlyContainersMakeTheCountALowerBound) {
  const std::string fb = tb::Fatbin(
      {{{2, 80, false, tb::Cubin({"k1"})}}, {{2, 80, true, "zstd bytes"}, {1, 80, true, "ptx"}}});
  FatbinSummary s;
  WalkFatbin(reinterpret_cast<const unsigned char*>(fb.data()), fb.size(), &s);
  EXPECT_EQ(s.kernels.size(), 1u);
  EXPECT_EQ(s.containers_without_cubin, 1u);
  EXPECT_FALSE(s.exact);
}

TEST(Fatbin, PaddingBetweenContainersIsSkippedGarbageIsReported) {
  std::string one = tb::Fatbin({{{2, 80, false, tb::Cubin({"k1"})}}});
  std::string two = tb::Fatbin({{{2, 80, false, tb::Cubin({"k2"})}}});
  std::string padded = one + std::string(32, '\0') + two + std::string(8, '\0');
  FatbinSummary s;
  WalkFatbin(reinterpret_cast<const unsigned char*>(padded.data()), padded.size(), &s);
  EXPECT_TRUE(s.error.empty()) << s.error;
  EXPECT_EQ(s.kernels.size(), 2u);

  std::string garbage = one + std::string(16, 'x');
  FatbinSummary g;
  WalkFatbin(reinterpret_cast<const unsigned char*>(garbage.data()), garbage.size(), &g);
  EXPECT_NE(g.error.find("no fatbin container magic"), std::string::npos) << g.error;
  EXPECT_FALSE(g.exact);
  EXPECT_EQ(g.kernels.size(), 1u);
}

TEST(Fatbin, EveryTruncationStaysInBoundsAndIsReported) {
  const std::string fb =
      tb::Fatbin({{{2, 80, false, tb::Cubin({"k1", "k2"})}, {1, 80, true, "p"}}});
  for (size_t n = 1; n < fb.size(); ++n) {
    // A fresh heap copy of exactly n bytes, so that ASan catches any read past it.
    std::unique_ptr<unsigned char[]> copy(new unsigned char[n]);
    std::memcpy(copy.get(), fb.data(), n);
    FatbinSummary s;
    WalkFatbin(copy.get(), n, &s);
    EXPECT_FALSE(s.exact) << n;
  }
}

TEST(Fatbin, CubinWithBadSectionTableIsUnreadableNotFatal) {
  std::string cubin = tb::Cubin({"k1"});
  cubin[0x3c] = '\xff';  // e_shnum far too large
  const std::string fb = tb::Fatbin({{{2, 80, false, cubin}}});
  FatbinSummary s;
  WalkFatbin(reinterpret_cast<const unsigned char*>(fb.data()), fb.size(), &s);
  EXPECT_EQ(s.unreadable_cubins, 1u);
  EXPECT_FALSE(s.exact);
  EXPECT_TRUE(s.error.empty());
}

// --- whole files ---------------------------------------------------------------------------

struct Scanned {
  bool ok;
  std::string error;
  ElfScan scan;
};

Scanned ScanBytes(std::string bytes) {
  Scanned r;
  r.ok =
      ScanElfImage(reinterpret_cast<unsigned char*>(bytes.data()), bytes.size(), &r.scan, &r.error);
  return r;
}

const ImportReport* Find(const FileReport& r, const std::string& name) {
  for (const ImportReport& i : r.imports) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

class Files : public ::testing::Test {
 protected:
  void SetUp() override { tables_ = MakeTables({{"cudart.txt", kTable}}); }
  FileReport Check(const tb::Spec& spec) {
    Scanned s = ScanBytes(tb::ToBytes(tb::Build(spec)));
    EXPECT_TRUE(s.ok) << s.error;
    return Classify("x", std::move(s.scan), tables_);
  }
  Tables tables_;
};

TEST_F(Files, VersionedImportsAreClassifiedByTheirLibraryVersion) {
  tb::Spec spec;
  spec.imports = {{"cudaMalloc", "libcudart.so.13", "libcudart.so.13"},
                  {"cudaSplit", "libcudart.so.13", "libcudart.so.13"},
                  {"cudaCreateTextureObject", "libcudart.so.13", "libcudart.so.13"},
                  {"cudaLaunchKernel", "libcudart.so.13", "libcudart.so.13"},
                  {"malloc", "libc.so.6", "GLIBC_2.2.5"},
                  {"cudaNotInTable", "libcudart.so.13", "libcudart.so.13"}};
  const FileReport r = Check(spec);
  EXPECT_EQ(r.imports.size(), 5u);  // malloc is not a CUDA import
  EXPECT_EQ(r.scan.needed, (std::vector<std::string>{"libcudart.so.13", "libc.so.6"}));
  const ImportReport* m = Find(r, "cudaMalloc");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->category, Category::kForwarded);
  EXPECT_EQ(m->library, "libcudart.so.13");
  EXPECT_EQ(m->version, "libcudart.so.13");
  EXPECT_EQ(m->binding, "version");
  EXPECT_EQ(m->abi, "13");
  EXPECT_EQ(m->target, "musaMalloc");
  EXPECT_EQ(Find(r, "cudaSplit")->category, Category::kUnsupported);
  EXPECT_EQ(Find(r, "cudaSplit")->reason, "changed in 13");
  EXPECT_EQ(Find(r, "cudaCreateTextureObject")->reason, "textures are read by kernels");
  EXPECT_EQ(Find(r, "cudaLaunchKernel")->category, Category::kKernel);
  EXPECT_EQ(Find(r, "cudaNotInTable")->category, Category::kUnknown);
  // A name libtorchada.so does not define: the file does not get as far as its first call.
  EXPECT_TRUE(Find(r, "cudaNotInTable")->undefined);
  EXPECT_FALSE(Find(r, "cudaSplit")->undefined);
  EXPECT_EQ(r.verdict, Verdict::kWillNotLoad);
  ASSERT_FALSE(r.reasons.empty());
  EXPECT_NE(r.reasons.front().find("cudaNotInTable@libcudart.so.13"), std::string::npos)
      << r.reasons.front();
  EXPECT_NE(r.reasons.front().find("will not load"), std::string::npos) << r.reasons.front();
  EXPECT_EQ(r.counts[static_cast<size_t>(Category::kUnsupported)], 2u);
}

// torch 2.15's libtorch_cuda.so against tables of an older NCCL: it also embeds kernels, but what
// decides is that the loader refuses it (ncclCommResume undefined), and the verdict says so first.
TEST_F(Files, AnUndefinedImportOutranksKernelsAndIsNamedFirst) {
  tables_ =
      MakeTables({{"cudart.txt", kTable}, {"nccl.txt", "ncclAllReduce 2 forward mcclAllReduce\n"}});
  tb::Spec spec;
  spec.needed = {"libcudart.so.13", "libnccl.so.2"};
  spec.imports = {{"__cudaRegisterFatBinary", "libcudart.so.13", "libcudart.so.13"},
                  {"ncclCommResume", "", ""},
                  {"ncclAllReduce", "", ""}};
  spec.extra.push_back({".nv_fatbin", 1, 2, tb::Fatbin({{{2, 80, false, tb::Cubin({"k"})}}})});
  spec.extra.push_back({".nvFatBinSegment", 1, 3, tb::FatbinSegment(1)});
  FileReport r = Check(spec);
  const ImportReport* resume = Find(r, "ncclCommResume");
  ASSERT_NE(resume, nullptr);
  EXPECT_EQ(resume->library, "libnccl.so.2");
  EXPECT_TRUE(resume->undefined);
  EXPECT_FALSE(Find(r, "ncclAllReduce")->undefined);
  EXPECT_EQ(r.verdict, Verdict::kWillNotLoad);
  EXPECT_EQ(ExitStatus(r.verdict), 5);
  ASSERT_GE(r.reasons.size(), 2u);
  EXPECT_NE(r.reasons[0].find("ncclCommResume (libnccl.so.2)"), std::string::npos) << r.reasons[0];
  EXPECT_NE(r.reasons[1].find("CUDA kernels embedded"), std::string::npos) << r.reasons[1];
  // A weak import the replacement lacks resolves to NULL: the file loads (and needs porting).
  spec.imports[1].weak = true;
  r = Check(spec);
  EXPECT_TRUE(Find(r, "ncclCommResume")->undefined);
  EXPECT_EQ(r.verdict, Verdict::kNeedsPort);
}

TEST_F(Files, TheOtherAbiPicksTheOtherRow) {
  tb::Spec spec;
  spec.imports = {{"cudaSplit", "libcudart.so.12", "libcudart.so.12"},
                  {"cudaOnlyIn13", "libcudart.so.12", "libcudart.so.12"}};
  const FileReport r = Check(spec);
  EXPECT_EQ(Find(r, "cudaSplit")->category, Category::kForwarded);
  EXPECT_EQ(Find(r, "cudaSplit")->target, "musaSplit12");
  const ImportReport* only13 = Find(r, "cudaOnlyIn13");
  EXPECT_EQ(only13->category, Category::kUnknown);
  EXPECT_NE(only13->reason.find("version 13 only"), std::string::npos) << only13->reason;
}

TEST_F(Files, AllForwardedIsOk) {
  tb::Spec spec;
  spec.imports = {{"cudaMalloc", "libcudart.so.13", "libcudart.so.13"},
                  {"cudaGetDeviceProperties", "libcudart.so.13", "libcudart.so.13"},
                  {"__cudaRegisterFatBinary", "libcudart.so.13", "libcudart.so.13"}};
  const FileReport r = Check(spec);
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_EQ(Find(r, "cudaGetDeviceProperties")->category, Category::kTranslated);
  EXPECT_EQ(Find(r, "__cudaRegisterFatBinary")->category, Category::kForwarded);
}

TEST_F(Files, UnversionedImportsBindThroughNeeded) {
  tb::Spec spec;
  spec.needed = {"libc.so.6", "libcudart.so.12"};
  spec.imports = {{"cudaSplit", "", ""}, {"cuInit", "", ""}, {"cudaFuture", "", ""}};
  const FileReport r = Check(spec);
  const ImportReport* s = Find(r, "cudaSplit");
  EXPECT_EQ(s->binding, "needed");
  EXPECT_EQ(s->library, "libcudart.so.12");
  EXPECT_EQ(s->category, Category::kForwarded);  // the 12 row
  const ImportReport* cu = Find(r, "cuInit");
  EXPECT_EQ(cu->binding, "none");
  EXPECT_EQ(cu->category, Category::kUnknown);
  EXPECT_NE(cu->reason.find("no table for libcuda"), std::string::npos) << cu->reason;
  EXPECT_EQ(Find(r, "cudaFuture")->category, Category::kUnknown);
  EXPECT_NE(Find(r, "cudaFuture")->reason.find("teleport"), std::string::npos);
}

TEST_F(Files, UnversionedImportsOfOtherNvidiaLibrariesNameTheirLibrary) {
  tb::Spec spec;
  spec.needed = {"libcudnn.so.9", "libcufile.so.0", "libc.so.6"};
  spec.imports = {{"cuFileRead", "", ""}, {"cudnnCreate", "", ""}, {"cuLaunchKernel", "", ""}};
  const FileReport r = Check(spec);
  const ImportReport* f = Find(r, "cuFileRead");
  EXPECT_EQ(f->library, "libcufile.so.0");
  EXPECT_EQ(f->binding, "needed");
  EXPECT_NE(f->reason.find("no table for libcufile"), std::string::npos) << f->reason;
  EXPECT_EQ(Find(r, "cudnnCreate")->library, "libcudnn.so.9");
  EXPECT_EQ(Find(r, "cuLaunchKernel")->binding, "none");
  EXPECT_EQ(r.counts[static_cast<size_t>(Category::kUnknown)], 3u);
}

TEST_F(Files, NoCudaIsNotCuda) {
  tb::Spec spec;
  spec.imports = {{"malloc", "libc.so.6", "GLIBC_2.2.5"}};
  EXPECT_EQ(Check(spec).verdict, Verdict::kNotCuda);
}

TEST_F(Files, ALibraryWhoseAbiTorchadaExportsIsReplaced) {
  tb::Spec spec;
  spec.soname = "libcudart.so.13";
  spec.version_definitions = {"libcudart.so.13", "libcudart.so.13"};
  spec.exports = {"cudaMalloc", "__cudaRegisterFatBinary"};
  const FileReport r = Check(spec);
  EXPECT_EQ(r.verdict, Verdict::kReplaced);
  EXPECT_EQ(r.provides, "libcudart.so.13");
  EXPECT_FALSE(r.static_runtime.detected);
}

TEST_F(Files, DefinedRuntimeFunctionsMeanAStaticRuntime) {
  tb::Spec spec;
  spec.type = 2;  // ET_EXEC
  spec.symtab_functions = {"cudaMalloc", "__cudaRegisterFatBinary", "libcudart_static_abc"};
  const FileReport r = Check(spec);
  EXPECT_TRUE(r.static_runtime.detected);
  ASSERT_EQ(r.static_runtime.evidence.size(), 2u);
  EXPECT_NE(r.static_runtime.evidence[0].find("defines 2"), std::string::npos);
  EXPECT_NE(r.static_runtime.evidence[1].find("1 libcudart_static_"), std::string::npos);
  EXPECT_EQ(r.verdict, Verdict::kNeedsPort);
}

TEST_F(Files, RegistrationWithoutImportingTheRegistrarMeansAStaticRuntime) {
  tb::Spec spec;
  spec.extra.push_back({".nv_fatbin", 1, 2, tb::Fatbin({{{2, 80, false, tb::Cubin({})}}})});
  spec.extra.push_back({".nvFatBinSegment", 1, 3, tb::FatbinSegment(3)});
  FileReport r = Check(spec);
  EXPECT_TRUE(r.static_runtime.detected);
  EXPECT_EQ(r.device.modules, 3u);
  EXPECT_EQ(r.device.kernels, 0u);
  EXPECT_TRUE(r.device.kernels_exact);
  // The same with the registrar imported: a shared runtime, and no kernels: fine.
  spec.imports = {{"__cudaRegisterFatBinary", "libcudart.so.13", "libcudart.so.13"}};
  r = Check(spec);
  EXPECT_FALSE(r.static_runtime.detected);
  EXPECT_EQ(r.verdict, Verdict::kOk);
}

TEST_F(Files, KernelsMeanNeedsPortAndAreNamed) {
  tb::Spec spec;
  spec.imports = {{"__cudaRegisterFatBinary", "libcudart.so.13", "libcudart.so.13"}};
  spec.extra.push_back(
      {".nv_fatbin", 1, 2, tb::Fatbin({{{2, 80, false, tb::Cubin({"kb", "ka"})}}})});
  spec.extra.push_back(
      {"__nv_relfatbin", 1, 2, tb::Fatbin({{{2, 80, false, tb::Cubin({"ka", "kc"})}}})});
  spec.extra.push_back({".nvFatBinSegment", 1, 3, tb::FatbinSegment(1)});
  const FileReport r = Check(spec);
  EXPECT_EQ(r.verdict, Verdict::kNeedsPort);
  EXPECT_EQ(r.device.kernels, 3u);
  EXPECT_EQ(r.device.kernel_names, (std::vector<std::string>{"ka", "kb", "kc"}));
  EXPECT_EQ(r.device.sections.size(), 2u);
}

TEST_F(Files, ObjectFilesReportUndefinedSymtabSymbols) {
  tb::Spec spec;
  spec.type = 1;  // ET_REL
  Scanned s = ScanBytes(tb::ToBytes(tb::Build(spec)));
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_EQ(s.scan.type, "REL");
}

TEST(Scan, MalformedInputsAreErrorsNamingTheProblem) {
  const std::string good = tb::ToBytes(tb::Build(tb::Spec{}));
  struct Case {
    std::string bytes;
    const char* expect;
  };
  std::string bad_class = good;
  bad_class[4] = 7;
  std::string bad_shentsize = good;
  bad_shentsize[0x3a] = 12;
  std::string far_shoff = good;
  far_shoff[0x2f] = 0x10;  // e_shoff high byte
  const Case cases[] = {
      {"", "empty file"},
      {"hello world", "not an ELF file"},
      {"!<arch>\nfoo", "ar archive"},
      {std::string("PK\3\4rest"), "zip archive"},
      {"\x7f"
       "ELF",
       "truncated ELF identification"},
      {good.substr(0, 40), "truncated ELF header"},
      {bad_class, "invalid ELF class 7"},
      {bad_shentsize, "section header size 12"},
      {far_shoff, "extends past the end of the file"},
      {good.substr(0, good.size() - 10), "extends past the end of the file"},
  };
  for (const Case& c : cases) {
    Scanned s = ScanBytes(c.bytes);
    EXPECT_FALSE(s.ok) << c.expect;
    EXPECT_NE(s.error.find(c.expect), std::string::npos)
        << "want '" << c.expect << "', got '" << s.error << "'";
  }
}

TEST(Scan, SectionBeyondTheFileIsAnError) {
  tb::Spec spec;
  spec.extra.push_back({".nv_fatbin", 1, 2, "x"});
  std::string bytes = tb::ToBytes(tb::Build(spec));
  // Find the .nv_fatbin header (second to last before .shstrtab) and move it off the end.
  const uint64_t shoff = *reinterpret_cast<const uint64_t*>(&bytes[0x28]);
  const uint16_t shnum = *reinterpret_cast<const uint16_t*>(&bytes[0x3c]);
  const uint64_t fat_hdr = shoff + (uint64_t{shnum} - 2) * 64;
  const uint64_t huge = uint64_t{1} << 40;
  std::memcpy(&bytes[fat_hdr + 0x18], &huge, 8);
  Scanned s = ScanBytes(bytes);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.error.find(".nv_fatbin"), std::string::npos) << s.error;
  EXPECT_NE(s.error.find("truncated?"), std::string::npos) << s.error;
}

TEST(Scan, EveryTruncationOfAValidFileIsHandled) {
  tb::Spec spec;
  spec.soname = "libx.so.1";
  spec.imports = {{"cudaMalloc", "libcudart.so.13", "libcudart.so.13"}, {"cuInit", "", ""}};
  spec.version_definitions = {"libx.so.1", "X_1"};
  spec.exports = {"x"};
  spec.symtab_functions = {"cudaFree"};
  spec.extra.push_back({".nv_fatbin", 1, 2, tb::Fatbin({{{2, 80, false, tb::Cubin({"k"})}}})});
  const std::string full = tb::ToBytes(tb::Build(spec));
  Scanned whole = ScanBytes(full);
  ASSERT_TRUE(whole.ok) << whole.error;
  for (size_t n = 0; n < full.size(); n += 7) {
    Scanned s = ScanBytes(full.substr(0, n));
    // Cutting anything off removes the section headers at the end: always an error.
    EXPECT_FALSE(s.ok) << n;
    EXPECT_FALSE(s.error.empty()) << n;
  }
}

TEST(Json, StringsAreValidUtf8AndEscaped) {
  EXPECT_EQ(JsonString("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
  EXPECT_EQ(JsonString("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(JsonString("bad\xff\xc3"), "\"bad\\ufffd\\ufffd\"");
  EXPECT_EQ(JsonString("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // a surrogate
  EXPECT_EQ(Printable("a\x01\xff"), "a\\x01\\xff");
}

TEST(Cli, UsageErrorsAndHelp) {
  std::string out, err;
  const char* none[] = {"torchada-check"};
  EXPECT_EQ(check::Run(1, none, &out, &err), kExitUsage);
  EXPECT_NE(err.find("no file or directory"), std::string::npos);
  out.clear();
  err.clear();
  const char* bad[] = {"torchada-check", "--frobnicate"};
  EXPECT_EQ(check::Run(2, bad, &out, &err), kExitUsage);
  EXPECT_NE(err.find("unknown option --frobnicate"), std::string::npos);
  out.clear();
  const char* help[] = {"torchada-check", "--help"};
  EXPECT_EQ(check::Run(2, help, &out, &err), kExitOk);
  for (const char* word : {"SYNOPSIS", "EXIT STATUS", "needs-port", "--symbols-dir", "--json"}) {
    EXPECT_NE(out.find(word), std::string::npos) << word;
  }
  const char* missing_dir[] = {"torchada-check", "--symbols-dir", "/nonexistent/dir", "x"};
  err.clear();
  EXPECT_EQ(check::Run(4, missing_dir, &out, &err), kExitUsage);
  EXPECT_NE(err.find("/nonexistent/dir"), std::string::npos);
}

}  // namespace
}  // namespace torchada::check
