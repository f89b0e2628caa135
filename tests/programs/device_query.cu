// deviceQuery-style program: enumerates devices and cross-checks every way the runtime reports
// the same fact (properties struct, per-attribute queries, memory info), plus the error-state
// rules (invalid ordinals, cudaGetLastError / cudaPeekAtLastError) that programs rely on.
#include "check.h"

#include <cstring>
#include <thread>

namespace {

// The device-properties struct is followed by a canary: a runtime that fills a struct of another
// CUDA version's layout (CUDA 12's is 24 bytes larger) would overwrite it.
struct PropsWithCanary {
  cudaDeviceProp prop;
  unsigned char canary[256];
};

int Attr(cudaDeviceAttr attr, int dev) {
  int value = -1;
  CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, dev));
  return value;
}

void CheckDevice(int dev) {
  std::printf("device %d\n", dev);
  PropsWithCanary p;
  std::memset(&p, 0xA5, sizeof(p));
  CUDA_CHECK(cudaGetDeviceProperties(&p.prop, dev));
  const cudaDeviceProp& prop = p.prop;
  std::printf("  name \"%s\", cc %d.%d, %d SMs, warp %d, %zu bytes\n", prop.name, prop.major,
              prop.minor, prop.multiProcessorCount, prop.warpSize, prop.totalGlobalMem);

  bool canary_intact = true;
  for (unsigned char c : p.canary) canary_intact = canary_intact && c == 0xA5;
  EXPECT(canary_intact);
  EXPECT(std::strlen(prop.name) > 0 && std::strlen(prop.name) < sizeof(prop.name));
  EXPECT(prop.major == Attr(cudaDevAttrComputeCapabilityMajor, dev));
  EXPECT(prop.minor == Attr(cudaDevAttrComputeCapabilityMinor, dev));
  EXPECT(prop.warpSize == Attr(cudaDevAttrWarpSize, dev));
  EXPECT(prop.multiProcessorCount == Attr(cudaDevAttrMultiProcessorCount, dev));
  EXPECT(prop.maxThreadsPerBlock == Attr(cudaDevAttrMaxThreadsPerBlock, dev));
  EXPECT(prop.maxThreadsPerMultiProcessor == Attr(cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  EXPECT(prop.unifiedAddressing == Attr(cudaDevAttrUnifiedAddressing, dev));
  EXPECT(prop.major > 0 && prop.warpSize > 0 && prop.multiProcessorCount > 0);
  EXPECT(prop.maxThreadsPerBlock >= prop.warpSize);
  EXPECT(prop.maxThreadsDim[0] > 0 && prop.maxGridSize[0] > 0);

  // cudaMemGetInfo reports on the current device, so select it first.
  CUDA_CHECK(cudaSetDevice(dev));
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::printf("  cudaMemGetInfo: free %zu, total %zu\n", free_bytes, total_bytes);
  EXPECT(total_bytes == prop.totalGlobalMem);
  EXPECT(free_bytes > 0 && free_bytes <= total_bytes);

  int current = -1;
  CUDA_CHECK(cudaGetDevice(&current));
  EXPECT(current == dev);
}

void CheckVersions() {
  std::printf("versions\n");
  int driver = 0, runtime = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  std::printf("  driver %d, runtime %d, built against CUDART_VERSION %d\n", driver, runtime,
              CUDART_VERSION);
  EXPECT(runtime > 0);
  EXPECT(driver >= runtime);
  // This binary NEEDs libcudart.so.13, whose cudaRuntimeGetVersion answers 13.x.
  EXPECT(runtime / 1000 == CUDART_VERSION / 1000);
}

void CheckInvalidOrdinals(int count) {
  std::printf("invalid device ordinals (count = %d)\n", count);
  cudaDeviceProp prop;
  int value = 0;
  EXPECT_ERR(cudaSetDevice(count), cudaErrorInvalidDevice);
  EXPECT_ERR(cudaSetDevice(-1), cudaErrorInvalidDevice);
  EXPECT_ERR(cudaGetDeviceProperties(&prop, count), cudaErrorInvalidDevice);
  EXPECT_ERR(cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, count), cudaErrorInvalidDevice);
  // A rejected cudaSetDevice must leave the current device unchanged.
  int current = -1;
  CUDA_CHECK(cudaGetDevice(&current));
  EXPECT(current == 0);
  EXPECT_ERR(cudaGetDeviceCount(nullptr), cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

void CheckErrorStrings() {
  std::printf("error names and strings\n");
  EXPECT(std::strcmp(cudaGetErrorName(cudaSuccess), "cudaSuccess") == 0);
  EXPECT(std::strcmp(cudaGetErrorName(cudaErrorInvalidDevice), "cudaErrorInvalidDevice") == 0);
  EXPECT(std::strcmp(cudaGetErrorName(cudaErrorNoKernelImageForDevice),
                     "cudaErrorNoKernelImageForDevice") == 0);
  const cudaError_t codes[] = {cudaSuccess,
                               cudaErrorInvalidValue,
                               cudaErrorMemoryAllocation,
                               cudaErrorInvalidDevice,
                               cudaErrorNotReady,
                               cudaErrorNoKernelImageForDevice,
                               static_cast<cudaError_t>(12345)};
  bool all_present = true;
  for (cudaError_t code : codes) {
    const char* name = cudaGetErrorName(code);
    const char* text = cudaGetErrorString(code);
    std::printf("  %d: %s: %s\n", static_cast<int>(code), name ? name : "(null)",
                text ? text : "(null)");
    all_present = all_present && name && *name && text && *text;
  }
  EXPECT(all_present);
}

// cudaGetLastError returns the most recent error of this host thread and resets it; a later
// successful call does not clear it; cudaPeekAtLastError reads without resetting; the state is
// per thread.
void CheckLastError(int count) {
  std::printf("cudaGetLastError semantics\n");
  (void)cudaGetLastError();
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);
  EXPECT_ERR(cudaSetDevice(count), cudaErrorInvalidDevice);
  int n = 0;
  CUDA_CHECK(cudaGetDeviceCount(&n));  // success does not clear the recorded error
  EXPECT_ERR(cudaPeekAtLastError(), cudaErrorInvalidDevice);
  EXPECT_ERR(cudaPeekAtLastError(), cudaErrorInvalidDevice);

  cudaError_t other_thread = cudaErrorUnknown;
  std::thread([&] { other_thread = cudaGetLastError(); }).join();
  EXPECT_ERR(other_thread, cudaSuccess);

  EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidDevice);
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);
}

}  // namespace

int main() {
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  std::printf("cudaGetDeviceCount: %d\n", count);
  EXPECT(count >= 1);
  for (int dev = 0; dev < count; ++dev) CheckDevice(dev);
  CUDA_CHECK(cudaSetDevice(0));
  CheckVersions();
  CheckInvalidOrdinals(count);
  CheckErrorStrings();
  CheckLastError(count);
  return check::Report("device_query");
}
