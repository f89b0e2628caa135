// cuBLAS status codes (returned by cuBLAS and cuBLASLt alike): names and descriptions, for the
// GetStatusName/GetStatusString calls of both libraries. Null for a code cuBLAS does not define.
#pragma once

#include <cublas_api.h>

namespace torchada {
inline namespace TORCHADA_ABI_NS {

struct CublasStatusText {
  cublasStatus_t status;
  const char* name;
  const char* text;
};

inline const CublasStatusText* find_cublas_status(cublasStatus_t s) {
  static constexpr CublasStatusText kTexts[] = {
      {CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS", "success"},
      {CUBLAS_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED",
       "the library was not initialized (no muBLAS/muBLASLt backend, or an invalid handle)"},
      {CUBLAS_STATUS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED", "resource allocation failed"},
      {CUBLAS_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE",
       "an invalid or unsupported value was passed as an argument"},
      {CUBLAS_STATUS_ARCH_MISMATCH, "CUBLAS_STATUS_ARCH_MISMATCH",
       "the device lacks a feature the function needs"},
      {CUBLAS_STATUS_MAPPING_ERROR, "CUBLAS_STATUS_MAPPING_ERROR",
       "an access to device memory failed"},
      {CUBLAS_STATUS_EXECUTION_FAILED, "CUBLAS_STATUS_EXECUTION_FAILED",
       "the function failed to run on the device"},
      {CUBLAS_STATUS_INTERNAL_ERROR, "CUBLAS_STATUS_INTERNAL_ERROR",
       "an internal operation failed"},
      {CUBLAS_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED",
       "the requested functionality is not supported (on MUSA, through torchada)"},
      {CUBLAS_STATUS_LICENSE_ERROR, "CUBLAS_STATUS_LICENSE_ERROR", "license error"},
  };
  for (const CublasStatusText& t : kTexts)
    if (t.status == s) return &t;
  return nullptr;
}

}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
