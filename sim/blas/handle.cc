// Handles, modes, status names and the host <-> device transfer helpers.
#include "common.h"

using namespace mublas_sim;

MUBLAS_C(mublasStatus_t) mublasCreate(mublasHandle_t* handle) {
  if (handle == nullptr) return MUBLAS_STATUS_INVALID_POINTER;
  auto* h = new (std::nothrow) _mublasHandle_t;
  if (h == nullptr) return MUBLAS_STATUS_MEMORY_ERROR;
  *handle = h;
  return MUBLAS_STATUS_SUCCESS;
}

// Waits for the work queued on the handle's stream, as cuBLAS's destroy synchronises; work
// captured into graphs is freed with the handle.
MUBLAS_C(mublasStatus_t) mublasDestroy(mublasHandle_t handle) {
  if (handle == nullptr) return MUBLAS_STATUS_INVALID_HANDLE;
  musaStreamCaptureStatus cs = musaStreamCaptureStatusNone;
  if (musaStreamIsCapturing(handle->stream, &cs) == musaSuccess &&
      cs == musaStreamCaptureStatusNone)
    musaStreamSynchronize(handle->stream);
  delete handle;
  return MUBLAS_STATUS_SUCCESS;
}

MUBLAS_C(mublasStatus_t) mublasGetVersion(mublasHandle_t, int* version) {
  if (version == nullptr) return MUBLAS_STATUS_INVALID_POINTER;
  *version =
      MUBLAS_SIM_VERSION_MAJOR * 10000 + MUBLAS_SIM_VERSION_MINOR * 100 + MUBLAS_SIM_VERSION_PATCH;
  return MUBLAS_STATUS_SUCCESS;
}

MUBLAS_C(mublasStatus_t) mublasGetProperty(mublasLibraryPropertyType_t type, int* value) {
  if (value == nullptr) return MUBLAS_STATUS_INVALID_POINTER;
  switch (enum_value(type)) {
    case MUBLAS_PROPERTY_MAJOR_VERSION:
      *value = MUBLAS_SIM_VERSION_MAJOR;
      return MUBLAS_STATUS_SUCCESS;
    case MUBLAS_PROPERTY_MINOR_VERSION:
      *value = MUBLAS_SIM_VERSION_MINOR;
      return MUBLAS_STATUS_SUCCESS;
    case MUBLAS_PROPERTY_PATCH_LEVEL:
      *value = MUBLAS_SIM_VERSION_PATCH;
      return MUBLAS_STATUS_SUCCESS;
  }
  return MUBLAS_STATUS_INVALID_VALUE;
}

// The workspace is recorded (the simulator allocates its own scratch memory). As in cuBLAS it
// must be 256-byte aligned; NULL or size 0 returns to the default.
MUBLAS_C(mublasStatus_t)
mublasSetWorkspace(mublasHandle_t handle, void* workspace, size_t workspaceSizeInBytes) {
  if (handle == nullptr) return MUBLAS_STATUS_INVALID_HANDLE;
  if (workspace == nullptr && workspaceSizeInBytes != 0) return MUBLAS_STATUS_INVALID_POINTER;
  if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0) return MUBLAS_STATUS_INVALID_VALUE;
  handle->workspace = workspaceSizeInBytes != 0 ? workspace : nullptr;
  handle->workspace_size = workspace != nullptr ? workspaceSizeInBytes : 0;
  return MUBLAS_STATUS_SUCCESS;
}

// Setting a stream drops a user workspace, as cuBLAS does.
MUBLAS_C(mublasStatus_t) mublasSetStream(mublasHandle_t handle, musaStream_t streamId) {
  if (handle == nullptr) return MUBLAS_STATUS_INVALID_HANDLE;
  handle->stream = streamId;
  handle->workspace = nullptr;
  handle->workspace_size = 0;
  return MUBLAS_STATUS_SUCCESS;
}

