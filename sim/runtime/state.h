// Internal state of the CPU MUSA runtime simulator: devices, the allocation registry, streams
// (each a worker thread running its work in order), events, and the per-thread state.
//
// Locking order (outer to inner): Runtime::graph_mu -> Device::submit_mu -> MUstream_st::mu ->
// Marker::mu. Runtime::handles_mu and Registry::mu are leaves.
#ifndef TORCHADA_SIM_RUNTIME_STATE_H
#define TORCHADA_SIM_RUNTIME_STATE_H

#include <musa_runtime_api.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace sim {

using Clock = std::chrono::steady_clock;

// Short waits poll before they sleep: a futex wake-up (several us on a VM, more on a shared CPU)
// costs more than the handoffs the simulated collectives make (caller -> stream worker -> caller).
// The poll yields the CPU between checks, so it gives way at once to runnable threads (no busy
// spinning when threads outnumber CPUs), and it is skipped on a single CPU.
constexpr std::chrono::microseconds kWaitSpin{50};  // Marker::wait
constexpr std::chrono::microseconds kIdleSpin{50};  // a stream worker waiting for work
// Asynchronous copies and memsets up to this size run on the caller's thread when their stream is
// idle (run_if_idle); larger ones go to the stream's thread.
constexpr size_t kInlineBytes = 256 * 1024;
int usable_cpus();
// Polls ready() until it holds or `budget` has passed; returns ready().
bool spin_until(const std::function<bool()>& ready, std::chrono::microseconds budget);

// A point in a stream's work: completed (with a timestamp) when the worker reaches it.
struct Marker {
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<bool> done{false};
  Clock::time_point time{};  // written before `done` is released

  void complete();
  void wait();
  bool is_done() const { return done.load(std::memory_order_acquire); }
};
using MarkerPtr = std::shared_ptr<Marker>;

struct Op {
  std::function<void()> fn;
  std::vector<MarkerPtr> deps;
  MarkerPtr done;
};

struct Capture;

}  // namespace sim

struct MUstream_st {
  int device = 0;
  unsigned flags = 0;
  int priority = 0;
  unsigned long long id = 0;
  bool legacy = false;
  bool per_thread = false;

  sim::MarkerPtr last;  // guarded by the device's submit_mu

  // Capture state, guarded by Runtime::graph_mu.
  std::shared_ptr<sim::Capture> capture;
  std::vector<MUgraphNode_st*> cap_deps;

  void push(sim::Op op);  // caller holds the device's submit_mu
  void shutdown();        // drains the queue and stops the worker
  ~MUstream_st();

 private:
  void run();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<sim::Op> queue_;
  std::atomic<size_t> queued_{0};  // queue_.size(), read without mu_ by the idle spin
  bool stop_ = false;
  bool started_ = false;
  std::thread worker_;
};

namespace sim {
// The state of an interprocess event, in a page every process that opened it maps (ipc.cc):
// records count up `recorded`; a stream reaching a record raises `completed` to its number.
struct IpcEventShared {
  std::atomic<uint64_t> recorded{0};
  std::atomic<uint64_t> completed{0};
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "IPC event state must be lock free");
}  // namespace sim

struct MUevent_st {
  unsigned flags = 0;
  int device = 0;  // whose context made it: musaDeviceReset of that device ends it
  std::mutex mu;
  sim::MarkerPtr marker;  // the latest record, null if never recorded
  // Capture state, guarded by Runtime::graph_mu.
  std::shared_ptr<sim::Capture> capture;
  std::vector<MUgraphNode_st*> cap_nodes;
  // musaEventInterprocess: the shared state and the handle that names it (ipc.cc).
  sim::IpcEventShared* ipc = nullptr;
  int ipc_fd = -1;  // the memfd, kept open by the creating process only
  musaIpcEventHandle_t ipc_handle{};
  ~MUevent_st();
};

