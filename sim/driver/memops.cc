// Memory queries and stream memory operations of the simulated MUSA driver. muMemsetD32Async and
// muStreamWriteValue32 run as host functions on the simulated runtime's stream
// (musaLaunchHostFunc), so they are ordered with the stream's other work and are captured into
// graphs like any other stream work.
#include <driver_hooks.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "driver.h"

namespace simdrv {
namespace {

struct Fill {
  uint32_t* dst;
  uint32_t value;
  size_t count;
  bool relaxed;     // a single write without a memory barrier
  bool persistent;  // captured into a graph: every replay runs it, so it is never freed
};

// Fills captured into graphs live as long as the process (graphs may replay them at any time).
std::mutex g_persistent_mu;
std::vector<Fill*>* g_persistent = new std::vector<Fill*>();  // never destroyed

void run_fill(void* p) {
  Fill* f = static_cast<Fill*>(p);
  // A single word (muStreamWriteValue32) is one atomic store, so a host thread polling it never
  // sees it torn; later work on the stream is ordered after the fill by the stream itself.
  if (f->count == 1) {
    __atomic_store_n(f->dst, f->value, f->relaxed ? __ATOMIC_RELAXED : __ATOMIC_SEQ_CST);
  } else {
    for (size_t i = 0; i < f->count; ++i) f->dst[i] = f->value;
  }
  if (!f->persistent) delete f;
}

// [p, p + bytes) must lie inside one allocation the runtime knows (device, host or mapped).
bool inside_allocation(uintptr_t p, size_t bytes) {
  void* base = nullptr;
  size_t size = 0;
  if (musaSimFindAllocation(reinterpret_cast<void*>(p), &base, &size, nullptr, nullptr) !=
      musaSuccess)
    return false;
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  return bytes <= size && p - b <= size - bytes;
}

MUresult enqueue_fill(MUstream stream, MUdeviceptr dst, uint32_t value, size_t count,
                      bool relaxed) {
  if (dst == 0 || dst % 4 != 0) return MUSA_ERROR_INVALID_VALUE;
  if (count > SIZE_MAX / 4) return MUSA_ERROR_INVALID_VALUE;
  if (count == 0) return MUSA_SUCCESS;
  if (!inside_allocation(dst, count * 4)) return MUSA_ERROR_INVALID_VALUE;
  musaStreamCaptureStatus status = musaStreamCaptureStatusNone;
  const MUresult r = from_runtime(musaStreamIsCapturing(stream, &status));
  if (r != MUSA_SUCCESS) return r;
  const bool persistent = status != musaStreamCaptureStatusNone;
  auto f = std::make_unique<Fill>(
      Fill{reinterpret_cast<uint32_t*>(dst), value, count, relaxed, persistent});
  Fill* raw = f.get();  // once queued, the worker may run (and free) it at any moment
  if (persistent) {
    std::lock_guard<std::mutex> lock(g_persistent_mu);
    g_persistent->push_back(raw);
  }
  const MUresult e = from_runtime(musaLaunchHostFunc(stream, run_fill, raw));
  if (e != MUSA_SUCCESS) {
    if (persistent) {
      std::lock_guard<std::mutex> lock(g_persistent_mu);
      g_persistent->erase(std::find(g_persistent->begin(), g_persistent->end(), raw));
    }
    return e;
  }
  f.release();  // owned by the queued host function (or by g_persistent)
  return MUSA_SUCCESS;
}

MUresult write_value(MUstream stream, MUdeviceptr addr, muuint32_t value, unsigned int flags) {
  if ((flags & ~static_cast<unsigned>(MU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER)) != 0)
    return MUSA_ERROR_INVALID_VALUE;
  return enqueue_fill(stream, addr, value, 1,
                      (flags & MU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER) != 0);
}

}  // namespace
}  // namespace simdrv

using namespace simdrv;

extern "C" {

MUresult muMemGetAddressRange_v2(MUdeviceptr* pbase, size_t* psize, MUdeviceptr dptr) {
  return api([&] {
    void* base = nullptr;
    size_t size = 0;
    if (dptr == 0) return MUSA_ERROR_INVALID_VALUE;
    uintptr_t vbase = 0;
    if (find_mapping(dptr, &vbase, &size)) {  // virtual memory: the mapping's own range
      if (pbase) *pbase = vbase;
      if (psize) *psize = size;
      return MUSA_SUCCESS;
    }
    if (musaSimFindAllocation(reinterpret_cast<void*>(dptr), &base, &size, nullptr, nullptr) !=
        musaSuccess)
      return MUSA_ERROR_NOT_FOUND;
    if (pbase) *pbase = reinterpret_cast<MUdeviceptr>(base);
    if (psize) *psize = size;
    return MUSA_SUCCESS;
  });
}

MUresult muMemsetD32Async(MUdeviceptr dstDevice, unsigned int ui, size_t N, MUstream hStream) {
  return api([&] { return enqueue_fill(hStream, dstDevice, ui, N, false); });
}

MUresult muStreamWriteValue32(MUstream stream, MUdeviceptr addr, muuint32_t value,
                              unsigned int flags) {
  return api([&] { return write_value(stream, addr, value, flags); });
}

MUresult muStreamWriteValue32_v2(MUstream stream, MUdeviceptr addr, muuint32_t value,
                                 unsigned int flags) {
  return api([&] { return write_value(stream, addr, value, flags); });
}

}  // extern "C"
