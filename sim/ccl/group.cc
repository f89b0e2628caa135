// Groups and stream submission.
//
// mcclGroupStart/End nest; operations called inside are queued per thread and issued at the
// outermost mcclGroupEnd: one task per communicator, run by a host function on the stream of the
// communicator's first operation (other streams of the group join it through events). A task runs
// its collectives in call order, then all its sends and receives together, so that a ring of
// send/recv pairs inside one group cannot deadlock. Jobs (grouped init/split) run in lock step.
#include <algorithm>

#include "internal.h"

namespace mccl_sim {
namespace {

struct Pending {
  std::shared_ptr<CommState> comm;
  Op op;
};

struct GroupState {
  int depth = 0;
  mcclResult_t err = mcclSuccess;
  bool in_progress = false;
  std::vector<Pending> ops;
  std::vector<GroupJob> jobs;
};

GroupState& group() {
  thread_local GroupState g;
  return g;
}

struct Task {
  std::shared_ptr<CommState> comm;
  std::vector<Op> ops;
  bool persistent = false;  // captured into a graph: run at every launch, freed with the graph
};

void execute(CommState& c, const std::vector<Op>& ops) {
  if (!c.wait_init()) return;  // failed or aborted: the error is on record
  std::lock_guard<std::mutex> lock(c.exec_mu);
  // A failed communicator runs nothing more (its peers have been told).
  if (c.async.load() != mcclSuccess || c.aborted.load()) return;
  for (const Op& op : ops) {
    if (op.is_p2p) continue;
    mcclResult_t r = run_collective(c, op.coll);
    if (r != mcclSuccess) {
      c.set_failed(r, thread_last_error());
      return;
    }
  }
  std::vector<const P2POp*> p2p;
  for (const Op& op : ops)
    if (op.is_p2p) p2p.push_back(&op.p2p);
  if (!p2p.empty()) {
    mcclResult_t r = run_p2p(c, p2p);
    if (r != mcclSuccess) c.set_failed(r, thread_last_error());
  }
}

void run_task(void* p) {
  Task* t = static_cast<Task*>(p);
  try {
    execute(*t->comm, t->ops);
  } catch (...) {
    t->comm->set_failed(mcclInternalError, "unexpected exception in a stream task");
  }
  if (!t->persistent) {
    std::shared_ptr<CommState> c = std::move(t->comm);
    delete t;
    c->task_end();
  }
}

void delete_task(void* p) { delete static_cast<Task*>(p); }

mcclResult_t musa_fail(const char* what, musaError_t e) {
  return fail(mcclUnhandledMusaError, "%s: %s", what, musaGetErrorString(e));
}

// Makes `to` wait for the work queued so far on `from`.
mcclResult_t join_streams(musaStream_t from, musaStream_t to) {
  musaEvent_t ev = nullptr;
  musaError_t e = musaEventCreateWithFlags(&ev, musaEventDisableTiming);
  if (e != musaSuccess) return musa_fail("musaEventCreateWithFlags", e);
  e = musaEventRecord(ev, from);
  if (e == musaSuccess) e = musaStreamWaitEvent(to, ev, 0);
  musaEventDestroy(ev);
  return e == musaSuccess ? mcclSuccess : musa_fail("musaEventRecord/musaStreamWaitEvent", e);
}

// The communicator's device is current while its task is queued, as NCCL does: a stream argument
// of 0 means that device's legacy stream, not the caller's current device's (a group over the
// communicators of several devices, e.g. PyTorch's DataParallel broadcast, would otherwise queue
// every task on one stream, where the first waits forever for the others).
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (musaGetDevice(&saved_) != musaSuccess) {
      saved_ = -1;
      return;
    }
    if (saved_ != device) err_ = musaSetDevice(device);
  }
  ~DeviceScope() {
    int now = -1;
    if (saved_ >= 0 && musaGetDevice(&now) == musaSuccess && now != saved_) musaSetDevice(saved_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  musaError_t error() const { return saved_ < 0 ? musaErrorInvalidDevice : err_; }

 private:
  int saved_ = -1;
  musaError_t err_ = musaSuccess;
};

mcclResult_t submit(Task* t) {
  DeviceScope on_comm_device(t->comm->device);
  if (on_comm_device.error() != musaSuccess) {
    delete t;
    return musa_fail("making the communicator's device current", on_comm_device.error());
  }
  std::vector<musaStream_t> streams;
  for (const Op& op : t->ops)
    if (std::find(streams.begin(), streams.end(), op.stream) == streams.end())
      streams.push_back(op.stream);
  const musaStream_t exec = streams.front();
  for (size_t i = 1; i < streams.size(); ++i) {
    mcclResult_t r = join_streams(streams[i], exec);
    if (r != mcclSuccess) {
      delete t;
      return r;
    }
  }
  // Under stream capture the task becomes part of the graph: it runs at every launch and is
  // freed with the graph (a user object).
  musaStreamCaptureStatus cs = musaStreamCaptureStatusNone;
  musaError_t e = musaStreamIsCapturing(exec, &cs);
  if (e != musaSuccess) {
    delete t;
    return musa_fail("musaStreamIsCapturing", e);
  }
  CommState& c = *t->comm;
  if (cs == musaStreamCaptureStatusActive) {
    t->persistent = true;
    musaGraph_t graph = nullptr;
    e = musaStreamGetCaptureInfo_v2(exec, &cs, nullptr, &graph, nullptr, nullptr);
    musaUserObject_t obj = nullptr;
    if (e == musaSuccess)
      e = musaUserObjectCreate(&obj, t, delete_task, 1, musaUserObjectNoDestructorSync);
    if (e != musaSuccess) {
      delete t;
      return musa_fail("capturing an MCCL operation", e);
    }
    e = musaGraphRetainUserObject(graph, obj, 1, musaGraphUserObjectMove);
    if (e != musaSuccess) {
      musaUserObjectRelease(obj, 1);  // frees the task
      return musa_fail("musaGraphRetainUserObject", e);
    }
    e = musaLaunchHostFunc(exec, run_task, t);
    if (e != musaSuccess) return musa_fail("musaLaunchHostFunc", e);
  } else {
    // After the communicator's previous task, whatever its stream (CommState::order_stream);
    // on the same stream, stream order does it at no cost. Not under capture: a captured stream
    // cannot wait for an event recorded outside the capture. A previous stream destroyed since
    // has nothing more to order.
    std::lock_guard<std::mutex> order(c.order_mu);
    if (c.order_known && c.order_stream != exec) {
      musaEvent_t ev = nullptr;
      e = musaEventCreateWithFlags(&ev, musaEventDisableTiming);
      if (e == musaSuccess) {
        e = musaEventRecord(ev, c.order_stream);
        if (e == musaSuccess) e = musaStreamWaitEvent(exec, ev, 0);
        if (e == musaErrorInvalidResourceHandle) e = musaSuccess;
        musaEventDestroy(ev);
      }
      if (e != musaSuccess) {
        delete t;
        return musa_fail("ordering after the communicator's previous stream", e);
      }
    }
    c.task_begin();
    e = musaLaunchHostFunc(exec, run_task, t);
    if (e != musaSuccess) {
      std::shared_ptr<CommState> keep = t->comm;
      delete t;
      keep->task_end();
      return musa_fail("musaLaunchHostFunc", e);
    }
    c.order_stream = exec;
    c.order_known = true;
  }
  for (size_t i = 1; i < streams.size(); ++i) MCCL_TRY(join_streams(exec, streams[i]));
  return mcclSuccess;
}

// One task per communicator, in order of first appearance.
mcclResult_t launch(std::vector<Pending>& ops) {
  std::vector<Task*> tasks;
  for (Pending& p : ops) {
    auto it = std::find_if(tasks.begin(), tasks.end(),
                           [&](Task* t) { return t->comm.get() == p.comm.get(); });
    if (it == tasks.end()) {
      tasks.push_back(new Task);
      tasks.back()->comm = p.comm;
      it = tasks.end() - 1;
    }
    (*it)->ops.push_back(p.op);
  }
  mcclResult_t first = mcclSuccess;
  for (Task* t : tasks) {
    mcclResult_t r = submit(t);  // takes ownership
    if (r != mcclSuccess && first == mcclSuccess) first = r;
  }
  return first;
}

mcclResult_t run_jobs(std::vector<GroupJob>& jobs) {
  std::vector<bool> ok(jobs.size(), true);
  mcclResult_t first = mcclSuccess;
  int phases = 0;
  for (const GroupJob& j : jobs) phases = std::max(phases, j.phases);
  for (int ph = 0; ph < phases; ++ph) {
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (!ok[i] || ph >= jobs[i].phases) continue;
      mcclResult_t r = jobs[i].run(ph);
      if (r != mcclSuccess) {
        ok[i] = false;
        if (first == mcclSuccess) first = r;
      }
    }
  }
  for (size_t i = 0; i < jobs.size(); ++i) jobs[i].cleanup(ok[i]);
  return first;
}

}  // namespace