namespace {

// The getters and setters of the handle's modes.
template <class V>
mublasStatus_t get_field(mublasHandle_t h, V _mublasHandle_t::*field, V* out) {
  if (h == nullptr) return MUBLAS_STATUS_INVALID_HANDLE;
  if (out == nullptr) return MUBLAS_STATUS_INVALID_POINTER;
  *out = h->*field;
  return MUBLAS_STATUS_SUCCESS;
}

template <class V>
mublasStatus_t set_field(mublasHandle_t h, V _mublasHandle_t::*field, V v, bool ok) {
  if (h == nullptr) return MUBLAS_STATUS_INVALID_HANDLE;
  if (!ok) return MUBLAS_STATUS_INVALID_VALUE;
  h->*field = v;
  return MUBLAS_STATUS_SUCCESS;
}

bool valid_math(const mublasMath_t& m) {
  const int base = enum_value(m) & ~MUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
  return base == MUBLAS_DEFAULT_MATH || base == MUBLAS_TENSOR_OP_MATH ||
         base == MUBLAS_PEDANTIC_MATH || base == MUBLAS_TF32_TENSOR_OP_MATH;
}

}  // namespace

MUBLAS_C(mublasStatus_t) mublasGetStream(mublasHandle_t handle, musaStream_t* streamId) {
  return get_field(handle, &_mublasHandle_t::stream, streamId);
}
MUBLAS_C(mublasStatus_t) mublasGetPointerMode(mublasHandle_t handle, mublasPointerMode_t* mode) {
  return get_field(handle, &_mublasHandle_t::pointer_mode, mode);
}
// The modes' enumerations have small ranges: values are checked from their bytes (enum_value).
MUBLAS_C(mublasStatus_t) mublasSetPointerMode(mublasHandle_t handle, mublasPointerMode_t mode) {
  const int v = enum_value(mode);
  return set_field(handle, &_mublasHandle_t::pointer_mode, static_cast<mublasPointerMode_t>(v & 1),
                   v == MUBLAS_POINTER_MODE_HOST || v == MUBLAS_POINTER_MODE_DEVICE);
}
MUBLAS_C(mublasStatus_t) mublasGetAtomicsMode(mublasHandle_t handle, mublasAtomicsMode_t* mode) {
  return get_field(handle, &_mublasHandle_t::atomics, mode);
}
MUBLAS_C(mublasStatus_t) mublasSetAtomicsMode(mublasHandle_t handle, mublasAtomicsMode_t mode) {
  const int v = enum_value(mode);
  return set_field(handle, &_mublasHandle_t::atomics, static_cast<mublasAtomicsMode_t>(v & 1),
                   v == MUBLAS_ATOMICS_NOT_ALLOWED || v == MUBLAS_ATOMICS_ALLOWED);
}
MUBLAS_C(mublasStatus_t) mublasGetMathMode(mublasHandle_t handle, mublasMath_t* mode) {
  return get_field(handle, &_mublasHandle_t::math, mode);
}
MUBLAS_C(mublasStatus_t) mublasSetMathMode(mublasHandle_t handle, mublasMath_t mode) {
  return set_field(handle, &_mublasHandle_t::math, mode, valid_math(mode));
}
MUBLAS_C(mublasStatus_t) mublasGetSmCountTarget(mublasHandle_t handle, int* smCountTarget) {
  return get_field(handle, &_mublasHandle_t::sm_count_target, smCountTarget);
}
MUBLAS_C(mublasStatus_t) mublasSetSmCountTarget(mublasHandle_t handle, int smCountTarget) {
  return set_field(handle, &_mublasHandle_t::sm_count_target, smCountTarget, smCountTarget >= 0);
}

// ---- Status names

