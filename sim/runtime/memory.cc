// Memory: allocations live in a registry ordered by address, so any pointer inside one can be
// classified. Device memory is host memory underneath, charged against the simulated device's
// capacity: a private mapping of its own, which IPC can turn into a shared one in place
// (make_shareable). Copies and fills run on the stream workers.
#include "graph.h"
#include "driver_hooks.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <cstring>

namespace sim {

bool Registry::find(const void* p, Alloc* out) {
  const uintptr_t x = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = map_.upper_bound(x);
  if (it == map_.begin()) return false;
  --it;
  if (x >= it->second.base + it->second.size) return false;
  *out = it->second;
  return true;
}

bool Registry::device_memory_in(uintptr_t lo, uintptr_t hi) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = map_.lower_bound(lo); it != map_.end() && it->first < hi; ++it)
    if (it->second.kind == AllocKind::Device || it->second.kind == AllocKind::Managed) return true;
  return false;
}

void Registry::add(const Alloc& a) {
  std::lock_guard<std::mutex> lock(mu_);
  Alloc& slot = map_[a.base];
  slot = a;
  slot.id = next_id_++;
}

bool Registry::remove_exact(uintptr_t base, AllocKind kind, Alloc* out, bool imported) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = map_.find(base);
  if (it == map_.end() || it->second.kind != kind || it->second.external ||
      it->second.imported != imported)
    return false;
  *out = it->second;
  map_.erase(it);
  return true;
}

bool Registry::set_share_fd(uintptr_t base, unsigned long long id, int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = map_.find(base);
  if (it == map_.end() || it->second.id != id) return false;
  it->second.share_fd = fd;
  return true;
}

