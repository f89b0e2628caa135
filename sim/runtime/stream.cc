// Streams: each runs its work in order on a worker thread. The legacy (NULL) stream of a device
// waits for all earlier work on the device's blocking streams, and blocking streams wait for
// earlier legacy-stream work; non-blocking streams do neither.
#include "graph.h"
#include "sim_ext.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>

namespace sim {

int usable_cpus() {
  static const int n = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    int c = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    if (c <= 0) c = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
    return c;
  }();
  return n;
}

bool spin_until(const std::function<bool()>& ready, std::chrono::microseconds budget) {
  if (usable_cpus() < 2) return ready();
  const Clock::time_point end = Clock::now() + budget;
  for (;;) {
    if (ready()) return true;
    if (Clock::now() >= end) return false;
    sched_yield();  // gives way at once to any runnable thread on this CPU
  }
}

void Marker::complete() {
  {
    std::lock_guard<std::mutex> lock(mu);
    time = Clock::now();
    done.store(true, std::memory_order_release);
  }
  cv.notify_all();
}

void Marker::wait() {
  if (is_done()) return;
  if (spin_until([this] { return is_done(); }, kWaitSpin)) return;
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [this] { return is_done(); });
}

}  // namespace sim

namespace {

// Runs `fn` as work of `device`, counting its time as the device's busy time.
template <class F>
void run_as_work(int device, F&& fn) {
  const auto start = sim::Clock::now();
  fn();
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(sim::Clock::now() - start);
  sim::device(device).busy_ns.fetch_add(static_cast<unsigned long long>(ns.count()),
                                        std::memory_order_relaxed);
}

void execute(sim::Op& op, int device) {
  for (auto& d : op.deps) d->wait();
  if (op.fn) {
    run_as_work(device, [&] {
      try {
        op.fn();
      } catch (...) {
      }
    });
  }
  op.done->complete();
}

}  // namespace

void MUstream_st::push(sim::Op op) {
  bool queued = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stop_) {
      queue_.push_back(std::move(op));
      queued_.fetch_add(1, std::memory_order_release);
      if (!started_) {
        started_ = true;
        worker_ = std::thread([this] { run(); });
      }
      queued = true;
    }
  }
  if (queued) {
    cv_.notify_one();
    return;
  }
  // Shut down (its destructor has begun, at process exit for instance): no worker will run the
  // work, and one started now would still be joinable when the object is destroyed
  // (std::terminate). A stream whose work had all run on callers' threads (run_if_idle) never
  // started one, so a late submission met this. The work runs here, after its dependencies.
  execute(op, device);
}

void MUstream_st::run() {
  for (;;) {
    sim::Op op;
    {
      if (queued_.load(std::memory_order_acquire) == 0)
        sim::spin_until([this] { return queued_.load(std::memory_order_acquire) != 0; },
                        sim::kIdleSpin);
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and drained
      op = std::move(queue_.front());
      queue_.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    execute(op, device);
  }
}

void MUstream_st::shutdown() {
  std::thread t;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    t = std::move(worker_);
  }
  cv_.notify_all();
  if (t.joinable()) {
    if (t.get_id() == std::this_thread::get_id())
      t.detach();  // destroyed from its own callback: the loop ends once drained
    else
      t.join();
  }
}

MUstream_st::~MUstream_st() { shutdown(); }