namespace {

struct StatusText {
  mublasStatus_t status;
  const char* name;
  const char* text;
};

constexpr StatusText kStatusText[] = {
    {MUBLAS_STATUS_SUCCESS, "MUBLAS_STATUS_SUCCESS", "success"},
    {MUBLAS_STATUS_INVALID_HANDLE, "MUBLAS_STATUS_INVALID_HANDLE",
     "the handle is NULL or not initialised"},
    {MUBLAS_STATUS_NOT_IMPLEMENTED, "MUBLAS_STATUS_NOT_IMPLEMENTED",
     "the function or this combination of arguments is not implemented"},
    {MUBLAS_STATUS_INVALID_POINTER, "MUBLAS_STATUS_INVALID_POINTER",
     "a required pointer argument is NULL or not usable"},
    {MUBLAS_STATUS_INVALID_SIZE, "MUBLAS_STATUS_INVALID_SIZE",
     "a size, leading dimension, increment or count is out of range"},
    {MUBLAS_STATUS_MEMORY_ERROR, "MUBLAS_STATUS_MEMORY_ERROR", "memory allocation failed"},
    {MUBLAS_STATUS_INTERNAL_ERROR, "MUBLAS_STATUS_INTERNAL_ERROR",
     "an internal operation failed (for example, queueing work on the stream)"},
    {MUBLAS_STATUS_PERF_DEGRADED, "MUBLAS_STATUS_PERF_DEGRADED",
     "performance degraded because of low device memory"},
    {MUBLAS_STATUS_SIZE_QUERY_MISMATCH, "MUBLAS_STATUS_SIZE_QUERY_MISMATCH",
     "unmatched start/stop size query"},
    {MUBLAS_STATUS_SIZE_INCREASED, "MUBLAS_STATUS_SIZE_INCREASED",
     "queried device memory size increased"},
    {MUBLAS_STATUS_SIZE_UNCHANGED, "MUBLAS_STATUS_SIZE_UNCHANGED",
     "queried device memory size unchanged"},
    {MUBLAS_STATUS_INVALID_VALUE, "MUBLAS_STATUS_INVALID_VALUE",
     "an argument has a value that is not allowed (for example, an unknown enumerator)"},
    {MUBLAS_STATUS_CONTINUE, "MUBLAS_STATUS_CONTINUE",
     "nothing preventing the function to proceed"},
    {MUBLAS_STATUS_CHECK_NUMERICS_FAIL, "MUBLAS_STATUS_CHECK_NUMERICS_FAIL",
     "a numerical check found NaN or infinity"},
};

const StatusText* find_status(mublasStatus_t s) {
  for (const StatusText& t : kStatusText)
    if (t.status == s) return &t;
  return nullptr;
}

}  // namespace

MUBLAS_C(const char*) mublasGetStatusName(mublasStatus_t status) {
  const StatusText* t = find_status(status);
  return t != nullptr ? t->name : "MUBLAS_STATUS_UNKNOWN";
}

namespace {
const char* status_text(mublasStatus_t status) {
  const StatusText* t = find_status(status);
  return t != nullptr ? t->text : "unknown muBLAS status";
}
}  // namespace

#ifndef MUBLAS_SIM_LEGACY_API
MUBLAS_C(const char*) mublasGetStatusString(mublasStatus_t status) { return status_text(status); }
#else
MUBLAS_C(const char*) mublasStatus_to_string(mublasStatus_t status) { return status_text(status); }
#endif

// ---- Transfers: strided copies through the runtime's 2D copies, so that the synchronous forms
// order with the legacy stream and the asynchronous ones with their stream, and pointers on the
// wrong side are refused by the runtime.