std::vector<Alloc> Registry::remove_device(int dev) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Alloc> out;
  for (auto it = map_.begin(); it != map_.end();) {
    if (it->second.device == dev && it->second.kind != AllocKind::Registered &&
        !it->second.external) {
      out.push_back(it->second);
      it = map_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

bool Registry::update_external(const uintptr_t* rm, size_t n, const Alloc* add, size_t m) {
  std::lock_guard<std::mutex> lock(mu_);
  auto removed = [&](uintptr_t base) { return std::find(rm, rm + n, base) != rm + n; };
  for (size_t i = 0; i < n; ++i) {
    auto it = map_.find(rm[i]);
    if (it == map_.end() || !it->second.external) return false;
  }
  for (size_t i = 0; i < m; ++i) {
    const uintptr_t lo = add[i].base, hi = add[i].base + add[i].size;
    auto it = map_.lower_bound(lo);
    if (it != map_.begin()) --it;
    for (; it != map_.end() && it->first < hi; ++it)
      if (it->first + it->second.size > lo && !removed(it->first)) return false;
  }
  for (size_t i = 0; i < n; ++i) map_.erase(rm[i]);
  for (size_t i = 0; i < m; ++i) {
    Alloc& slot = map_[add[i].base];
    slot = add[i];
    slot.id = next_id_++;
  }
  return true;
}

bool lookup(const void* p, Alloc* out) { return p != nullptr && rt().mem.find(p, out); }

namespace {

constexpr size_t kDeviceAlign = 256;
constexpr size_t kHostAlign = 4096;
constexpr size_t kPitchAlign = 512;

size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

bool charge(Device& d, size_t n) {
  size_t cur = d.used.load();
  do {
    if (n > d.total || cur > d.total - n) return false;
  } while (!d.used.compare_exchange_weak(cur, cur + n));
  return true;
}

}  // namespace

void release(const Alloc& a) {
  if (a.charged != 0) device(a.device).used.fetch_sub(a.charged);
  if (a.mapped != 0)
    munmap(a.raw, a.mapped);
  else
    std::free(a.raw);
  if (a.share_fd >= 0) close(a.share_fd);
}

namespace {

size_t page_size() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Device memory: a private anonymous mapping of whole pages (zero-filled, as cudaMalloc's is not
// promised to be), so that make_shareable can later replace it in place by shared pages.
void* map_device_memory(size_t bytes, size_t* mapped) {
  const size_t len = round_up(bytes, page_size());
  if (len < bytes) return nullptr;
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) return nullptr;
  *mapped = len;
  return p;
}

// Allocates and registers; size must be non-zero.
musaError_t allocate(void** out, size_t size, AllocKind kind, unsigned flags) {
  const int dev = current_device();
  Device& d = device(dev);
  const bool charged = kind == AllocKind::Device || kind == AllocKind::Managed;
  const size_t align = kind == AllocKind::Device ? kDeviceAlign : kHostAlign;
  const size_t bytes = round_up(size, align);
  if (bytes < size) return musaErrorMemoryAllocation;
  if (charged && !charge(d, bytes)) return musaErrorMemoryAllocation;
  void* p = nullptr;
  size_t mapped = 0;
  if (kind == AllocKind::Device) {
    p = map_device_memory(bytes, &mapped);
  } else if (posix_memalign(&p, align, bytes) != 0) {
    p = nullptr;
  }
  if (p == nullptr) {
    if (charged) d.used.fetch_sub(bytes);
    return musaErrorMemoryAllocation;
  }
  Alloc a;
  a.mapped = mapped;
  a.base = reinterpret_cast<uintptr_t>(p);
  a.size = size;
  a.kind = kind;
  a.device = dev;
  a.flags = flags;
  a.raw = p;
  a.charged = charged ? bytes : 0;
  try {
    rt().mem.add(a);
  } catch (...) {
    release(a);
    throw;
  }
  *out = p;
  return musaSuccess;
}

musaError_t free_kind(void* p, AllocKind kind, AllocKind alt) {
  Alloc a;
  const uintptr_t x = reinterpret_cast<uintptr_t>(p);
  // Memory opened from another process's IPC handle is not this process's to free (CUDA:
  // musaIpcCloseMemHandle ends it): remove_exact leaves it.
  if (!rt().mem.remove_exact(x, kind, &a) && !rt().mem.remove_exact(x, alt, &a))
    return musaErrorInvalidValue;
  sync_device(a.device);  // freeing waits for work that may still use the memory
  release(a);
  return musaSuccess;
}

enum class Side { Host, Device, Any };

// A span or offset whose arithmetic overflowed: larger than any allocation, refused by every check.
constexpr size_t kOverflow = SIZE_MAX;

// a * b + c, or kOverflow.
size_t mul_add(size_t a, size_t b, size_t c) {
  size_t r = 0;
  if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r)) return kOverflow;
  return r;
}

// Whether `span` bytes from `start` may be touched on side `want`.
musaError_t check_side(const void* start, size_t span, Side want, bool* pageable) {
  if (span == kOverflow) return musaErrorInvalidValue;
  Alloc a;
  const bool known = lookup(start, &a);
  *pageable = !known;
  if (want == Side::Device && !known) return musaErrorInvalidValue;
  if (want == Side::Host && known && a.kind == AllocKind::Device) return musaErrorInvalidValue;
  if (known && !inside(a, reinterpret_cast<uintptr_t>(start), span)) return musaErrorInvalidValue;
  return musaSuccess;
}

// Bytes a pitched region of extent e spans from its first byte (kOverflow when that overflows).
size_t span_of(const musaPitchedPtr& p, const musaExtent& e) {
  if (e.width == 0 || e.height == 0 || e.depth == 0) return 0;
  const size_t slice = mul_add(p.pitch, p.ysize, 0);
  const size_t rows = mul_add(e.height - 1, p.pitch, e.width);
  if (slice == kOverflow || rows == kOverflow) return kOverflow;
  return mul_add(e.depth - 1, slice, rows);
}

// The offset of pos in a pitched region (kOverflow when that overflows).
size_t offset_of(const musaPitchedPtr& p, const musaPos& pos) {
  const size_t slice = mul_add(p.pitch, p.ysize, 0);
  const size_t in_slice = mul_add(pos.y, p.pitch, pos.x);
  if (slice == kOverflow || in_slice == kOverflow) return kOverflow;
  return mul_add(pos.z, slice, in_slice);
}

const unsigned char* start_of(const musaPitchedPtr& p, const musaPos& pos) {
  return static_cast<const unsigned char*>(p.ptr) + offset_of(p, pos);
}

// Whether ptr + offset_of(pos) stays in the address space.
bool start_ok(const musaPitchedPtr& p, const musaPos& pos) {
  const size_t off = offset_of(p, pos);
  return off != kOverflow && off <= UINTPTR_MAX - reinterpret_cast<uintptr_t>(p.ptr);
}

bool src_pageable(const musaMemcpy3DParms& p) {
  Alloc a;
  return !lookup(start_of(p.srcPtr, p.srcPos), &a);
}

bool dst_pageable(const musaMemcpy3DParms& p) {
  Alloc a;
  return !lookup(start_of(p.dstPtr, p.dstPos), &a);
}

}  // namespace

musaMemcpy3DParms copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                          size_t height, musaMemcpyKind kind) {
  musaMemcpy3DParms p{};
  p.srcPtr.ptr = const_cast<void*>(src);
  p.srcPtr.pitch = spitch;
  p.srcPtr.xsize = width;
  p.srcPtr.ysize = height;
  p.dstPtr.ptr = dst;
  p.dstPtr.pitch = dpitch;
  p.dstPtr.xsize = width;
  p.dstPtr.ysize = height;
  p.extent.width = width;
  p.extent.height = height;
  p.extent.depth = 1;
  p.kind = kind;
  return p;
}

musaMemcpy3DParms copy_1d(void* dst, const void* src, size_t count, musaMemcpyKind kind) {
  return copy_2d(dst, count, src, count, count, 1, kind);
}

