// Events: a record queues a marker that the stream's worker completes (and timestamps) when it
// reaches it. An interprocess event's state lives in a page shared with the processes that
// opened it (ipc.cc): its records, queries and waits go through that page.
#include "graph.h"

#include <algorithm>

namespace sim {

musaError_t find_event(musaEvent_t e, std::shared_ptr<MUevent_st>* out) {
  if (e == nullptr) return musaErrorInvalidResourceHandle;
  Runtime& r = rt();
  std::lock_guard<std::mutex> lock(r.handles_mu);
  auto it = r.events.find(e);
  if (it == r.events.end()) return musaErrorInvalidResourceHandle;
  *out = it->second;
  return musaSuccess;
}

namespace {

bool event_captured(MUevent_st& e) {
  if (rt().active_captures.load() == 0) return false;
  std::lock_guard<std::mutex> lock(rt().graph_mu);
  return e.capture && !e.capture->ended;
}

musaError_t record(musaEvent_t event, musaStream_t stream, unsigned flags) {
  if (flags != musaEventRecordDefault && flags != musaEventRecordExternal)
    return musaErrorInvalidValue;
  std::shared_ptr<MUevent_st> e;
  SIM_TRY(find_event(event, &e));
  std::shared_ptr<MUstream_st> s;
  SIM_TRY(resolve_stream(stream, &s));
  // CUDA: "cudaEventRecord() will fail if the input event and input stream are associated to
  // different devices".
  if (s->device != e->device) return musaErrorInvalidResourceHandle;
  if (stream_is_capturing(*s)) {
    Runtime& r = rt();
    std::lock_guard<std::mutex> lock(r.graph_mu);
    if (s->capture && !s->capture->ended) {  // still capturing under the lock
      if (s->capture->invalidated) return musaErrorStreamCaptureInvalidated;
      if (flags == musaEventRecordExternal) {
        // An external record is a real node in the graph.
        NodeParams p;
        p.type = musaGraphNodeTypeEventRecord;
        p.event = event;
        auto n = std::make_unique<MUgraphNode_st>();
        n->graph = s->capture->graph;
        n->p = p;
        n->deps = s->cap_deps;
        for (auto* d : n->deps) d->dependents.push_back(n.get());
        MUgraphNode_st* raw = n.get();
        s->capture->graph->nodes.push_back(std::move(n));
        r.nodes.insert(raw);
        s->cap_deps = {raw};
      }
      e->capture = s->capture;
      e->cap_nodes = s->cap_deps;
      return musaSuccess;
    }
  }
  MarkerPtr m;
  if (e->ipc != nullptr) {
    // Another process may be waiting on it: the stream raises the shared count when it gets here.
    const uint64_t target = e->ipc->recorded.fetch_add(1) + 1;
    const musaError_t err = submit(
        *s, [e, target] { raise_counter(e->ipc->completed, target); }, {}, &m);
    if (err != musaSuccess) {  // nothing was queued: the record must not be waited for
      raise_counter(e->ipc->completed, target);
      return err;
    }
  } else if (!run_if_idle(
                 *s, [](void*) {}, nullptr, &m)) {
    // A busy stream's worker completes the marker. On an idle one run_if_idle completed it here
    // (no wake-up of the stream's thread: PyTorch records one per non-blocking copy from pinned
    // memory).
    SIM_TRY(submit(*s, nullptr, {}, &m));
  }
  if (rt().active_captures.load() != 0) {
    std::lock_guard<std::mutex> lock(rt().graph_mu);
    e->capture.reset();
    e->cap_nodes.clear();
  }
  std::lock_guard<std::mutex> lock(e->mu);
  e->marker = m;
  return musaSuccess;
}

MarkerPtr event_marker(MUevent_st& e) {
  std::lock_guard<std::mutex> lock(e.mu);
  return e.marker;
}

}  // namespace
}  // namespace sim

using namespace sim;

