// muBLASLt handles, status names, versions, the logger and the helpers every descriptor shares.
#include "internal.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>

struct mublasLtContext {
  uint32_t magic = lt::kHandleMagic;
  int device = 0;
};

namespace lt {
namespace {

std::atomic<size_t> g_cache_capacity{8192};
std::atomic<unsigned> g_cpu_mask{0};

// Logger state. The callback and level are read on every message; the mutex serialises writes.
struct Logger {
  std::mutex mu;
  mublasLtLoggerCallback_t callback = nullptr;
  FILE* file = nullptr;
  bool own_file = false;
  int mask = 0;
  bool disabled = false;
};
Logger& logger() {
  static Logger* l = new Logger;  // never destroyed: usable from other libraries' destructors
  return *l;
}

}  // namespace

bool valid(mublasLtHandle_t h) { return h != nullptr && h->magic == kHandleMagic; }

mublasStatus_t get_value(const void* src, size_t size, void* buf, size_t sizeInBytes,
                         size_t* sizeWritten) {
  if (sizeInBytes == 0) {
    if (sizeWritten == nullptr) return MUBLAS_STATUS_INVALID_VALUE;
    *sizeWritten = size;
    return MUBLAS_STATUS_SUCCESS;
  }
  if (buf == nullptr || sizeInBytes != size) return MUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(buf, src, size);
  if (sizeWritten != nullptr) *sizeWritten = size;
  return MUBLAS_STATUS_SUCCESS;
}

mublasStatus_t check_set(const void* buf, size_t sizeInBytes, size_t size) {
  if (buf == nullptr || sizeInBytes != size) return MUBLAS_STATUS_INVALID_VALUE;
  return MUBLAS_STATUS_SUCCESS;
}

bool known_data_type(int32_t t) {
  switch (t) {
    case MUSA_R_32F:
    case MUSA_R_64F:
    case MUSA_R_16F:
    case MUSA_R_8I:
    case MUSA_C_32F:
    case MUSA_C_64F:
    case MUSA_C_16F:
    case MUSA_C_8I:
    case MUSA_R_8U:
    case MUSA_C_8U:
    case MUSA_R_32I:
    case MUSA_C_32I:
    case MUSA_R_32U:
    case MUSA_C_32U:
    case MUSA_R_16BF:
    case MUSA_C_16BF:
    case MUSA_R_16I:
    case MUSA_R_64I:
    case MUSA_R_8F_E4M3:
    case MUSA_R_8F_E5M2:
      return true;
    default:
      return false;
  }
}

size_t data_type_size(int32_t t) {
  switch (t) {
    case MUSA_R_32F:
      return 4;
    case MUSA_R_64F:
      return 8;
    case MUSA_R_16F:
      return 2;
    case MUSA_R_16BF:
      return 2;
    case MUSA_R_8F_E4M3:
    case MUSA_R_8F_E5M2:
    case MUSA_R_8I:
      return 1;
    case MUSA_R_32I:
      return 4;
    case MUSA_C_16F:
      return 4;
    case MUSA_C_32F:
      return 8;
    case MUSA_C_64F:
      return 16;
    default:
      return 0;
  }
}

bool is_fp8(int32_t t) { return t == MUSA_R_8F_E4M3 || t == MUSA_R_8F_E5M2; }

bool is_int(int32_t t) { return t == MUSA_R_8I || t == MUSA_R_32I; }

bool is_complex(int32_t t) { return t == MUSA_C_16F || t == MUSA_C_32F || t == MUSA_C_64F; }

int32_t complex_part(int32_t t) {
  switch (t) {
    case MUSA_C_16F:
      return MUSA_R_16F;
    case MUSA_C_32F:
      return MUSA_R_32F;
    case MUSA_C_64F:
      return MUSA_R_64F;
    default:
      return t;
  }
}

bool known_compute_type(int32_t t) {
  switch (t) {
    case MUBLAS_COMPUTE_16F:
    case MUBLAS_COMPUTE_16F_PEDANTIC:
    case MUBLAS_COMPUTE_32F:
    case MUBLAS_COMPUTE_32F_PEDANTIC:
    case MUBLAS_COMPUTE_64F:
    case MUBLAS_COMPUTE_64F_PEDANTIC:
    case MUBLAS_COMPUTE_32I:
    case MUBLAS_COMPUTE_32I_PEDANTIC:
    case MUBLAS_COMPUTE_32F_FAST_16F:
    case MUBLAS_COMPUTE_32F_FAST_16BF:
    case MUBLAS_COMPUTE_32F_FAST_TF32:
      return true;
    default:
      return false;
  }
}

bool known_operation(int32_t op) {
  return op == MUBLAS_OP_N || op == MUBLAS_OP_T || op == MUBLAS_OP_C;
}

bool known_fill_mode(int32_t f) {
  return f == MUBLAS_FILL_MODE_UPPER || f == MUBLAS_FILL_MODE_LOWER || f == MUBLAS_FILL_MODE_FULL;
}

EpilogueInfo epilogue_info(uint32_t e) {
  EpilogueInfo f;
  f.known = true;
  switch (e) {
    case MUBLASLT_EPILOGUE_DEFAULT:
      break;
    case MUBLASLT_EPILOGUE_RELU:
      f.relu = true;
      break;
    case MUBLASLT_EPILOGUE_RELU_AUX:
      f.relu = f.relu_aux = true;
      break;
    case MUBLASLT_EPILOGUE_BIAS:
      f.bias_in = true;
      break;
    case MUBLASLT_EPILOGUE_RELU_BIAS:
      f.relu = f.bias_in = true;
      break;
    case MUBLASLT_EPILOGUE_RELU_AUX_BIAS:
      f.relu = f.relu_aux = f.bias_in = true;
      break;
    case MUBLASLT_EPILOGUE_DRELU:
      f.drelu = true;
      break;
    case MUBLASLT_EPILOGUE_DRELU_BGRAD:
      f.drelu = f.bgrad = true;
      break;
    case MUBLASLT_EPILOGUE_GELU:
      f.gelu = true;
      break;
    case MUBLASLT_EPILOGUE_GELU_AUX:
      f.gelu = f.gelu_aux = true;
      break;
    case MUBLASLT_EPILOGUE_GELU_BIAS:
      f.gelu = f.bias_in = true;
      break;
    case MUBLASLT_EPILOGUE_GELU_AUX_BIAS:
      f.gelu = f.gelu_aux = f.bias_in = true;
      break;
    case MUBLASLT_EPILOGUE_DGELU:
      f.dgelu = true;
      break;
    case MUBLASLT_EPILOGUE_DGELU_BGRAD:
      f.dgelu = f.bgrad = true;
      break;
    case MUBLASLT_EPILOGUE_BGRADA:
      f.bgrada = true;
      break;
    case MUBLASLT_EPILOGUE_BGRADB:
      f.bgradb = true;
      break;
    default:
      f.known = false;
      break;
  }
  return f;
}

bool known_epilogue(uint32_t e) { return epilogue_info(e).known; }

bool known_pointer_mode(int32_t m) {
  switch (m) {
    case MUBLASLT_POINTER_MODE_HOST:
    case MUBLASLT_POINTER_MODE_DEVICE:
    case MUBLASLT_POINTER_MODE_DEVICE_VECTOR:
    case MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO:
    case MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST:
      return true;
    default:
      return false;
  }
}

void log_message(int level, const char* function, const char* fmt, ...) {
  Logger& l = logger();
  std::lock_guard<std::mutex> lock(l.mu);
  if (l.disabled || (l.mask & (1 << (level - 1))) == 0) return;
  if (l.callback == nullptr && l.file == nullptr) return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (l.callback != nullptr) l.callback(level, function, msg);
  if (l.file != nullptr) {
    std::fprintf(l.file, "[mublasLt][%d][%s] %s\n", level, function, msg);
    std::fflush(l.file);
  }
}

mublasStatus_t log_error(const char* function, mublasStatus_t status, const char* what) {
  log_message(1, function, "%s: %s", mublasLtGetStatusName(status), what);
  return status;
}

mublasStatus_t check_matrices(const char* fn, bool d_empty, int64_t k, bool c_needed, const void* A,
                              const void* B, const void* C, const void* D, const LayoutState& lc,
                              const LayoutState& ld) {
  if (!d_empty &&
      ((k > 0 && (A == nullptr || B == nullptr)) || D == nullptr || (c_needed && C == nullptr))) {
    return log_error(fn, MUBLAS_STATUS_INVALID_VALUE, "NULL matrix");
  }
  if (C != nullptr && C == D &&
      (lc.order != ld.order || lc.ld != ld.ld || lc.batch_stride != ld.batch_stride)) {
    return log_error(fn, MUBLAS_STATUS_INVALID_VALUE, "in-place C and D layouts differ");
  }
  return MUBLAS_STATUS_SUCCESS;
}

mublasStatus_t allocate_and_enqueue(const char* fn, const char* label, std::unique_ptr<Work> job,
                                    int64_t m, int64_t n, int64_t k, int64_t batch,
                                    void (*allocate)(Work&), musaStream_t stream) {
  try {
    allocate(*job);
  } catch (const std::bad_alloc&) {
    return log_error(fn, MUBLAS_STATUS_MEMORY_ERROR, "scratch");
  } catch (const std::length_error&) {
    return log_error(fn, MUBLAS_STATUS_MEMORY_ERROR, "scratch");
  }
  log_message(5, fn, "%s m=%lld n=%lld k=%lld batch=%lld", label, static_cast<long long>(m),
              static_cast<long long>(n), static_cast<long long>(k), static_cast<long long>(batch));
  const mublasStatus_t st = enqueue(std::move(job), stream);
  if (st != MUBLAS_STATUS_SUCCESS) return log_error(fn, st, "stream refused the work");
  return MUBLAS_STATUS_SUCCESS;
}

}  // namespace lt

