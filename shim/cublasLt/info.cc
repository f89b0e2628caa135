// cuBLASLt's informational calls. Versions answer with the caller's own header (the cuBLASLt it
// was built against: cuBLASLt numbers its version like cuBLAS, CUBLAS_VERSION), as the runtime's
// do: programs gate features on them. muBLASLt's own version goes to the log. Status names and
// strings describe cuBLAS's codes (the ones cuBLASLt returns). Compiled once per CUDA ABI.
#include "cublasLt/cublasLt.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublasLt12_impl.h"
#else
#include "gen/cublasLt13_impl.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

struct StatusText {
  cublasStatus_t status;
  const char* name;
  const char* text;
};
constexpr StatusText kStatusTexts[] = {
    {CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS", "success"},
    {CUBLAS_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED",
     "the library was not initialized (no muBLASLt backend, or an invalid handle)"},
    {CUBLAS_STATUS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED", "resource allocation failed"},
    {CUBLAS_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE",
     "an invalid or unsupported value was passed as an argument"},
    {CUBLAS_STATUS_ARCH_MISMATCH, "CUBLAS_STATUS_ARCH_MISMATCH",
     "the device lacks a feature the function needs"},
    {CUBLAS_STATUS_MAPPING_ERROR, "CUBLAS_STATUS_MAPPING_ERROR",
     "an access to device memory failed"},
    {CUBLAS_STATUS_EXECUTION_FAILED, "CUBLAS_STATUS_EXECUTION_FAILED",
     "the function failed to run on the device"},
    {CUBLAS_STATUS_INTERNAL_ERROR, "CUBLAS_STATUS_INTERNAL_ERROR", "an internal operation failed"},
    {CUBLAS_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED",
     "the requested functionality is not supported (on MUSA, through torchada)"},
    {CUBLAS_STATUS_LICENSE_ERROR, "CUBLAS_STATUS_LICENSE_ERROR", "license error"},
};

const StatusText* find_status(cublasStatus_t s) {
  for (const StatusText& t : kStatusTexts)
    if (t.status == s) return &t;
  return nullptr;
}

}  // namespace

namespace impl {

// An unknown code gets cuBLASLt's own answer for one.
const char* cublasLtGetStatusName(cublasStatus_t status) {
  const StatusText* t = find_status(status);
  return t ? t->name : "unrecognized status";
}

const char* cublasLtGetStatusString(cublasStatus_t status) {
  const StatusText* t = find_status(status);
  return t ? t->text : "unrecognized status";
}

size_t cublasLtGetVersion() {
  // muBLASLt's own version, for the debug log only.
  if (log_enabled(LogLevel::kDebug)) {
    const auto& be = mublasLt_backend();
    if (be.table.mublasLtGetVersion) {
      TORCHADA_LOG(kDebug, "cublasLtGetVersion: muBLASLt reports %zu, answering cuBLASLt %d",
                   be.table.mublasLtGetVersion(), CUBLAS_VERSION);
    }
  }
  return CUBLAS_VERSION;
}

size_t cublasLtGetCudartVersion() { return CUDART_VERSION; }

cublasStatus_t cublasLtGetProperty(libraryPropertyType type, int* value) {
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

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
