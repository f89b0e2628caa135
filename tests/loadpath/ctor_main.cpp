// Checks what libloadpath_ctor.so's constructor recorded, then that the runtime it initialised
// early keeps working from main().
#include "check.h"
#include "ctor_lib.h"
#include "roundtrip.h"

int main() {
  const CtorResults& r = *LoadpathCtorResults();
  std::printf("results recorded by the library constructor\n");
  EXPECT(r.ran);
  EXPECT_OK(r.count_rc);
  EXPECT(r.count >= 1);
  EXPECT_OK(r.malloc_rc);
  EXPECT(r.malloc_nonnull);
  EXPECT_OK(r.free_rc);
  EXPECT_OK(r.roundtrip_rc);

  std::printf("the same runtime from main()\n");
  int count = -1;
  EXPECT_OK(cudaGetDeviceCount(&count));
  EXPECT(count == r.count);
  EXPECT_OK(loadpath::RoundTrip(1 << 16, 11));
  return loadpath::Report("ctor");
}