musaError_t validate_copy(const musaMemcpy3DParms& p) {
  if (static_cast<int>(p.kind) < musaMemcpyHostToHost ||
      static_cast<int>(p.kind) > musaMemcpyDefault)
    return musaErrorInvalidMemcpyDirection;
  if (p.srcArray != nullptr || p.dstArray != nullptr) return musaErrorInvalidValue;  // no arrays
  const musaExtent& e = p.extent;
  if (e.width == 0 || e.height == 0 || e.depth == 0) return musaSuccess;
  if (p.srcPtr.ptr == nullptr || p.dstPtr.ptr == nullptr) return musaErrorInvalidValue;
  if (!start_ok(p.srcPtr, p.srcPos) || !start_ok(p.dstPtr, p.dstPos)) return musaErrorInvalidValue;
  // Rows wider than the pitch (overflow-safe: pitch - x < width).
  if ((e.height > 1 || e.depth > 1) &&
      (p.srcPtr.pitch < p.srcPos.x || p.srcPtr.pitch - p.srcPos.x < e.width ||
       p.dstPtr.pitch < p.dstPos.x || p.dstPtr.pitch - p.dstPos.x < e.width))
    return musaErrorInvalidPitchValue;
  if (e.depth > 1 && (p.srcPtr.ysize < p.srcPos.y || p.srcPtr.ysize - p.srcPos.y < e.height ||
                      p.dstPtr.ysize < p.dstPos.y || p.dstPtr.ysize - p.dstPos.y < e.height))
    return musaErrorInvalidValue;
  Side src = Side::Any, dst = Side::Any;
  switch (p.kind) {
    case musaMemcpyHostToHost:
      src = dst = Side::Host;
      break;
    case musaMemcpyHostToDevice:
      src = Side::Host;
      dst = Side::Device;
      break;
    case musaMemcpyDeviceToHost:
      src = Side::Device;
      dst = Side::Host;
      break;
    case musaMemcpyDeviceToDevice:
      src = dst = Side::Device;
      break;
    default:
      break;
  }
  bool pg = false;
  SIM_TRY(check_side(start_of(p.srcPtr, p.srcPos), span_of(p.srcPtr, e), src, &pg));
  SIM_TRY(check_side(start_of(p.dstPtr, p.dstPos), span_of(p.dstPtr, e), dst, &pg));
  return musaSuccess;
}

void do_copy(const musaMemcpy3DParms& p) {
  const musaExtent& e = p.extent;
  for (size_t z = 0; z < e.depth; ++z) {
    for (size_t y = 0; y < e.height; ++y) {
      const unsigned char* s =
          start_of(p.srcPtr, p.srcPos) + z * p.srcPtr.pitch * p.srcPtr.ysize + y * p.srcPtr.pitch;
      unsigned char* d = const_cast<unsigned char*>(start_of(p.dstPtr, p.dstPos)) +
                         z * p.dstPtr.pitch * p.dstPtr.ysize + y * p.dstPtr.pitch;
      std::memmove(d, s, e.width);
    }
  }
}

musaError_t validate_memset(const MemsetDesc& m) {
  if (m.elem != 1 && m.elem != 2 && m.elem != 4) return musaErrorInvalidValue;
  if (m.width == 0 || m.height == 0 || m.depth == 0) return musaSuccess;
  if (m.dst == nullptr) return musaErrorInvalidValue;
  const size_t row = mul_add(m.width, m.elem, 0);
  if (row == kOverflow) return musaErrorInvalidValue;
  if ((m.height > 1 || m.depth > 1) && m.pitch < row) return musaErrorInvalidPitchValue;
  if (m.depth > 1 && m.slice < mul_add(m.pitch, m.height, 0)) return musaErrorInvalidValue;
  const size_t rows = mul_add(m.height - 1, m.pitch, row);
  const size_t span = rows == kOverflow ? kOverflow : mul_add(m.depth - 1, m.slice, rows);
  Alloc a;
  if (!lookup(m.dst, &a)) return musaErrorInvalidValue;
  if (!inside(a, reinterpret_cast<uintptr_t>(m.dst), span)) return musaErrorInvalidValue;
  return musaSuccess;
}

void do_memset(const MemsetDesc& m) {
  for (size_t z = 0; z < m.depth; ++z) {
    for (size_t y = 0; y < m.height; ++y) {
      unsigned char* row = static_cast<unsigned char*>(m.dst) + z * m.slice + y * m.pitch;
      if (m.elem == 1) {
        std::memset(row, static_cast<int>(m.value & 0xff), m.width);
      } else if (m.elem == 2) {
        const uint16_t v = static_cast<uint16_t>(m.value);
        for (size_t i = 0; i < m.width; ++i) std::memcpy(row + i * 2, &v, 2);
      } else {
        const uint32_t v = m.value;
        for (size_t i = 0; i < m.width; ++i) std::memcpy(row + i * 4, &v, 4);
      }
    }
  }
}

