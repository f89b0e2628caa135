// The translations the shim makes, observed through the exported entry points on the simulator:
// compute-capability policy, error names and strings, pointer attributes, the CUDA 13 forms
// (cudaMemLocation, three-argument instantiate), environment translation.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void* g_shim = nullptr;

template <class F>
F sym(const char* name, const char* version = "libcudart.so.13") {
  void* p = dlvsym(g_shim, name, version);
  EXPECT_NE(p, nullptr) << name;
  return reinterpret_cast<F>(p);
}

#define CUDA(name) sym<decltype(&::name)>(#name)

class Translation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("TORCHADA_BACKEND", "sim", 1);
    setenv("TORCHADA_SIM_LIB_DIR", TORCHADA_SIM_DIR, 1);
    setenv("CUDA_VISIBLE_DEVICES", "0", 1);
    unsetenv("MUSA_VISIBLE_DEVICES");
    setenv("CUDA_LAUNCH_BLOCKING", "1", 1);
    setenv("MUSA_LAUNCH_BLOCKING", "0", 1);  // an explicit MUSA setting wins
    g_shim = dlopen(TORCHADA_SHIM_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(g_shim, nullptr) << dlerror();
  }
};

TEST_F(Translation, EnvironmentIsTranslatedBeforeTheBackendLoads) {
  int n = 0;
  ASSERT_EQ(CUDA(cudaGetDeviceCount)(&n), cudaSuccess);
  ASSERT_NE(std::getenv("MUSA_VISIBLE_DEVICES"), nullptr);
  EXPECT_STREQ(std::getenv("MUSA_VISIBLE_DEVICES"), "0");
  EXPECT_STREQ(std::getenv("MUSA_LAUNCH_BLOCKING"), "0");
}

