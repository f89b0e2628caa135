// A CUDA 12 application: built against the CUDA 12 headers and linked to libcudart.so.12, so its
// imports carry the libcudart.so.12 version and the CUDA 12 signatures. Checks the entry points
// whose ABI changed in CUDA 13: cudaGetDeviceProperties (the 12 header renames it to
// cudaGetDeviceProperties_v2, with a 1032-byte struct; 13's struct is 1008 bytes) and
// cudaMemAdvise (an int device in 12, a cudaMemLocation in 13).
#include "check.h"
#include "roundtrip.h"

#include <cstring>

static_assert(CUDART_VERSION / 1000 == 12, "must be compiled against the CUDA 12 headers");

namespace {

struct PropsWithCanary {
  cudaDeviceProp prop;
  unsigned char canary[256];
};

int Attr(cudaDeviceAttr attr) {
  int v = -1;
  EXPECT_OK(cudaDeviceGetAttribute(&v, attr, 0));
  return v;
}

void CheckProperties() {
  std::printf("cudaGetDeviceProperties (CUDA 12 layout)\n");
  PropsWithCanary p;
  std::memset(&p, 0xA5, sizeof(p));
  if (!EXPECT_OK(cudaGetDeviceProperties(&p.prop, 0))) return;
  const cudaDeviceProp& prop = p.prop;
  std::printf("  name \"%s\", cc %d.%d, %d SMs\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount);
  bool canary_intact = true;
  for (unsigned char c : p.canary) canary_intact = canary_intact && c == 0xA5;
  EXPECT(canary_intact);
  // Fields spread over the whole struct, several after the ones CUDA 13 removed (clockRate,
  // memoryClockRate...), so a struct filled with the wrong layout shows up.
  EXPECT(prop.major == Attr(cudaDevAttrComputeCapabilityMajor));
  EXPECT(prop.minor == Attr(cudaDevAttrComputeCapabilityMinor));
  EXPECT(prop.warpSize == Attr(cudaDevAttrWarpSize));
  EXPECT(prop.multiProcessorCount == Attr(cudaDevAttrMultiProcessorCount));
  EXPECT(prop.l2CacheSize == Attr(cudaDevAttrL2CacheSize));
  EXPECT(prop.maxThreadsPerMultiProcessor == Attr(cudaDevAttrMaxThreadsPerMultiProcessor));
  EXPECT(prop.unifiedAddressing == Attr(cudaDevAttrUnifiedAddressing));
  EXPECT(prop.managedMemory == Attr(cudaDevAttrManagedMemory));
  EXPECT(prop.pciBusID == Attr(cudaDevAttrPciBusId));
  EXPECT(prop.maxBlocksPerMultiProcessor == Attr(cudaDevAttrMaxBlocksPerMultiprocessor));
  size_t free_bytes = 0, total_bytes = 0;
  EXPECT_OK(cudaMemGetInfo(&free_bytes, &total_bytes));
  EXPECT(prop.totalGlobalMem == total_bytes);
}

// The CUDA 12 cudaMemAdvise takes the device as an int (cudaCpuDeviceId for the host); the
// answer is read back with cudaMemRangeGetAttribute, whose signature did not change.
void CheckMemAdvise() {
  std::printf("cudaMemAdvise (CUDA 12 signature, int device)\n");
  const size_t bytes = 1 << 16;
  void* p = nullptr;
  if (!EXPECT_OK(cudaMallocManaged(&p, bytes, cudaMemAttachGlobal))) return;
  int location = -42;
  EXPECT_OK(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, 0));
  EXPECT_OK(cudaMemRangeGetAttribute(&location, sizeof(location),
                                     cudaMemRangeAttributePreferredLocation, p, bytes));
  EXPECT(location == 0);
  EXPECT_OK(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, cudaCpuDeviceId));
  EXPECT_OK(cudaMemRangeGetAttribute(&location, sizeof(location),
                                     cudaMemRangeAttributePreferredLocation, p, bytes));
  EXPECT(location == cudaCpuDeviceId);
  int read_mostly = -1;
  EXPECT_OK(cudaMemAdvise(p, bytes, cudaMemAdviseSetReadMostly, 0));
  EXPECT_OK(cudaMemRangeGetAttribute(&read_mostly, sizeof(read_mostly),
                                     cudaMemRangeAttributeReadMostly, p, bytes));
  EXPECT(read_mostly == 1);
  EXPECT_OK(cudaFree(p));
}

}  // namespace

int main() {
  int count = -1;
  if (!EXPECT_OK(cudaGetDeviceCount(&count))) return loadpath::Report("cuda12_abi");
  EXPECT(count >= 1);
  int runtime = 0;
  EXPECT_OK(cudaRuntimeGetVersion(&runtime));
  std::printf("  runtime version %d\n", runtime);
  EXPECT(runtime / 1000 == 12);  // what NVIDIA's libcudart.so.12 answers
  EXPECT_OK(loadpath::RoundTrip(1 << 20, 5));
  CheckProperties();
  CheckMemAdvise();
  return loadpath::Report("cuda12_abi");
}