namespace {

musaError_t copy_on(const musaMemcpy3DParms& in, musaStream_t stream, bool sync) {
  SIM_TRY(validate_copy(in));
  if (sync) SIM_TRY(check_unsafe());
  std::shared_ptr<MUstream_st> s;
  SIM_TRY(resolve_stream(sync ? nullptr : stream, &s));
  if (in.extent.width == 0 || in.extent.height == 0 || in.extent.depth == 0) return musaSuccess;
  NodeParams np;
  np.type = musaGraphNodeTypeMemcpy;
  np.copy.p = in;
  if (!sync) {
    musaError_t err = musaSuccess;
    if (capture_node(*s, np, &err)) return err;
  }
  CopyDesc c;
  c.p = in;
  if (!sync && src_pageable(in)) {
    // Like a GPU runtime staging pageable memory: the source is read before the call returns.
    const size_t span = span_of(in.srcPtr, in.extent);
    c.staging = std::make_shared<std::vector<unsigned char>>(span);
    std::memcpy(c.staging->data(), start_of(in.srcPtr, in.srcPos), span);
    c.p.srcPtr.ptr = c.staging->data();
    c.p.srcPos = musaPos{0, 0, 0};
  }
  const bool wait = sync || dst_pageable(in);
  // On an idle stream a copy the caller waits for, or a small one, runs here: a wake-up of the
  // stream's thread costs more than the copy (PyTorch's .item() and batch uploads). Larger
  // asynchronous copies stay on the stream's thread, overlapping the caller's work.
  const size_t bytes = in.extent.width * in.extent.height * in.extent.depth;
  if ((wait || bytes <= kInlineBytes) &&
      run_if_idle(
          *s, [](void* p) { do_copy(static_cast<const CopyDesc*>(p)->p); }, &c))
    return musaSuccess;
  MarkerPtr m;
  SIM_TRY(submit(
      *s, [c] { do_copy(c.p); }, {}, &m));
  if (wait) m->wait();
  return musaSuccess;
}

musaError_t memset_on(const MemsetDesc& md, musaStream_t stream, bool sync) {
  SIM_TRY(validate_memset(md));
  if (sync) SIM_TRY(check_unsafe());
  std::shared_ptr<MUstream_st> s;
  SIM_TRY(resolve_stream(sync ? nullptr : stream, &s));
  if (md.width == 0 || md.height == 0 || md.depth == 0) return musaSuccess;
  if (!sync) {
    NodeParams np;
    np.type = musaGraphNodeTypeMemset;
    np.memset = md;
    musaError_t err = musaSuccess;
    if (capture_node(*s, np, &err)) return err;
  }
  const size_t bytes = md.width * md.height * md.depth * md.elem;
  if ((sync || bytes <= kInlineBytes) &&
      run_if_idle(
          *s, [](void* p) { do_memset(*static_cast<const MemsetDesc*>(p)); },
          const_cast<MemsetDesc*>(&md)))
    return musaSuccess;
  MarkerPtr m;
  SIM_TRY(submit(
      *s, [md] { do_memset(md); }, {}, &m));
  if (sync) m->wait();
  return musaSuccess;
}

MemsetDesc memset_2d(void* p, size_t pitch, int value, size_t width, size_t height) {
  MemsetDesc m;
  m.dst = p;
  m.pitch = pitch;
  m.value = static_cast<unsigned>(value);
  m.elem = 1;
  m.width = width;
  m.height = height;
  m.depth = 1;
  m.slice = pitch * height;
  return m;
}

MemsetDesc memset_3d(const musaPitchedPtr& p, int value, const musaExtent& e) {
  MemsetDesc m = memset_2d(p.ptr, p.pitch, value, e.width, e.height);
  m.depth = e.depth;
  m.slice = p.pitch * p.ysize;
  return m;
}

musaMemcpy3DParms from_peer(const musaMemcpy3DPeerParms& q) {
  musaMemcpy3DParms p{};
  p.srcArray = q.srcArray;
  p.srcPos = q.srcPos;
  p.srcPtr = q.srcPtr;
  p.dstArray = q.dstArray;
  p.dstPos = q.dstPos;
  p.dstPtr = q.dstPtr;
  p.extent = q.extent;
  p.kind = musaMemcpyDefault;
  return p;
}

}  // namespace

