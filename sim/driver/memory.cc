// The simulated driver's memory calls: allocation, host memory, copies, memsets, memory info and
// pointer attributes, on the simulated runtime's allocator (driver and runtime share device
// memory, as CUDA's do). Device pointers are MUdeviceptr values of the runtime's pointers.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "../enum_value.h"
#include "driver.h"
#include "driver_hooks.h"

namespace simdrv {
namespace {

using simenum::enum_value;  // a bad attribute id is refused without an enum load

void* ptr(MUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }
MUdeviceptr dptr(const void* p) { return static_cast<MUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

// The calls that work in the current context refuse to run without one, as CUDA's do.
MUresult need_context() {
  int d = 0;
  return current_context_device(&d);
}

MUresult copy(void* dst, const void* src, size_t n, MUstream stream, bool async) {
  const MUresult c = need_context();
  if (c != MUSA_SUCCESS) return c;
  if (n == 0) return MUSA_SUCCESS;
  if (dst == nullptr || src == nullptr) return MUSA_ERROR_INVALID_VALUE;
  const musaStream_t s = reinterpret_cast<musaStream_t>(stream);
  return from_runtime(async ? musaMemcpyAsync(dst, src, n, musaMemcpyDefault, s)
                            : musaMemcpy(dst, src, n, musaMemcpyDefault));
}

// What a pointer is, from the runtime's allocations and the driver's virtual memory.
struct PointerInfo {
  bool known = false;  // in an allocation (device, host, registered, managed or mapped)
  musaSimAllocation alloc{};
  bool reserved = false;  // in a muMemAddressReserve range (mapped or not)
  VmmInfo vm{};
};

PointerInfo pointer_info(MUdeviceptr p) {
  PointerInfo i;
  i.known = musaSimGetAllocation(ptr(p), &i.alloc) == musaSuccess;
  i.reserved = find_vmm(static_cast<uintptr_t>(p), &i.vm);
  return i;
}

template <class T>
MUresult put(void* data, T value) {
  *static_cast<T*>(data) = value;
  return MUSA_SUCCESS;
}

// cuPointerGetAttribute's rules: a pointer in no allocation is MUSA_ERROR_INVALID_VALUE for every
// attribute (only an address reserved but not mapped answers MAPPED and the range); so is an
// attribute the pointer cannot have (a host pointer of device memory) or an unknown attribute.
MUresult pointer_attribute(void* data, int attribute, const PointerInfo& i, MUdeviceptr p) {
  const musaSimAllocation& a = i.alloc;
  const bool vm_mapped = i.reserved && i.vm.mapped;
  switch (attribute) {
    case MU_POINTER_ATTRIBUTE_MAPPED:
      if (!i.known && !i.reserved) return MUSA_ERROR_INVALID_VALUE;
      return put<int>(data, i.known ? 1 : 0);
    case MU_POINTER_ATTRIBUTE_RANGE_START_ADDR:  // the reservation, for virtual memory
      if (i.reserved) return put<MUdeviceptr>(data, i.vm.reserve_base);
      if (!i.known) return MUSA_ERROR_INVALID_VALUE;
      return put<MUdeviceptr>(data, dptr(a.base));
    case MU_POINTER_ATTRIBUTE_RANGE_SIZE:
      if (i.reserved) return put<size_t>(data, i.vm.reserve_size);
      if (!i.known) return MUSA_ERROR_INVALID_VALUE;
      return put<size_t>(data, a.size);
    default:
      break;
  }
  if (!i.known) return MUSA_ERROR_INVALID_VALUE;
  const bool on_device = a.kind == musaSimAllocDevice || a.kind == musaSimAllocManaged;
  const bool host_visible = a.kind != musaSimAllocDevice;
  switch (attribute) {
    case MU_POINTER_ATTRIBUTE_CONTEXT:
      return put<MUcontext>(data, primary_context(a.device < 0 ? 0 : a.device));
    case MU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      return put<unsigned>(data, on_device ? MU_MEMORYTYPE_DEVICE : MU_MEMORYTYPE_HOST);
    case MU_POINTER_ATTRIBUTE_DEVICE_POINTER:  // one address space: the same address
      return put<MUdeviceptr>(data, p);
    case MU_POINTER_ATTRIBUTE_HOST_POINTER:  // device memory has no host address (as in CUDA)
      if (!host_visible) return MUSA_ERROR_INVALID_VALUE;
      return put<void*>(data, ptr(p));
    case MU_POINTER_ATTRIBUTE_P2P_TOKENS:  // the nv-p2p kernel interface has no MUSA form
      return MUSA_ERROR_NOT_SUPPORTED;
    case MU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
      return put<int>(data, 1);  // the simulator's synchronous copies always synchronize
    case MU_POINTER_ATTRIBUTE_BUFFER_ID:
    case MU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
      return put<unsigned long long>(data, vm_mapped ? i.vm.alloc_id : a.id);
    case MU_POINTER_ATTRIBUTE_IS_MANAGED:
      return put<int>(data, a.kind == musaSimAllocManaged ? 1 : 0);
    case MU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      return put<int>(data, a.device < 0 ? 0 : a.device);
    case MU_POINTER_ATTRIBUTE_IS_LEGACY_MUSA_IPC_CAPABLE:  // what musaIpcGetMemHandle accepts
      return put<int>(data, a.kind == musaSimAllocDevice && !a.external ? 1 : 0);
    case MU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      return put<unsigned long long>(data, vm_mapped ? i.vm.handle_types : 0);
    case MU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case MU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
      return put<int>(data, 0);
    case MU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      return put<unsigned>(data, 3);  // MU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE
    case MU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      return put<void*>(data, nullptr);  // MUSA has no memory pools
    case MU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
      return put<void*>(data, vm_mapped ? reinterpret_cast<void*>(i.vm.map_base) : a.base);
    case MU_POINTER_ATTRIBUTE_MAPPING_SIZE:
      return put<size_t>(data, vm_mapped ? i.vm.map_size : a.size);
    default:
      return MUSA_ERROR_INVALID_VALUE;
  }
}

// The bytes an attribute's value takes (0: not an attribute the list form can default).
size_t attribute_size(int attribute) {
  switch (attribute) {
    case MU_POINTER_ATTRIBUTE_CONTEXT:
    case MU_POINTER_ATTRIBUTE_HOST_POINTER:
    case MU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
    case MU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
      return sizeof(void*);
    case MU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case MU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      return sizeof(MUdeviceptr);
    case MU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case MU_POINTER_ATTRIBUTE_MAPPING_SIZE:
      return sizeof(size_t);
    case MU_POINTER_ATTRIBUTE_BUFFER_ID:
    case MU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
    case MU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      return sizeof(unsigned long long);
    case MU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    case MU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      return sizeof(unsigned);
    case MU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case MU_POINTER_ATTRIBUTE_IS_MANAGED:
    case MU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
    case MU_POINTER_ATTRIBUTE_IS_LEGACY_MUSA_IPC_CAPABLE:
    case MU_POINTER_ATTRIBUTE_MAPPED:
    case MU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case MU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
      return sizeof(int);
    case MU_POINTER_ATTRIBUTE_P2P_TOKENS:
      return 0;
  }
  return 0;
}

}  // namespace
}  // namespace simdrv

using namespace simdrv;

extern "C" {

MUresult muMemGetInfo_v2(size_t* free, size_t* total) {
  return api([&] {
    if (free == nullptr || total == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
    return from_runtime(musaMemGetInfo(free, total));
  });
}

MUresult muMemAlloc_v2(MUdeviceptr* dptr_out, size_t bytesize) {
  return api([&] {
    if (dptr_out == nullptr || bytesize == 0) return MUSA_ERROR_INVALID_VALUE;
    if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
    void* p = nullptr;
    const MUresult r = from_runtime(musaMalloc(&p, bytesize));
    *dptr_out = r == MUSA_SUCCESS ? dptr(p) : 0;
    return r;
  });
}

MUresult muMemFree_v2(MUdeviceptr p) {
  return api([&] { return from_runtime(musaFree(ptr(p))); });
}

MUresult muMemAllocManaged(MUdeviceptr* dptr_out, size_t bytesize, unsigned int flags) {
  return api([&] {
    if (dptr_out == nullptr || bytesize == 0) return MUSA_ERROR_INVALID_VALUE;
    if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
    void* p = nullptr;
    const MUresult r = from_runtime(musaMallocManaged(&p, bytesize, flags));
    *dptr_out = r == MUSA_SUCCESS ? dptr(p) : 0;
    return r;
  });
}

MUresult muMemAllocHost_v2(void** pp, size_t bytesize) {
  return api([&] {
    if (pp == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
    return from_runtime(musaHostAlloc(pp, bytesize, 0));
  });
}

MUresult muMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
  return api([&] {
    if (pp == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
    return from_runtime(musaHostAlloc(pp, bytesize, Flags));
  });
}

MUresult muMemFreeHost(void* p) {
  return api([&] { return from_runtime(musaFreeHost(p)); });
}

MUresult muMemHostGetDevicePointer_v2(MUdeviceptr* pdptr, void* p, unsigned int Flags) {
  return api([&] {
    if (pdptr == nullptr || p == nullptr) return MUSA_ERROR_INVALID_VALUE;
    void* d = nullptr;
    const MUresult r = from_runtime(musaHostGetDevicePointer(&d, p, Flags));
    if (r == MUSA_SUCCESS) *pdptr = dptr(d);
    return r;
  });
}

MUresult muMemHostRegister_v2(void* p, size_t bytesize, unsigned int Flags) {
  return api([&] {
    if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
    return from_runtime(musaHostRegister(p, bytesize, Flags));
  });
}

MUresult muMemHostUnregister(void* p) {
  return api([&] { return from_runtime(musaHostUnregister(p)); });
}

MUresult muMemcpy(MUdeviceptr dst, MUdeviceptr src, size_t n) {
  return api([&] { return copy(ptr(dst), ptr(src), n, nullptr, false); });
}
MUresult muMemcpyAsync(MUdeviceptr dst, MUdeviceptr src, size_t n, MUstream s) {
  return api([&] { return copy(ptr(dst), ptr(src), n, s, true); });
}
MUresult muMemcpyHtoD_v2(MUdeviceptr dst, const void* src, size_t n) {
  return api([&] { return copy(ptr(dst), src, n, nullptr, false); });
}
MUresult muMemcpyDtoH_v2(void* dst, MUdeviceptr src, size_t n) {
  return api([&] { return copy(dst, ptr(src), n, nullptr, false); });
}
MUresult muMemcpyDtoD_v2(MUdeviceptr dst, MUdeviceptr src, size_t n) {
  return api([&] { return copy(ptr(dst), ptr(src), n, nullptr, false); });
}
MUresult muMemcpyHtoDAsync_v2(MUdeviceptr dst, const void* src, size_t n, MUstream s) {
  return api([&] { return copy(ptr(dst), src, n, s, true); });
}
MUresult muMemcpyDtoHAsync_v2(void* dst, MUdeviceptr src, size_t n, MUstream s) {
  return api([&] { return copy(dst, ptr(src), n, s, true); });
}
MUresult muMemcpyDtoDAsync_v2(MUdeviceptr dst, MUdeviceptr src, size_t n, MUstream s) {
  return api([&] { return copy(ptr(dst), ptr(src), n, s, true); });
}

MUresult muMemcpyPeer(MUdeviceptr dst, MUcontext dstContext, MUdeviceptr src, MUcontext srcContext,
                      size_t n) {
  return api([&] {
    const int dd = context_device(dstContext), sd = context_device(srcContext);
    if (!valid_device(dd) || !valid_device(sd)) return MUSA_ERROR_INVALID_CONTEXT;
    return from_runtime(musaMemcpyPeer(ptr(dst), dd, ptr(src), sd, n));
  });
}

MUresult muMemcpyPeerAsync(MUdeviceptr dst, MUcontext dstContext, MUdeviceptr src,
                           MUcontext srcContext, size_t n, MUstream s) {
  return api([&] {
    const int dd = context_device(dstContext), sd = context_device(srcContext);
    if (!valid_device(dd) || !valid_device(sd)) return MUSA_ERROR_INVALID_CONTEXT;
    return from_runtime(
        musaMemcpyPeerAsync(ptr(dst), dd, ptr(src), sd, n, reinterpret_cast<musaStream_t>(s)));
  });
}

MUresult muMemsetD8_v2(MUdeviceptr dst, unsigned char uc, size_t n) {
  return api([&] {
    if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
    return from_runtime(musaMemset(ptr(dst), uc, n));
  });
}

MUresult muMemsetD8Async(MUdeviceptr dst, unsigned char uc, size_t n, MUstream s) {
  return api([&] {
    if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
    return from_runtime(musaMemsetAsync(ptr(dst), uc, n, reinterpret_cast<musaStream_t>(s)));
  });
}

// IPC: the runtime's handles, whose bytes the driver's are (the same 64-byte opaque struct).
static_assert(sizeof(MUipcMemHandle) == sizeof(musaIpcMemHandle_t), "IPC memory handle size");
static_assert(sizeof(MUipcEventHandle) == sizeof(musaIpcEventHandle_t), "IPC event handle size");
static_assert(MU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS == musaIpcMemLazyEnablePeerAccess, "IPC flag");

MUresult muIpcGetMemHandle(MUipcMemHandle* pHandle, MUdeviceptr dptr) {
  return api([&] {
    if (pHandle == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
    musaIpcMemHandle_t h;
    const MUresult r = from_runtime(musaIpcGetMemHandle(&h, ptr(dptr)));
    if (r == MUSA_SUCCESS) std::memcpy(pHandle, &h, sizeof h);
    return r;
  });
}

MUresult muIpcOpenMemHandle_v2(MUdeviceptr* pdptr, MUipcMemHandle handle, unsigned int Flags) {
  return api([&] {
    if (pdptr == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
    musaIpcMemHandle_t h;
    std::memcpy(&h, &handle, sizeof h);
    void* p = nullptr;
    const MUresult r = from_runtime(musaIpcOpenMemHandle(&p, h, Flags));
    *pdptr = r == MUSA_SUCCESS ? dptr(p) : 0;
    return r;
  });
}

MUresult muIpcCloseMemHandle(MUdeviceptr dptr) {
  return api([&] {
    if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
    return from_runtime(musaIpcCloseMemHandle(ptr(dptr)));
  });
}

MUresult muIpcGetEventHandle(MUipcEventHandle* pHandle, MUevent event) {
  return api([&] {
    if (pHandle == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
    musaIpcEventHandle_t h;
    const MUresult r =
        from_runtime(musaIpcGetEventHandle(&h, reinterpret_cast<musaEvent_t>(event)));
    if (r == MUSA_SUCCESS) std::memcpy(pHandle, &h, sizeof h);
    return r;
  });
}

MUresult muIpcOpenEventHandle(MUevent* phEvent, MUipcEventHandle handle) {
  return api([&] {
    if (phEvent == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
    musaIpcEventHandle_t h;
    std::memcpy(&h, &handle, sizeof h);
    musaEvent_t e = nullptr;
    const MUresult r = from_runtime(musaIpcOpenEventHandle(&e, h));
    if (r == MUSA_SUCCESS) *phEvent = reinterpret_cast<MUevent>(e);
    return r;
  });
}

MUresult muPointerGetAttribute(void* data, MUpointer_attribute attribute, MUdeviceptr p) {
  return api([&] {
    if (data == nullptr) return MUSA_ERROR_INVALID_VALUE;
    return pointer_attribute(data, enum_value(attribute), pointer_info(p), p);
  });
}

// CUDA's rule for the list form: a pointer CUDA does not know is no error; every attribute gets
// its "none" value (memory type 0, device ordinal -2 as cudaInvalidDeviceId, null, 0), and so
// does an attribute this pointer cannot have. An unknown attribute is still an error.
MUresult muPointerGetAttributes(unsigned int numAttributes, MUpointer_attribute* attributes,
                                void** data, MUdeviceptr p) {
  return api([&] {
    if (numAttributes == 0 || attributes == nullptr || data == nullptr)
      return MUSA_ERROR_INVALID_VALUE;
    const PointerInfo info = pointer_info(p);
    for (unsigned i = 0; i < numAttributes; ++i) {
      const int attribute = enum_value(attributes[i]);
      const size_t size = attribute_size(attribute);
      if (data[i] == nullptr || (size == 0 && attribute != MU_POINTER_ATTRIBUTE_P2P_TOKENS))
        return MUSA_ERROR_INVALID_VALUE;
      const MUresult r = pointer_attribute(data[i], attribute, info, p);
      if (r == MUSA_ERROR_INVALID_VALUE) {
        std::memset(data[i], 0, size);
        if (attribute == MU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) *static_cast<int*>(data[i]) = -2;
      } else if (r != MUSA_SUCCESS) {
        return r;
      }
    }
    return MUSA_SUCCESS;
  });
}

}  // extern "C"

// 16- and 32-bit fills. The synchronous forms finish the device's queued work first (CUDA's
// synchronous memsets are ordered after the legacy stream's work) and fill in place; the
// asynchronous 16-bit form runs as a host function on the stream (muMemsetD32Async: memops.cc).
namespace simdrv {
namespace {

template <class T>
struct WideFill {
  T* dst;
  T value;
  size_t count;
  bool persistent;  // captured into a graph: every replay runs it, so it is never freed
};

// Fills captured into graphs live as long as the process (a graph may replay them at any time).
std::mutex g_kept_mu;
std::vector<void*>* g_kept = new std::vector<void*>();  // never destroyed

template <class T>
void run_wide_fill(void* p) {
  auto* f = static_cast<WideFill<T>*>(p);
  for (size_t i = 0; i < f->count; ++i) f->dst[i] = f->value;
  if (!f->persistent) delete f;
}

template <class T>
bool fill_target_valid(MUdeviceptr dst, size_t count) {
  if (dst == 0 || dst % sizeof(T) != 0 || count > SIZE_MAX / sizeof(T)) return false;
  void* base = nullptr;
  size_t size = 0;
  if (musaSimFindAllocation(ptr(dst), &base, &size, nullptr, nullptr) != musaSuccess) return false;
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  return count * sizeof(T) <= size && dst - b <= size - count * sizeof(T);
}

template <class T>
MUresult fill_now(MUdeviceptr dst, T value, size_t count) {
  if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
  if (count == 0) return MUSA_SUCCESS;
  if (!fill_target_valid<T>(dst, count)) return MUSA_ERROR_INVALID_VALUE;
  const MUresult r = from_runtime(musaDeviceSynchronize());
  if (r != MUSA_SUCCESS) return r;
  T* p = static_cast<T*>(ptr(dst));
  for (size_t i = 0; i < count; ++i) p[i] = value;
  return MUSA_SUCCESS;
}

template <class T>
MUresult fill_async(MUdeviceptr dst, T value, size_t count, MUstream s) {
  if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
  if (count == 0) return MUSA_SUCCESS;
  if (!fill_target_valid<T>(dst, count)) return MUSA_ERROR_INVALID_VALUE;
  const musaStream_t rs = reinterpret_cast<musaStream_t>(s);
  musaStreamCaptureStatus status = musaStreamCaptureStatusNone;
  MUresult r = from_runtime(musaStreamIsCapturing(rs, &status));
  if (r != MUSA_SUCCESS) return r;
  const bool persistent = status != musaStreamCaptureStatusNone;
  auto f = std::make_unique<WideFill<T>>(
      WideFill<T>{static_cast<T*>(ptr(dst)), value, count, persistent});
  if (persistent) {
    std::lock_guard<std::mutex> lock(g_kept_mu);
    g_kept->push_back(f.get());
  }
  r = from_runtime(musaLaunchHostFunc(rs, &run_wide_fill<T>, f.get()));
  if (r != MUSA_SUCCESS) {
    if (persistent) {
      std::lock_guard<std::mutex> lock(g_kept_mu);
      g_kept->erase(std::find(g_kept->begin(), g_kept->end(), f.get()));
    }
    return r;
  }
  f.release();  // owned by the queued host function (or kept for the graph)
  return MUSA_SUCCESS;
}

}  // namespace
}  // namespace simdrv

extern "C" {

MUresult muMemsetD16_v2(MUdeviceptr dst, unsigned short us, size_t n) {
  return api([&] { return fill_now<unsigned short>(dst, us, n); });
}

MUresult muMemsetD32_v2(MUdeviceptr dst, unsigned int ui, size_t n) {
  return api([&] { return fill_now<unsigned int>(dst, ui, n); });
}

MUresult muMemsetD16Async(MUdeviceptr dst, unsigned short us, size_t n, MUstream s) {
  return api([&] { return fill_async<unsigned short>(dst, us, n, s); });
}

}  // extern "C"