bool in_group() { return group().depth > 0; }

mcclResult_t group_error(mcclResult_t r) {
  GroupState& g = group();
  if (r != mcclSuccess && r != mcclInProgress && g.depth > 0 && g.err == mcclSuccess) g.err = r;
  return r;
}

void group_in_progress() { group().in_progress = true; }

mcclResult_t enqueue(const std::shared_ptr<CommState>& c, const Op& op) {
  GroupState& g = group();
  if (g.depth > 0) {
    g.ops.push_back(Pending{c, op});
    return mcclSuccess;
  }
  std::vector<Pending> one{Pending{c, op}};
  return launch(one);
}

mcclResult_t add_job(GroupJob job) {
  GroupState& g = group();
  if (g.depth > 0) {
    g.jobs.push_back(std::move(job));
    return mcclSuccess;
  }
  std::vector<GroupJob> one;
  one.push_back(std::move(job));
  return run_jobs(one);
}

}  // namespace mccl_sim

using namespace mccl_sim;

extern "C" {

mcclResult_t mcclGroupStart(void) {
  return api([] {
    ++group().depth;
    return mcclSuccess;
  });
}

mcclResult_t mcclGroupEnd(void) {
  return api([] {
    GroupState& g = group();
    if (g.depth == 0) return fail(mcclInvalidUsage, "mcclGroupEnd without mcclGroupStart");
    if (--g.depth > 0) return mcclSuccess;
    std::vector<Pending> ops = std::move(g.ops);
    std::vector<GroupJob> jobs = std::move(g.jobs);
    const mcclResult_t err = g.err;
    const bool in_progress = g.in_progress;
    g = GroupState{};
    if (err != mcclSuccess) {
      // An operation of the group was refused: issue none of it (its peers would wait forever
      // for the missing part), and report the first error.
      for (GroupJob& j : jobs) j.cleanup(false);
      return err;
    }
    mcclResult_t r = run_jobs(jobs);
    mcclResult_t r2 = launch(ops);
    if (r == mcclSuccess) r = r2;
    if (r == mcclSuccess && in_progress) r = mcclInProgress;
    return r;
  });
}

}  // extern "C"