musaError_t make_shareable(const Alloc& a, int* fd_out) {
  if (a.share_fd >= 0) {
    *fd_out = a.share_fd;
    return musaSuccess;
  }
  if (a.kind != AllocKind::Device || a.mapped == 0 || a.external) return musaErrorInvalidValue;
  // The bytes are copied into the memfd and its pages then mapped over the private ones: work
  // still queued on the device could write in between and be lost, so it finishes first.
  sync_device(a.device);
  const int fd = memfd_create("torchada-sim-device-memory", MFD_CLOEXEC);
  if (fd < 0)
    return errno == EMFILE || errno == ENFILE ? musaErrorMemoryAllocation
                                              : musaErrorOperatingSystem;
  auto fail = [fd](musaError_t e) {
    close(fd);
    return e;
  };
  if (ftruncate(fd, static_cast<off_t>(a.mapped)) != 0) return fail(musaErrorMemoryAllocation);
  // Only chunks holding a non-zero byte are written: the memfd reads as zeros elsewhere, and the
  // pages of a large allocation never touched cost nothing on either side.
  constexpr size_t kChunk = 64 * 1024;
  static const unsigned char zeros[kChunk] = {};
  const auto* bytes = static_cast<const unsigned char*>(a.raw);
  for (size_t off = 0; off < a.mapped; off += kChunk) {
    const size_t n = std::min(kChunk, a.mapped - off);
    if (std::memcmp(bytes + off, zeros, n) == 0) continue;
    for (size_t done = 0; done < n;) {
      const ssize_t w = pwrite(fd, bytes + off + done, n - done, static_cast<off_t>(off + done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return fail(musaErrorMemoryAllocation);  // ENOSPC, ENOMEM
      done += static_cast<size_t>(w);
    }
  }
  void* p = mmap(a.raw, a.mapped, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
  if (p == MAP_FAILED) return fail(musaErrorMemoryAllocation);  // the private pages stay mapped
  if (!rt().mem.set_share_fd(a.base, a.id, fd)) return fail(musaErrorInvalidValue);  // freed
  *fd_out = fd;
  return musaSuccess;
}

void reset_device(int dev) {
  sync_device(dev);
  // Streams and events made in the device's context end with it: their handles are stale
  // afterwards (musaErrorInvalidResourceHandle), as CUDA's are once the context is destroyed.
  std::vector<std::shared_ptr<MUstream_st>> streams;
  {
    Runtime& r = rt();
    std::lock_guard<std::mutex> lock(r.handles_mu);
    for (auto it = r.streams.begin(); it != r.streams.end();) {
      if (it->second->device != dev) {
        ++it;
        continue;
      }
      streams.push_back(std::move(it->second));
      it = r.streams.erase(it);
    }
    for (auto it = r.events.begin(); it != r.events.end();)
      it = it->second->device == dev ? r.events.erase(it) : std::next(it);
  }
  for (const auto& s : streams) retire_stream(s);
  for (const Alloc& a : rt().mem.remove_device(dev)) release(a);
  Device& d = device(dev);
  std::lock_guard<std::mutex> lock(d.cfg_mu);
  d.flags = 0;
  d.cache_config = 0;
  d.shmem_config = 0;
  d.peers = 0;
  d.context.store(false);  // the primary context is destroyed until the next use
  d.fault.store(musaSuccess);
}

}  // namespace sim

using namespace sim;

extern "C" {

musaError_t musaMalloc(void** devPtr, size_t size) {
  return api([&] {
    if (devPtr == nullptr) return musaErrorInvalidValue;
    SIM_TRY(check_unsafe());
    if (size == 0) {
      *devPtr = nullptr;
      return musaSuccess;
    }
    return allocate(devPtr, size, AllocKind::Device, 0);
  });
}

musaError_t musaFree(void* devPtr) {
  return api([&] {
    SIM_TRY(check_unsafe());
    if (devPtr == nullptr) {
      current_device();  // musaFree(0): the classic way to initialise the device's context
      return musaSuccess;
    }
    return free_kind(devPtr, AllocKind::Device, AllocKind::Managed);
  });
}

musaError_t musaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  return api([&] {
    if (pHost == nullptr) return musaErrorInvalidValue;
    if ((flags & ~0x7u) != 0) return musaErrorInvalidValue;
    SIM_TRY(check_unsafe());
    if (size == 0) {
      *pHost = nullptr;
      return musaSuccess;
    }
    return allocate(pHost, size, AllocKind::Host, flags);
  });
}

musaError_t musaMallocHost(void** ptr, size_t size) {
  return musaHostAlloc(ptr, size, musaHostAllocDefault);
}

musaError_t musaFreeHost(void* ptr) {
  return api([&] {
    SIM_TRY(check_unsafe());
    if (ptr == nullptr) return musaSuccess;
    return free_kind(ptr, AllocKind::Host, AllocKind::Host);
  });
}

musaError_t musaHostRegister(void* ptr, size_t size, unsigned int flags) {
  return api([&] {
    if (ptr == nullptr || size == 0 || (flags & ~0xfu) != 0) return musaErrorInvalidValue;
    Alloc a;
    if (lookup(ptr, &a) || lookup(static_cast<const unsigned char*>(ptr) + size - 1, &a))
      return musaErrorHostMemoryAlreadyRegistered;
    a = Alloc{};
    a.base = reinterpret_cast<uintptr_t>(ptr);
    a.size = size;
    a.kind = AllocKind::Registered;
    a.device = current_device();
    a.flags = flags;
    rt().mem.add(a);
    return musaSuccess;
  });
}

musaError_t musaHostUnregister(void* ptr) {
  return api([&] {
    if (ptr == nullptr) return musaErrorInvalidValue;
    Alloc a;
    if (!rt().mem.remove_exact(reinterpret_cast<uintptr_t>(ptr), AllocKind::Registered, &a))
      return musaErrorHostMemoryNotRegistered;
    sync_device(a.device);
    return musaSuccess;
  });
}

musaError_t musaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags) {
  return api([&] {
    if (pDevice == nullptr || pHost == nullptr || flags != 0) return musaErrorInvalidValue;
    Alloc a;
    if (!lookup(pHost, &a) || (a.kind != AllocKind::Host && a.kind != AllocKind::Registered))
      return musaErrorInvalidValue;
    *pDevice = pHost;  // unified addressing: the same address on both sides
    return musaSuccess;
  });
}

musaError_t musaHostGetFlags(unsigned int* pFlags, void* pHost) {
  return api([&] {
    if (pFlags == nullptr || pHost == nullptr) return musaErrorInvalidValue;
    Alloc a;
    if (!lookup(pHost, &a) || (a.kind != AllocKind::Host && a.kind != AllocKind::Registered))
      return musaErrorInvalidValue;
    *pFlags = a.flags | (a.kind == AllocKind::Host ? musaHostAllocMapped : 0u);
    return musaSuccess;
  });
}

musaError_t musaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
  return api([&] {
    if (devPtr == nullptr || size == 0) return musaErrorInvalidValue;
    if (flags != musaMemAttachGlobal && flags != musaMemAttachHost) return musaErrorInvalidValue;
    SIM_TRY(check_unsafe());
    return allocate(devPtr, size, AllocKind::Managed, flags);
  });
}