namespace {

mublasStatus_t from_runtime(musaError_t e) {
  switch (e) {
    case musaSuccess:
      return MUBLAS_STATUS_SUCCESS;
    case musaErrorInvalidValue:  // sizes are checked first: the runtime refused a pointer
      return MUBLAS_STATUS_INVALID_POINTER;
    case musaErrorInvalidResourceHandle:
      return MUBLAS_STATUS_INVALID_VALUE;
    default:
      return MUBLAS_STATUS_INTERNAL_ERROR;
  }
}

// `count` elements of `elem` bytes every `spitch` / `dpitch` elements, `rows` elements a block.
mublasStatus_t transfer(int rows, int cols, int elem, const void* src, int sld, void* dst, int dld,
                        musaMemcpyKind kind, const musaStream_t* stream) {
  Check c;
  c.dim(rows).dim(cols).size_if(elem <= 0 || sld <= 0 || dld <= 0);
  MUBLAS_TRY(c.status());
  if (rows == 0 || cols == 0) return MUBLAS_STATUS_SUCCESS;
  MUBLAS_TRY(c.ptrs(src, dst).status());
  const size_t e = static_cast<size_t>(elem);
  const size_t width = static_cast<size_t>(rows) * e;
  const size_t sp = static_cast<size_t>(sld) * e, dp = static_cast<size_t>(dld) * e;
  return from_runtime(stream != nullptr
                          ? musaMemcpy2DAsync(dst, dp, src, sp, width, cols, kind, *stream)
                          : musaMemcpy2D(dst, dp, src, sp, width, cols, kind));
}

// A vector: n blocks of one element.
mublasStatus_t transfer_vec(int n, int elem, const void* x, int incx, void* y, int incy,
                            musaMemcpyKind kind, const musaStream_t* stream) {
  return transfer(1, n, elem, x, incx, y, incy, kind, stream);
}

// A matrix: ld >= rows.
mublasStatus_t transfer_mat(int rows, int cols, int elem, const void* a, int lda, void* b, int ldb,
                            musaMemcpyKind kind, const musaStream_t* stream) {
  Check c;
  c.dim(rows).ld(lda, rows).ld(ldb, rows);
  MUBLAS_TRY(c.status());
  return transfer(rows, cols, elem, a, lda, b, ldb, kind, stream);
}

}  // namespace

MUBLAS_C(mublasStatus_t)
mublasSetVector(int n, int elemSize, const void* x, int incx, void* devicePtr, int incy) {
  return transfer_vec(n, elemSize, x, incx, devicePtr, incy, musaMemcpyHostToDevice, nullptr);
}
MUBLAS_C(mublasStatus_t)
mublasGetVector(int n, int elemSize, const void* x, int incx, void* y, int incy) {
  return transfer_vec(n, elemSize, x, incx, y, incy, musaMemcpyDeviceToHost, nullptr);
}
MUBLAS_C(mublasStatus_t)
mublasSetMatrix(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb) {
  return transfer_mat(rows, cols, elemSize, A, lda, B, ldb, musaMemcpyHostToDevice, nullptr);
}
MUBLAS_C(mublasStatus_t)
mublasGetMatrix(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb) {
  return transfer_mat(rows, cols, elemSize, A, lda, B, ldb, musaMemcpyDeviceToHost, nullptr);
}
MUBLAS_C(mublasStatus_t)
mublasSetVectorAsync(int n, int elemSize, const void* hostPtr, int incx, void* devicePtr, int incy,
                     musaStream_t stream) {
  return transfer_vec(n, elemSize, hostPtr, incx, devicePtr, incy, musaMemcpyHostToDevice, &stream);
}
MUBLAS_C(mublasStatus_t)
mublasGetVectorAsync(int n, int elemSize, const void* devicePtr, int incx, void* hostPtr, int incy,
                     musaStream_t stream) {
  return transfer_vec(n, elemSize, devicePtr, incx, hostPtr, incy, musaMemcpyDeviceToHost, &stream);
}
MUBLAS_C(mublasStatus_t)
mublasSetMatrixAsync(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb,
                     musaStream_t stream) {
  return transfer_mat(rows, cols, elemSize, A, lda, B, ldb, musaMemcpyHostToDevice, &stream);
}
MUBLAS_C(mublasStatus_t)
mublasGetMatrixAsync(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb,
                     musaStream_t stream) {
  return transfer_mat(rows, cols, elemSize, A, lda, B, ldb, musaMemcpyDeviceToHost, &stream);
}
