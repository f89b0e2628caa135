// Virtual memory management of the simulated MUSA driver, done for real on the host:
//   muMemAddressReserve  a PROT_NONE, MAP_NORESERVE anonymous mapping (address space only)
//   muMemCreate          a memfd of the allocation's size, charged against the device's memory
//   muMemMap             the memfd mapped MAP_SHARED|MAP_FIXED over part of a reservation,
//                        registered with the simulated runtime as device memory; no access yet
//   muMemSetAccess       mprotect
//   muMemUnmap           the range goes back to PROT_NONE reservation
//   muMemRelease         drops a handle reference; the memory lives until its last mapping goes
//   muMemExport/Import   POSIX file descriptors: a dup of the memfd, valid in any process that
//                        receives it (SCM_RIGHTS, pidfd_getfd, /proc/<pid>/fd/<n>)
// Granularity is 2 MiB for every allocation.
#include <driver_hooks.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>

#include "driver.h"

namespace simdrv {
namespace {

constexpr size_t kGranularity = size_t{2} << 20;
constexpr unsigned kKnownHandleTypes = MU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR |
                                       MU_MEM_HANDLE_TYPE_WIN32 | MU_MEM_HANDLE_TYPE_WIN32_KMT |
                                       MU_MEM_HANDLE_TYPE_FABRIC;
// The memfd name carries what an importing process needs to know ("/memfd:<name> (deleted)").
constexpr char kMemfdPrefix[] = "torchada-sim-vmm";

struct Allocation {
  MUmemGenericAllocationHandle id = 0;
  int fd = -1;
  size_t size = 0;
  MUmemAllocationProp prop{};
  size_t charged = 0;   // bytes charged against prop.location.id (0 for imports)
  int handle_refs = 0;  // muMemCreate / Import / Retain not yet released
  int mappings = 0;
};

struct Mapping {
  size_t size = 0;
  Allocation* alloc = nullptr;
};

// A maximal run of adjacent mappings of one device, registered with the runtime as one range so
// that copies and memsets may span several mappings (as PyTorch's expandable segments do).
struct Run {
  size_t size = 0;
  int device = 0;
};

struct Vmm {
  std::mutex mu;
  std::map<uintptr_t, Run> runs;  // base -> run, mirrors what the runtime has registered
  std::map<MUmemGenericAllocationHandle, std::unique_ptr<Allocation>> allocs;  // alive ones
  std::map<uintptr_t, size_t> reservations;                                    // base -> size
  std::map<uintptr_t, Mapping> mappings;                                       // base -> mapping
  MUmemGenericAllocationHandle next_id = 0x4d5500000001ull;
};

// Never destroyed: programs release memory from atexit handlers and static destructors.
std::atomic<Vmm*> g_vmm{nullptr};

void atfork_prepare() { g_vmm.load()->mu.lock(); }
void atfork_parent() { g_vmm.load()->mu.unlock(); }
void atfork_child() {
  // Like the simulated runtime, a forked child starts clean: the parent's reservations and
  // mappings stay in its address space but belong to no handle (a child imports what it needs).
  g_vmm.load()->mu.unlock();
  g_vmm.store(new Vmm());
}

Vmm& vmm() {
  static const bool once = [] {
    g_vmm.store(new Vmm());
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    return true;
  }();
  (void)once;
  return *g_vmm.load();
}

size_t page_size() {
  static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

bool aligned(uintptr_t x, size_t a) { return x % a == 0; }

// The live allocation behind a handle value (null if released or never created). Holds vmm().mu.
Allocation* find_handle(Vmm& v, MUmemGenericAllocationHandle h) {
  auto it = v.allocs.find(h);
  return it != v.allocs.end() && it->second->handle_refs > 0 ? it->second.get() : nullptr;
}

// Frees an allocation nobody references any more. Holds vmm().mu.
void maybe_destroy(Vmm& v, Allocation* a) {
  if (a->handle_refs > 0 || a->mappings > 0) return;
  ::close(a->fd);
  if (a->charged) musaSimReleaseDeviceMemory(a->prop.location.id, a->charged);
  v.allocs.erase(a->id);
}

MUresult check_prop(const MUmemAllocationProp* prop) {
  if (prop == nullptr) return MUSA_ERROR_INVALID_VALUE;
  if (prop->type == MU_MEM_ALLOCATION_TYPE_MANAGED) return MUSA_ERROR_NOT_SUPPORTED;
  if (prop->type != MU_MEM_ALLOCATION_TYPE_PINNED) return MUSA_ERROR_INVALID_VALUE;
  switch (prop->location.type) {
    case MU_MEM_LOCATION_TYPE_DEVICE:
      if (!valid_device(prop->location.id)) return MUSA_ERROR_INVALID_DEVICE;
      break;
    case MU_MEM_LOCATION_TYPE_HOST:
    case MU_MEM_LOCATION_TYPE_HOST_NUMA:
      return MUSA_ERROR_NOT_SUPPORTED;  // host-located VMM allocations are not simulated
    default:
      return MUSA_ERROR_INVALID_VALUE;
  }
  const unsigned types = static_cast<unsigned>(prop->requestedHandleTypes);
  if ((types & ~kKnownHandleTypes) != 0) return MUSA_ERROR_INVALID_VALUE;
  if ((types & ~static_cast<unsigned>(MU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) != 0)
    return MUSA_ERROR_NOT_SUPPORTED;  // Windows and fabric handles
  if (prop->win32HandleMetaData != nullptr) return MUSA_ERROR_INVALID_VALUE;
  if (prop->allocFlags.compressionType != MU_MEM_ALLOCATION_COMP_NONE &&
      prop->allocFlags.compressionType != MU_MEM_ALLOCATION_COMP_GENERIC)
    return MUSA_ERROR_INVALID_VALUE;
  if (prop->allocFlags.usage != 0) return MUSA_ERROR_NOT_SUPPORTED;  // tile pools
  return MUSA_SUCCESS;
}

// What the simulator really provides for a valid request: no compression, no GPUDirect RDMA.
MUmemAllocationProp effective_prop(const MUmemAllocationProp& in) {
  MUmemAllocationProp p{};
  p.type = in.type;
  p.requestedHandleTypes = in.requestedHandleTypes;
  p.location = in.location;
  p.allocFlags.compressionType = MU_MEM_ALLOCATION_COMP_NONE;
  return p;
}

// Puts [base, base + size) back to reserved, inaccessible address space.
bool back_to_reserved(uintptr_t base, size_t size) {
  void* p = mmap(reinterpret_cast<void*>(base), size, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  return p != MAP_FAILED;
}

// Parses the memfd name of an exported allocation: device and requested handle types.
bool parse_exported(int fd, int* device, unsigned* types) {
  char link[64], target[256];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return false;
  target[n] = '\0';
  char prefix[64];
  std::snprintf(prefix, sizeof prefix, "/memfd:%s:", kMemfdPrefix);
  if (std::strncmp(target, prefix, std::strlen(prefix)) != 0) return false;
  return std::sscanf(target + std::strlen(prefix), "dev=%d:types=%u", device, types) == 2 &&
         (*types & ~kKnownHandleTypes) == 0;
}

MUresult new_allocation(Vmm& v, int fd, size_t size, const MUmemAllocationProp& prop,
                        size_t charged, MUmemGenericAllocationHandle* handle) {
  auto a = std::make_unique<Allocation>();
  a->id = v.next_id++;
  a->fd = fd;
  a->size = size;
  a->prop = prop;
  a->charged = charged;
  a->handle_refs = 1;
  *handle = a->id;
  v.allocs.emplace(a->id, std::move(a));
  return MUSA_SUCCESS;
}

// Registers a new mapping, merged with the runs that end where it starts and start where it ends.
MUresult add_run(Vmm& v, uintptr_t base, size_t size, int device) {
  void* remove[2];
  size_t n = 0;
  uintptr_t lo = base, hi = base + size;
  auto right = v.runs.find(hi);
  if (right != v.runs.end() && right->second.device == device) {
    remove[n++] = reinterpret_cast<void*>(right->first);
    hi += right->second.size;
  }
  auto left = v.runs.lower_bound(base);
  if (left != v.runs.begin()) {
    --left;
    if (left->first + left->second.size == base && left->second.device == device) {
      remove[n++] = reinterpret_cast<void*>(left->first);
      lo = left->first;
    }
  }
  const musaSimRange add{reinterpret_cast<void*>(lo), hi - lo, device};
  const musaError_t e = musaSimUpdateDeviceRanges(remove, n, &add, 1, 0);
  if (e != musaSuccess) return from_runtime(e);
  for (size_t i = 0; i < n; ++i) v.runs.erase(reinterpret_cast<uintptr_t>(remove[i]));
  v.runs[lo] = Run{hi - lo, device};
  return MUSA_SUCCESS;
}

// Unregisters a mapping: its run is split into what lies before and after it.
MUresult remove_from_run(Vmm& v, uintptr_t base, size_t size) {
  auto it = v.runs.upper_bound(base);
  if (it == v.runs.begin()) return MUSA_ERROR_UNKNOWN;
  --it;
  const uintptr_t lo = it->first, hi = it->first + it->second.size;
  const int device = it->second.device;
  musaSimRange add[2];
  size_t n = 0;
  if (base > lo) add[n++] = musaSimRange{reinterpret_cast<void*>(lo), base - lo, device};
  if (base + size < hi)
    add[n++] = musaSimRange{reinterpret_cast<void*>(base + size), hi - base - size, device};
  void* remove = reinterpret_cast<void*>(lo);
  const musaError_t e = musaSimUpdateDeviceRanges(&remove, 1, add, n, 1);
  if (e != musaSuccess) return from_runtime(e);
  v.runs.erase(it);
  for (size_t i = 0; i < n; ++i)
    v.runs[reinterpret_cast<uintptr_t>(add[i].base)] = Run{add[i].size, device};
  return MUSA_SUCCESS;
}

}  // namespace

bool find_mapping(uintptr_t p, uintptr_t* base, size_t* size) {
  Vmm& v = vmm();
  std::lock_guard<std::mutex> lock(v.mu);
  auto it = v.mappings.upper_bound(p);
  if (it == v.mappings.begin()) return false;
  --it;
  if (p >= it->first + it->second.size) return false;
  *base = it->first;
  *size = it->second.size;
  return true;
}

bool find_vmm(uintptr_t p, VmmInfo* out) {
  Vmm& v = vmm();
  std::lock_guard<std::mutex> lock(v.mu);
  auto r = v.reservations.upper_bound(p);
  if (r == v.reservations.begin()) return false;
  --r;
  if (p >= r->first + r->second) return false;
  *out = VmmInfo{};
  out->reserve_base = r->first;
  out->reserve_size = r->second;
  auto m = v.mappings.upper_bound(p);
  if (m != v.mappings.begin() && p < std::prev(m)->first + std::prev(m)->second.size) {
    --m;
    out->mapped = true;
    out->map_base = m->first;
    out->map_size = m->second.size;
    out->handle_types = m->second.alloc->prop.requestedHandleTypes;
    out->alloc_id = m->second.alloc->id;
  }
  return true;
}

}  // namespace simdrv

using namespace simdrv;

extern "C" {

MUresult muMemGetAllocationGranularity(size_t* granularity, const MUmemAllocationProp* prop,
                                       MUmemAllocationGranularity_flags option) {
  return api([&] {
    if (granularity == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (option != MU_MEM_ALLOC_GRANULARITY_MINIMUM &&
        option != MU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
      return MUSA_ERROR_INVALID_VALUE;
    const MUresult r = check_prop(prop);
    if (r != MUSA_SUCCESS) return r;
    *granularity = kGranularity;
    return MUSA_SUCCESS;
  });
}

MUresult muMemAddressReserve(MUdeviceptr* ptr, size_t size, size_t alignment, MUdeviceptr addr,
                             unsigned long long flags) {
  return api([&] {
    if (ptr == nullptr || flags != 0 || size == 0 || !aligned(size, page_size()))
      return MUSA_ERROR_INVALID_VALUE;
    if ((alignment & (alignment - 1)) != 0) return MUSA_ERROR_INVALID_VALUE;
    if (addr != 0 && !aligned(addr, page_size())) return MUSA_ERROR_INVALID_VALUE;
    const size_t align = alignment > kGranularity ? alignment : kGranularity;
    const int kFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    uintptr_t base = 0;
    if (addr != 0 && aligned(addr, align)) {  // a hint: honoured when that range is free
      void* p =
          mmap(reinterpret_cast<void*>(addr), size, PROT_NONE, kFlags | MAP_FIXED_NOREPLACE, -1, 0);
      if (p != MAP_FAILED && reinterpret_cast<uintptr_t>(p) == addr)
        base = addr;
      else if (p != MAP_FAILED)
        munmap(p, size);  // a kernel without MAP_FIXED_NOREPLACE placed it elsewhere
    }
    if (base == 0) {
      if (size > SIZE_MAX - align) return MUSA_ERROR_OUT_OF_MEMORY;
      const size_t total = size + align;
      void* p = mmap(nullptr, total, PROT_NONE, kFlags, -1, 0);
      if (p == MAP_FAILED) return MUSA_ERROR_OUT_OF_MEMORY;
      const uintptr_t raw = reinterpret_cast<uintptr_t>(p);
      base = (raw + align - 1) / align * align;
      if (base > raw) munmap(p, base - raw);
      const uintptr_t end = base + size, raw_end = raw + total;
      if (raw_end > end) munmap(reinterpret_cast<void*>(end), raw_end - end);
    }
    Vmm& v = vmm();
    std::lock_guard<std::mutex> lock(v.mu);
    v.reservations[base] = size;
    *ptr = base;
    return MUSA_SUCCESS;
  });
}

MUresult muMemAddressFree(MUdeviceptr ptr, size_t size) {
  return api([&] {
    Vmm& v = vmm();
    std::lock_guard<std::mutex> lock(v.mu);
    auto it = v.reservations.find(ptr);
    if (it == v.reservations.end() || it->second != size) return MUSA_ERROR_INVALID_VALUE;
    auto m = v.mappings.lower_bound(ptr);
    if (m != v.mappings.end() && m->first < ptr + size)
      return MUSA_ERROR_INVALID_VALUE;  // still mapped: muMemUnmap first
    munmap(reinterpret_cast<void*>(ptr), size);
    v.reservations.erase(it);
    return MUSA_SUCCESS;
  });
}

MUresult muMemCreate(MUmemGenericAllocationHandle* handle, size_t size,
                     const MUmemAllocationProp* prop, unsigned long long flags) {
  return api([&] {
    if (handle == nullptr || flags != 0) return MUSA_ERROR_INVALID_VALUE;
    MUresult r = check_prop(prop);
    if (r != MUSA_SUCCESS) return r;
    if (size == 0 || !aligned(size, kGranularity)) return MUSA_ERROR_INVALID_VALUE;
    const int device = prop->location.id;
    r = from_runtime(musaSimChargeDeviceMemory(device, size));
    if (r != MUSA_SUCCESS) return r;
    char name[64];
    std::snprintf(name, sizeof name, "%s:dev=%d:types=%u", kMemfdPrefix, device,
                  static_cast<unsigned>(prop->requestedHandleTypes));
    const int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0) {
      if (fd >= 0) ::close(fd);
      musaSimReleaseDeviceMemory(device, size);
      return MUSA_ERROR_OUT_OF_MEMORY;
    }
    Vmm& v = vmm();
    std::lock_guard<std::mutex> lock(v.mu);
    try {
      return new_allocation(v, fd, size, effective_prop(*prop), size, handle);
    } catch (...) {
      ::close(fd);
      musaSimReleaseDeviceMemory(device, size);
      throw;
    }
  });
}

MUresult muMemRelease(MUmemGenericAllocationHandle handle) {
  return api([&] {
    Vmm& v = vmm();
    std::lock_guard<std::mutex> lock(v.mu);
    Allocation* a = find_handle(v, handle);
    if (a == nullptr) return MUSA_ERROR_INVALID_VALUE;
    --a->handle_refs;
    maybe_destroy(v, a);
    return MUSA_SUCCESS;
  });
}

MUresult muMemMap(MUdeviceptr ptr, size_t size, size_t offset, MUmemGenericAllocationHandle handle,
                  unsigned long long flags) {
  return api([&] {
    if (flags != 0 || offset != 0)
      return MUSA_ERROR_INVALID_VALUE;  // offset: must be 0, as in CUDA
    if (ptr == 0 || size == 0 || !aligned(ptr, kGranularity) || !aligned(size, kGranularity))
      return MUSA_ERROR_INVALID_VALUE;
    Vmm& v = vmm();
    std::lock_guard<std::mutex> lock(v.mu);
    Allocation* a = find_handle(v, handle);
    if (a == nullptr || size > a->size) return MUSA_ERROR_INVALID_VALUE;
    // Inside one reservation, over no existing mapping.
    auto r = v.reservations.upper_bound(ptr);
    if (r == v.reservations.begin()) return MUSA_ERROR_INVALID_VALUE;
    --r;
    if (ptr + size < ptr || ptr + size > r->first + r->second) return MUSA_ERROR_INVALID_VALUE;
    auto next = v.mappings.lower_bound(ptr);
    if (next != v.mappings.end() && next->first < ptr + size) return MUSA_ERROR_INVALID_VALUE;
    if (next != v.mappings.begin() && std::prev(next)->first + std::prev(next)->second.size > ptr)
      return MUSA_ERROR_INVALID_VALUE;
    void* p = mmap(reinterpret_cast<void*>(ptr), size, PROT_NONE, MAP_SHARED | MAP_FIXED, a->fd, 0);
    if (p == MAP_FAILED) return MUSA_ERROR_OUT_OF_MEMORY;
    const MUresult e = add_run(v, ptr, size, a->prop.location.id);
    if (e != MUSA_SUCCESS) {
      back_to_reserved(ptr, size);
      return e;
    }
    v.mappings[ptr] = Mapping{size, a};
    ++a->mappings;
    return MUSA_SUCCESS;
  });
}

MUresult muMemUnmap(MUdeviceptr ptr, size_t size) {
  return api([&] {
    Vmm& v = vmm();
    std::lock_guard<std::mutex> lock(v.mu);
    auto it = v.mappings.find(ptr);
    if (it == v.mappings.end() || it->second.size != size) return MUSA_ERROR_INVALID_VALUE;
    // Waits for queued work (it may still use the range), then forgets the device range.
    const MUresult e = remove_from_run(v, ptr, size);
    if (e != MUSA_SUCCESS) return e;
    if (!back_to_reserved(ptr, size)) return MUSA_ERROR_UNKNOWN;
    Allocation* a = it->second.alloc;
    v.mappings.erase(it);
    --a->mappings;
    maybe_destroy(v, a);
    return MUSA_SUCCESS;
  });
}

MUresult muMemSetAccess(MUdeviceptr ptr, size_t size, const MUmemAccessDesc* desc, size_t count) {
  return api([&] {
    if (desc == nullptr || count == 0 || size == 0) return MUSA_ERROR_INVALID_VALUE;
    // One address space serves every simulated device: the range gets the widest access asked.
    int prot = PROT_NONE;
    for (size_t i = 0; i < count; ++i) {
      if (desc[i].location.type != MU_MEM_LOCATION_TYPE_DEVICE) return MUSA_ERROR_INVALID_VALUE;
      if (!valid_device(desc[i].location.id)) return MUSA_ERROR_INVALID_DEVICE;
      switch (desc[i].flags) {
        case MU_MEM_ACCESS_FLAGS_PROT_NONE:
          break;
        case MU_MEM_ACCESS_FLAGS_PROT_READ:
          prot |= PROT_READ;
          break;
        case MU_MEM_ACCESS_FLAGS_PROT_READWRITE:
          prot |= PROT_READ | PROT_WRITE;
          break;
        default:
          return MUSA_ERROR_INVALID_VALUE;
      }
    }
    Vmm& v = vmm();
    std::lock_guard<std::mutex> lock(v.mu);
    // The range must be whole, contiguous mappings.
    uintptr_t at = ptr;
    const uintptr_t end = ptr + size;
    if (end < ptr) return MUSA_ERROR_INVALID_VALUE;
    while (at < end) {
      auto it = v.mappings.find(at);
      if (it == v.mappings.end()) return MUSA_ERROR_INVALID_VALUE;
      at += it->second.size;
    }
    if (at != end) return MUSA_ERROR_INVALID_VALUE;
    if (mprotect(reinterpret_cast<void*>(ptr), size, prot) != 0) return MUSA_ERROR_INVALID_VALUE;
    return MUSA_SUCCESS;
  });
}

MUresult muMemExportToShareableHandle(void* shareableHandle, MUmemGenericAllocationHandle handle,
                                      MUmemAllocationHandleType handleType,
                                      unsigned long long flags) {
  return api([&] {
    if (shareableHandle == nullptr || flags != 0) return MUSA_ERROR_INVALID_VALUE;
    const unsigned type = static_cast<unsigned>(handleType);
    if (type != MU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
      return (type & kKnownHandleTypes) != 0 && (type & (type - 1)) == 0 ? MUSA_ERROR_NOT_SUPPORTED
                                                                         : MUSA_ERROR_INVALID_VALUE;
    Vmm& v = vmm();
    std::lock_guard<std::mutex> lock(v.mu);
    Allocation* a = find_handle(v, handle);
    if (a == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if ((static_cast<unsigned>(a->prop.requestedHandleTypes) & type) == 0)
      return MUSA_ERROR_INVALID_VALUE;  // not created exportable as this type
    const int fd = fcntl(a->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return MUSA_ERROR_OPERATING_SYSTEM;
    *static_cast<int*>(shareableHandle) = fd;
    return MUSA_SUCCESS;
  });
}

MUresult muMemImportFromShareableHandle(MUmemGenericAllocationHandle* handle, void* osHandle,
                                        MUmemAllocationHandleType shHandleType) {
  return api([&] {
    if (handle == nullptr) return MUSA_ERROR_INVALID_VALUE;
    const unsigned type = static_cast<unsigned>(shHandleType);
    if (type != MU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
      return (type & kKnownHandleTypes) != 0 && (type & (type - 1)) == 0 ? MUSA_ERROR_NOT_SUPPORTED
                                                                         : MUSA_ERROR_INVALID_VALUE;
    // For POSIX file descriptors the handle is the descriptor itself, passed by value.
    const intptr_t raw = reinterpret_cast<intptr_t>(osHandle);
    if (raw < 0 || raw > INT32_MAX) return MUSA_ERROR_INVALID_VALUE;
    const int fd = static_cast<int>(raw);
    struct stat st {};
    int device = -1;
    unsigned types = 0;
    if (fstat(fd, &st) != 0 || !parse_exported(fd, &device, &types))
      return MUSA_ERROR_INVALID_VALUE;  // not a descriptor exported by this driver
    const size_t size = static_cast<size_t>(st.st_size);
    if (size == 0 || !aligned(size, kGranularity)) return MUSA_ERROR_INVALID_VALUE;
    if (!valid_device(device)) return MUSA_ERROR_NOT_SUPPORTED;  // no such device here
    MUmemAllocationProp prop{};
    prop.type = MU_MEM_ALLOCATION_TYPE_PINNED;
    prop.requestedHandleTypes = static_cast<MUmemAllocationHandleType>(types);
    prop.location.type = MU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    const int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);  // the caller may close its descriptor
    if (own < 0) return MUSA_ERROR_OPERATING_SYSTEM;
    Vmm& v = vmm();
    std::lock_guard<std::mutex> lock(v.mu);
    try {
      return new_allocation(v, own, size, prop, 0, handle);
    } catch (...) {
      ::close(own);
      throw;
    }
  });
}

MUresult muMemRetainAllocationHandle(MUmemGenericAllocationHandle* handle, void* addr) {
  return api([&] {
    if (handle == nullptr || addr == nullptr) return MUSA_ERROR_INVALID_VALUE;
    const uintptr_t x = reinterpret_cast<uintptr_t>(addr);
    Vmm& v = vmm();
    std::lock_guard<std::mutex> lock(v.mu);
    auto it = v.mappings.upper_bound(x);
    if (it == v.mappings.begin()) return MUSA_ERROR_INVALID_VALUE;
    --it;
    if (x >= it->first + it->second.size) return MUSA_ERROR_INVALID_VALUE;  // not mapped
    Allocation* a = it->second.alloc;
    ++a->handle_refs;  // the same handle value, valid again if it had been released
    *handle = a->id;
    return MUSA_SUCCESS;
  });
}

MUresult muMemGetAllocationPropertiesFromHandle(MUmemAllocationProp* prop,
                                                MUmemGenericAllocationHandle handle) {
  return api([&] {
    if (prop == nullptr) return MUSA_ERROR_INVALID_VALUE;
    Vmm& v = vmm();
    std::lock_guard<std::mutex> lock(v.mu);
    const Allocation* a = find_handle(v, handle);
    if (a == nullptr) return MUSA_ERROR_INVALID_VALUE;
    *prop = a->prop;
    return MUSA_SUCCESS;
  });
}

}  // extern "C"
