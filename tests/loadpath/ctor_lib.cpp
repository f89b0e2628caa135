// A library that uses cudart from its ELF constructor (as libraries that allocate at load time
// do). ld.so runs constructors of preloaded objects after those of the libraries loaded for the
// executable, so this runs before the shim's own constructor: the shim must initialise lazily on
// first call.
#include "ctor_lib.h"

#include "roundtrip.h"

namespace {

CtorResults g_results;

__attribute__((constructor)) void UseCudartBeforeMain() {
  g_results.ran = true;
  g_results.count_rc = cudaGetDeviceCount(&g_results.count);
  void* p = nullptr;
  g_results.malloc_rc = cudaMalloc(&p, 4096);
  g_results.malloc_nonnull = p != nullptr;
  g_results.free_rc = cudaFree(p);
  g_results.roundtrip_rc = loadpath::RoundTrip(4096, 9);
}

}  // namespace

const CtorResults* LoadpathCtorResults() { return &g_results; }
