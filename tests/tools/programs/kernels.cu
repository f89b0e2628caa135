// Two kernels and their launches: embedded device code for torchada-check to find.
#include <cstdio>

__global__ void add(float* a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1.0f;
}

__global__ void mul(float* a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= 2.0f;
}

int main() {
  float* d = nullptr;
  if (cudaMalloc(&d, 64 * sizeof(float)) != cudaSuccess) return 1;
  add<<<1, 64>>>(d, 64);
  mul<<<1, 64>>>(d, 64);
  const cudaError_t e = cudaDeviceSynchronize();
  cudaFree(d);
  std::printf("%s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