namespace sim {

std::shared_ptr<MUstream_st> make_stream(int dev, unsigned flags, int priority, bool legacy,
                                         bool per_thread) {
  auto s = std::make_shared<MUstream_st>();
  s->device = dev;
  s->flags = flags;
  s->priority = priority;
  s->legacy = legacy;
  s->per_thread = per_thread;
  s->id = rt().next_stream_id.fetch_add(1);
  if (!legacy && (flags & musaStreamNonBlocking) == 0) {
    Device& d = device(dev);
    std::lock_guard<std::mutex> lock(d.submit_mu);
    d.blocking.push_back(s.get());
  }
  return s;
}

void retire_stream(const std::shared_ptr<MUstream_st>& s) {
  {
    std::lock_guard<std::mutex> lock(rt().graph_mu);
    if (s->capture) stream_leave_capture(s.get());
  }
  Device& d = device(s->device);
  {
    std::lock_guard<std::mutex> lock(d.submit_mu);
    auto it = std::find(d.blocking.begin(), d.blocking.end(), s.get());
    if (it != d.blocking.end()) d.blocking.erase(it);
  }
  s->shutdown();  // completes pending work first
}

namespace {

std::shared_ptr<MUstream_st> legacy_stream(int dev) {
  Device& d = device(dev);
  std::lock_guard<std::mutex> lock(d.submit_mu);
  if (!d.legacy) {
    auto s = std::make_shared<MUstream_st>();
    s->device = dev;
    s->legacy = true;
    s->id = rt().next_stream_id.fetch_add(1);
    d.legacy = s;
  }
  return d.legacy;
}

}  // namespace

musaError_t resolve_stream(musaStream_t h, std::shared_ptr<MUstream_st>* out) {
  Runtime& r = rt();
  if (h == nullptr || h == musaStreamLegacy) {
    *out = legacy_stream(current_device());
    return musaSuccess;
  }
  if (h == musaStreamPerThread) {
    ThreadState& t = ts();
    auto& slot = t.per_thread[t.device];
    if (!slot) slot = make_stream(t.device, musaStreamDefault, 0, false, true);
    *out = slot;
    return musaSuccess;
  }
  std::lock_guard<std::mutex> lock(r.handles_mu);
  auto it = r.streams.find(h);
  if (it == r.streams.end()) return musaErrorInvalidResourceHandle;
  *out = it->second;
  return musaSuccess;
}

musaError_t submit(MUstream_st& s, std::function<void()> fn, std::vector<MarkerPtr> extra,
                   MarkerPtr* out) {
  if (s.legacy && legacy_conflicts_capture(s.device)) return musaErrorStreamCaptureImplicit;
  Device& d = device(s.device);
  Op op;
  op.fn = std::move(fn);
  op.deps = std::move(extra);
  op.done = std::make_shared<Marker>();
  std::lock_guard<std::mutex> lock(d.submit_mu);
  // The queue is in order, but work run on a caller's thread (run_if_idle) is not in the queue.
  if (s.last && !s.last->is_done()) op.deps.push_back(s.last);
  if (s.legacy) {
    for (MUstream_st* b : d.blocking)
      if (b->last && !b->last->is_done()) op.deps.push_back(b->last);
  } else if ((s.flags & musaStreamNonBlocking) == 0 && d.legacy && d.legacy->last &&
             !d.legacy->last->is_done()) {
    op.deps.push_back(d.legacy->last);
  }
  s.last = op.done;
  if (out != nullptr) *out = op.done;
  s.push(std::move(op));
  return musaSuccess;
}

bool run_if_idle(MUstream_st& s, musaHostFn_t fn, void* user_data, MarkerPtr* done) {
  if (rt().active_captures.load() != 0) return false;  // capture rules are the queue's to apply
  Device& d = device(s.device);
  const auto busy = [](const MarkerPtr& m) { return m && !m->is_done(); };
  MarkerPtr running = std::make_shared<Marker>();
  {
    std::lock_guard<std::mutex> lock(d.submit_mu);
    if (busy(s.last)) return false;
    if (s.legacy) {
      for (MUstream_st* b : d.blocking)
        if (busy(b->last)) return false;
    } else if ((s.flags & musaStreamNonBlocking) == 0 && d.legacy && busy(d.legacy->last)) {
      return false;
    }
    s.last = running;  // what is submitted from now on waits for it (submit's dependency on last)
  }
  struct CompleteOnExit {  // even if fn throws: what waits on `running` must not wait forever
    Marker& m;
    ~CompleteOnExit() { m.complete(); }
  } complete{*running};
  run_as_work(s.device, [&] { fn(user_data); });
  if (done != nullptr) *done = running;  // completed by `complete` on return
  return true;
}

musaError_t sync_stream(MUstream_st& s) {
  // The legacy stream also waits for the blocking streams' earlier work (what an operation
  // submitted to it now would depend on). Waiting for those markers here, rather than submitting
  // an empty operation, spares a wake-up of the stream's thread: PyTorch synchronises the legacy
  // stream at every .item().
  if (s.legacy && legacy_conflicts_capture(s.device)) return musaErrorStreamCaptureImplicit;
  std::vector<MarkerPtr> pending;
  {
    Device& d = device(s.device);
    std::lock_guard<std::mutex> lock(d.submit_mu);
    if (s.last) pending.push_back(s.last);
    if (s.legacy)
      for (MUstream_st* b : d.blocking)
        if (b->last) pending.push_back(b->last);
  }
  for (const MarkerPtr& m : pending) m->wait();
  return static_cast<musaError_t>(device(s.device).fault.load());
}

musaError_t sync_device(int dev) {
  Device& d = device(dev);
  std::vector<MarkerPtr> ms;
  {
    std::lock_guard<std::mutex> lock(d.submit_mu);
    if (d.legacy && d.legacy->last) ms.push_back(d.legacy->last);
    for (MUstream_st* b : d.blocking)
      if (b->last) ms.push_back(b->last);
  }
  {
    // Non-blocking streams are not in d.blocking.
    Runtime& r = rt();
    std::vector<std::shared_ptr<MUstream_st>> all;
    {
      std::lock_guard<std::mutex> lock(r.handles_mu);
      for (auto& kv : r.streams)
        if (kv.second->device == dev) all.push_back(kv.second);
    }
    std::lock_guard<std::mutex> lock(d.submit_mu);
    for (auto& s : all)
      if (s->last) ms.push_back(s->last);
  }
  for (auto& m : ms) m->wait();
  return static_cast<musaError_t>(d.fault.load());
}

musaError_t sticky_fault() {
  const int d = ts().device;
  return valid_device(d) ? static_cast<musaError_t>(device(d).fault.load()) : musaSuccess;
}

}  // namespace sim

