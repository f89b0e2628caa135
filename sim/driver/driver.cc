// The simulated MUSA driver: initialisation, version, devices, the current context and error
// strings. Devices are the simulated runtime's; attributes the runtime answers come from it, the
// driver-only ones (virtual memory management, shareable handle types...) are answered here.
#include <atomic>
#include <cstddef>
#include <cstring>

#include "../enum_value.h"
#include "driver.h"

// A primary context: its device is its index in g_contexts.
struct MUctx_st {
  unsigned char unused;
};

namespace simdrv {
namespace {

std::atomic<bool> g_initialized{false};

struct ErrorText {
  MUresult code;
  const char* name;
  const char* text;
};

constexpr ErrorText kErrors[] = {
    {MUSA_SUCCESS, "MUSA_SUCCESS", "no error"},
    {MUSA_ERROR_INVALID_VALUE, "MUSA_ERROR_INVALID_VALUE", "invalid argument"},
    {MUSA_ERROR_OUT_OF_MEMORY, "MUSA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {MUSA_ERROR_NOT_INITIALIZED, "MUSA_ERROR_NOT_INITIALIZED",
     "the MUSA driver has not been initialized with muInit"},
    {MUSA_ERROR_DEINITIALIZED, "MUSA_ERROR_DEINITIALIZED", "the MUSA driver is shutting down"},
    {MUSA_ERROR_PROFILER_DISABLED, "MUSA_ERROR_PROFILER_DISABLED", "profiler disabled"},
    {MUSA_ERROR_PROFILER_NOT_INITIALIZED, "MUSA_ERROR_PROFILER_NOT_INITIALIZED",
     "profiler not initialized"},
    {MUSA_ERROR_PROFILER_ALREADY_STARTED, "MUSA_ERROR_PROFILER_ALREADY_STARTED",
     "profiler already started"},
    {MUSA_ERROR_PROFILER_ALREADY_STOPPED, "MUSA_ERROR_PROFILER_ALREADY_STOPPED",
     "profiler already stopped"},
    {MUSA_ERROR_STUB_LIBRARY, "MUSA_ERROR_STUB_LIBRARY", "stub library"},
    {MUSA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "MUSA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
     "call requires newer driver"},
    {MUSA_ERROR_DEVICE_UNAVAILABLE, "MUSA_ERROR_DEVICE_UNAVAILABLE", "device unavailable"},
    {MUSA_ERROR_NO_DEVICE, "MUSA_ERROR_NO_DEVICE", "no MUSA-capable device is detected"},
    {MUSA_ERROR_INVALID_DEVICE, "MUSA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {MUSA_ERROR_DEVICE_NOT_LICENSED, "MUSA_ERROR_DEVICE_NOT_LICENSED", "device not licensed"},
    {MUSA_ERROR_INVALID_IMAGE, "MUSA_ERROR_INVALID_IMAGE", "invalid image"},
    {MUSA_ERROR_INVALID_CONTEXT, "MUSA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {MUSA_ERROR_CONTEXT_ALREADY_CURRENT, "MUSA_ERROR_CONTEXT_ALREADY_CURRENT",
     "context already current"},
    {MUSA_ERROR_MAP_FAILED, "MUSA_ERROR_MAP_FAILED", "map failed"},
    {MUSA_ERROR_UNMAP_FAILED, "MUSA_ERROR_UNMAP_FAILED", "unmap failed"},
    {MUSA_ERROR_ARRAY_IS_MAPPED, "MUSA_ERROR_ARRAY_IS_MAPPED", "array is mapped"},
    {MUSA_ERROR_ALREADY_MAPPED, "MUSA_ERROR_ALREADY_MAPPED", "resource already mapped"},
    {MUSA_ERROR_NO_BINARY_FOR_GPU, "MUSA_ERROR_NO_BINARY_FOR_GPU", "no binary for gpu"},
    {MUSA_ERROR_ALREADY_ACQUIRED, "MUSA_ERROR_ALREADY_ACQUIRED", "already acquired"},
    {MUSA_ERROR_NOT_MAPPED, "MUSA_ERROR_NOT_MAPPED", "resource not mapped"},
    {MUSA_ERROR_NOT_MAPPED_AS_ARRAY, "MUSA_ERROR_NOT_MAPPED_AS_ARRAY", "not mapped as array"},
    {MUSA_ERROR_NOT_MAPPED_AS_POINTER, "MUSA_ERROR_NOT_MAPPED_AS_POINTER", "not mapped as pointer"},
    {MUSA_ERROR_ECC_UNCORRECTABLE, "MUSA_ERROR_ECC_UNCORRECTABLE", "ecc uncorrectable"},
    {MUSA_ERROR_UNSUPPORTED_LIMIT, "MUSA_ERROR_UNSUPPORTED_LIMIT", "unsupported limit"},
    {MUSA_ERROR_CONTEXT_ALREADY_IN_USE, "MUSA_ERROR_CONTEXT_ALREADY_IN_USE",
     "context already in use"},
    {MUSA_ERROR_PEER_ACCESS_UNSUPPORTED, "MUSA_ERROR_PEER_ACCESS_UNSUPPORTED",
     "peer access unsupported"},
    {MUSA_ERROR_INVALID_PTX, "MUSA_ERROR_INVALID_PTX", "invalid ptx"},
    {MUSA_ERROR_INVALID_GRAPHICS_CONTEXT, "MUSA_ERROR_INVALID_GRAPHICS_CONTEXT",
     "invalid graphics context"},
    {MUSA_ERROR_MTLINK_UNCORRECTABLE, "MUSA_ERROR_MTLINK_UNCORRECTABLE", "mtlink uncorrectable"},
    {MUSA_ERROR_JIT_COMPILER_NOT_FOUND, "MUSA_ERROR_JIT_COMPILER_NOT_FOUND",
     "jit compiler not found"},
    {MUSA_ERROR_UNSUPPORTED_PTX_VERSION, "MUSA_ERROR_UNSUPPORTED_PTX_VERSION",
     "unsupported ptx version"},
    {MUSA_ERROR_JIT_COMPILATION_DISABLED, "MUSA_ERROR_JIT_COMPILATION_DISABLED",
     "jit compilation disabled"},
    {MUSA_ERROR_UNSUPPORTED_EXEC_AFFINITY, "MUSA_ERROR_UNSUPPORTED_EXEC_AFFINITY",
     "unsupported exec affinity"},
    {MUSA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, "MUSA_ERROR_UNSUPPORTED_DEVSIDE_SYNC",
     "unsupported devside sync"},
    {MUSA_ERROR_CONTAINED, "MUSA_ERROR_CONTAINED", "contained"},
    {MUSA_ERROR_INVALID_SOURCE, "MUSA_ERROR_INVALID_SOURCE", "invalid source"},
    {MUSA_ERROR_FILE_NOT_FOUND, "MUSA_ERROR_FILE_NOT_FOUND", "file not found"},
    {MUSA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "MUSA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND",
     "shared object symbol not found"},
    {MUSA_ERROR_SHARED_OBJECT_INIT_FAILED, "MUSA_ERROR_SHARED_OBJECT_INIT_FAILED",
     "shared object init failed"},
    {MUSA_ERROR_OPERATING_SYSTEM, "MUSA_ERROR_OPERATING_SYSTEM", "an operating system call failed"},
    {MUSA_ERROR_INVALID_HANDLE, "MUSA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {MUSA_ERROR_ILLEGAL_STATE, "MUSA_ERROR_ILLEGAL_STATE", "illegal state"},
    {MUSA_ERROR_LOSSY_QUERY, "MUSA_ERROR_LOSSY_QUERY", "lossy query"},
    {MUSA_ERROR_NOT_FOUND, "MUSA_ERROR_NOT_FOUND", "named symbol or address not found"},
    {MUSA_ERROR_NOT_READY, "MUSA_ERROR_NOT_READY", "device not ready"},
    {MUSA_ERROR_ILLEGAL_ADDRESS, "MUSA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {MUSA_ERROR_LAUNCH_OUT_OF_RESOURCES, "MUSA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "launch out of resources"},
    {MUSA_ERROR_LAUNCH_TIMEOUT, "MUSA_ERROR_LAUNCH_TIMEOUT", "launch timeout"},
    {MUSA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, "MUSA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING",
     "launch incompatible texturing"},
    {MUSA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "MUSA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
     "peer access already enabled"},
    {MUSA_ERROR_PEER_ACCESS_NOT_ENABLED, "MUSA_ERROR_PEER_ACCESS_NOT_ENABLED",
     "peer access not enabled"},
    {MUSA_ERROR_PRIMARY_CONTEXT_ACTIVE, "MUSA_ERROR_PRIMARY_CONTEXT_ACTIVE",
     "primary context active"},
    {MUSA_ERROR_CONTEXT_IS_DESTROYED, "MUSA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"},
    {MUSA_ERROR_ASSERT, "MUSA_ERROR_ASSERT", "assert"},
    {MUSA_ERROR_TOO_MANY_PEERS, "MUSA_ERROR_TOO_MANY_PEERS", "too many peers"},
    {MUSA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "MUSA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
     "host memory already registered"},
    {MUSA_ERROR_HOST_MEMORY_NOT_REGISTERED, "MUSA_ERROR_HOST_MEMORY_NOT_REGISTERED",
     "host memory not registered"},
    {MUSA_ERROR_HARDWARE_STACK_ERROR, "MUSA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"},
    {MUSA_ERROR_ILLEGAL_INSTRUCTION, "MUSA_ERROR_ILLEGAL_INSTRUCTION", "illegal instruction"},
    {MUSA_ERROR_MISALIGNED_ADDRESS, "MUSA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
    {MUSA_ERROR_INVALID_ADDRESS_SPACE, "MUSA_ERROR_INVALID_ADDRESS_SPACE", "invalid address space"},
    {MUSA_ERROR_INVALID_PC, "MUSA_ERROR_INVALID_PC", "invalid pc"},
    {MUSA_ERROR_LAUNCH_FAILED, "MUSA_ERROR_LAUNCH_FAILED", "launch failed"},
    {MUSA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "MUSA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
     "cooperative launch too large"},
    {MUSA_ERROR_TENSOR_MEMORY_LEAK, "MUSA_ERROR_TENSOR_MEMORY_LEAK", "tensor memory leak"},
    {MUSA_ERROR_NOT_PERMITTED, "MUSA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {MUSA_ERROR_NOT_SUPPORTED, "MUSA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {MUSA_ERROR_SYSTEM_NOT_READY, "MUSA_ERROR_SYSTEM_NOT_READY", "system not ready"},
    {MUSA_ERROR_SYSTEM_DRIVER_MISMATCH, "MUSA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system driver mismatch"},
    {MUSA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "MUSA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     "compat not supported on device"},
    {MUSA_ERROR_MPS_CONNECTION_FAILED, "MUSA_ERROR_MPS_CONNECTION_FAILED", "mps connection failed"},
    {MUSA_ERROR_MPS_RPC_FAILURE, "MUSA_ERROR_MPS_RPC_FAILURE", "mps rpc failure"},
    {MUSA_ERROR_MPS_SERVER_NOT_READY, "MUSA_ERROR_MPS_SERVER_NOT_READY", "mps server not ready"},
    {MUSA_ERROR_MPS_MAX_CLIENTS_REACHED, "MUSA_ERROR_MPS_MAX_CLIENTS_REACHED",
     "mps max clients reached"},
    {MUSA_ERROR_MPS_MAX_CONNECTIONS_REACHED, "MUSA_ERROR_MPS_MAX_CONNECTIONS_REACHED",
     "mps max connections reached"},
    {MUSA_ERROR_MPS_CLIENT_TERMINATED, "MUSA_ERROR_MPS_CLIENT_TERMINATED", "mps client terminated"},
    {MUSA_ERROR_CDP_NOT_SUPPORTED, "MUSA_ERROR_CDP_NOT_SUPPORTED", "cdp not supported"},
    {MUSA_ERROR_CDP_VERSION_MISMATCH, "MUSA_ERROR_CDP_VERSION_MISMATCH", "cdp version mismatch"},
    {MUSA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "MUSA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "stream capture unsupported"},
    {MUSA_ERROR_STREAM_CAPTURE_INVALIDATED, "MUSA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "stream capture invalidated"},
    {MUSA_ERROR_STREAM_CAPTURE_MERGE, "MUSA_ERROR_STREAM_CAPTURE_MERGE", "stream capture merge"},
    {MUSA_ERROR_STREAM_CAPTURE_UNMATCHED, "MUSA_ERROR_STREAM_CAPTURE_UNMATCHED",
     "stream capture unmatched"},
    {MUSA_ERROR_STREAM_CAPTURE_UNJOINED, "MUSA_ERROR_STREAM_CAPTURE_UNJOINED",
     "stream capture unjoined"},
    {MUSA_ERROR_STREAM_CAPTURE_ISOLATION, "MUSA_ERROR_STREAM_CAPTURE_ISOLATION",
     "stream capture isolation"},
    {MUSA_ERROR_STREAM_CAPTURE_IMPLICIT, "MUSA_ERROR_STREAM_CAPTURE_IMPLICIT",
     "stream capture implicit"},
    {MUSA_ERROR_CAPTURED_EVENT, "MUSA_ERROR_CAPTURED_EVENT", "captured event"},
    {MUSA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "MUSA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
     "stream capture wrong thread"},
    {MUSA_ERROR_TIMEOUT, "MUSA_ERROR_TIMEOUT", "timeout"},
    {MUSA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "MUSA_ERROR_GRAPH_EXEC_UPDATE_FAILURE",
     "graph exec update failure"},
    {MUSA_ERROR_EXTERNAL_DEVICE, "MUSA_ERROR_EXTERNAL_DEVICE", "external device"},
    {MUSA_ERROR_INVALID_CLUSTER_SIZE, "MUSA_ERROR_INVALID_CLUSTER_SIZE", "invalid cluster size"},
    {MUSA_ERROR_FUNCTION_NOT_LOADED, "MUSA_ERROR_FUNCTION_NOT_LOADED", "function not loaded"},
    {MUSA_ERROR_INVALID_RESOURCE_TYPE, "MUSA_ERROR_INVALID_RESOURCE_TYPE", "invalid resource type"},
    {MUSA_ERROR_INVALID_RESOURCE_CONFIGURATION, "MUSA_ERROR_INVALID_RESOURCE_CONFIGURATION",
     "invalid resource configuration"},
    {MUSA_ERROR_KEY_ROTATION, "MUSA_ERROR_KEY_ROTATION", "key rotation"},
    {MUSA_ERROR_UNKNOWN, "MUSA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorText* find_error(MUresult e) {
  for (const ErrorText& t : kErrors)
    if (t.code == e) return &t;
  return nullptr;
}

// One primary context per device (its state: context.cc).
constexpr int kMaxContexts = 256;
MUctx_st g_contexts[kMaxContexts];

// Attributes only the driver knows (the runtime's musaDeviceAttr has no such values): the value
// this driver reports.
bool driver_attribute(int attrib, int* value) {
  switch (attrib) {
    case MU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1:
    case MU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case MU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
    case MU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT:
      *value = 1;
      return true;
    case MU_DEVICE_ATTRIBUTE_NUMA_ID:
    case MU_DEVICE_ATTRIBUTE_HOST_NUMA_ID:
      *value = -1;
      return true;
    case MU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1:
    case MU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1:
    case MU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED:
    case MU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED:
    case MU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED:
    case MU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_MUSA_VMM_SUPPORTED:
    case 44:  // CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER: deprecated, no runtime counterpart
      *value = 0;
      return true;
    default:
      break;
  }
  // CUDA 12/13 additions after the runtime's range: features the simulator does not have.
  if (attrib >= MU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH && attrib < MU_DEVICE_ATTRIBUTE_MAX) {
    *value = 0;
    return true;
  }
  return false;
}

}  // namespace

bool initialized() { return g_initialized.load(std::memory_order_acquire); }

MUcontext primary_context(int device) {
  return device >= 0 && device < kMaxContexts ? &g_contexts[device] : nullptr;
}

int context_device(MUcontext ctx) {
  if (ctx < &g_contexts[0] || ctx >= &g_contexts[kMaxContexts]) return -1;
  return static_cast<int>(ctx - &g_contexts[0]);
}

bool valid_device(int ordinal) {
  int n = 0;
  return musaGetDeviceCount(&n) == musaSuccess && ordinal >= 0 && ordinal < n;
}

MUresult from_runtime(musaError_t e) {
  switch (e) {
    case musaSuccess:
      return MUSA_SUCCESS;
    case musaErrorInvalidValue:
    case musaErrorInvalidDevicePointer:
    case musaErrorInvalidHostPointer:
    case musaErrorInvalidPitchValue:
    case musaErrorInvalidMemcpyDirection:
      return MUSA_ERROR_INVALID_VALUE;
    case musaErrorDeviceUninitialized:
      return MUSA_ERROR_INVALID_CONTEXT;
    case musaErrorContextIsDestroyed:
      return MUSA_ERROR_CONTEXT_IS_DESTROYED;
    case musaErrorHostMemoryAlreadyRegistered:
      return MUSA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    case musaErrorHostMemoryNotRegistered:
      return MUSA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    case musaErrorPeerAccessUnsupported:
      return MUSA_ERROR_PEER_ACCESS_UNSUPPORTED;
    case musaErrorPeerAccessAlreadyEnabled:
      return MUSA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    case musaErrorPeerAccessNotEnabled:
      return MUSA_ERROR_PEER_ACCESS_NOT_ENABLED;
    case musaErrorIllegalAddress:
      return MUSA_ERROR_ILLEGAL_ADDRESS;
    case musaErrorLaunchFailure:
      return MUSA_ERROR_LAUNCH_FAILED;
    case musaErrorUnsupportedLimit:
      return MUSA_ERROR_UNSUPPORTED_LIMIT;
    case musaErrorIllegalState:
      return MUSA_ERROR_ILLEGAL_STATE;
    case musaErrorNotPermitted:
      return MUSA_ERROR_NOT_PERMITTED;
    case musaErrorTimeout:
      return MUSA_ERROR_TIMEOUT;
    case musaErrorStreamCaptureMerge:
      return MUSA_ERROR_STREAM_CAPTURE_MERGE;
    case musaErrorStreamCaptureUnmatched:
      return MUSA_ERROR_STREAM_CAPTURE_UNMATCHED;
    case musaErrorStreamCaptureUnjoined:
      return MUSA_ERROR_STREAM_CAPTURE_UNJOINED;
    case musaErrorStreamCaptureIsolation:
      return MUSA_ERROR_STREAM_CAPTURE_ISOLATION;
    case musaErrorCapturedEvent:
      return MUSA_ERROR_CAPTURED_EVENT;
    case musaErrorMemoryAllocation:
      return MUSA_ERROR_OUT_OF_MEMORY;
    case musaErrorInitializationError:
      return MUSA_ERROR_NOT_INITIALIZED;
    case musaErrorNoDevice:
      return MUSA_ERROR_NO_DEVICE;
    case musaErrorInvalidDevice:
      return MUSA_ERROR_INVALID_DEVICE;
    case musaErrorInvalidResourceHandle:
      return MUSA_ERROR_INVALID_HANDLE;
    case musaErrorNotReady:
      return MUSA_ERROR_NOT_READY;
    case musaErrorNotSupported:
      return MUSA_ERROR_NOT_SUPPORTED;
    case musaErrorStreamCaptureUnsupported:
      return MUSA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    case musaErrorStreamCaptureInvalidated:
      return MUSA_ERROR_STREAM_CAPTURE_INVALIDATED;
    case musaErrorStreamCaptureImplicit:
      return MUSA_ERROR_STREAM_CAPTURE_IMPLICIT;
    case musaErrorStreamCaptureWrongThread:
      return MUSA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    default:
      return MUSA_ERROR_UNKNOWN;
  }
}

}  // namespace simdrv

using namespace simdrv;

extern "C" {

MUresult muGetErrorString(MUresult error, const char** pStr) {
  if (pStr == nullptr) return MUSA_ERROR_INVALID_VALUE;
  const ErrorText* t = find_error(error);
  *pStr = t ? t->text : nullptr;
  return t ? MUSA_SUCCESS : MUSA_ERROR_INVALID_VALUE;
}

MUresult muGetErrorName(MUresult error, const char** pStr) {
  if (pStr == nullptr) return MUSA_ERROR_INVALID_VALUE;
  const ErrorText* t = find_error(error);
  *pStr = t ? t->name : nullptr;
  return t ? MUSA_SUCCESS : MUSA_ERROR_INVALID_VALUE;
}

MUresult muInit(unsigned int Flags) {
  if (Flags != 0) return MUSA_ERROR_INVALID_VALUE;
  int n = 0;
  const MUresult r = from_runtime(musaGetDeviceCount(&n));
  if (r != MUSA_SUCCESS) return r;
  if (n <= 0) return MUSA_ERROR_NO_DEVICE;
  g_initialized.store(true, std::memory_order_release);
  return MUSA_SUCCESS;
}

MUresult muDriverGetVersion(int* driverVersion) {
  // Valid before muInit, as in CUDA.
  if (driverVersion == nullptr) return MUSA_ERROR_INVALID_VALUE;
  return from_runtime(musaDriverGetVersion(driverVersion));
}

MUresult muDeviceGetCount(int* count) {
  return api([&] {
    if (count == nullptr) return MUSA_ERROR_INVALID_VALUE;
    return from_runtime(musaGetDeviceCount(count));
  });
}

MUresult muDeviceGet(MUdevice* device, int ordinal) {
  return api([&] {
    if (device == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (!valid_device(ordinal)) return MUSA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return MUSA_SUCCESS;
  });
}

MUresult muDeviceGetAttribute(int* pi, MUdevice_attribute attrib, MUdevice dev) {
  return api([&] {
    if (pi == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return MUSA_ERROR_INVALID_DEVICE;
    const int a = simenum::enum_value(attrib);  // any int may come: no enum load
    int v = 0;
    if (driver_attribute(a, &v)) {
      *pi = v;
      return MUSA_SUCCESS;
    }
    if (a <= 0 || a >= MU_DEVICE_ATTRIBUTE_MAX) return MUSA_ERROR_INVALID_VALUE;
    // The rest share the runtime's numbering (musaDeviceAttr equals MUdevice_attribute).
    const MUresult r =
        from_runtime(musaDeviceGetAttribute(&v, static_cast<musaDeviceAttr>(a), dev));
    if (r == MUSA_SUCCESS) *pi = v;
    return r;
  });
}

}  // extern "C"
