// cuBLAS's informational calls. Versions answer with the caller's own cuBLAS version (the header
// it was built against), like the runtime's: programs gate features on it. muBLAS's own version
// goes to the log. Status strings describe cuBLAS's codes; muBLAS's string for a failure it
// reported is logged, through whichever name the loaded library exports (mublasGetStatusString
// from SDK 4.2, mublasStatus_to_string before).
#include <dlfcn.h>

#include "cublas/cublas.h"
#include "cublas/status_text.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublas12_impl.h"
#else
#include "gen/cublas13_impl.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace impl {

const char* cublasGetStatusName(cublasStatus_t status) {
  const CublasStatusText* t = find_cublas_status(status);
  return t ? t->name : "CUBLAS_STATUS_UNKNOWN";
}

const char* cublasGetStatusString(cublasStatus_t status) {
  const CublasStatusText* t = find_cublas_status(status);
  return t ? t->text : "unknown cuBLAS status";
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int* version) {
  if (version == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  const auto& be = mublas_backend();
  if (be.failed) return CUBLAS_STATUS_NOT_INITIALIZED;
  // The handle must be a live muBLAS handle, as with cuBLAS.
  if (!blas_handles::known_cublas(handle)) return CublasLib::bad_handle(Fn::k_cublasGetVersion_v2);
  int musa_version = 0;
  if (be.table.mublasGetVersion) {
    mublasStatus_t s = be.table.mublasGetVersion(convert<mublasHandle_t>(handle), &musa_version);
    if (s != MUBLAS_STATUS_SUCCESS)
      return CublasLib::fail(Fn::k_cublasGetVersion_v2, CublasLib::status(s));
    TORCHADA_LOG(kDebug, "cublasGetVersion: muBLAS reports %d, answering cuBLAS %d", musa_version,
                 CUBLAS_VERSION);
  }
  *version = CUBLAS_VERSION;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  switch (type) {
    case MAJOR_VERSION:
      *value = CUBLAS_VER_MAJOR;
      return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION:
      *value = CUBLAS_VER_MINOR;
      return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL:
      *value = CUBLAS_VER_PATCH;
      return CUBLAS_STATUS_SUCCESS;
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

size_t cublasGetCudartVersion() { return CUDART_VERSION; }

}  // namespace impl

// muBLAS's own text for a status (logs only): the name the loaded SDK exports.
const char* mublas_status_text(mublasStatus_t s) {
  using Fn = const char* (*)(mublasStatus_t);
  static const Fn text = [] {
    const LoadedLibrary& lib = load_musa_library(MusaLibrary::kMublas);
    if (lib.handle == nullptr) return Fn{nullptr};
    for (const char* name : {"mublasGetStatusString", "mublasStatus_to_string"})
      if (void* f = dlsym(lib.handle, name)) return reinterpret_cast<Fn>(f);
    return Fn{nullptr};
  }();
  const char* t = text ? text(s) : nullptr;
  return t ? t : "(muBLAS has no status text)";
}

}  // namespace TORCHADA_ABI_NS

}  // namespace torchada
