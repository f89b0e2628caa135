// IPC: device memory and events shared between processes, with CUDA's semantics.
//
// A handle names a memfd in the exporting process: its pid, the descriptor's number there and
// the file's identity (device and inode). The importer opens the descriptor through
// /proc/<pid>/fd/<n> (allowed to a process of the same user, as ptrace's read access is; no
// helper thread or socket in the exporter) and checks the identity, so a handle whose memory was
// freed, or whose process exited, fails instead of mapping something else.
//
// Memory: exporting moves the allocation's pages into a memfd at the same address
// (make_shareable); importing maps the memfd at an address of the importer's own, registered as
// device memory of the exporter's device, so copies, kernels, BLAS and collectives accept it.
// Opening a handle again returns the same address and counts a reference; the last
// musaIpcCloseMemHandle unmaps it. The exporter freeing first is undefined in CUDA; here the
// importer's mapping keeps the bytes alive until it closes.
//
// Events: an interprocess event's state is a shared page (IpcEventShared) that every process
// holding the event maps; event.cc records, queries and waits through it.
#include "state.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <new>
#include <thread>
#include <type_traits>

namespace sim {
namespace {

constexpr uint32_t kMemMagic = 0x4d534d31;    // "MSM1": simulator memory, version 1
constexpr uint32_t kEventMagic = 0x4d534531;  // "MSE1": simulator event, version 1

struct Payload {
  uint32_t magic;
  int32_t pid;     // the exporting process
  int32_t fd;      // its descriptor of the memfd
  int32_t device;  // the device the memory (or event) belongs to
  uint64_t dev;    // the memfd's identity: st_dev and st_ino
  uint64_t ino;
  uint64_t size;    // the allocation's size
  uint64_t mapped;  // the memfd's length
  uint64_t base;    // the exporter's address of the memory
};
static_assert(std::is_trivially_copyable_v<Payload>);
static_assert(sizeof(Payload) <= sizeof(musaIpcMemHandle_t), "IPC payload too large");
static_assert(sizeof(Payload) <= sizeof(musaIpcEventHandle_t), "IPC payload too large");

template <class Handle>
void write_handle(Handle* h, const Payload& p) {
  std::memset(h, 0, sizeof(*h));
  std::memcpy(h->reserved, &p, sizeof(p));
}

template <class Handle>
Payload read_handle(const Handle& h) {
  Payload p;
  std::memcpy(&p, h.reserved, sizeof(p));
  return p;
}

// Fills the payload's identity fields from the memfd.
musaError_t describe(int fd, Payload* p) {
  struct stat st;
  if (fstat(fd, &st) != 0) return musaErrorOperatingSystem;
  p->pid = static_cast<int32_t>(getpid());
  p->fd = fd;
  p->dev = static_cast<uint64_t>(st.st_dev);
  p->ino = static_cast<uint64_t>(st.st_ino);
  return musaSuccess;
}

// Maps the exporter's memfd named by p (p.mapped bytes, shared), checking that it is still the
// same file and long enough. A process or allocation that is gone (or a garbage handle) is
// musaErrorInvalidValue; one this process may not open (another user's)
// musaErrorMapBufferObjectFailed.
musaError_t map_exported(const Payload& p, void** out) {
  if (p.pid <= 0 || p.fd < 0 || p.mapped == 0) return musaErrorInvalidValue;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(p.pid),
                static_cast<int>(p.fd));
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return errno == EACCES || errno == EPERM ? musaErrorMapBufferObjectFailed
                                             : musaErrorInvalidValue;
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_dev) != p.dev ||
      static_cast<uint64_t>(st.st_ino) != p.ino || st.st_size < 0 ||
      static_cast<uint64_t>(st.st_size) < p.mapped) {
    close(fd);
    return musaErrorInvalidValue;
  }
  void* m = mmap(nullptr, p.mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);  // the mapping keeps the memory
  if (m == MAP_FAILED) return musaErrorMemoryAllocation;
  *out = m;
  return musaSuccess;
}

// Memory this process opened from other processes' handles, by the memfd's identity.
struct Import {
  Payload payload;
  uintptr_t base = 0;
  int refs = 0;
};
struct Imports {
  std::mutex mu;  // also serialises exports, so one allocation is made shareable once
  std::map<std::pair<uint64_t, uint64_t>, Import> by_file;
};
Imports& imports() {
  static auto* i = new Imports;  // never destroyed: handles may be closed from atexit users
  return *i;
}