TEST_F(Translation, ComputeCapabilityPolicy) {
  auto attr = CUDA(cudaDeviceGetAttribute);
  auto props = CUDA(cudaGetDeviceProperties);
  int major = 0, minor = 0, warp = 0;
  cudaDeviceProp p{};

  unsetenv("TORCHADA_REPORT_CC");  // default: the CUDA equivalent of mp_22 (S4000)
  ASSERT_EQ(attr(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
  ASSERT_EQ(attr(&minor, cudaDevAttrComputeCapabilityMinor, 0), cudaSuccess);
  EXPECT_EQ(major * 10 + minor, 80);
  ASSERT_EQ(props(&p, 0), cudaSuccess);
  EXPECT_EQ(p.major * 10 + p.minor, 80);

  setenv("TORCHADA_REPORT_CC", "native", 1);
  ASSERT_EQ(attr(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
  ASSERT_EQ(attr(&minor, cudaDevAttrComputeCapabilityMinor, 0), cudaSuccess);
  EXPECT_EQ(major * 10 + minor, 22);

  setenv("TORCHADA_REPORT_CC", "9.0", 1);
  ASSERT_EQ(props(&p, 0), cudaSuccess);
  EXPECT_EQ(p.major, 9);
  EXPECT_EQ(p.minor, 0);
  unsetenv("TORCHADA_REPORT_CC");

  // Everything else stays true: MUSA's warp is 128 wide.
  ASSERT_EQ(attr(&warp, cudaDevAttrWarpSize, 0), cudaSuccess);
  EXPECT_EQ(warp, 128);
  EXPECT_EQ(p.warpSize, 128);
  EXPECT_STREQ(p.name, "MTT S4000");
  EXPECT_EQ(attr(&warp, static_cast<cudaDeviceAttr>(100000), 0), cudaErrorInvalidValue);
}

TEST_F(Translation, CudaTwelveLayoutOfDeviceProperties) {
  // CUDA 12's struct keeps fields CUDA 13 dropped (clockRate...): the _v2 export fills them.
  using GetProps12 = int (*)(void*, int);
  auto props12 = sym<GetProps12>("cudaGetDeviceProperties_v2", "libcudart.so.12");
  alignas(8) unsigned char buf[4096];
  std::memset(buf, 0xcd, sizeof buf);
  ASSERT_EQ(props12(buf, 0), 0);
  EXPECT_STREQ(reinterpret_cast<const char*>(buf), "MTT S4000");
}

TEST_F(Translation, ErrorNamesAndStrings) {
  EXPECT_STREQ(CUDA(cudaGetErrorName)(cudaErrorNotSupported), "cudaErrorNotSupported");
  EXPECT_STREQ(CUDA(cudaGetErrorName)(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation");
  EXPECT_STREQ(CUDA(cudaGetErrorName)(static_cast<cudaError_t>(123456)), "cudaErrorUnknown");
  const char* s = CUDA(cudaGetErrorString)(cudaErrorMemoryAllocation);
  ASSERT_NE(s, nullptr);
  EXPECT_GT(std::strlen(s), 0u);
}

TEST_F(Translation, LastErrorIncludesShimRefusals) {
  auto last = CUDA(cudaGetLastError);
  auto peek = CUDA(cudaPeekAtLastError);
  (void)last();
  cudaMemPool_t pool = nullptr;
  int dev = 0;
  EXPECT_EQ(CUDA(cudaDeviceGetDefaultMemPool)(&pool, dev), cudaErrorNotSupported);
  EXPECT_EQ(peek(), cudaErrorNotSupported);
  EXPECT_EQ(last(), cudaErrorNotSupported);
  EXPECT_EQ(last(), cudaSuccess);
  // A backend failure is reported too.
  EXPECT_EQ(CUDA(cudaSetDevice)(9999), cudaErrorInvalidDevice);
  EXPECT_EQ(last(), cudaErrorInvalidDevice);
}

TEST_F(Translation, PointerAttributes) {
  auto attrs = CUDA(cudaPointerGetAttributes);
  void* d = nullptr;
  ASSERT_EQ(CUDA(cudaMalloc)(&d, 4096), cudaSuccess);
  cudaPointerAttributes a{};
  ASSERT_EQ(attrs(&a, static_cast<char*>(d) + 100), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeDevice);
  EXPECT_EQ(a.device, 0);
  int on_stack = 0;
  ASSERT_EQ(attrs(&a, &on_stack), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeUnregistered);
  EXPECT_EQ(attrs(nullptr, d), cudaErrorInvalidValue);
  EXPECT_EQ(CUDA(cudaFree)(d), cudaSuccess);
}

TEST_F(Translation, MemLocationFormsReachTheDeviceOrdinalForm) {
  void* m = nullptr;
  ASSERT_EQ(CUDA(cudaMallocManaged)(&m, 1 << 16, cudaMemAttachGlobal), cudaSuccess);
  cudaMemLocation loc{};
  loc.type = cudaMemLocationTypeDevice;
  loc.id = 0;
  EXPECT_EQ(CUDA(cudaMemAdvise)(m, 1 << 16, cudaMemAdviseSetPreferredLocation, loc), cudaSuccess);
  EXPECT_EQ(CUDA(cudaMemPrefetchAsync)(m, 1 << 16, loc, 0, nullptr), cudaSuccess);
  loc.type = cudaMemLocationTypeInvalid;
  EXPECT_EQ(CUDA(cudaMemAdvise)(m, 1 << 16, cudaMemAdviseSetPreferredLocation, loc),
            cudaErrorInvalidValue);
  // CUDA 12's form takes the ordinal directly.
  using Advise12 = int (*)(const void*, size_t, int, int);
  EXPECT_EQ(sym<Advise12>("cudaMemAdvise", "libcudart.so.12")(m, 1 << 16, 3, 0), 0);
  EXPECT_EQ(CUDA(cudaDeviceSynchronize)(), cudaSuccess);
  EXPECT_EQ(CUDA(cudaFree)(m), cudaSuccess);
}

TEST_F(Translation, StreamOrderedAllocationIsEmulated) {
  cudaStream_t s = nullptr;
  ASSERT_EQ(CUDA(cudaStreamCreate)(&s), cudaSuccess);
  void* p = nullptr;
  ASSERT_EQ(CUDA(cudaMallocAsync)(&p, 1024, s), cudaSuccess);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(CUDA(cudaMemsetAsync)(p, 7, 1024, s), cudaSuccess);
  EXPECT_EQ(CUDA(cudaFreeAsync)(p, s), cudaSuccess);
  EXPECT_EQ(CUDA(cudaStreamDestroy)(s), cudaSuccess);
}

TEST_F(Translation, GraphInstantiateThreeArgumentForm) {
  cudaGraph_t g = nullptr;
  ASSERT_EQ(CUDA(cudaGraphCreate)(&g, 0), cudaSuccess);
  cudaGraphNode_t n = nullptr;
  ASSERT_EQ(CUDA(cudaGraphAddEmptyNode)(&n, g, nullptr, 0), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(CUDA(cudaGraphInstantiate)(&exec, g, 0), cudaSuccess);
  cudaGraphExecUpdateResultInfo info{};
  EXPECT_EQ(CUDA(cudaGraphExecUpdate)(exec, g, &info), cudaSuccess);
  EXPECT_EQ(info.result, cudaGraphExecUpdateSuccess);
  EXPECT_EQ(CUDA(cudaGraphLaunch)(exec, nullptr), cudaSuccess);
  EXPECT_EQ(CUDA(cudaStreamSynchronize)(nullptr), cudaSuccess);
  cudaGraphEdgeData edge{};
  edge.type = 1;  // a programmatic edge: no MUSA counterpart
  cudaGraphNode_t m = nullptr;
  ASSERT_EQ(CUDA(cudaGraphAddEmptyNode)(&m, g, nullptr, 0), cudaSuccess);
  EXPECT_EQ(CUDA(cudaGraphAddDependencies)(g, &n, &m, &edge, 1), cudaErrorNotSupported);
  EXPECT_EQ(CUDA(cudaGraphAddDependencies)(g, &n, &m, nullptr, 1), cudaSuccess);
  size_t edges = 0;
  EXPECT_EQ(CUDA(cudaGraphGetEdges)(g, nullptr, nullptr, nullptr, &edges), cudaSuccess);
  EXPECT_EQ(edges, 1u);
  EXPECT_EQ(CUDA(cudaGraphExecDestroy)(exec), cudaSuccess);
  EXPECT_EQ(CUDA(cudaGraphDestroy)(g), cudaSuccess);
}

TEST_F(Translation, VersionsAreTheCallersOwn) {
  int rt = 0, drv = 0;
  ASSERT_EQ(CUDA(cudaRuntimeGetVersion)(&rt), cudaSuccess);
  ASSERT_EQ(CUDA(cudaDriverGetVersion)(&drv), cudaSuccess);
  EXPECT_EQ(rt, CUDART_VERSION);
  EXPECT_GE(drv, rt);
  using Version = int (*)(int*);
  int rt12 = 0;
  ASSERT_EQ(sym<Version>("cudaRuntimeGetVersion", "libcudart.so.12")(&rt12), 0);
  EXPECT_GE(rt12, 12000);
  EXPECT_LT(rt12, 13000);
}

}  // namespace