extern "C" {

MUBLASLT_API mublasStatus_t mublasLtCreate(mublasLtHandle_t* lightHandle) {
  if (lightHandle == nullptr) return MUBLAS_STATUS_INVALID_VALUE;
  auto* h = new (std::nothrow) mublasLtContext;
  if (h == nullptr) return MUBLAS_STATUS_MEMORY_ERROR;
  if (musaGetDevice(&h->device) != musaSuccess) h->device = 0;
  *lightHandle = h;
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtDestroy(mublasLtHandle_t lightHandle) {
  if (!lt::valid(lightHandle)) return MUBLAS_STATUS_INVALID_HANDLE;
  lightHandle->magic = 0;
  delete lightHandle;
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API const char* mublasLtGetStatusName(mublasStatus_t status) {
  switch (status) {
    case MUBLAS_STATUS_SUCCESS:
      return "MUBLAS_STATUS_SUCCESS";
    case MUBLAS_STATUS_INVALID_HANDLE:
      return "MUBLAS_STATUS_INVALID_HANDLE";
    case MUBLAS_STATUS_NOT_IMPLEMENTED:
      return "MUBLAS_STATUS_NOT_IMPLEMENTED";
    case MUBLAS_STATUS_INVALID_POINTER:
      return "MUBLAS_STATUS_INVALID_POINTER";
    case MUBLAS_STATUS_INVALID_SIZE:
      return "MUBLAS_STATUS_INVALID_SIZE";
    case MUBLAS_STATUS_MEMORY_ERROR:
      return "MUBLAS_STATUS_MEMORY_ERROR";
    case MUBLAS_STATUS_INTERNAL_ERROR:
      return "MUBLAS_STATUS_INTERNAL_ERROR";
    case MUBLAS_STATUS_PERF_DEGRADED:
      return "MUBLAS_STATUS_PERF_DEGRADED";
    case MUBLAS_STATUS_SIZE_QUERY_MISMATCH:
      return "MUBLAS_STATUS_SIZE_QUERY_MISMATCH";
    case MUBLAS_STATUS_SIZE_INCREASED:
      return "MUBLAS_STATUS_SIZE_INCREASED";
    case MUBLAS_STATUS_SIZE_UNCHANGED:
      return "MUBLAS_STATUS_SIZE_UNCHANGED";
    case MUBLAS_STATUS_INVALID_VALUE:
      return "MUBLAS_STATUS_INVALID_VALUE";
    case MUBLAS_STATUS_CONTINUE:
      return "MUBLAS_STATUS_CONTINUE";
    case MUBLAS_STATUS_CHECK_NUMERICS_FAIL:
      return "MUBLAS_STATUS_CHECK_NUMERICS_FAIL";
  }
  return "MUBLAS_STATUS_UNKNOWN";
}

MUBLASLT_API const char* mublasLtGetStatusString(mublasStatus_t status) {
  switch (status) {
    case MUBLAS_STATUS_SUCCESS:
      return "success";
    case MUBLAS_STATUS_INVALID_HANDLE:
      return "invalid handle";
    case MUBLAS_STATUS_NOT_IMPLEMENTED:
      return "the requested operation is not implemented";
    case MUBLAS_STATUS_INVALID_POINTER:
      return "invalid pointer";
    case MUBLAS_STATUS_INVALID_SIZE:
      return "invalid size";
    case MUBLAS_STATUS_MEMORY_ERROR:
      return "memory allocation failed";
    case MUBLAS_STATUS_INTERNAL_ERROR:
      return "internal error (the stream refused the work)";
    case MUBLAS_STATUS_PERF_DEGRADED:
      return "performance degraded";
    case MUBLAS_STATUS_SIZE_QUERY_MISMATCH:
      return "size query mismatch";
    case MUBLAS_STATUS_SIZE_INCREASED:
      return "size increased";
    case MUBLAS_STATUS_SIZE_UNCHANGED:
      return "size unchanged";
    case MUBLAS_STATUS_INVALID_VALUE:
      return "invalid value";
    case MUBLAS_STATUS_CONTINUE:
      return "continue";
    case MUBLAS_STATUS_CHECK_NUMERICS_FAIL:
      return "numerical check failed";
  }
  return "unknown status";
}

MUBLASLT_API size_t mublasLtGetVersion(void) { return MUBLASLT_VERSION; }

MUBLASLT_API mublasStatus_t mublasLtHeuristicsCacheGetCapacity(size_t* capacity) {
  if (capacity == nullptr) return MUBLAS_STATUS_INVALID_VALUE;
  *capacity = lt::g_cache_capacity.load();
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtHeuristicsCacheSetCapacity(size_t capacity) {
  lt::g_cache_capacity.store(capacity);
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API unsigned mublasLtDisableCpuInstructionsSetMask(unsigned mask) {
  return lt::g_cpu_mask.exchange(mask);
}

MUBLASLT_API mublasStatus_t mublasLtLoggerSetCallback(mublasLtLoggerCallback_t callback) {
  lt::Logger& l = lt::logger();
  std::lock_guard<std::mutex> lock(l.mu);
  l.callback = callback;
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtLoggerSetFile(FILE* file) {
  lt::Logger& l = lt::logger();
  std::lock_guard<std::mutex> lock(l.mu);
  if (l.own_file && l.file != nullptr) std::fclose(l.file);
  l.file = file;
  l.own_file = false;
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtLoggerOpenFile(const char* logFile) {
  if (logFile == nullptr) return MUBLAS_STATUS_INVALID_VALUE;
  FILE* f = std::fopen(logFile, "a");
  if (f == nullptr) return MUBLAS_STATUS_INVALID_VALUE;
  lt::Logger& l = lt::logger();
  std::lock_guard<std::mutex> lock(l.mu);
  if (l.own_file && l.file != nullptr) std::fclose(l.file);
  l.file = f;
  l.own_file = true;
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtLoggerSetLevel(int level) {
  if (level < 0 || level > 5) return MUBLAS_STATUS_INVALID_VALUE;
  lt::Logger& l = lt::logger();
  std::lock_guard<std::mutex> lock(l.mu);
  l.mask = level == 0 ? 0 : (1 << level) - 1;  // level N enables levels 1..N
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtLoggerSetMask(int mask) {
  if (mask < 0 || mask > 31) return MUBLAS_STATUS_INVALID_VALUE;
  lt::Logger& l = lt::logger();
  std::lock_guard<std::mutex> lock(l.mu);
  l.mask = mask;
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtLoggerForceDisable(void) {
  lt::Logger& l = lt::logger();
  std::lock_guard<std::mutex> lock(l.mu);
  l.disabled = true;
  return MUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