musaError_t musaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height) {
  return api([&] {
    if (devPtr == nullptr || pitch == nullptr) return musaErrorInvalidValue;
    SIM_TRY(check_unsafe());
    const size_t p = round_up(width == 0 ? 1 : width, kPitchAlign);
    *pitch = p;
    if (width == 0 || height == 0) {
      *devPtr = nullptr;
      return musaSuccess;
    }
    if (height > SIZE_MAX / p) return musaErrorMemoryAllocation;
    return allocate(devPtr, p * height, AllocKind::Device, 0);
  });
}

musaError_t musaMalloc3D(struct musaPitchedPtr* out, struct musaExtent extent) {
  return api([&] {
    if (out == nullptr) return musaErrorInvalidValue;
    SIM_TRY(check_unsafe());
    const size_t p = round_up(extent.width == 0 ? 1 : extent.width, kPitchAlign);
    musaPitchedPtr r{nullptr, p, extent.width, extent.height};
    if (extent.width != 0 && extent.height != 0 && extent.depth != 0) {
      if (extent.height > SIZE_MAX / p || extent.depth > SIZE_MAX / (p * extent.height))
        return musaErrorMemoryAllocation;
      SIM_TRY(allocate(&r.ptr, p * extent.height * extent.depth, AllocKind::Device, 0));
    }
    *out = r;
    return musaSuccess;
  });
}

musaError_t musaMemGetInfo(size_t* freeBytes, size_t* total) {
  return api([&] {
    if (freeBytes == nullptr || total == nullptr) return musaErrorInvalidValue;
    Device& d = device(current_device());
    const size_t used = d.used.load();
    *total = d.total;
    *freeBytes = used > d.total ? 0 : d.total - used;
    return musaSuccess;
  });
}

musaError_t musaDeviceReset(void) {
  return api([&] {
    reset_device(current_device());
    return musaSuccess;
  });
}

musaError_t musaMemcpy(void* dst, const void* src, size_t count, enum musaMemcpyKind kind) {
  return api([&] { return copy_on(copy_1d(dst, src, count, kind), nullptr, true); });
}

musaError_t musaMemcpyAsync(void* dst, const void* src, size_t count, enum musaMemcpyKind kind,
                            musaStream_t stream) {
  return api([&] { return copy_on(copy_1d(dst, src, count, kind), stream, false); });
}

musaError_t musaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, enum musaMemcpyKind kind) {
  return api([&] {
    return copy_on(copy_2d(dst, dpitch, src, spitch, width, height, kind), nullptr, true);
  });
}

musaError_t musaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                              size_t width, size_t height, enum musaMemcpyKind kind,
                              musaStream_t stream) {
  return api([&] {
    return copy_on(copy_2d(dst, dpitch, src, spitch, width, height, kind), stream, false);
  });
}

musaError_t musaMemcpy3D(const struct musaMemcpy3DParms* p) {
  return api([&] {
    if (p == nullptr) return musaErrorInvalidValue;
    return copy_on(*p, nullptr, true);
  });
}

musaError_t musaMemcpy3DAsync(const struct musaMemcpy3DParms* p, musaStream_t stream) {
  return api([&] {
    if (p == nullptr) return musaErrorInvalidValue;
    return copy_on(*p, stream, false);
  });
}

musaError_t musaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t count) {
  return api([&] {
    if (!valid_device(dstDevice) || !valid_device(srcDevice)) return musaErrorInvalidDevice;
    return copy_on(copy_1d(dst, src, count, musaMemcpyDefault), nullptr, true);
  });
}

musaError_t musaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice,
                                size_t count, musaStream_t stream) {
  return api([&] {
    if (!valid_device(dstDevice) || !valid_device(srcDevice)) return musaErrorInvalidDevice;
    return copy_on(copy_1d(dst, src, count, musaMemcpyDefault), stream, false);
  });
}

musaError_t musaMemcpy3DPeer(const struct musaMemcpy3DPeerParms* p) {
  return api([&] {
    if (p == nullptr) return musaErrorInvalidValue;
    if (!valid_device(p->dstDevice) || !valid_device(p->srcDevice)) return musaErrorInvalidDevice;
    return copy_on(from_peer(*p), nullptr, true);
  });
}

musaError_t musaMemcpy3DPeerAsync(const struct musaMemcpy3DPeerParms* p, musaStream_t stream) {
  return api([&] {
    if (p == nullptr) return musaErrorInvalidValue;
    if (!valid_device(p->dstDevice) || !valid_device(p->srcDevice)) return musaErrorInvalidDevice;
    return copy_on(from_peer(*p), stream, false);
  });
}

musaError_t musaMemset(void* devPtr, int value, size_t count) {
  return api([&] { return memset_on(memset_2d(devPtr, count, value, count, 1), nullptr, true); });
}

musaError_t musaMemsetAsync(void* devPtr, int value, size_t count, musaStream_t stream) {
  return api([&] { return memset_on(memset_2d(devPtr, count, value, count, 1), stream, false); });
}