namespace sim {

enum class AllocKind { Device, Host, Registered, Managed };

struct Alloc {
  uintptr_t base = 0;
  size_t size = 0;
  AllocKind kind = AllocKind::Device;
  int device = 0;
  unsigned flags = 0;
  void* raw = nullptr;    // what to free (null for registered memory)
  size_t charged = 0;     // bytes charged against the device's memory
  bool external = false;  // mapped by the simulated driver (driver_hooks.h); musaFree refuses it
  unsigned long long id = 0;  // unique over the process's life (set by the registry)
  // Device memory is a mapping of its own (page granular) so that IPC can share it: `mapped`
  // bytes at raw, 0 for malloc'd memory. Once exported, share_fd is the memfd behind it.
  size_t mapped = 0;
  int share_fd = -1;
  bool imported =
      false;  // opened from another process's handle: only musaIpcCloseMemHandle ends it
};

// Whether [start, start + span) lies inside `a`: overflow-safe, so that a span near SIZE_MAX or
// one that wraps the address space never passes.
inline bool inside(const Alloc& a, uintptr_t start, size_t span) {
  if (start < a.base) return false;
  const uintptr_t offset = start - a.base;
  return offset <= a.size && span <= a.size - offset;
}

class Registry {
 public:
  bool find(const void* p, Alloc* out);
  // Whether device or managed memory lies anywhere in [lo, hi).
  bool device_memory_in(uintptr_t lo, uintptr_t hi);
  void add(const Alloc& a);
  // Never an external range; an imported one only when `imported` says so.
  bool remove_exact(uintptr_t base, AllocKind kind, Alloc* out, bool imported = false);
  // Records the memfd an exported allocation now lives in; false if `id` is no longer there.
  bool set_share_fd(uintptr_t base, unsigned long long id, int fd);
  std::vector<Alloc> remove_device(int device);  // musaDeviceReset; keeps external ranges
  // Removes the external ranges at rm[0..n) and adds add[0..m) atomically; false (nothing
  // changed) if a base is not an external range or an added range overlaps one that stays.
  bool update_external(const uintptr_t* rm, size_t n, const Alloc* add, size_t m);

 private:
  std::mutex mu_;
  std::map<uintptr_t, Alloc> map_;
  unsigned long long next_id_ = 1;  // under mu_
};

struct Device {
  int ordinal = 0;
  size_t total = 0;
  std::atomic<size_t> used{0};

  std::mutex submit_mu;
  std::vector<MUstream_st*> blocking;  // blocking streams on this device (under submit_mu)
  std::shared_ptr<MUstream_st> legacy;

  std::mutex cfg_mu;
  size_t limits[8] = {};
  int cache_config = 0;
  int shmem_config = 0;
  unsigned flags = 0;
  unsigned peers = 0;  // enabled peer devices (bit mask)
  // The runtime has initialised the device (CUDA: made its primary context); musaDeviceReset
  // clears it. The simulated driver reports it as the primary context's active state.
  std::atomic<bool> context{false};
  // Nanoseconds its streams have spent running work (summed over streams), for the simulated
  // MTML's utilisation (musaSimDeviceBusyTime).
  std::atomic<unsigned long long> busy_ns{0};
  // A kernel's memory fault (musaErrorIllegalAddress) or failed device-side assertion
  // (musaErrorAssert): sticky, as a GPU context's, until musaDeviceReset. Synchronisations,
  // launches and musaGetLastError report it.
  std::atomic<int> fault{musaSuccess};
};

// The MUSA architectures the simulator can present (TORCHADA_SIM_ARCH): the card's name and
// compute capability. Every other property is the same (an S4000's); warpSize is 128 on all of
// them, the width documented for mp_21 and mp_22 (mp_31's is not documented) and the one the
// executor runs.
struct Arch {
  const char* name;  // musaDeviceProp::name
  int major, minor;
};

struct Runtime {
  int device_count = 1;
  Arch arch{"MTT S4000", 2, 2};
  std::vector<std::unique_ptr<Device>> devices;
  Registry mem;
  unsigned long long generation = 0;

  std::mutex handles_mu;
  std::unordered_map<MUstream_st*, std::shared_ptr<MUstream_st>> streams;
  std::unordered_map<MUevent_st*, std::shared_ptr<MUevent_st>> events;

  // Graph objects, nodes, executable graphs, user objects and capture state.
  std::mutex graph_mu;
  std::unordered_set<MUgraph_st*> graphs;
  std::unordered_set<MUgraphNode_st*> nodes;
  std::unordered_set<MUgraphExec_st*> execs;
  std::unordered_set<MUuserObject_st*> user_objects;
  std::vector<std::shared_ptr<Capture>> captures;
  std::atomic<int> active_captures{0};