// The import whose mapping starts at base (under Imports::mu), or null.
Import* import_at(Imports& im, uintptr_t base) {
  for (auto& [file, imp] : im.by_file)
    if (imp.base == base) return &imp;
  return nullptr;
}

size_t event_page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

}  // namespace

void wait_counter(const std::atomic<uint64_t>& counter, uint64_t target) {
  auto ready = [&] { return counter.load(std::memory_order_acquire) >= target; };
  if (spin_until(ready, kWaitSpin)) return;
  auto step = std::chrono::microseconds(10);
  while (!ready()) {
    std::this_thread::sleep_for(step);
    step = std::min(step * 2, std::chrono::microseconds(500));
  }
}

void raise_counter(std::atomic<uint64_t>& counter, uint64_t target) {
  uint64_t cur = counter.load();
  while (cur < target && !counter.compare_exchange_weak(cur, target)) {
  }
}

musaError_t make_ipc_event(MUevent_st& e) {
  const int fd = memfd_create("torchada-sim-ipc-event", MFD_CLOEXEC);
  if (fd < 0) return musaErrorMemoryAllocation;
  const size_t page = event_page();
  void* m = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(page)) == 0)
    m = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    close(fd);
    return musaErrorMemoryAllocation;
  }
  Payload p{};
  p.magic = kEventMagic;
  p.device = e.device;
  p.size = sizeof(IpcEventShared);
  p.mapped = page;
  if (const musaError_t err = describe(fd, &p); err != musaSuccess) {
    munmap(m, page);
    close(fd);
    return err;
  }
  e.ipc = new (m) IpcEventShared;
  e.ipc_fd = fd;
  write_handle(&e.ipc_handle, p);
  return musaSuccess;
}

}  // namespace sim

MUevent_st::~MUevent_st() {
  if (ipc != nullptr) munmap(ipc, sim::event_page());
  if (ipc_fd >= 0) close(ipc_fd);
}

using namespace sim;

