// Driver entry points for a program of the CUDA 12 ABI (NVIDIA's CUDA 12 headers and
// libcudart.so.12, the shim preloaded, TORCHADA_BACKEND=sim): the version rules are those of the
// caller's runtime, whose version is also the driver version cudaDriverGetVersion reports.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

void* by_version(const char* name, unsigned version, cudaDriverEntryPointQueryResult* st,
                 cudaError_t* err) {
  void* p = reinterpret_cast<void*>(0x1);
  *err = cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, st);
  return p;
}

TEST(DriverEntryPointsCuda12, VersionLimitIsTheCallersRuntime) {
  int driver = 0;
  ASSERT_EQ(cudaSuccess, cudaDriverGetVersion(&driver));
  EXPECT_EQ(CUDART_VERSION, driver);
  cudaDriverEntryPointQueryResult st{};
  cudaError_t e{};
  void* p = by_version("cuMemCreate", CUDART_VERSION, &st, &e);
  EXPECT_EQ(cudaSuccess, e);
  EXPECT_EQ(cudaDriverEntryPointSuccess, st);
  EXPECT_NE(nullptr, p);
  by_version("cuMemCreate", 13000, &st, &e);
  EXPECT_EQ(cudaErrorInvalidValue, e) << "13.0 is above this runtime's driver version";
  cudaGetLastError();
  // The deprecated form picks the newest ABI for CUDART_VERSION: cuStreamWriteValue32_v2.
  void* q = nullptr;
  ASSERT_EQ(cudaSuccess,
            cudaGetDriverEntryPoint("cuStreamWriteValue32", &q, cudaEnableDefault, &st));
  EXPECT_EQ(by_version("cuStreamWriteValue32", 11070, &st, &e), q);
  EXPECT_NE(by_version("cuStreamWriteValue32", 11000, &st, &e), q);
}

TEST(DriverEntryPointsCuda12, FetchedFunctionsWork) {
  cudaDriverEntryPointQueryResult st{};
  cudaError_t e{};
  auto memset32 =
      reinterpret_cast<PFN_cuMemsetD32Async_v3020>(by_version("cuMemsetD32Async", 12000, &st, &e));
  ASSERT_NE(nullptr, reinterpret_cast<void*>(memset32));
  uint32_t* d = nullptr;
  ASSERT_EQ(cudaSuccess, cudaMalloc(reinterpret_cast<void**>(&d), 64 * 4));
  ASSERT_EQ(CUDA_SUCCESS, memset32(reinterpret_cast<CUdeviceptr>(d), 0x12345678u, 64, nullptr));
  std::vector<uint32_t> h(64);
  ASSERT_EQ(cudaSuccess, cudaMemcpy(h.data(), d, 64 * 4, cudaMemcpyDeviceToHost));
  for (uint32_t v : h) ASSERT_EQ(0x12345678u, v);
  ASSERT_EQ(cudaSuccess, cudaFree(d));
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
