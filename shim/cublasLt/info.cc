// cuBLASLt's informational calls. Versions answer with the caller's own header (the cuBLASLt it
// was built against: cuBLASLt numbers its version like cuBLAS, CUBLAS_VERSION), as the runtime's
// do: programs gate features on them. muBLASLt's own version goes to the log. Status names and
// strings describe cuBLAS's codes (the ones cuBLASLt returns). Compiled once per CUDA ABI.
#include "cublasLt/cublasLt.h"
// after cublasLt.h, which defines CUBLASAPI for cublas_api.h
#include "cublas/status_text.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublasLt12_impl.h"
#else
#include "gen/cublasLt13_impl.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {}  // namespace

namespace impl {

// An unknown code gets cuBLASLt's own answer for one.
const char* cublasLtGetStatusName(cublasStatus_t status) {
  const CublasStatusText* t = find_cublas_status(status);
  return t ? t->name : "unrecognized status";
}

const char* cublasLtGetStatusString(cublasStatus_t status) {
  const CublasStatusText* t = find_cublas_status(status);
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
