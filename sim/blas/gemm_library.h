// The GEMMs of the simulated muBLAS and muBLASLt: OpenBLAS's (linked), or those of another CBLAS
// library loaded at run time, chosen by TORCHADA_SIM_GEMM:
//   unset     the library the build found (TORCHADA_SIM_GEMM_DEFAULT: Intel MKL from PyPI when
//             scripts/setup-deps.sh unpacked it under .deps/mkl), else OpenBLAS
//   openblas  OpenBLAS
//   <path>    that library's cblas_{s,d,c,z}gemm (LP64 CBLAS ABI, as OpenBLAS's cblas.h declares)
// Why: PyTorch's CPU kernels compute their matrix products with MKL. The same products through
// the simulator then round alike, so a CUDA script under torchada follows the same script on
// device="cpu" step by step (OpenBLAS sums in another order: a few ulps per product, which an SGD
// run at a high learning rate amplifies), and they run as fast as PyTorch's own (MKL's small
// AVX-512 GEMMs are 20-30% faster than OpenBLAS's on such shapes). Only the four GEMMs are taken:
// every other routine stays OpenBLAS's. Header-only: each library resolves its own table once.
#pragma once

#include <cblas.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "settings/settings.h"

namespace sim_gemm {

struct Table {
  decltype(&cblas_sgemm) s = cblas_sgemm;
  decltype(&cblas_dgemm) d = cblas_dgemm;
  decltype(&cblas_cgemm) c = cblas_cgemm;
  decltype(&cblas_zgemm) z = cblas_zgemm;
};

inline Table load_table() {
  Table t;
  const char* path = torchada::settings::text(torchada::settings::Id::kSimGemm);
#ifdef TORCHADA_SIM_GEMM_DEFAULT
  if (path == nullptr) path = TORCHADA_SIM_GEMM_DEFAULT;
#endif
  if (path == nullptr || std::strcmp(path, "openblas") == 0) return t;
  auto fail = [&](const char* why) {
    std::fprintf(stderr, "[torchada sim] GEMM library %s: %s; GEMMs use OpenBLAS\n", path, why);
    return Table{};
  };
  // MKL's single dynamic library loads its parts at the first call and exits the process when
  // one is missing: check for them first. Threading: GNU OpenMP (honours OMP_NUM_THREADS like
  // OpenBLAS's threads) where libgomp loads, else sequential; MKL_THREADING_LAYER decides if set.
  const char* slash = std::strrchr(path, '/');
  const std::string dir(path, slash == nullptr ? 0 : static_cast<size_t>(slash - path + 1));
  const bool mkl = std::strncmp(slash == nullptr ? path : slash + 1, "libmkl_rt.", 10) == 0;
  int layer = -1;
  if (mkl) {
    for (const char* part : {"libmkl_intel_lp64.so.3", "libmkl_core.so.3"})
      if (access((dir + part).c_str(), R_OK) != 0)
        return fail("incomplete: no libmkl_intel_lp64/core");
    const bool gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_LOCAL) != nullptr &&
                      access((dir + "libmkl_gnu_thread.so.3").c_str(), R_OK) == 0;
    if (std::getenv("MKL_THREADING_LAYER") == nullptr) layer = gomp ? 3 /* GNU */ : 1 /* SEQ */;
  }
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return fail(dlerror());
  const Table loaded{reinterpret_cast<decltype(t.s)>(dlsym(h, "cblas_sgemm")),
                     reinterpret_cast<decltype(t.d)>(dlsym(h, "cblas_dgemm")),
                     reinterpret_cast<decltype(t.c)>(dlsym(h, "cblas_cgemm")),
                     reinterpret_cast<decltype(t.z)>(dlsym(h, "cblas_zgemm"))};
  if (!loaded.s || !loaded.d || !loaded.c || !loaded.z) return fail("no cblas_?gemm");
  using SetLayer = int (*)(int);
  if (auto set = reinterpret_cast<SetLayer>(dlsym(h, "MKL_Set_Threading_Layer"));
      set != nullptr && layer >= 0)
    set(layer);
  return loaded;
}

inline const Table& table() {
  static const Table t = load_table();
  return t;
}

}  // namespace sim_gemm
