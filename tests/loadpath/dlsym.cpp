// A program that never links cudart and finds it through the global scope at run time, like
// plugins and language bindings do: dlsym(RTLD_DEFAULT) and dlvsym(RTLD_DEFAULT, name, version).
// Under LD_PRELOAD the only definitions in the process are the shim's, in NVIDIA's version
// nodes. cudaMemAdvise has two ABIs (int device in 12, cudaMemLocation in 13), so the two version
// nodes must give two different functions, each honouring its own signature.
#include "check.h"

#include <cuda_runtime_api.h>  // types and signatures only: nothing here links to cudart
#include <dlfcn.h>
#include <link.h>

#include <cstring>

namespace {

using GetDeviceCount = decltype(&cudaGetDeviceCount);
using MallocManaged = decltype(&cudaMallocManaged);
using MemRangeGetAttribute = decltype(&cudaMemRangeGetAttribute);
using Free = decltype(&cudaFree);
using MemAdvise13 = decltype(&cudaMemAdvise);
using MemAdvise12 = cudaError_t (*)(const void*, size_t, cudaMemoryAdvise, int device);

template <typename Fn>
Fn Lookup(const char* name, const char* version) {
  void* p = version ? dlvsym(RTLD_DEFAULT, name, version) : dlsym(RTLD_DEFAULT, name);
  Dl_info info{};
  const char* where = p && dladdr(p, &info) && info.dli_fname ? info.dli_fname : "-";
  std::printf("  %s@%s -> %p (%s)\n", name, version ? version : "default", p, where);
  EXPECT(p != nullptr);
  return reinterpret_cast<Fn>(p);
}

void CheckCount(GetDeviceCount fn) {
  if (!fn) return;
  int count = -1;
  EXPECT_OK(fn(&count));
  EXPECT(count >= 1);
}

int PreferredLocation(MemRangeGetAttribute get, const void* p, size_t bytes) {
  int location = -42;
  EXPECT_OK(get(&location, sizeof(location), cudaMemRangeAttributePreferredLocation, p, bytes));
  return location;
}

void CheckMemAdvise() {
  std::printf("cudaMemAdvise, one function per ABI\n");
  auto advise12 = Lookup<MemAdvise12>("cudaMemAdvise", "libcudart.so.12");
  auto advise13 = Lookup<MemAdvise13>("cudaMemAdvise", "libcudart.so.13");
  auto malloc_managed = Lookup<MallocManaged>("cudaMallocManaged", "libcudart.so.13");
  auto get = Lookup<MemRangeGetAttribute>("cudaMemRangeGetAttribute", "libcudart.so.13");
  auto cuda_free = Lookup<Free>("cudaFree", "libcudart.so.13");
  EXPECT(reinterpret_cast<void*>(advise12) != reinterpret_cast<void*>(advise13));
  if (!advise12 || !advise13 || !malloc_managed || !get || !cuda_free) return;

  const size_t bytes = 1 << 16;
  void* p = nullptr;
  if (!EXPECT_OK(malloc_managed(&p, bytes, cudaMemAttachGlobal))) return;
  cudaMemLocation device0{};
  device0.type = cudaMemLocationTypeDevice;
  device0.id = 0;
  EXPECT_OK(advise13(p, bytes, cudaMemAdviseSetPreferredLocation, device0));
  EXPECT(PreferredLocation(get, p, bytes) == 0);
  EXPECT_OK(advise12(p, bytes, cudaMemAdviseSetPreferredLocation, cudaCpuDeviceId));
  EXPECT(PreferredLocation(get, p, bytes) == cudaCpuDeviceId);
  EXPECT_OK(advise12(p, bytes, cudaMemAdviseSetPreferredLocation, 0));
  EXPECT(PreferredLocation(get, p, bytes) == 0);
  EXPECT_OK(cuda_free(p));
}

// Proves the premise: no libcudart is mapped, so every hit above came from the preload.
int ListCudart(dl_phdr_info* info, size_t, void* found) {
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  const char* base = std::strrchr(name, '/');
  base = base ? base + 1 : name;
  if (std::strncmp(base, "libcudart", 9) == 0) {
    std::printf("  unexpected: %s is loaded\n", name);
    *static_cast<bool*>(found) = true;
  }
  return 0;
}

}  // namespace

int main() {
  bool cudart_loaded = false;
  dl_iterate_phdr(ListCudart, &cudart_loaded);
  EXPECT(!cudart_loaded);

  std::printf("cudaGetDeviceCount through dlsym / dlvsym\n");
  CheckCount(Lookup<GetDeviceCount>("cudaGetDeviceCount", nullptr));
  CheckCount(Lookup<GetDeviceCount>("cudaGetDeviceCount", "libcudart.so.13"));
  CheckCount(Lookup<GetDeviceCount>("cudaGetDeviceCount", "libcudart.so.12"));
  // The CUDA 12 header renames cudaGetDeviceProperties; both spellings must exist.
  Lookup<void*>("cudaGetDeviceProperties_v2", "libcudart.so.12");
  Lookup<void*>("cudaGetDeviceProperties", "libcudart.so.13");
  CheckMemAdvise();
  return loadpath::Report("dlsym");
}
