// A shared library using the dynamic CUDA runtime (an extension module's shape).
#include <cuda_runtime_api.h>

extern "C" __attribute__((visibility("default"))) int torchada_check_probe() {
  cudaStream_t s = nullptr;
  if (cudaStreamCreate(&s) != cudaSuccess) return 1;
  void* p = nullptr;
  cudaMallocAsync(&p, 256, s);
  cudaFreeAsync(p, s);
  cudaStreamSynchronize(s);
  return cudaStreamDestroy(s) == cudaSuccess ? 0 : 1;
}
