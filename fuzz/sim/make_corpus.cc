// Writes fuzz/corpus/sim/, the seed corpus of the simulator's fuzzing entry point (fuzz_sim.cc):
// for each kind of call, inputs that start with it (then pseudo-random bytes), and mixed
// programs. Deterministic (std::mt19937's sequence is fixed by the standard), so that ctest
// sim.fuzz_corpus_up_to_date can compare the checked-in files with a fresh run.
//   sim_make_corpus DIR
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    std::perror(dir.c_str());
    return 1;
  }
  std::mt19937 gen(20261128);
  auto write = [&](const std::string& name, const std::vector<unsigned char>& bytes) {
    const std::string path = dir + "/" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
      std::perror(path.c_str());
      return false;
    }
    return std::fclose(f) == 0;
  };
  auto random_bytes = [&](size_t n) {
    std::vector<unsigned char> v(n);
    for (auto& b : v) b = static_cast<unsigned char>(gen() & 0xff);
    return v;
  };
  const char* kinds[] = {"copy_d2d", "copy_h2d", "copy_d2h_async", "memset", "memset_async",
                         "copy_2d",  "gemm"};
  for (int k = 0; k < 7; ++k) {
    for (int i = 0; i < 4; ++i) {
      std::vector<unsigned char> v = random_bytes(48);
      v[0] = static_cast<unsigned char>(k);  // the first call's kind
      if (!write(std::string(kinds[k]) + "_" + std::to_string(i), v)) return 1;
    }
  }
  for (int i = 0; i < 8; ++i)
    if (!write("mixed_" + std::to_string(i), random_bytes(512))) return 1;
  // Spelled out (fuzz_sim.cc's reading order): GEMMs whose operands run beyond their
  // allocations, which fault the device, then calls on the fresh device after its reset.
  //   kind 6 (gemm); a, b, c: allocation 0/1/2 at offset 0; N, N; m, n, k = 30; lda, ldb, ldc =
  //   30; beta 0; then 1: plain, or 0 and three strides of 900 elements and 6 instances.
  const std::vector<unsigned char> gemm = {6, 0,  0, 1,  0, 2,  0, 0,  0, 3,  30,
                                           3, 30, 3, 30, 3, 30, 3, 30, 3, 30, 0};
  std::vector<unsigned char> plain = gemm;
  plain.push_back(1);
  std::vector<unsigned char> batched = gemm;
  for (unsigned char b : {0, 0, 0, 3, 0x84, 0, 0, 3, 0x84, 0, 0, 3, 0x84, 6}) batched.push_back(b);
  std::vector<unsigned char> then_copies = plain;
  //   kind 0 (device to device): allocation 2 at offset 0 from allocation 1 at offset 0, 4096
  //   bytes (size case 3: the extent); kind 3 (memset) of allocation 0, value 7, 256 bytes.
  for (unsigned char b : {0, 2, 0, 1, 0, 3, 3, 0, 0, 7, 3}) then_copies.push_back(b);
  if (!write("gemm_fault", plain) || !write("gemm_batched_fault", batched) ||
      !write("fault_then_copies", then_copies))
    return 1;
  return 0;
}
