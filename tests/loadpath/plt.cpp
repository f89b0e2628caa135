// Direct link: NEEDs libcudart.so.13 and calls it through the PLT with versioned references
// (cudaMalloc@libcudart.so.13). Only the preloaded shim can make these calls succeed here; the
// same binary without the preload reaches NVIDIA's library, which finds no driver.
#include "check.h"
#include "roundtrip.h"

int main() {
  int count = -1;
  if (!EXPECT_OK(cudaGetDeviceCount(&count))) return loadpath::Report("plt");
  EXPECT(count >= 1);
  EXPECT_OK(loadpath::RoundTrip(1 << 20, 3));
  return loadpath::Report("plt");
}
