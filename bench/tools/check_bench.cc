// torchada-check's speed on a 1 GiB shared library: the tool reads headers, never the body, so
// the time should not depend on the size. The library is synthesised (sparse, so it costs no
// disk): every cudart.txt and cublas.txt name imported with its version node, a 512 MiB .text and
// a 512 MiB .nv_fatbin holding 4096 containers (one small cubin with kernels and one large
// compressed cubin each, like NVIDIA's libraries).
//
//   bench_check                         the benchmarks
//   bench_check --make_file=PATH        only write the 1 GiB file (for timing the command line)
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "classify.h"
#include "elf_builder.h"
#include "elf_scan.h"
#include "tables.h"

extern char** environ;

namespace {

namespace tb = torchada::check::testing;
using torchada::check::Tables;

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kHalf = 512 * kMiB;
constexpr uint64_t kContainerStride = 128 * 1024;  // 4096 containers in 512 MiB

const Tables& EmbeddedTables() {
  static const Tables t = [] {
    Tables x;
    x.LoadEmbedded();
    return x;
  }();
  return t;
}

// One container at the start of every stride: a readable cubin, then a compressed cubin whose
// payload (a hole) runs to the next container.
tb::Section BigFatbin() {
  tb::Section s;
  s.name = ".nv_fatbin";
  s.size = kHalf;
  const std::string cubin = tb::Cubin({"_Z6kernelILi0EEvPf", "_Z6kernelILi1EEvPf"});
  const std::string small = tb::Fatbin({{{2, 80, false, cubin}}});
  // Container = 16-byte header + entries; rewrite its size field to cover the big entry too.
  for (uint64_t at = 0; at + kContainerStride <= kHalf; at += kContainerStride) {
    std::string head = small;
    const uint64_t body = kContainerStride - 16;
    std::memcpy(&head[8], &body, 8);
    // The big entry's header right after the small entry.
    std::string big(64, '\0');
    const uint16_t kind = 2, version = 0x0101;
    const uint32_t header = 64, arch = 90;
    const uint64_t payload = kContainerStride - small.size() - 64, flags = 0x8011;
    std::memcpy(&big[0], &kind, 2);
    std::memcpy(&big[2], &version, 2);
    std::memcpy(&big[4], &header, 4);
    std::memcpy(&big[8], &payload, 8);
    std::memcpy(&big[28], &arch, 4);
    std::memcpy(&big[40], &flags, 8);
    s.pieces.emplace_back(at, head + big + std::string("\x28\xb5\x2f\xfd", 4));
  }
  return s;
}

tb::Spec BigLibrary() {
  tb::Spec spec;
  spec.soname = "libbig_cuda_extension.so";
  spec.needed = {"libc.so.6"};
  for (const char* lib : {"cudart", "cublas"}) {
    const torchada::check::Table* t = EmbeddedTables().ForLibrary(lib);
    if (!t) continue;
    const std::string so = std::string("lib") + lib + ".so.13";
    for (const torchada::check::Row& r : t->rows) {
      bool in13 = false;
      for (const std::string& a : r.abis) in13 = in13 || a == "13";
      if (in13) spec.imports.push_back({r.name, so, so});
    }
  }
  tb::Section text;
  text.name = ".text";
  text.flags = 6;  // SHF_ALLOC | SHF_EXECINSTR
  text.size = kHalf;
  text.align = 4096;
  spec.extra.push_back(text);
  spec.extra.push_back(BigFatbin());
  spec.extra.push_back({".nvFatBinSegment", 1, 3, tb::FatbinSegment(kHalf / kContainerStride)});
  return spec;
}

bool MakeFile(const std::string& path) {
  std::string err;
  if (!tb::WriteSparse(tb::Build(BigLibrary()), path, &err)) {
    std::fprintf(stderr, "bench_check: %s\n", err.c_str());
    return false;
  }
  return true;
}

const std::string& BigFile() {
  static const std::string path = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string p = std::string(tmp && *tmp ? tmp : "/tmp") + "/torchada-check-bench-" +
                    std::to_string(getpid()) + ".so";
    if (!MakeFile(p)) std::abort();
    return p;
  }();
  return path;
}

void CheckOnce(benchmark::State& state, const std::string& path) {
  torchada::check::ElfScan scan;
  std::string err;
  if (!torchada::check::ScanElfFile(path, &scan, &err)) {
    state.SkipWithError(err.c_str());
    return;
  }
  auto r = torchada::check::Classify(path, std::move(scan), EmbeddedTables());
  benchmark::DoNotOptimize(r);
  state.counters["imports"] = static_cast<double>(r.imports.size());
  state.counters["containers"] =
      r.device.sections.empty() ? 0.0 : static_cast<double>(r.device.sections[0].fatbin.containers);
}

void BM_Check1GiB(benchmark::State& state) {
  const std::string& path = BigFile();
  for (auto _ : state) CheckOnce(state, path);
}
BENCHMARK(BM_Check1GiB)->Unit(benchmark::kMillisecond);

// The file's pages dropped from the page cache before each run: what a first check costs.
void BM_Check1GiBColdCache(benchmark::State& state) {
  const std::string& path = BigFile();
  for (auto _ : state) {
    state.PauseTiming();
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      fdatasync(fd);
      posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      close(fd);
    }
    state.ResumeTiming();
    CheckOnce(state, path);
  }
}
BENCHMARK(BM_Check1GiBColdCache)->Unit(benchmark::kMillisecond);

// The whole command line: process start, table parsing, scan, text report.
void BM_CommandLine1GiB(benchmark::State& state) {
  const std::string& path = BigFile();
  for (auto _ : state) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    const char* argv[] = {TORCHADA_CHECK_PATH, path.c_str(), nullptr};
    pid_t pid;
    if (posix_spawn(&pid, TORCHADA_CHECK_PATH, &fa, nullptr, const_cast<char**>(argv), environ)) {
      state.SkipWithError("cannot start torchada-check");
      break;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    posix_spawn_file_actions_destroy(&fa);
    if (!WIFEXITED(status) || WEXITSTATUS(status) > 2) {
      state.SkipWithError("torchada-check failed on the synthetic library");
      break;
    }
  }
}
BENCHMARK(BM_CommandLine1GiB)->Unit(benchmark::kMillisecond);

// NVIDIA's largest library here, when installed (541 MB, 2782 compressed fatbin containers).
void BM_CheckLibcublasLt(benchmark::State& state) {
  const std::string path = std::string(TORCHADA_CUDA_LIB_DIR) + "/libcublasLt.so.13";
  if (access(path.c_str(), R_OK) != 0) {
    state.SkipWithError("no libcublasLt.so.13");
    return;
  }
  for (auto _ : state) CheckOnce(state, path);
}
BENCHMARK(BM_CheckLibcublasLt)->Unit(benchmark::kMillisecond);

void BM_ParseEmbeddedTables(benchmark::State& state) {
  for (auto _ : state) {
    Tables t;
    t.LoadEmbedded();
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_ParseEmbeddedTables)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--make_file=", 12) == 0) return MakeFile(argv[i] + 12) ? 0 : 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!BigFile().empty()) unlink(BigFile().c_str());
  return 0;
}
