// A host program linked by the C++ compiler against the dynamic CUDA runtime, the way CUDA
// applications without device code are built. torchada-check's input; never run.
#include <cuda_runtime_api.h>

int main(int argc, char**) {
  void* p = nullptr;
  if (cudaMalloc(&p, 64) != cudaSuccess) return 1;
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  cudaMemcpy(p, &prop, 64, cudaMemcpyHostToDevice);
  if (argc > 5) {
    // Imported even though never reached: texture objects are refused by torchada.
    cudaTextureObject_t tex = 0;
    cudaResourceDesc res{};
    cudaTextureDesc desc{};
    cudaCreateTextureObject(&tex, &res, &desc, nullptr);
  }
  return cudaFree(p) == cudaSuccess ? 0 : 1;
}