extern "C" {

musaError_t musaIpcGetMemHandle(musaIpcMemHandle_t* handle, void* devPtr) {
  return api([&] {
    if (handle == nullptr || devPtr == nullptr) return musaErrorInvalidValue;
    Imports& im = imports();
    std::lock_guard<std::mutex> lock(im.mu);
    Alloc a;
    if (!lookup(devPtr, &a) || a.kind != AllocKind::Device) return musaErrorInvalidValue;
    if (a.imported) {  // memory from another process: its exporter's handle names it
      const Import* imp = import_at(im, a.base);
      if (imp == nullptr) return musaErrorInvalidValue;
      write_handle(handle, imp->payload);
      return musaSuccess;
    }
    int fd = -1;
    SIM_TRY(make_shareable(a, &fd));
    Payload p{};
    p.magic = kMemMagic;
    p.device = a.device;
    p.size = a.size;
    p.mapped = a.mapped;
    p.base = a.base;
    SIM_TRY(describe(fd, &p));
    write_handle(handle, p);
    return musaSuccess;
  });
}

musaError_t musaIpcOpenMemHandle(void** devPtr, musaIpcMemHandle_t handle, unsigned int flags) {
  return api([&] {
    if (devPtr == nullptr) return musaErrorInvalidValue;
    if ((flags & ~static_cast<unsigned>(musaIpcMemLazyEnablePeerAccess)) != 0)
      return musaErrorInvalidValue;
    const Payload p = read_handle(handle);
    if (p.magic != kMemMagic) return musaErrorInvalidValue;
    const int here = current_device();  // CUDA maps into the current device's context
    Imports& im = imports();
    std::lock_guard<std::mutex> lock(im.mu);
    if (p.pid == static_cast<int32_t>(getpid())) {
      // This process's own memory: its address, if the allocation is still the exported one.
      Alloc a;
      if (!lookup(reinterpret_cast<void*>(p.base), &a) || a.base != p.base || a.imported)
        return musaErrorInvalidValue;
      Payload now{};
      if (a.share_fd < 0 || describe(a.share_fd, &now) != musaSuccess || now.ino != p.ino ||
          now.dev != p.dev)
        return musaErrorInvalidValue;  // freed since (and the address reused)
      *devPtr = reinterpret_cast<void*>(p.base);
      return musaSuccess;
    }
    const auto file = std::make_pair(p.dev, p.ino);
    if (auto it = im.by_file.find(file); it != im.by_file.end()) {
      Alloc a;
      if (lookup(reinterpret_cast<void*>(it->second.base), &a) && a.imported &&
          a.base == it->second.base) {
        ++it->second.refs;  // CUDA: the same handle opened again gives the same address
        *devPtr = reinterpret_cast<void*>(a.base);
        return musaSuccess;
      }
      im.by_file.erase(it);  // unmapped by musaDeviceReset meanwhile
    }
    if (p.size == 0 || p.size > p.mapped) return musaErrorInvalidValue;
    void* m = nullptr;
    SIM_TRY(map_exported(p, &m));
    Alloc a;
    a.base = reinterpret_cast<uintptr_t>(m);
    a.size = p.size;
    a.kind = AllocKind::Device;
    a.device = valid_device(p.device) ? p.device : here;
    a.raw = m;
    a.mapped = p.mapped;
    a.imported = true;  // not charged: the memory is the exporter's
    try {
      rt().mem.add(a);
      im.by_file[file] = Import{p, a.base, 1};
    } catch (...) {
      Alloc gone;
      rt().mem.remove_exact(a.base, AllocKind::Device, &gone, true);
      munmap(m, p.mapped);
      throw;
    }
    *devPtr = m;
    return musaSuccess;
  });
}

musaError_t musaIpcCloseMemHandle(void* devPtr) {
  return api([&] {
    Alloc a;
    if (devPtr == nullptr || !lookup(devPtr, &a) || a.kind != AllocKind::Device)
      return musaErrorInvalidValue;
    if (!a.imported) {
      // This process's own exported memory, which musaIpcOpenMemHandle gave back as it is.
      return a.share_fd >= 0 && a.base == reinterpret_cast<uintptr_t>(devPtr)
                 ? musaSuccess
                 : musaErrorInvalidValue;
    }
    if (a.base != reinterpret_cast<uintptr_t>(devPtr)) return musaErrorInvalidValue;
    Imports& im = imports();
    {
      std::lock_guard<std::mutex> lock(im.mu);
      Import* imp = import_at(im, a.base);
      if (imp == nullptr) return musaErrorInvalidValue;
      if (--imp->refs > 0) return musaSuccess;
      im.by_file.erase(std::make_pair(imp->payload.dev, imp->payload.ino));
      if (!rt().mem.remove_exact(a.base, AllocKind::Device, &a, true)) return musaErrorInvalidValue;
    }
    sync_device(a.device);  // work queued on it may still use the mapping
    release(a);
    return musaSuccess;
  });
}

musaError_t musaIpcGetEventHandle(musaIpcEventHandle_t* handle, musaEvent_t event) {
  return api([&] {
    if (handle == nullptr) return musaErrorInvalidValue;
    std::shared_ptr<MUevent_st> e;
    SIM_TRY(find_event(event, &e));
    if ((e->flags & musaEventInterprocess) == 0 || e->ipc == nullptr)
      return musaErrorInvalidResourceHandle;
    *handle = e->ipc_handle;
    return musaSuccess;
  });
}

musaError_t musaIpcOpenEventHandle(musaEvent_t* event, musaIpcEventHandle_t handle) {
  return api([&] {
    if (event == nullptr) return musaErrorInvalidValue;
    const Payload p = read_handle(handle);
    if (p.magic != kEventMagic || p.mapped != event_page()) return musaErrorInvalidValue;
    const int here = current_device();
    void* m = nullptr;
    SIM_TRY(map_exported(p, &m));
    auto e = std::make_shared<MUevent_st>();  // unmaps the page if anything below throws
    e->ipc = static_cast<IpcEventShared*>(m);
    e->flags = musaEventInterprocess | musaEventDisableTiming;
    e->device = here;
    e->ipc_handle = handle;
    Runtime& r = rt();
    std::lock_guard<std::mutex> lock(r.handles_mu);
    r.events.emplace(e.get(), e);
    *event = e.get();
    return musaSuccess;
  });
}

}  // extern "C"