musaError_t musaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height) {
  return api(
      [&] { return memset_on(memset_2d(devPtr, pitch, value, width, height), nullptr, true); });
}

musaError_t musaMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width, size_t height,
                              musaStream_t stream) {
  return api(
      [&] { return memset_on(memset_2d(devPtr, pitch, value, width, height), stream, false); });
}

musaError_t musaMemset3D(struct musaPitchedPtr p, int value, struct musaExtent extent) {
  return api([&] { return memset_on(memset_3d(p, value, extent), nullptr, true); });
}

musaError_t musaMemset3DAsync(struct musaPitchedPtr p, int value, struct musaExtent extent,
                              musaStream_t stream) {
  return api([&] { return memset_on(memset_3d(p, value, extent), stream, false); });
}

musaError_t musaPointerGetAttributes(struct musaPointerAttributes* attr, const void* ptr) {
  return api([&] {
    if (attr == nullptr) return musaErrorInvalidValue;
    Alloc a;
    musaPointerAttributes r{};
    if (!lookup(ptr, &a)) {
      r.type = musaMemoryTypeUnregistered;
      r.device = musaInvalidDeviceId;
    } else {
      void* p = const_cast<void*>(ptr);
      r.device = a.device;
      switch (a.kind) {
        case AllocKind::Device:
          r.type = musaMemoryTypeDevice;
          r.devicePointer = p;
          break;
        case AllocKind::Host:
        case AllocKind::Registered:
          r.type = musaMemoryTypeHost;
          r.devicePointer = p;
          r.hostPointer = p;
          break;
        case AllocKind::Managed:
          r.type = musaMemoryTypeManaged;
          r.devicePointer = p;
          r.hostPointer = p;
          break;
      }
    }
    *attr = r;
    return musaSuccess;
  });
}

// ---- Managed memory hints ------------------------------------------------------------------

namespace {

struct Hints {
  bool read_mostly = false;
  int preferred = musaInvalidDeviceId;
  int last_prefetch = musaInvalidDeviceId;
  std::vector<int> accessed_by;
};

std::mutex g_hints_mu;
std::map<std::pair<unsigned long long, uintptr_t>, Hints>& hints() {
  static auto* h = new std::map<std::pair<unsigned long long, uintptr_t>, Hints>();
  return *h;
}

musaError_t managed_range(const void* p, size_t count, Alloc* a) {
  if (p == nullptr || count == 0) return musaErrorInvalidValue;
  if (!lookup(p, a) || a->kind != AllocKind::Managed) return musaErrorInvalidValue;
  if (!inside(*a, reinterpret_cast<uintptr_t>(p), count)) return musaErrorInvalidValue;
  return musaSuccess;
}

bool location_ok(int d) { return d == musaCpuDeviceId || valid_device(d); }

}  // namespace

musaError_t musaMemAdvise(const void* devPtr, size_t count, enum musaMemoryAdvise advice, int dev) {
  return api([&] {
    Alloc a;
    SIM_TRY(managed_range(devPtr, count, &a));
    std::lock_guard<std::mutex> lock(g_hints_mu);
    Hints& h = hints()[{rt().generation, a.base}];
    switch (advice) {
      case musaMemAdviseSetReadMostly:
        h.read_mostly = true;
        return musaSuccess;
      case musaMemAdviseUnsetReadMostly:
        h.read_mostly = false;
        return musaSuccess;
      case musaMemAdviseSetPreferredLocation:
        if (!location_ok(dev)) return musaErrorInvalidDevice;
        h.preferred = dev;
        return musaSuccess;
      case musaMemAdviseUnsetPreferredLocation:
        h.preferred = musaInvalidDeviceId;
        return musaSuccess;
      case musaMemAdviseSetAccessedBy:
        if (!location_ok(dev)) return musaErrorInvalidDevice;
        if (std::find(h.accessed_by.begin(), h.accessed_by.end(), dev) == h.accessed_by.end())
          h.accessed_by.push_back(dev);
        return musaSuccess;
      case musaMemAdviseUnsetAccessedBy:
        if (!location_ok(dev)) return musaErrorInvalidDevice;
        h.accessed_by.erase(std::remove(h.accessed_by.begin(), h.accessed_by.end(), dev),
                            h.accessed_by.end());
        return musaSuccess;
      default:
        return musaErrorInvalidValue;
    }
  });
}

musaError_t musaMemPrefetchAsync(const void* devPtr, size_t count, int dstDevice,
                                 musaStream_t stream) {
  return api([&] {
    Alloc a;
    SIM_TRY(managed_range(devPtr, count, &a));
    if (!location_ok(dstDevice)) return musaErrorInvalidDevice;
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(stream, &s));
    {
      std::lock_guard<std::mutex> lock(g_hints_mu);
      hints()[{rt().generation, a.base}].last_prefetch = dstDevice;
    }
    if (stream_is_capturing(*s)) return musaSuccess;  // a hint: nothing to record
    return submit(*s, nullptr, {}, nullptr);          // ordered like the migration would be
  });
}

