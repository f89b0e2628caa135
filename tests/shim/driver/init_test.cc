// The driver API before CUDA is initialised, through the preloaded shim on the simulator: NVIDIA's
// driver answers CUDA_ERROR_NOT_INITIALIZED to every function but a handful until cuInit succeeds
// or the CUDA runtime is first called (which initialises the driver). Each test is its own process
// (tests/shim/driver/CMakeLists.txt runs them one by one), because initialisation cannot be undone.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <gtest/gtest.h>

namespace {

// The driver's exports as a program that loads libcuda.so.1 by hand finds them (the preloaded
// shim's).
template <class F>
F driver(const char* name) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  EXPECT_NE(lib, nullptr) << dlerror();
  return reinterpret_cast<F>(lib ? dlsym(lib, name) : nullptr);
}

using DeviceGetCount = CUresult (*)(int*);
using DeviceGet = CUresult (*)(CUdevice*, int);
using Init = CUresult (*)(unsigned);
using DriverGetVersion = CUresult (*)(int*);
using GetErrorString = CUresult (*)(CUresult, const char**);
using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

TEST(DriverInit, RefusedUntilCuInit) {
  auto count = driver<DeviceGetCount>("cuDeviceGetCount");
  auto get = driver<DeviceGet>("cuDeviceGet");
  ASSERT_NE(count, nullptr);
  ASSERT_NE(get, nullptr);
  int n = -7;
  EXPECT_EQ(CUDA_ERROR_NOT_INITIALIZED, count(&n));
  EXPECT_EQ(-7, n);  // nothing written
  CUdevice d = -7;
  EXPECT_EQ(CUDA_ERROR_NOT_INITIALIZED, get(&d, 0));
  // What the driver answers before cuInit.
  int version = 0;
  EXPECT_EQ(CUDA_SUCCESS, driver<DriverGetVersion>("cuDriverGetVersion")(&version));
  EXPECT_GT(version, 0);
  const char* text = nullptr;
  EXPECT_EQ(CUDA_SUCCESS,
            driver<GetErrorString>("cuGetErrorString")(CUDA_ERROR_NOT_INITIALIZED, &text));
  ASSERT_NE(text, nullptr);
  void* fn = nullptr;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  EXPECT_EQ(CUDA_SUCCESS, driver<GetProcAddress>("cuGetProcAddress_v2")(
                              "cuDeviceGetCount", &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &found));
  EXPECT_EQ(CU_GET_PROC_ADDRESS_SUCCESS, found);
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(CUDA_ERROR_NOT_INITIALIZED, reinterpret_cast<DeviceGetCount>(fn)(&n));
  // cuInit, then everything.
  ASSERT_EQ(CUDA_SUCCESS, driver<Init>("cuInit")(0));
  ASSERT_EQ(CUDA_SUCCESS, count(&n));
  EXPECT_EQ(2, n);  // TORCHADA_SIM_DEVICES=2
  ASSERT_EQ(CUDA_SUCCESS, get(&d, 1));
  EXPECT_EQ(1, d);
}

TEST(DriverInit, TheRuntimeInitialisesTheDriver) {
  int n = 0;
  ASSERT_EQ(cudaSuccess, cudaGetDeviceCount(&n));
  ASSERT_EQ(2, n);
  n = 0;
  EXPECT_EQ(CUDA_SUCCESS, driver<DeviceGetCount>("cuDeviceGetCount")(&n));
  EXPECT_EQ(2, n);
}

TEST(DriverInit, ErrorStringsAndVersionsDoNotInitialise) {
  int version = 0;
  ASSERT_EQ(cudaSuccess, cudaRuntimeGetVersion(&version));
  EXPECT_GT(version, 0);
  EXPECT_NE(nullptr, cudaGetErrorString(cudaErrorInvalidValue));
  EXPECT_EQ(cudaSuccess, cudaGetLastError());
  int n = -7;
  EXPECT_EQ(CUDA_ERROR_NOT_INITIALIZED, driver<DeviceGetCount>("cuDeviceGetCount")(&n));
  EXPECT_EQ(-7, n);
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
