// Compiled by nvcc but without a kernel: nvcc still embeds (empty) device code.
#include <cstdio>

int main() {
  void* d = nullptr;
  const cudaError_t e = cudaMalloc(&d, 64);
  cudaFree(d);
  std::printf("%d\n", static_cast<int>(e));
  return 0;
}
