// The simulated driver's memory calls: allocation, host memory, copies, memsets, memory info and
// pointer attributes, on the simulated runtime's allocator (driver and runtime share device
// memory, as CUDA's do). Device pointers are MUdeviceptr values of the runtime's pointers.
#include <atomic>
#include <cstdint>
#include <cstring>

#include "driver.h"
#include "driver_hooks.h"

namespace simdrv {
namespace {

void* ptr(MUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }
MUdeviceptr dptr(const void* p) { return static_cast<MUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

MUresult copy(void* dst, const void* src, size_t n, MUstream stream, bool async) {
  if (n == 0) return MUSA_SUCCESS;
  if (dst == nullptr || src == nullptr) return MUSA_ERROR_INVALID_VALUE;
  const musaStream_t s = reinterpret_cast<musaStream_t>(stream);
  return from_runtime(async ? musaMemcpyAsync(dst, src, n, musaMemcpyDefault, s)
                            : musaMemcpy(dst, src, n, musaMemcpyDefault));
}

// A stable id per allocation base for MU_POINTER_ATTRIBUTE_BUFFER_ID: the base address itself is
// unique while the allocation lives, which is the id's documented lifetime.
unsigned long long buffer_id(const void* base) { return reinterpret_cast<uintptr_t>(base); }

MUresult pointer_attribute(void* data, MUpointer_attribute attribute, MUdeviceptr p) {
  void* base = nullptr;
  size_t size = 0;
  int device = -1, is_device = 0;
  const bool known =
      musaSimFindAllocation(ptr(p), &base, &size, &device, &is_device) == musaSuccess;
  switch (attribute) {
    case MU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      if (!known) return MUSA_ERROR_INVALID_VALUE;
      *static_cast<unsigned*>(data) = is_device ? MU_MEMORYTYPE_DEVICE : MU_MEMORYTYPE_HOST;
      return MUSA_SUCCESS;
    case MU_POINTER_ATTRIBUTE_CONTEXT:
      if (!known) return MUSA_ERROR_INVALID_VALUE;
      *static_cast<MUcontext*>(data) = primary_context(device < 0 ? 0 : device);
      return MUSA_SUCCESS;
    case MU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      if (!known) return MUSA_ERROR_INVALID_VALUE;
      *static_cast<int*>(data) = device < 0 ? 0 : device;
      return MUSA_SUCCESS;
    case MU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case MU_POINTER_ATTRIBUTE_HOST_POINTER:  // one address space: the same address
      if (!known) return MUSA_ERROR_INVALID_VALUE;
      *static_cast<void**>(data) = ptr(p);
      return MUSA_SUCCESS;
    case MU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case MU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
      if (!known) return MUSA_ERROR_INVALID_VALUE;
      *static_cast<MUdeviceptr*>(data) = dptr(base);
      return MUSA_SUCCESS;
    case MU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case MU_POINTER_ATTRIBUTE_MAPPING_SIZE:
      if (!known) return MUSA_ERROR_INVALID_VALUE;
      *static_cast<size_t*>(data) = size;
      return MUSA_SUCCESS;
    case MU_POINTER_ATTRIBUTE_BUFFER_ID:
    case MU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
      if (!known) return MUSA_ERROR_INVALID_VALUE;
      *static_cast<unsigned long long*>(data) = buffer_id(base);
      return MUSA_SUCCESS;
    case MU_POINTER_ATTRIBUTE_IS_MANAGED:
    case MU_POINTER_ATTRIBUTE_IS_LEGACY_MUSA_IPC_CAPABLE:
    case MU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case MU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
      // Booleans CUDA answers for any pointer: false for one it does not know.
      *static_cast<int*>(data) = 0;
      return MUSA_SUCCESS;
    case MU_POINTER_ATTRIBUTE_MAPPED:
      *static_cast<int*>(data) = known ? 1 : 0;
      return MUSA_SUCCESS;
    case MU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
      *static_cast<int*>(data) = 1;  // the simulator's copies are always synchronous-safe
      return MUSA_SUCCESS;
    case MU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      *static_cast<unsigned long long*>(data) = 0;
      return MUSA_SUCCESS;
    case MU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      if (!known) return MUSA_ERROR_INVALID_VALUE;
      *static_cast<unsigned*>(data) = 3;  // MU_MEM_ACCESS_FLAGS_PROT_READWRITE
      return MUSA_SUCCESS;
    case MU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      *static_cast<void**>(data) = nullptr;
      return MUSA_SUCCESS;
    case MU_POINTER_ATTRIBUTE_P2P_TOKENS:
      return MUSA_ERROR_NOT_SUPPORTED;
  }
  return MUSA_ERROR_INVALID_VALUE;
}

}  // namespace
}  // namespace simdrv

using namespace simdrv;

extern "C" {

MUresult muMemGetInfo_v2(size_t* free, size_t* total) {
  return api([&] {
    if (free == nullptr || total == nullptr) return MUSA_ERROR_INVALID_VALUE;
    return from_runtime(musaMemGetInfo(free, total));
  });
}

MUresult muMemAlloc_v2(MUdeviceptr* dptr_out, size_t bytesize) {
  return api([&] {
    if (dptr_out == nullptr || bytesize == 0) return MUSA_ERROR_INVALID_VALUE;
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
    void* p = nullptr;
    const MUresult r = from_runtime(musaMallocManaged(&p, bytesize, flags));
    *dptr_out = r == MUSA_SUCCESS ? dptr(p) : 0;
    return r;
  });
}

MUresult muMemAllocHost_v2(void** pp, size_t bytesize) {
  return api([&] {
    if (pp == nullptr) return MUSA_ERROR_INVALID_VALUE;
    return from_runtime(musaHostAlloc(pp, bytesize, 0));
  });
}

MUresult muMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
  return api([&] {
    if (pp == nullptr) return MUSA_ERROR_INVALID_VALUE;
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
  return api([&] { return from_runtime(musaHostRegister(p, bytesize, Flags)); });
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
    if (dd < 0 || sd < 0) return MUSA_ERROR_INVALID_CONTEXT;
    return from_runtime(musaMemcpyPeer(ptr(dst), dd, ptr(src), sd, n));
  });
}

MUresult muMemcpyPeerAsync(MUdeviceptr dst, MUcontext dstContext, MUdeviceptr src,
                           MUcontext srcContext, size_t n, MUstream s) {
  return api([&] {
    const int dd = context_device(dstContext), sd = context_device(srcContext);
    if (dd < 0 || sd < 0) return MUSA_ERROR_INVALID_CONTEXT;
    return from_runtime(
        musaMemcpyPeerAsync(ptr(dst), dd, ptr(src), sd, n, reinterpret_cast<musaStream_t>(s)));
  });
}

MUresult muMemsetD8_v2(MUdeviceptr dst, unsigned char uc, size_t n) {
  return api([&] { return from_runtime(musaMemset(ptr(dst), uc, n)); });
}

MUresult muMemsetD8Async(MUdeviceptr dst, unsigned char uc, size_t n, MUstream s) {
  return api([&] {
    return from_runtime(musaMemsetAsync(ptr(dst), uc, n, reinterpret_cast<musaStream_t>(s)));
  });
}

MUresult muPointerGetAttribute(void* data, MUpointer_attribute attribute, MUdeviceptr p) {
  return api([&] {
    if (data == nullptr) return MUSA_ERROR_INVALID_VALUE;
    return pointer_attribute(data, attribute, p);
  });
}

// CUDA's rule for the list form: every attribute answered; one a pointer cannot have is left with
// its documented "none" value rather than failing the call.
MUresult muPointerGetAttributes(unsigned int numAttributes, MUpointer_attribute* attributes,
                                void** data, MUdeviceptr p) {
  return api([&] {
    if (numAttributes == 0 || attributes == nullptr || data == nullptr)
      return MUSA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < numAttributes; ++i) {
      if (data[i] == nullptr) return MUSA_ERROR_INVALID_VALUE;
      const MUresult r = pointer_attribute(data[i], attributes[i], p);
      if (r == MUSA_ERROR_INVALID_VALUE && attributes[i] == MU_POINTER_ATTRIBUTE_MEMORY_TYPE)
        *static_cast<unsigned*>(data[i]) = 0;  // unregistered host memory
      else if (r == MUSA_ERROR_INVALID_VALUE)
        std::memset(
            data[i], 0,
            attributes[i] == MU_POINTER_ATTRIBUTE_RANGE_SIZE ? sizeof(size_t) : sizeof(int));
      else if (r != MUSA_SUCCESS)
        return r;
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
};

template <class T>
void run_wide_fill(void* p) {
  auto* f = static_cast<WideFill<T>*>(p);
  for (size_t i = 0; i < f->count; ++i) f->dst[i] = f->value;
  delete f;
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
  if (count == 0) return MUSA_SUCCESS;
  if (!fill_target_valid<T>(dst, count)) return MUSA_ERROR_INVALID_VALUE;
  auto* f = new WideFill<T>{static_cast<T*>(ptr(dst)), value, count};
  const MUresult r =
      from_runtime(musaLaunchHostFunc(reinterpret_cast<musaStream_t>(s), &run_wide_fill<T>, f));
  if (r != MUSA_SUCCESS) delete f;
  return r;
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
