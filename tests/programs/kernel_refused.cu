// A program with its own __global__ kernel. The shim cannot run NVIDIA device code, so the
// launch must be refused the way the CUDA runtime refuses a binary without code for the device:
// cudaErrorNoKernelImageForDevice, reported through cudaGetLastError, not sticky, and with
// the rest of the runtime still usable afterwards. On NVIDIA's own devices (natively, or on
// torchada's cuda pass-through) the same launches run instead, and their result is checked.
#include "check.h"

#include <vector>

__global__ void Scale(float* data, float factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

int main() {
  const int n = 256;
  const size_t bytes = n * sizeof(float);
  CUDA_CHECK(cudaSetDevice(0));
  std::vector<float> host(n, 1.5f), back(n, 0.f);
  const bool runs = check::NvidiaDevice();
  const cudaError_t launched = runs ? cudaSuccess : cudaErrorNoKernelImageForDevice;
  float* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, bytes));
  CUDA_CHECK(cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice));

  std::printf("<<<>>> launch on the default stream\n");
  (void)cudaGetLastError();
  Scale<<<n / 64, 64>>>(d, 2.f, n);
  EXPECT_ERR(cudaPeekAtLastError(), launched);
  EXPECT_ERR(cudaGetLastError(), launched);
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);  // reading it reset it: the error is not sticky

  std::printf("<<<>>> launch on a stream with dynamic shared memory\n");
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreate(&s));
  Scale<<<1, n, 128, s>>>(d, 3.f, n);
  EXPECT_ERR(cudaGetLastError(), launched);

  std::printf("cudaLaunchKernel returns the error directly\n");
  float factor = 4.f;
  int count = n;
  void* args[] = {&d, &factor, &count};
  EXPECT_ERR(cudaLaunchKernel(reinterpret_cast<const void*>(Scale), dim3(1), dim3(n), args, 0, s),
             launched);
  (void)cudaGetLastError();

  std::printf("the runtime keeps working after refused launches\n");
  EXPECT_ERR(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_ERR(cudaDeviceSynchronize(), cudaSuccess);
  CUDA_CHECK(cudaMemcpy(back.data(), d, bytes, cudaMemcpyDeviceToHost));
  // No launch ran, the data is untouched; or all three ran: 1.5 x 2 x 3 x 4.
  EXPECT(back == (runs ? std::vector<float>(n, 36.f) : host));
  CUDA_CHECK(cudaMemsetAsync(d, 0, bytes, s));
  CUDA_CHECK(cudaMemcpyAsync(back.data(), d, bytes, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  EXPECT(back == std::vector<float>(n, 0.f));
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);

  CUDA_CHECK(cudaStreamDestroy(s));
  CUDA_CHECK(cudaFree(d));
  return check::Report("kernel_refused");
}