extern "C" {

musaError_t musaEventCreate(musaEvent_t* event) { return musaEventCreateWithFlags(event, 0); }

musaError_t musaEventCreateWithFlags(musaEvent_t* event, unsigned int flags) {
  return api([&] {
    if (event == nullptr) return musaErrorInvalidValue;
    const unsigned all = musaEventBlockingSync | musaEventDisableTiming | musaEventInterprocess;
    if ((flags & ~all) != 0) return musaErrorInvalidValue;
    if ((flags & musaEventInterprocess) != 0 && (flags & musaEventDisableTiming) == 0)
      return musaErrorInvalidValue;
    auto e = std::make_shared<MUevent_st>();
    e->flags = flags;
    e->device = current_device();
    if ((flags & musaEventInterprocess) != 0) SIM_TRY(make_ipc_event(*e));
    Runtime& r = rt();
    std::lock_guard<std::mutex> lock(r.handles_mu);
    r.events.emplace(e.get(), e);
    *event = e.get();
    return musaSuccess;
  });
}

musaError_t musaEventDestroy(musaEvent_t event) {
  return api([&] {
    if (event == nullptr) return musaErrorInvalidResourceHandle;
    Runtime& r = rt();
    std::shared_ptr<MUevent_st> keep;  // freed outside the lock
    std::lock_guard<std::mutex> lock(r.handles_mu);
    auto it = r.events.find(event);
    if (it == r.events.end()) return musaErrorInvalidResourceHandle;
    keep = std::move(it->second);
    r.events.erase(it);
    return musaSuccess;
  });
}

musaError_t musaEventRecord(musaEvent_t event, musaStream_t stream) {
  return api([&] { return record(event, stream, musaEventRecordDefault); });
}

musaError_t musaEventRecordWithFlags(musaEvent_t event, musaStream_t stream, unsigned int flags) {
  return api([&] { return record(event, stream, flags); });
}

musaError_t musaEventQuery(musaEvent_t event) {
  return api([&] {
    std::shared_ptr<MUevent_st> e;
    SIM_TRY(find_event(event, &e));
    if (event_captured(*e)) return musaErrorCapturedEvent;
    if (e->ipc != nullptr)
      return e->ipc->completed.load() >= e->ipc->recorded.load() ? musaSuccess : musaErrorNotReady;
    MarkerPtr m = event_marker(*e);
    return (m && !m->is_done()) ? musaErrorNotReady : musaSuccess;
  });
}

musaError_t musaEventSynchronize(musaEvent_t event) {
  return api([&] {
    std::shared_ptr<MUevent_st> e;
    SIM_TRY(find_event(event, &e));
    if (event_captured(*e)) return musaErrorCapturedEvent;
    if (e->ipc != nullptr) {
      wait_counter(e->ipc->completed, e->ipc->recorded.load());
      return sticky_fault();
    }
    MarkerPtr m = event_marker(*e);
    if (m) m->wait();
    return sticky_fault();
  });
}

musaError_t musaEventElapsedTime(float* ms, musaEvent_t start, musaEvent_t end) {
  return api([&] {
    if (ms == nullptr) return musaErrorInvalidValue;
    std::shared_ptr<MUevent_st> a, b;
    SIM_TRY(find_event(start, &a));
    SIM_TRY(find_event(end, &b));
    if (event_captured(*a) || event_captured(*b)) return musaErrorCapturedEvent;
    // Events of two devices have no common clock: CUDA's cudaEventElapsedTime fails for them.
    if (a->device != b->device) return musaErrorInvalidResourceHandle;
    if (((a->flags | b->flags) & musaEventDisableTiming) != 0)
      return musaErrorInvalidResourceHandle;
    MarkerPtr ma = event_marker(*a), mb = event_marker(*b);
    if (!ma || !mb) return musaErrorInvalidResourceHandle;
    if (!ma->is_done() || !mb->is_done()) return musaErrorNotReady;
    const auto d = std::chrono::duration<double, std::milli>(mb->time - ma->time);
    *ms = static_cast<float>(d.count());
    return musaSuccess;
  });
}

musaError_t musaStreamWaitEvent(musaStream_t stream, musaEvent_t event, unsigned int flags) {
  return api([&] {
    if (flags != musaEventWaitDefault && flags != musaEventWaitExternal)
      return musaErrorInvalidValue;
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(stream, &s));
    std::shared_ptr<MUevent_st> e;
    SIM_TRY(find_event(event, &e));
    Runtime& r = rt();
    if (r.active_captures.load() != 0) {
      std::unique_lock<std::mutex> lock(r.graph_mu);
      const bool ev_cap = e->capture && !e->capture->ended;
      const bool st_cap = s->capture && !s->capture->ended;
      if (ev_cap) {
        auto c = e->capture;
        if (c->invalidated) return musaErrorStreamCaptureInvalidated;
        if (s->legacy) return musaErrorStreamCaptureImplicit;
        if (st_cap && s->capture != c) return musaErrorStreamCaptureMerge;
        if (!st_cap) {  // fork: the stream joins the capture
          s->capture = c;
          c->streams.push_back(s.get());
          c->keep.push_back(s);
          s->cap_deps = e->cap_nodes;
          return musaSuccess;
        }
        for (auto* n : e->cap_nodes)
          if (std::find(s->cap_deps.begin(), s->cap_deps.end(), n) == s->cap_deps.end())
            s->cap_deps.push_back(n);
        return musaSuccess;
      }
      if (st_cap) {
        // Waiting on work outside the capture.
        s->capture->invalidated = true;
        return musaErrorStreamCaptureIsolation;
      }
    }
    if (e->ipc != nullptr) {
      // The latest record, wherever it was made: the stream's worker waits for the shared count.
      const uint64_t target = e->ipc->recorded.load();
      if (e->ipc->completed.load() >= target) return musaSuccess;
      return submit(
          *s, [e, target] { wait_counter(e->ipc->completed, target); }, {}, nullptr);
    }
    MarkerPtr m = event_marker(*e);
    // Never recorded, or already complete: nothing to wait for.
    if (!m || m->is_done()) return musaSuccess;
    return submit(*s, nullptr, {m}, nullptr);
  });
}

}  // extern "C"