musaError_t musaMemRangeGetAttribute(void* data, size_t dataSize,
                                     enum musaMemRangeAttribute attribute, const void* devPtr,
                                     size_t count) {
  return api([&] {
    if (data == nullptr || dataSize == 0) return musaErrorInvalidValue;
    Alloc a;
    SIM_TRY(managed_range(devPtr, count, &a));
    Hints h;
    {
      std::lock_guard<std::mutex> lock(g_hints_mu);
      auto it = hints().find({rt().generation, a.base});
      if (it != hints().end()) h = it->second;
    }
    int* out = static_cast<int*>(data);
    switch (attribute) {
      case musaMemRangeAttributeReadMostly:
      case musaMemRangeAttributePreferredLocation:
      case musaMemRangeAttributeLastPrefetchLocation:
        if (dataSize != 4) return musaErrorInvalidValue;
        *out = attribute == musaMemRangeAttributeReadMostly          ? (h.read_mostly ? 1 : 0)
               : attribute == musaMemRangeAttributePreferredLocation ? h.preferred
                                                                     : h.last_prefetch;
        return musaSuccess;
      case musaMemRangeAttributeAccessedBy: {
        if (dataSize % 4 != 0) return musaErrorInvalidValue;
        const size_t n = dataSize / 4;
        for (size_t i = 0; i < n; ++i)
          out[i] = i < h.accessed_by.size() ? h.accessed_by[i] : musaInvalidDeviceId;
        return musaSuccess;
      }
      default:
        return musaErrorInvalidValue;
    }
  });
}

musaError_t musaMemRangeGetAttributes(void** data, size_t* dataSizes,
                                      enum musaMemRangeAttribute* attributes, size_t numAttributes,
                                      const void* devPtr, size_t count) {
  return api([&] {
    if (data == nullptr || dataSizes == nullptr || attributes == nullptr || numAttributes == 0)
      return musaErrorInvalidValue;
    for (size_t i = 0; i < numAttributes; ++i) {
      const musaError_t e =
          musaMemRangeGetAttribute(data[i], dataSizes[i], attributes[i], devPtr, count);
      if (e != musaSuccess) return e;
    }
    return musaSuccess;
  });
}

// ---- For the simulated driver (driver_hooks.h) ---------------------------------------------
// Driver calls never touch the runtime's per-thread last error, so these do not go through api().

musaError_t musaSimChargeDeviceMemory(int device, size_t bytes) {
  if (!valid_device(device)) return musaErrorInvalidDevice;
  return charge(sim::device(device), bytes) ? musaSuccess : musaErrorMemoryAllocation;
}

void musaSimReleaseDeviceMemory(int device, size_t bytes) {
  if (valid_device(device)) sim::device(device).used.fetch_sub(bytes);
}

musaError_t musaSimUpdateDeviceRanges(void* const* remove, size_t n_remove,
                                      const struct musaSimRange* add, size_t n_add, int drain) {
  if ((n_remove != 0 && remove == nullptr) || (n_add != 0 && add == nullptr))
    return musaErrorInvalidValue;
  try {
    std::vector<uintptr_t> rm(n_remove);
    for (size_t i = 0; i < n_remove; ++i) rm[i] = reinterpret_cast<uintptr_t>(remove[i]);
    std::vector<Alloc> adds(n_add);
    for (size_t i = 0; i < n_add; ++i) {
      if (add[i].base == nullptr || add[i].size == 0) return musaErrorInvalidValue;
      if (!valid_device(add[i].device)) return musaErrorInvalidDevice;
      adds[i].base = reinterpret_cast<uintptr_t>(add[i].base);
      adds[i].size = add[i].size;
      adds[i].kind = AllocKind::Device;
      adds[i].device = add[i].device;
      adds[i].external = true;
    }
    if (drain)
      for (int d = 0; d < rt().device_count; ++d) sync_device(d);
    return rt().mem.update_external(rm.data(), rm.size(), adds.data(), adds.size())
               ? musaSuccess
               : musaErrorInvalidValue;
  } catch (const std::bad_alloc&) {
    return musaErrorMemoryAllocation;
  } catch (...) {
    return musaErrorUnknown;
  }
}

musaError_t musaSimGetAllocation(const void* p, struct musaSimAllocation* out) {
  if (out == nullptr) return musaErrorInvalidValue;
  Alloc a;
  if (!lookup(p, &a)) return musaErrorInvalidValue;
  out->base = reinterpret_cast<void*>(a.base);
  out->size = a.size;
  out->device = a.device;
  out->kind = a.kind == AllocKind::Device       ? musaSimAllocDevice
              : a.kind == AllocKind::Host       ? musaSimAllocHost
              : a.kind == AllocKind::Registered ? musaSimAllocRegistered
                                                : musaSimAllocManaged;
  out->flags = a.flags;
  out->id = a.id;
  out->external = a.external ? 1 : 0;
  return musaSuccess;
}

musaError_t musaSimFindAllocation(const void* p, void** base, size_t* size, int* device,
                                  int* is_device) {
  Alloc a;
  if (!lookup(p, &a)) return musaErrorInvalidValue;
  if (base) *base = reinterpret_cast<void*>(a.base);
  if (size) *size = a.size;
  if (device) *device = a.device;
  if (is_device) *is_device = a.kind == AllocKind::Device || a.kind == AllocKind::Managed;
  return musaSuccess;
}

}  // extern "C"