  std::atomic<unsigned long long> next_stream_id{1};
  std::atomic<unsigned long long> next_capture_id{1};
};

Runtime& rt();

struct ThreadState {
  unsigned long long generation = 0;
  int device = 0;
  musaError_t last_error = musaSuccess;
  musaStreamCaptureMode capture_mode = musaStreamCaptureModeGlobal;
  std::map<int, std::shared_ptr<MUstream_st>> per_thread;
  // The simulated driver unbound this thread's context (muCtxSetCurrent(NULL), muCtxPopCurrent):
  // the runtime's next call that works on the device binds it again, as CUDA's runtime does.
  bool unbound = false;
  ~ThreadState();
};
ThreadState& ts();

// Runs an API body, maps exceptions to error codes and records the per-thread last error.
template <class F>
musaError_t api(F&& body) noexcept {
  musaError_t e;
  try {
    e = body();
  } catch (const std::bad_alloc&) {
    e = musaErrorMemoryAllocation;
  } catch (...) {
    e = musaErrorUnknown;
  }
  if (e != musaSuccess && e != musaErrorNotReady) {
    try {
      ts().last_error = e;
    } catch (...) {
    }
  }
  return e;
}

#define SIM_TRY(expr)                             \
  do {                                            \
    musaError_t sim_err_ = (expr);                \
    if (sim_err_ != musaSuccess) return sim_err_; \
  } while (0)

// Devices.
bool valid_device(int d);
Device& device(int d);
// The calling thread's device, initialised for the runtime (its context made and bound to the
// thread): every call that works on the current device goes through it.
int current_device();
void reset_device(int d);  // musaDeviceReset of device d
// The sticky fault of the calling thread's device (musaSuccess when none, or no device yet).
musaError_t sticky_fault();

// Streams.
musaError_t resolve_stream(musaStream_t s, std::shared_ptr<MUstream_st>* out);
std::shared_ptr<MUstream_st> make_stream(int device, unsigned flags, int priority, bool legacy,
                                         bool per_thread);
void retire_stream(const std::shared_ptr<MUstream_st>& s);  // unlink from the device, drain
// Queues `fn` on the stream after `extra` markers; legacy-stream rules apply.
musaError_t submit(MUstream_st& s, std::function<void()> fn, std::vector<MarkerPtr> extra,
                   MarkerPtr* out);
// Runs fn(user_data) on the calling thread when `s` and what it implicitly waits for are idle and
// no capture is active, the stream busy meanwhile (musaSimLaunchHostFuncOrRun); false otherwise.
bool run_if_idle(MUstream_st& s, musaHostFn_t fn, void* user_data, MarkerPtr* done = nullptr);
// Waits for all work queued so far on `s` (legacy: also what it implicitly waits for).
musaError_t sync_stream(MUstream_st& s);
musaError_t sync_device(int d);

// Memory.
bool lookup(const void* p, Alloc* out);
// Work description shared by async calls and graph nodes.
struct CopyDesc {
  musaMemcpy3DParms p{};
  std::shared_ptr<std::vector<unsigned char>> staging;  // keeps a staged source alive
};
struct MemsetDesc {
  void* dst = nullptr;
  size_t pitch = 0;
  unsigned value = 0;
  unsigned elem = 1;
  size_t width = 0;  // elements
  size_t height = 1;
  size_t depth = 1;
  size_t slice = 0;  // bytes between slices
};
musaError_t validate_copy(const musaMemcpy3DParms& p);
void do_copy(const musaMemcpy3DParms& p);
musaError_t validate_memset(const MemsetDesc& m);
void do_memset(const MemsetDesc& m);
// Makes the device allocation at a.base shareable (its pages moved into a memfd, same address)
// and returns that memfd (memory.cc).
musaError_t make_shareable(const Alloc& a, int* fd);
// Unmaps and uncharges an allocation already taken out of the registry.
void release(const Alloc& a);
musaMemcpy3DParms copy_1d(void* dst, const void* src, size_t count, musaMemcpyKind kind);
musaMemcpy3DParms copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                          size_t height, musaMemcpyKind kind);

// Capture (graph.cc).
struct NodeParams;
// Returns true if `s` is capturing; then the work became a node (or *err says why not).
bool capture_node(MUstream_st& s, const NodeParams& p, musaError_t* err);
// Sync calls that are illegal during capture: returns the error and invalidates the capture.
musaError_t check_unsafe();
// True if a legacy-stream submission on device d would merge with a capturing stream.
bool legacy_conflicts_capture(int d);
bool stream_is_capturing(MUstream_st& s);
void stream_leave_capture(MUstream_st* s);  // under graph_mu

// Events (event.cc): the live event behind a handle, or musaErrorInvalidResourceHandle.
musaError_t find_event(musaEvent_t e, std::shared_ptr<MUevent_st>* out);

// IPC events (ipc.cc).
musaError_t make_ipc_event(MUevent_st& e);  // musaEventCreateWithFlags(musaEventInterprocess)
// Blocks until *counter >= target: polls briefly, then sleeps in short steps (another process
// raises it, so there is nothing to be woken by).
void wait_counter(const std::atomic<uint64_t>& counter, uint64_t target);
void raise_counter(std::atomic<uint64_t>& counter, uint64_t target);  // to at least target

}  // namespace sim

#endif  // TORCHADA_SIM_RUNTIME_STATE_H