using namespace sim;

namespace {

musaError_t create_stream(musaStream_t* p, unsigned flags, int priority) {
  if (p == nullptr) return musaErrorInvalidValue;
  if ((flags & ~static_cast<unsigned>(musaStreamNonBlocking)) != 0) return musaErrorInvalidValue;
  priority = std::max(-5, std::min(0, priority));
  auto s = make_stream(current_device(), flags, priority, false, false);
  Runtime& r = rt();
  std::lock_guard<std::mutex> lock(r.handles_mu);
  r.streams.emplace(s.get(), s);
  *p = s.get();
  return musaSuccess;
}

}  // namespace

extern "C" {

musaError_t musaStreamCreate(musaStream_t* pStream) {
  return api([&] { return create_stream(pStream, musaStreamDefault, 0); });
}

musaError_t musaStreamCreateWithFlags(musaStream_t* pStream, unsigned int flags) {
  return api([&] { return create_stream(pStream, flags, 0); });
}

musaError_t musaStreamCreateWithPriority(musaStream_t* pStream, unsigned int flags, int priority) {
  return api([&] { return create_stream(pStream, flags, priority); });
}

musaError_t musaStreamDestroy(musaStream_t stream) {
  return api([&] {
    if (stream == nullptr || stream == musaStreamLegacy || stream == musaStreamPerThread)
      return musaErrorInvalidResourceHandle;
    Runtime& r = rt();
    std::shared_ptr<MUstream_st> s;
    {
      std::lock_guard<std::mutex> lock(r.handles_mu);
      auto it = r.streams.find(stream);
      if (it == r.streams.end()) return musaErrorInvalidResourceHandle;
      s = std::move(it->second);
      r.streams.erase(it);
    }
    retire_stream(s);
    return musaSuccess;
  });
}

musaError_t musaStreamSynchronize(musaStream_t stream) {
  return api([&] {
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(stream, &s));
    if (stream_is_capturing(*s)) {
      check_unsafe();
      return musaErrorStreamCaptureUnsupported;
    }
    return sync_stream(*s);
  });
}

musaError_t musaStreamQuery(musaStream_t stream) {
  return api([&] {
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(stream, &s));
    if (stream_is_capturing(*s)) return musaErrorStreamCaptureUnsupported;
    Device& d = device(s->device);
    std::lock_guard<std::mutex> lock(d.submit_mu);
    if (s->last && !s->last->is_done()) return musaErrorNotReady;
    if (s->legacy)
      for (MUstream_st* b : d.blocking)
        if (b->last && !b->last->is_done()) return musaErrorNotReady;
    return musaSuccess;
  });
}

musaError_t musaStreamAddCallback(musaStream_t stream, musaStreamCallback_t callback,
                                  void* userData, unsigned int flags) {
  return api([&] {
    if (callback == nullptr || flags != 0) return musaErrorInvalidValue;
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(stream, &s));
    if (stream_is_capturing(*s)) {
      check_unsafe();
      return musaErrorStreamCaptureUnsupported;  // CUDA refuses callbacks during capture too
    }
    return submit(
        *s, [callback, stream, userData] { callback(stream, musaSuccess, userData); }, {}, nullptr);
  });
}

musaError_t musaLaunchHostFunc(musaStream_t stream, musaHostFn_t fn, void* userData) {
  return api([&] {
    if (fn == nullptr) return musaErrorInvalidValue;
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(stream, &s));
    NodeParams p;
    p.type = musaGraphNodeTypeHost;
    p.host.fn = fn;
    p.host.userData = userData;
    musaError_t err = musaSuccess;
    if (capture_node(*s, p, &err)) return err;
    return submit(
        *s, [fn, userData] { fn(userData); }, {}, nullptr);
  });
}

musaError_t musaSimLaunchHostFuncOrRun(musaStream_t stream, musaHostFn_t fn, void* userData) {
  return api([&] {
    if (fn == nullptr) return musaErrorInvalidValue;
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(stream, &s));
    if (sim::run_if_idle(*s, fn, userData)) return musaSuccess;
    return musaLaunchHostFunc(stream, fn, userData);
  });
}

musaError_t musaStreamGetFlags(musaStream_t hStream, unsigned int* flags) {
  return api([&] {
    if (flags == nullptr) return musaErrorInvalidValue;
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(hStream, &s));
    *flags = s->flags;
    return musaSuccess;
  });
}

musaError_t musaStreamGetPriority(musaStream_t hStream, int* priority) {
  return api([&] {
    if (priority == nullptr) return musaErrorInvalidValue;
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(hStream, &s));
    *priority = s->priority;
    return musaSuccess;
  });
}

musaError_t musaStreamGetDevice(musaStream_t hStream, int* dev) {
  return api([&] {
    if (dev == nullptr) return musaErrorInvalidValue;
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(hStream, &s));
    *dev = s->device;
    return musaSuccess;
  });
}

musaError_t musaStreamGetId(musaStream_t hStream, unsigned long long* streamId) {
  return api([&] {
    if (streamId == nullptr) return musaErrorInvalidValue;
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(hStream, &s));
    *streamId = s->id;
    return musaSuccess;
  });
}

musaError_t musaStreamCopyAttributes(musaStream_t dst, musaStream_t src) {
  return api([&] {
    std::shared_ptr<MUstream_st> d, s;
    SIM_TRY(resolve_stream(dst, &d));
    SIM_TRY(resolve_stream(src, &s));
    return musaSuccess;  // no launch attributes are modelled: nothing to copy
  });
}

musaError_t musaStreamAttachMemAsync(musaStream_t stream, void* devPtr, size_t length,
                                     unsigned int flags) {
  return api([&] {
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(stream, &s));
    if (flags != musaMemAttachGlobal && flags != musaMemAttachHost && flags != musaMemAttachSingle)
      return musaErrorInvalidValue;
    Alloc a;
    if (devPtr == nullptr || !lookup(devPtr, &a) || a.kind != AllocKind::Managed)
      return musaErrorInvalidValue;
    if (length != 0 && (reinterpret_cast<uintptr_t>(devPtr) != a.base || length != a.size))
      return musaErrorInvalidValue;
    return musaSuccess;  // host and device share memory: attaching changes no visibility
  });
}

}  // extern "C"
