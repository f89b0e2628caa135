// Graphs (explicit construction, instantiation, launch, update), stream capture and user objects.
#include "graph.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>

MUgraph_st::~MUgraph_st() = default;

namespace sim {
namespace {

using Lock = std::lock_guard<std::mutex>;

// User-object destructors run after graph_mu is released.
thread_local std::vector<std::pair<musaHostFn_t, void*>> t_pending_destroys;

void run_pending_destroys() {
  std::vector<std::pair<musaHostFn_t, void*>> v;
  v.swap(t_pending_destroys);
  for (auto& d : v) d.first(d.second);
}

template <class F>
musaError_t locked(F&& body) {
  musaError_t e;
  {
    Lock lock(rt().graph_mu);
    e = body();
  }
  run_pending_destroys();
  return e;
}

bool graph_ok(musaGraph_t g) { return g != nullptr && rt().graphs.count(g) != 0; }
bool node_ok(musaGraphNode_t n) { return n != nullptr && rt().nodes.count(n) != 0; }
bool exec_ok(musaGraphExec_t e) { return e != nullptr && rt().execs.count(e) != 0; }

bool event_ok(musaEvent_t e) {
  Runtime& r = rt();
  Lock lock(r.handles_mu);
  return e != nullptr && r.events.count(e) != 0;
}

std::shared_ptr<MUevent_st> event_ref(MUevent_st* e) {
  Runtime& r = rt();
  Lock lock(r.handles_mu);
  auto it = r.events.find(e);
  return it == r.events.end() ? nullptr : it->second;
}

MemsetDesc from_params(const musaMemsetParams& m) {
  MemsetDesc d;
  d.dst = m.dst;
  d.pitch = m.pitch;
  d.value = m.value;
  d.elem = m.elementSize;
  d.width = m.width;
  d.height = m.height;
  d.depth = 1;
  d.slice = m.pitch * m.height;
  if (d.height <= 1 && d.pitch == 0) d.pitch = d.width * d.elem;
  return d;
}

musaMemsetParams to_params(const MemsetDesc& d) {
  musaMemsetParams m{};
  m.dst = d.dst;
  m.pitch = d.pitch;
  m.value = d.value;
  m.elementSize = d.elem;
  m.width = d.width;
  m.height = d.height;
  return m;
}

musaError_t check_deps(MUgraph_st* g, const musaGraphNode_t* deps, size_t n) {
  if (n > 0 && deps == nullptr) return musaErrorInvalidValue;
  for (size_t i = 0; i < n; ++i) {
    if (!node_ok(deps[i]) || deps[i]->graph != g) return musaErrorInvalidValue;
    for (size_t j = 0; j < i; ++j)
      if (deps[j] == deps[i]) return musaErrorInvalidValue;
  }
  return musaSuccess;
}

MUgraphNode_st* add_node(MUgraph_st* g, NodeParams p, const musaGraphNode_t* deps, size_t n) {
  auto node = std::make_unique<MUgraphNode_st>();
  node->graph = g;
  node->p = std::move(p);
  for (size_t i = 0; i < n; ++i) {
    node->deps.push_back(deps[i]);
    deps[i]->dependents.push_back(node.get());
  }
  MUgraphNode_st* raw = node.get();
  g->nodes.push_back(std::move(node));
  rt().nodes.insert(raw);
  return raw;
}

void retain_user_object(MUuserObject_st* o, unsigned count) { o->refs.fetch_add(count); }

}  // namespace

void release_user_object(MUuserObject_st* o, unsigned count) {
  if (o->refs.fetch_sub(count) == count) {
    rt().user_objects.erase(o);
    t_pending_destroys.emplace_back(o->destroy, o->ptr);
    delete o;
  }
}

MUgraph_st* clone_graph(const MUgraph_st& g) {
  auto c = std::make_unique<MUgraph_st>();
  std::unordered_map<const MUgraphNode_st*, MUgraphNode_st*> map;
  for (auto& n : g.nodes) {
    auto m = std::make_unique<MUgraphNode_st>();
    m->graph = c.get();
    m->p = n->p;
    if (n->p.child != nullptr) {
      m->p.child = clone_graph(*n->p.child);
      m->p.child->is_child = true;
    }
    map[n.get()] = m.get();
    c->clone_of[n.get()] = m.get();
    c->nodes.push_back(std::move(m));
  }
  for (auto& n : g.nodes) {
    MUgraphNode_st* m = map[n.get()];
    for (auto* d : n->deps) m->deps.push_back(map[d]);
    for (auto* d : n->dependents) m->dependents.push_back(map[d]);
  }
  for (auto& kv : g.user_objects) {
    retain_user_object(kv.first, kv.second);
    c->user_objects[kv.first] = kv.second;
  }
  for (auto& n : c->nodes) rt().nodes.insert(n.get());
  MUgraph_st* raw = c.release();
  rt().graphs.insert(raw);
  return raw;
}

void destroy_graph(MUgraph_st* g) {
  Runtime& r = rt();
  for (auto& n : g->nodes) {
    r.nodes.erase(n.get());
    if (n->p.child != nullptr) destroy_graph(n->p.child);
  }
  for (auto& kv : g->user_objects) release_user_object(kv.first, kv.second);
  r.graphs.erase(g);
  delete g;
}

// ---- Capture ---------------------------------------------------------------------------------

namespace {

void end_capture(const std::shared_ptr<Capture>& c) {
  Runtime& r = rt();
  for (auto* s : c->streams) {
    s->capture.reset();
    s->cap_deps.clear();
  }
  c->ended = true;
  auto it = std::find(r.captures.begin(), r.captures.end(), c);
  if (it != r.captures.end()) {
    r.captures.erase(it);
    r.active_captures.fetch_sub(1);
  }
}

}  // namespace

bool stream_is_capturing(MUstream_st& s) {
  if (rt().active_captures.load() == 0) return false;
  Lock lock(rt().graph_mu);
  return s.capture != nullptr && !s.capture->ended;
}

void stream_leave_capture(MUstream_st* s) {
  auto c = s->capture;
  if (!c) return;
  if (c->origin == s) {
    c->invalidated = true;
    end_capture(c);
    if (!c->user_graph) destroy_graph(c->graph);
    c->keep.clear();
    return;
  }
  c->streams.erase(std::remove(c->streams.begin(), c->streams.end(), s), c->streams.end());
  s->capture.reset();
  s->cap_deps.clear();
}

bool capture_node(MUstream_st& s, const NodeParams& p, musaError_t* err) {
  if (rt().active_captures.load() == 0) return false;
  Lock lock(rt().graph_mu);
  if (!s.capture || s.capture->ended) return false;
  if (s.capture->invalidated) {
    *err = musaErrorStreamCaptureInvalidated;
    return true;
  }
  MUgraphNode_st* n = add_node(s.capture->graph, p, s.cap_deps.data(), s.cap_deps.size());
  s.cap_deps.assign(1, n);
  *err = musaSuccess;
  return true;
}

musaError_t check_unsafe() {
  Runtime& r = rt();
  if (r.active_captures.load() == 0) return musaSuccess;
  const musaStreamCaptureMode mode = ts().capture_mode;
  if (mode == musaStreamCaptureModeRelaxed) return musaSuccess;
  Lock lock(r.graph_mu);
  bool prohibited = false;
  for (auto& c : r.captures) {
    if (c->ended || c->mode == musaStreamCaptureModeRelaxed) continue;
    const bool mine = c->thread == std::this_thread::get_id();
    if (mine || (mode == musaStreamCaptureModeGlobal && c->mode == musaStreamCaptureModeGlobal)) {
      c->invalidated = true;
      prohibited = true;
    }
  }
  return prohibited ? musaErrorStreamCaptureUnsupported : musaSuccess;
}

bool legacy_conflicts_capture(int d) {
  Runtime& r = rt();
  if (r.active_captures.load() == 0) return false;
  Lock lock(r.graph_mu);
  bool conflict = false;
  for (auto& c : r.captures) {
    for (auto* s : c->streams) {
      if (s->device == d && (s->flags & musaStreamNonBlocking) == 0) {
        c->invalidated = true;
        conflict = true;
      }
    }
  }
  return conflict;
}

// ---- Instantiation -------------------------------------------------------------------------

namespace {

// Kahn's algorithm over the graph's node order; false on a cycle.
bool topo_order(const MUgraph_st& g, std::vector<size_t>* order, std::vector<size_t>* idx_of_dep,
                std::vector<std::vector<size_t>>* deps_by_index) {
  std::unordered_map<const MUgraphNode_st*, size_t> idx;
  for (size_t i = 0; i < g.nodes.size(); ++i) idx[g.nodes[i].get()] = i;
  std::vector<size_t> indeg(g.nodes.size());
  deps_by_index->assign(g.nodes.size(), {});
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    indeg[i] = g.nodes[i]->deps.size();
    for (auto* d : g.nodes[i]->deps) (*deps_by_index)[i].push_back(idx[d]);
  }
  std::vector<size_t> ready;
  for (size_t i = 0; i < indeg.size(); ++i)
    if (indeg[i] == 0) ready.push_back(i);
  order->clear();
  size_t head = 0;
  while (head < ready.size()) {
    const size_t i = ready[head++];
    order->push_back(i);
    for (auto* d : g.nodes[i]->dependents)
      if (--indeg[idx[d]] == 0) ready.push_back(idx[d]);
  }
  (void)idx_of_dep;
  return order->size() == g.nodes.size();
}

bool build_plan(const MUgraph_st& g, std::vector<ExecNode>* plan, std::vector<size_t>* order,
                std::vector<std::vector<size_t>>* deps) {
  if (!topo_order(g, order, nullptr, deps)) return false;
  plan->clear();
  for (size_t i : *order) {
    const MUgraphNode_st& n = *g.nodes[i];
    ExecNode e;
    e.p = n.p;
    e.p.child = nullptr;
    if (n.p.child != nullptr) {
      std::vector<size_t> o;
      std::vector<std::vector<size_t>> d;
      if (!build_plan(*n.p.child, &e.child, &o, &d)) return false;
    }
    plan->push_back(std::move(e));
  }
  return true;
}

void collect_events(const std::vector<ExecNode>& plan, std::vector<MarkerPtr>* waits,
                    std::vector<std::pair<std::shared_ptr<MUevent_st>, MarkerPtr>>* records) {
  for (const ExecNode& n : plan) {
    if (n.p.type == musaGraphNodeTypeWaitEvent) {
      auto e = event_ref(n.p.event);
      MarkerPtr m;
      if (e) {
        Lock lock(e->mu);
        m = e->marker;
      }
      waits->push_back(m);
    } else if (n.p.type == musaGraphNodeTypeEventRecord) {
      records->emplace_back(event_ref(n.p.event), std::make_shared<Marker>());
    } else if (n.p.type == musaGraphNodeTypeGraph) {
      collect_events(n.child, waits, records);
    }
  }
}

void run_plan(const std::vector<ExecNode>& plan, const std::vector<MarkerPtr>& waits,
              const std::vector<std::pair<std::shared_ptr<MUevent_st>, MarkerPtr>>& records,
              size_t* wi, size_t* ri) {
  for (const ExecNode& n : plan) {
    switch (n.p.type) {
      case musaGraphNodeTypeMemcpy:
        if (n.enabled) do_copy(n.p.copy.p);
        break;
      case musaGraphNodeTypeMemset:
        if (n.enabled) do_memset(n.p.memset);
        break;
      case musaGraphNodeTypeHost:
        if (n.enabled) n.p.host.fn(n.p.host.userData);
        break;
      case musaGraphNodeTypeKernel:
        // A fault is the device's sticky error, which the replay's synchronisation reports.
        if (n.enabled && n.p.kernel) (void)run_kernel(*n.p.kernel);
        break;
      case musaGraphNodeTypeWaitEvent: {
        const MarkerPtr& m = waits[(*wi)++];
        if (m) m->wait();
        break;
      }
      case musaGraphNodeTypeEventRecord:
        records[(*ri)++].second->complete();
        break;
      case musaGraphNodeTypeGraph:
        run_plan(n.child, waits, records, wi, ri);
        break;
      default:
        break;
    }
  }
}

const char* type_name(musaGraphNodeType t) {
  switch (t) {
    case musaGraphNodeTypeMemcpy:
      return "MEMCPY";
    case musaGraphNodeTypeMemset:
      return "MEMSET";
    case musaGraphNodeTypeHost:
      return "HOST";
    case musaGraphNodeTypeKernel:
      return "KERNEL";
    case musaGraphNodeTypeGraph:
      return "CHILD_GRAPH";
    case musaGraphNodeTypeEmpty:
      return "EMPTY";
    case musaGraphNodeTypeWaitEvent:
      return "WAIT_EVENT";
    case musaGraphNodeTypeEventRecord:
      return "EVENT_RECORD";
    default:
      return "OTHER";
  }
}

// Exec plan edits are copy-on-write so in-flight launches keep their snapshot.
template <class F>
musaError_t edit_exec(musaGraphExec_t x, musaGraphNode_t node, musaGraphNodeType type, F&& f) {
  if (!exec_ok(x)) return musaErrorInvalidResourceHandle;
  if (!node_ok(node)) return musaErrorInvalidValue;
  auto it = x->index.find(node);
  if (it == x->index.end()) return musaErrorInvalidValue;
  auto plan = std::make_shared<std::vector<ExecNode>>(*x->plan);
  ExecNode& e = (*plan)[it->second];
  if (e.p.type != type) return musaErrorInvalidValue;
  SIM_TRY(f(e));
  x->plan = plan;
  return musaSuccess;
}

musaError_t check_host(const musaHostNodeParams* p) {
  return (p == nullptr || p->fn == nullptr) ? musaErrorInvalidValue : musaSuccess;
}

musaError_t check_memset(const musaMemsetParams* p, MemsetDesc* out) {
  if (p == nullptr) return musaErrorInvalidValue;
  *out = from_params(*p);
  SIM_TRY(validate_memset(*out));
  return (out->width == 0 || out->height == 0) ? musaErrorInvalidValue : musaSuccess;
}

musaError_t check_copy(const musaMemcpy3DParms* p) {
  if (p == nullptr) return musaErrorInvalidValue;
  return validate_copy(*p);
}

template <class F>
musaError_t node_of(musaGraphNode_t node, musaGraphNodeType type, F&& f) {
  return locked([&] {
    if (!node_ok(node) || node->p.type != type) return musaErrorInvalidValue;
    return f(*node);
  });
}

}  // namespace
}  // namespace sim

using namespace sim;

extern "C" {

// ---- Stream capture --------------------------------------------------------------------------

}  // extern "C"

namespace {

musaError_t begin_capture(musaStream_t stream, musaGraph_t graph, const musaGraphNode_t* deps,
                          size_t n, musaStreamCaptureMode mode) {
  if (mode != musaStreamCaptureModeGlobal && mode != musaStreamCaptureModeThreadLocal &&
      mode != musaStreamCaptureModeRelaxed)
    return musaErrorInvalidValue;
  std::shared_ptr<MUstream_st> s;
  SIM_TRY(resolve_stream(stream, &s));
  if (s->legacy) return musaErrorStreamCaptureUnsupported;
  return locked([&] {
    Runtime& r = rt();
    if (graph != nullptr && !graph_ok(graph)) return musaErrorInvalidValue;
    if (graph != nullptr) SIM_TRY(check_deps(graph, deps, n));
    if (s->capture && !s->capture->ended) return musaErrorIllegalState;
    auto c = std::make_shared<Capture>();
    c->id = r.next_capture_id.fetch_add(1);
    c->mode = mode;
    c->origin = s.get();
    c->thread = std::this_thread::get_id();
    c->streams.push_back(s.get());
    c->keep.push_back(s);
    if (graph != nullptr) {
      c->graph = graph;
      c->user_graph = true;
      s->cap_deps.assign(deps, deps + n);
    } else {
      c->graph = new MUgraph_st();
      r.graphs.insert(c->graph);
      s->cap_deps.clear();
    }
    s->capture = c;
    r.captures.push_back(c);
    r.active_captures.fetch_add(1);
    return musaSuccess;
  });
}

}  // namespace

extern "C" {

musaError_t musaStreamBeginCapture(musaStream_t stream, enum musaStreamCaptureMode mode) {
  return api([&] { return begin_capture(stream, nullptr, nullptr, 0, mode); });
}

musaError_t musaStreamBeginCaptureToGraph(musaStream_t stream, musaGraph_t graph,
                                          const musaGraphNode_t* dependencies,
                                          size_t numDependencies, enum musaStreamCaptureMode mode) {
  return api([&] {
    if (graph == nullptr) return musaErrorInvalidValue;
    return begin_capture(stream, graph, dependencies, numDependencies, mode);
  });
}

musaError_t musaStreamEndCapture(musaStream_t stream, musaGraph_t* pGraph) {
  return api([&] {
    if (pGraph == nullptr) return musaErrorInvalidValue;
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(stream, &s));
    std::vector<std::shared_ptr<MUstream_st>> keep;  // released after the lock
    musaError_t e = locked([&] {
      auto c = s->capture;
      if (!c || c->ended) return musaErrorIllegalState;
      if (c->origin != s.get()) {
        c->invalidated = true;
        return musaErrorStreamCaptureUnmatched;
      }
      if (c->mode != musaStreamCaptureModeRelaxed && c->thread != std::this_thread::get_id())
        return musaErrorStreamCaptureWrongThread;
      // Every stream forked into the capture must have been joined back into the origin.
      std::set<MUgraphNode_st*> reach;
      std::vector<MUgraphNode_st*> todo(s->cap_deps.begin(), s->cap_deps.end());
      while (!todo.empty()) {
        MUgraphNode_st* n = todo.back();
        todo.pop_back();
        if (!reach.insert(n).second) continue;
        for (auto* d : n->deps) todo.push_back(d);
      }
      musaError_t result = musaSuccess;
      for (auto* o : c->streams) {
        if (o == s.get()) continue;
        for (auto* n : o->cap_deps)
          if (reach.count(n) == 0) result = musaErrorStreamCaptureUnjoined;
      }
      if (c->invalidated && result == musaSuccess) result = musaErrorStreamCaptureInvalidated;
      end_capture(c);
      keep.swap(c->keep);
      if (result != musaSuccess) {
        if (!c->user_graph) destroy_graph(c->graph);
        *pGraph = nullptr;
        return result;
      }
      *pGraph = c->graph;
      return musaSuccess;
    });
    return e;
  });
}

musaError_t musaStreamIsCapturing(musaStream_t stream, enum musaStreamCaptureStatus* status) {
  return api([&] {
    if (status == nullptr) return musaErrorInvalidValue;
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(stream, &s));
    return locked([&] {
      if (!s->capture || s->capture->ended)
        *status = musaStreamCaptureStatusNone;
      else
        *status = s->capture->invalidated ? musaStreamCaptureStatusInvalidated
                                          : musaStreamCaptureStatusActive;
      return musaSuccess;
    });
  });
}

musaError_t musaStreamGetCaptureInfo_v2(musaStream_t stream, enum musaStreamCaptureStatus* status,
                                        unsigned long long* id, musaGraph_t* graph,
                                        const musaGraphNode_t** deps, size_t* numDeps) {
  return api([&] {
    if (status == nullptr) return musaErrorInvalidValue;
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(stream, &s));
    return locked([&] {
      auto c = s->capture;
      if (!c || c->ended) {
        *status = musaStreamCaptureStatusNone;
        return musaSuccess;
      }
      *status = c->invalidated ? musaStreamCaptureStatusInvalidated : musaStreamCaptureStatusActive;
      if (id != nullptr) *id = c->id;
      if (graph != nullptr) *graph = c->graph;
      if (deps != nullptr) *deps = s->cap_deps.data();
      if (numDeps != nullptr) *numDeps = s->cap_deps.size();
      return musaSuccess;
    });
  });
}

musaError_t musaStreamUpdateCaptureDependencies(musaStream_t stream, musaGraphNode_t* deps,
                                                size_t n, unsigned int flags) {
  return api([&] {
    if (flags != musaStreamAddCaptureDependencies && flags != musaStreamSetCaptureDependencies)
      return musaErrorInvalidValue;
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(stream, &s));
    return locked([&] {
      auto c = s->capture;
      if (!c || c->ended) return musaErrorIllegalState;
      if (c->invalidated) return musaErrorStreamCaptureInvalidated;
      if (n > 0 && deps == nullptr) return musaErrorInvalidValue;
      for (size_t i = 0; i < n; ++i)
        if (!node_ok(deps[i]) || deps[i]->graph != c->graph) return musaErrorInvalidValue;
      if (flags == musaStreamSetCaptureDependencies) s->cap_deps.clear();
      for (size_t i = 0; i < n; ++i)
        if (std::find(s->cap_deps.begin(), s->cap_deps.end(), deps[i]) == s->cap_deps.end())
          s->cap_deps.push_back(deps[i]);
      return musaSuccess;
    });
  });
}

musaError_t musaThreadExchangeStreamCaptureMode(enum musaStreamCaptureMode* mode) {
  return api([&] {
    if (mode == nullptr) return musaErrorInvalidValue;
    if (*mode != musaStreamCaptureModeGlobal && *mode != musaStreamCaptureModeThreadLocal &&
        *mode != musaStreamCaptureModeRelaxed)
      return musaErrorInvalidValue;
    ThreadState& t = ts();
    std::swap(t.capture_mode, *mode);
    return musaSuccess;
  });
}

// ---- User objects ----------------------------------------------------------------------------

musaError_t musaUserObjectCreate(musaUserObject_t* out, void* ptr, musaHostFn_t destroy,
                                 unsigned int initialRefcount, unsigned int flags) {
  return api([&] {
    if (out == nullptr || destroy == nullptr || initialRefcount == 0 ||
        flags != musaUserObjectNoDestructorSync)
      return musaErrorInvalidValue;
    return locked([&] {
      auto* o = new MUuserObject_st();
      o->refs.store(initialRefcount);
      o->ptr = ptr;
      o->destroy = destroy;
      rt().user_objects.insert(o);
      *out = o;
      return musaSuccess;
    });
  });
}

musaError_t musaUserObjectRetain(musaUserObject_t object, unsigned int count) {
  return api([&] {
    return locked([&] {
      if (count == 0 || rt().user_objects.count(object) == 0) return musaErrorInvalidValue;
      retain_user_object(object, count);
      return musaSuccess;
    });
  });
}

musaError_t musaUserObjectRelease(musaUserObject_t object, unsigned int count) {
  return api([&] {
    return locked([&] {
      if (count == 0 || rt().user_objects.count(object) == 0) return musaErrorInvalidValue;
      if (object->refs.load() < count) return musaErrorInvalidValue;
      release_user_object(object, count);
      return musaSuccess;
    });
  });
}

musaError_t musaGraphRetainUserObject(musaGraph_t graph, musaUserObject_t object,
                                      unsigned int count, unsigned int flags) {
  return api([&] {
    return locked([&] {
      if (!graph_ok(graph) || count == 0 || rt().user_objects.count(object) == 0 ||
          (flags != 0 && flags != musaGraphUserObjectMove))
        return musaErrorInvalidValue;
      if (flags != musaGraphUserObjectMove) retain_user_object(object, count);
      graph->user_objects[object] += count;
      return musaSuccess;
    });
  });
}

musaError_t musaGraphReleaseUserObject(musaGraph_t graph, musaUserObject_t object,
                                       unsigned int count) {
  return api([&] {
    return locked([&] {
      if (!graph_ok(graph) || count == 0 || rt().user_objects.count(object) == 0)
        return musaErrorInvalidValue;
      auto it = graph->user_objects.find(object);
      if (it == graph->user_objects.end() || it->second < count) return musaErrorInvalidValue;
      it->second -= count;
      if (it->second == 0) graph->user_objects.erase(it);
      release_user_object(object, count);
      return musaSuccess;
    });
  });
}

// ---- Graph construction ----------------------------------------------------------------------

musaError_t musaGraphCreate(musaGraph_t* pGraph, unsigned int flags) {
  return api([&] {
    if (pGraph == nullptr || flags != 0) return musaErrorInvalidValue;
    return locked([&] {
      auto* g = new MUgraph_st();
      rt().graphs.insert(g);
      *pGraph = g;
      return musaSuccess;
    });
  });
}

musaError_t musaGraphDestroy(musaGraph_t graph) {
  return api([&] {
    return locked([&] {
      if (!graph_ok(graph) || graph->is_child) return musaErrorInvalidValue;
      destroy_graph(graph);
      return musaSuccess;
    });
  });
}

musaError_t musaGraphDestroyNode(musaGraphNode_t node) {
  return api([&] {
    return locked([&] {
      if (!node_ok(node)) return musaErrorInvalidValue;
      for (auto* d : node->deps) {
        auto& v = d->dependents;
        v.erase(std::remove(v.begin(), v.end(), node), v.end());
      }
      for (auto* d : node->dependents) {
        auto& v = d->deps;
        v.erase(std::remove(v.begin(), v.end(), node), v.end());
      }
      if (node->p.child != nullptr) destroy_graph(node->p.child);
      rt().nodes.erase(node);
      MUgraph_st* g = node->graph;
      for (auto it = g->clone_of.begin(); it != g->clone_of.end();)
        it = it->second == node ? g->clone_of.erase(it) : std::next(it);
      g->nodes.erase(
          std::remove_if(g->nodes.begin(), g->nodes.end(),
                         [&](const std::unique_ptr<MUgraphNode_st>& p) { return p.get() == node; }),
          g->nodes.end());
      return musaSuccess;
    });
  });
}

musaError_t musaGraphClone(musaGraph_t* pGraphClone, musaGraph_t originalGraph) {
  return api([&] {
    if (pGraphClone == nullptr) return musaErrorInvalidValue;
    return locked([&] {
      if (!graph_ok(originalGraph)) return musaErrorInvalidValue;
      *pGraphClone = clone_graph(*originalGraph);
      return musaSuccess;
    });
  });
}

musaError_t musaGraphNodeFindInClone(musaGraphNode_t* pNode, musaGraphNode_t originalNode,
                                     musaGraph_t clonedGraph) {
  return api([&] {
    if (pNode == nullptr) return musaErrorInvalidValue;
    return locked([&] {
      if (!graph_ok(clonedGraph)) return musaErrorInvalidValue;
      auto it = clonedGraph->clone_of.find(originalNode);
      if (it == clonedGraph->clone_of.end()) return musaErrorInvalidValue;
      *pNode = it->second;
      return musaSuccess;
    });
  });
}

}  // extern "C"

namespace {

template <class F>
musaError_t add_with(musaGraphNode_t* out, musaGraph_t graph, const musaGraphNode_t* deps, size_t n,
                     F&& make) {
  if (out == nullptr) return musaErrorInvalidValue;
  return locked([&] {
    if (!graph_ok(graph)) return musaErrorInvalidValue;
    SIM_TRY(check_deps(graph, deps, n));
    NodeParams p;
    SIM_TRY(make(p));
    *out = add_node(graph, std::move(p), deps, n);
    return musaSuccess;
  });
}

}  // namespace

extern "C" {

musaError_t musaGraphAddEmptyNode(musaGraphNode_t* pGraphNode, musaGraph_t graph,
                                  const musaGraphNode_t* pDependencies, size_t numDependencies) {
  return api([&] {
    return add_with(pGraphNode, graph, pDependencies, numDependencies, [](NodeParams& p) {
      p.type = musaGraphNodeTypeEmpty;
      return musaSuccess;
    });
  });
}

musaError_t musaGraphAddHostNode(musaGraphNode_t* pGraphNode, musaGraph_t graph,
                                 const musaGraphNode_t* pDependencies, size_t numDependencies,
                                 const struct musaHostNodeParams* pNodeParams) {
  return api([&] {
    return add_with(pGraphNode, graph, pDependencies, numDependencies, [&](NodeParams& p) {
      SIM_TRY(check_host(pNodeParams));
      p.type = musaGraphNodeTypeHost;
      p.host = *pNodeParams;
      return musaSuccess;
    });
  });
}

musaError_t musaGraphAddMemcpyNode(musaGraphNode_t* pGraphNode, musaGraph_t graph,
                                   const musaGraphNode_t* pDependencies, size_t numDependencies,
                                   const struct musaMemcpy3DParms* pCopyParams) {
  return api([&] {
    return add_with(pGraphNode, graph, pDependencies, numDependencies, [&](NodeParams& p) {
      SIM_TRY(check_copy(pCopyParams));
      p.type = musaGraphNodeTypeMemcpy;
      p.copy.p = *pCopyParams;
      return musaSuccess;
    });
  });
}

musaError_t musaGraphAddMemcpyNode1D(musaGraphNode_t* pGraphNode, musaGraph_t graph,
                                     const musaGraphNode_t* pDependencies, size_t numDependencies,
                                     void* dst, const void* src, size_t count,
                                     enum musaMemcpyKind kind) {
  return api([&] {
    const musaMemcpy3DParms c = copy_1d(dst, src, count, kind);
    return musaGraphAddMemcpyNode(pGraphNode, graph, pDependencies, numDependencies, &c);
  });
}

musaError_t musaGraphAddMemsetNode(musaGraphNode_t* pGraphNode, musaGraph_t graph,
                                   const musaGraphNode_t* pDependencies, size_t numDependencies,
                                   const struct musaMemsetParams* pMemsetParams) {
  return api([&] {
    return add_with(pGraphNode, graph, pDependencies, numDependencies, [&](NodeParams& p) {
      MemsetDesc m;
      SIM_TRY(check_memset(pMemsetParams, &m));
      p.type = musaGraphNodeTypeMemset;
      p.memset = m;
      return musaSuccess;
    });
  });
}

musaError_t musaGraphAddChildGraphNode(musaGraphNode_t* pGraphNode, musaGraph_t graph,
                                       const musaGraphNode_t* pDependencies, size_t numDependencies,
                                       musaGraph_t childGraph) {
  return api([&] {
    return add_with(pGraphNode, graph, pDependencies, numDependencies, [&](NodeParams& p) {
      if (!graph_ok(childGraph) || childGraph == graph) return musaErrorInvalidValue;
      p.type = musaGraphNodeTypeGraph;
      p.child = clone_graph(*childGraph);
      p.child->is_child = true;
      return musaSuccess;
    });
  });
}

musaError_t musaGraphAddEventRecordNode(musaGraphNode_t* pGraphNode, musaGraph_t graph,
                                        const musaGraphNode_t* pDependencies,
                                        size_t numDependencies, musaEvent_t event) {
  return api([&] {
    return add_with(pGraphNode, graph, pDependencies, numDependencies, [&](NodeParams& p) {
      if (!event_ok(event)) return musaErrorInvalidResourceHandle;
      p.type = musaGraphNodeTypeEventRecord;
      p.event = event;
      return musaSuccess;
    });
  });
}

musaError_t musaGraphAddEventWaitNode(musaGraphNode_t* pGraphNode, musaGraph_t graph,
                                      const musaGraphNode_t* pDependencies, size_t numDependencies,
                                      musaEvent_t event) {
  return api([&] {
    return add_with(pGraphNode, graph, pDependencies, numDependencies, [&](NodeParams& p) {
      if (!event_ok(event)) return musaErrorInvalidResourceHandle;
      p.type = musaGraphNodeTypeWaitEvent;
      p.event = event;
      return musaSuccess;
    });
  });
}

musaError_t musaGraphChildGraphNodeGetGraph(musaGraphNode_t node, musaGraph_t* pGraph) {
  return api([&] {
    if (pGraph == nullptr) return musaErrorInvalidValue;
    return node_of(node, musaGraphNodeTypeGraph, [&](MUgraphNode_st& n) {
      *pGraph = n.p.child;
      return musaSuccess;
    });
  });
}

namespace {
// Event record and event wait nodes hold one event each; only the node type differs.
musaError_t get_node_event(musaGraphNode_t node, musaGraphNodeType type, musaEvent_t* event_out) {
  return api([&] {
    if (event_out == nullptr) return musaErrorInvalidValue;
    return node_of(node, type, [&](MUgraphNode_st& n) {
      *event_out = n.p.event;
      return musaSuccess;
    });
  });
}
musaError_t set_node_event(musaGraphNode_t node, musaGraphNodeType type, musaEvent_t event) {
  return api([&] {
    return node_of(node, type, [&](MUgraphNode_st& n) {
      if (!event_ok(event)) return musaErrorInvalidResourceHandle;
      n.p.event = event;
      return musaSuccess;
    });
  });
}
}  // namespace

musaError_t musaGraphEventRecordNodeGetEvent(musaGraphNode_t node, musaEvent_t* event_out) {
  return get_node_event(node, musaGraphNodeTypeEventRecord, event_out);
}
musaError_t musaGraphEventRecordNodeSetEvent(musaGraphNode_t node, musaEvent_t event) {
  return set_node_event(node, musaGraphNodeTypeEventRecord, event);
}
musaError_t musaGraphEventWaitNodeGetEvent(musaGraphNode_t node, musaEvent_t* event_out) {
  return get_node_event(node, musaGraphNodeTypeWaitEvent, event_out);
}
musaError_t musaGraphEventWaitNodeSetEvent(musaGraphNode_t node, musaEvent_t event) {
  return set_node_event(node, musaGraphNodeTypeWaitEvent, event);
}

musaError_t musaGraphHostNodeGetParams(musaGraphNode_t node, struct musaHostNodeParams* out) {
  return api([&] {
    if (out == nullptr) return musaErrorInvalidValue;
    return node_of(node, musaGraphNodeTypeHost, [&](MUgraphNode_st& n) {
      *out = n.p.host;
      return musaSuccess;
    });
  });
}

musaError_t musaGraphHostNodeSetParams(musaGraphNode_t node, const struct musaHostNodeParams* p) {
  return api([&] {
    return node_of(node, musaGraphNodeTypeHost, [&](MUgraphNode_st& n) {
      SIM_TRY(check_host(p));
      n.p.host = *p;
      return musaSuccess;
    });
  });
}

musaError_t musaGraphMemcpyNodeGetParams(musaGraphNode_t node, struct musaMemcpy3DParms* out) {
  return api([&] {
    if (out == nullptr) return musaErrorInvalidValue;
    return node_of(node, musaGraphNodeTypeMemcpy, [&](MUgraphNode_st& n) {
      *out = n.p.copy.p;
      return musaSuccess;
    });
  });
}

musaError_t musaGraphMemcpyNodeSetParams(musaGraphNode_t node, const struct musaMemcpy3DParms* p) {
  return api([&] {
    return node_of(node, musaGraphNodeTypeMemcpy, [&](MUgraphNode_st& n) {
      SIM_TRY(check_copy(p));
      n.p.copy.p = *p;
      n.p.copy.staging.reset();
      return musaSuccess;
    });
  });
}

musaError_t musaGraphMemcpyNodeSetParams1D(musaGraphNode_t node, void* dst, const void* src,
                                           size_t count, enum musaMemcpyKind kind) {
  return api([&] {
    const musaMemcpy3DParms c = copy_1d(dst, src, count, kind);
    return musaGraphMemcpyNodeSetParams(node, &c);
  });
}

musaError_t musaGraphMemsetNodeGetParams(musaGraphNode_t node, struct musaMemsetParams* out) {
  return api([&] {
    if (out == nullptr) return musaErrorInvalidValue;
    return node_of(node, musaGraphNodeTypeMemset, [&](MUgraphNode_st& n) {
      *out = to_params(n.p.memset);
      return musaSuccess;
    });
  });
}

musaError_t musaGraphMemsetNodeSetParams(musaGraphNode_t node, const struct musaMemsetParams* p) {
  return api([&] {
    return node_of(node, musaGraphNodeTypeMemset, [&](MUgraphNode_st& n) {
      MemsetDesc m;
      SIM_TRY(check_memset(p, &m));
      n.p.memset = m;
      return musaSuccess;
    });
  });
}

// ---- Graph queries ----------------------------------------------------------------------------

}  // extern "C"

namespace {

template <class Pred>
musaError_t list_nodes(musaGraph_t graph, musaGraphNode_t* out, size_t* num, Pred&& pred) {
  if (num == nullptr) return musaErrorInvalidValue;
  return locked([&] {
    if (!graph_ok(graph)) return musaErrorInvalidValue;
    std::vector<musaGraphNode_t> v;
    for (auto& n : graph->nodes)
      if (pred(*n)) v.push_back(n.get());
    if (out == nullptr) {
      *num = v.size();
      return musaSuccess;
    }
    for (size_t i = 0; i < *num; ++i) out[i] = i < v.size() ? v[i] : nullptr;
    *num = std::min(*num, v.size());
    return musaSuccess;
  });
}

musaError_t list_vec(const std::vector<MUgraphNode_st*>& v, musaGraphNode_t* out, size_t* num) {
  if (out == nullptr) {
    *num = v.size();
    return musaSuccess;
  }
  for (size_t i = 0; i < *num; ++i) out[i] = i < v.size() ? v[i] : nullptr;
  *num = std::min(*num, v.size());
  return musaSuccess;
}

}  // namespace

extern "C" {

musaError_t musaGraphGetNodes(musaGraph_t graph, musaGraphNode_t* nodes, size_t* numNodes) {
  return api([&] {
    return list_nodes(graph, nodes, numNodes, [](const MUgraphNode_st&) { return true; });
  });
}

musaError_t musaGraphGetRootNodes(musaGraph_t graph, musaGraphNode_t* roots, size_t* num) {
  return api([&] {
    return list_nodes(graph, roots, num, [](const MUgraphNode_st& n) { return n.deps.empty(); });
  });
}

musaError_t musaGraphGetEdges(musaGraph_t graph, musaGraphNode_t* from, musaGraphNode_t* to,
                              size_t* numEdges) {
  return api([&] {
    if (numEdges == nullptr || ((from == nullptr) != (to == nullptr))) return musaErrorInvalidValue;
    return locked([&] {
      if (!graph_ok(graph)) return musaErrorInvalidValue;
      std::vector<std::pair<musaGraphNode_t, musaGraphNode_t>> edges;
      for (auto& n : graph->nodes)
        for (auto* d : n->deps) edges.emplace_back(d, n.get());
      if (from == nullptr) {
        *numEdges = edges.size();
        return musaSuccess;
      }
      for (size_t i = 0; i < *numEdges; ++i) {
        from[i] = i < edges.size() ? edges[i].first : nullptr;
        to[i] = i < edges.size() ? edges[i].second : nullptr;
      }
      *numEdges = std::min(*numEdges, edges.size());
      return musaSuccess;
    });
  });
}

musaError_t musaGraphNodeGetType(musaGraphNode_t node, enum musaGraphNodeType* pType) {
  return api([&] {
    if (pType == nullptr) return musaErrorInvalidValue;
    return locked([&] {
      if (!node_ok(node)) return musaErrorInvalidValue;
      *pType = node->p.type;
      return musaSuccess;
    });
  });
}

musaError_t musaGraphNodeGetDependencies(musaGraphNode_t node, musaGraphNode_t* deps, size_t* num) {
  return api([&] {
    if (num == nullptr) return musaErrorInvalidValue;
    return locked([&] {
      if (!node_ok(node)) return musaErrorInvalidValue;
      return list_vec(node->deps, deps, num);
    });
  });
}

musaError_t musaGraphNodeGetDependentNodes(musaGraphNode_t node, musaGraphNode_t* out,
                                           size_t* num) {
  return api([&] {
    if (num == nullptr) return musaErrorInvalidValue;
    return locked([&] {
      if (!node_ok(node)) return musaErrorInvalidValue;
      return list_vec(node->dependents, out, num);
    });
  });
}

musaError_t musaGraphAddDependencies(musaGraph_t graph, const musaGraphNode_t* from,
                                     const musaGraphNode_t* to, size_t n) {
  return api([&] {
    if (n > 0 && (from == nullptr || to == nullptr)) return musaErrorInvalidValue;
    return locked([&] {
      if (!graph_ok(graph)) return musaErrorInvalidValue;
      for (size_t i = 0; i < n; ++i) {
        if (!node_ok(from[i]) || !node_ok(to[i]) || from[i]->graph != graph ||
            to[i]->graph != graph || from[i] == to[i])
          return musaErrorInvalidValue;
        auto& d = to[i]->deps;
        if (std::find(d.begin(), d.end(), from[i]) != d.end()) return musaErrorInvalidValue;
      }
      for (size_t i = 0; i < n; ++i) {
        to[i]->deps.push_back(from[i]);
        from[i]->dependents.push_back(to[i]);
      }
      return musaSuccess;
    });
  });
}

musaError_t musaGraphRemoveDependencies(musaGraph_t graph, const musaGraphNode_t* from,
                                        const musaGraphNode_t* to, size_t n) {
  return api([&] {
    if (n > 0 && (from == nullptr || to == nullptr)) return musaErrorInvalidValue;
    return locked([&] {
      if (!graph_ok(graph)) return musaErrorInvalidValue;
      for (size_t i = 0; i < n; ++i) {
        if (!node_ok(from[i]) || !node_ok(to[i]) || to[i]->graph != graph)
          return musaErrorInvalidValue;
        auto& d = to[i]->deps;
        if (std::find(d.begin(), d.end(), from[i]) == d.end()) return musaErrorInvalidValue;
      }
      for (size_t i = 0; i < n; ++i) {
        auto& d = to[i]->deps;
        d.erase(std::find(d.begin(), d.end(), from[i]));
        auto& e = from[i]->dependents;
        e.erase(std::find(e.begin(), e.end(), to[i]));
      }
      return musaSuccess;
    });
  });
}

musaError_t musaGraphDebugDotPrint(musaGraph_t graph, const char* path, unsigned int flags) {
  return api([&] {
    (void)flags;
    if (path == nullptr) return musaErrorInvalidValue;
    std::string out;
    musaError_t e = locked([&] {
      if (!graph_ok(graph)) return musaErrorInvalidValue;
      std::unordered_map<const MUgraphNode_st*, size_t> idx;
      for (size_t i = 0; i < graph->nodes.size(); ++i) idx[graph->nodes[i].get()] = i;
      out = "digraph musaGraph {\n  rankdir=TB;\n";
      char buf[256];
      for (size_t i = 0; i < graph->nodes.size(); ++i) {
        const MUgraphNode_st& n = *graph->nodes[i];
        std::snprintf(buf, sizeof(buf), "  node%zu [label=\"%zu: %s\"];\n", i, i,
                      type_name(n.p.type));
        out += buf;
      }
      for (size_t i = 0; i < graph->nodes.size(); ++i)
        for (auto* d : graph->nodes[i]->deps) {
          std::snprintf(buf, sizeof(buf), "  node%zu -> node%zu;\n", idx[d], i);
          out += buf;
        }
      out += "}\n";
      return musaSuccess;
    });
    SIM_TRY(e);
    std::FILE* f = std::fopen(path, "w");
    if (f == nullptr) return musaErrorOperatingSystem;
    const bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
    return (std::fclose(f) == 0 && ok) ? musaSuccess : musaErrorOperatingSystem;
  });
}

// ---- Executable graphs ------------------------------------------------------------------------

}  // extern "C"

namespace {

musaError_t instantiate(musaGraphExec_t* out, musaGraph_t graph, unsigned long long flags,
                        musaGraphNode_t* errNode, char* log, size_t logSize) {
  if (out == nullptr) return musaErrorInvalidValue;
  if ((flags & ~static_cast<unsigned long long>(musaGraphInstantiateFlagAutoFreeOnLaunch |
                                                musaGraphInstantiateFlagUseNodePriority)) != 0)
    return musaErrorInvalidValue;
  auto say = [&](const char* msg) {
    if (log != nullptr && logSize > 0) std::snprintf(log, logSize, "%s", msg);
  };
  if (errNode != nullptr) *errNode = nullptr;
  return locked([&] {
    if (!graph_ok(graph)) return musaErrorInvalidValue;
    auto x = std::make_unique<MUgraphExec_st>();
    auto plan = std::make_shared<std::vector<ExecNode>>();
    if (!build_plan(*graph, plan.get(), &x->order, &x->topo)) {
      say("graph contains a cycle");
      if (errNode != nullptr && !graph->nodes.empty()) *errNode = graph->nodes[0].get();
      return musaErrorInvalidValue;
    }
    std::vector<size_t> plan_index(graph->nodes.size());
    for (size_t k = 0; k < x->order.size(); ++k) plan_index[x->order[k]] = k;
    for (size_t i = 0; i < graph->nodes.size(); ++i) {
      x->index[graph->nodes[i].get()] = plan_index[i];
      x->types.push_back(graph->nodes[i]->p.type);
    }
    x->order = plan_index;
    x->plan = plan;
    x->flags = flags;
    x->user_objects = graph->user_objects;
    for (auto& kv : x->user_objects) retain_user_object(kv.first, kv.second);
    say("");
    MUgraphExec_st* raw = x.release();
    rt().execs.insert(raw);
    *out = raw;
    return musaSuccess;
  });
}

}  // namespace

extern "C" {

musaError_t musaGraphInstantiate(musaGraphExec_t* pGraphExec, musaGraph_t graph,
                                 musaGraphNode_t* pErrorNode, char* pLogBuffer, size_t bufferSize) {
  return api([&] { return instantiate(pGraphExec, graph, 0, pErrorNode, pLogBuffer, bufferSize); });
}

musaError_t musaGraphInstantiateWithFlags(musaGraphExec_t* pGraphExec, musaGraph_t graph,
                                          unsigned long long flags) {
  return api([&] { return instantiate(pGraphExec, graph, flags, nullptr, nullptr, 0); });
}

musaError_t musaGraphExecDestroy(musaGraphExec_t graphExec) {
  return api([&] {
    return locked([&] {
      if (!exec_ok(graphExec)) return musaErrorInvalidResourceHandle;
      rt().execs.erase(graphExec);
      for (auto& kv : graphExec->user_objects) release_user_object(kv.first, kv.second);
      delete graphExec;  // launches in flight keep their own copy of the plan
      return musaSuccess;
    });
  });
}

musaError_t musaGraphLaunch(musaGraphExec_t graphExec, musaStream_t stream) {
  return api([&] {
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(stream, &s));
    std::shared_ptr<const std::vector<ExecNode>> plan;
    SIM_TRY(locked([&] {
      if (!exec_ok(graphExec)) return musaErrorInvalidResourceHandle;
      if (s->capture && !s->capture->ended) return musaErrorStreamCaptureUnsupported;
      plan = graphExec->plan;
      return musaSuccess;
    }));
    auto waits = std::make_shared<std::vector<MarkerPtr>>();
    auto records =
        std::make_shared<std::vector<std::pair<std::shared_ptr<MUevent_st>, MarkerPtr>>>();
    collect_events(*plan, waits.get(), records.get());
    std::vector<MarkerPtr> deps;
    MarkerPtr done;
    SIM_TRY(submit(
        *s,
        [plan, waits, records] {
          size_t wi = 0, ri = 0;
          run_plan(*plan, *waits, *records, &wi, &ri);
        },
        {}, &done));
    for (auto& r : *records) {
      if (!r.first) continue;
      Lock lock(r.first->mu);
      r.first->marker = r.second;
    }
    return musaSuccess;
  });
}

musaError_t musaGraphUpload(musaGraphExec_t graphExec, musaStream_t stream) {
  return api([&] {
    std::shared_ptr<MUstream_st> s;
    SIM_TRY(resolve_stream(stream, &s));
    return locked(
        [&] { return exec_ok(graphExec) ? musaSuccess : musaErrorInvalidResourceHandle; });
  });
}

musaError_t musaGraphExecGetFlags(musaGraphExec_t graphExec, unsigned long long* flags) {
  return api([&] {
    if (flags == nullptr) return musaErrorInvalidValue;
    return locked([&] {
      if (!exec_ok(graphExec)) return musaErrorInvalidResourceHandle;
      *flags = graphExec->flags;
      return musaSuccess;
    });
  });
}

musaError_t musaGraphExecUpdate(musaGraphExec_t hGraphExec, musaGraph_t hGraph,
                                musaGraphNode_t* hErrorNode_out,
                                enum musaGraphExecUpdateResult* updateResult_out) {
  return api([&] {
    if (hErrorNode_out == nullptr || updateResult_out == nullptr) return musaErrorInvalidValue;
    *hErrorNode_out = nullptr;
    return locked([&] {
      if (!exec_ok(hGraphExec) || !graph_ok(hGraph)) return musaErrorInvalidValue;
      MUgraphExec_st& x = *hGraphExec;
      auto fail = [&](musaGraphExecUpdateResult r, MUgraphNode_st* n) {
        *updateResult_out = r;
        *hErrorNode_out = n;
        return musaErrorGraphExecUpdateFailure;
      };
      if (hGraph->nodes.size() != x.types.size())
        return fail(musaGraphExecUpdateErrorTopologyChanged, nullptr);
      auto plan = std::make_shared<std::vector<ExecNode>>();
      std::vector<size_t> order;
      std::vector<std::vector<size_t>> topo;
      if (!build_plan(*hGraph, plan.get(), &order, &topo))
        return fail(musaGraphExecUpdateErrorTopologyChanged, nullptr);
      for (size_t i = 0; i < hGraph->nodes.size(); ++i) {
        MUgraphNode_st* n = hGraph->nodes[i].get();
        if (n->p.type != x.types[i]) return fail(musaGraphExecUpdateErrorNodeTypeChanged, n);
        auto a = topo[i], b = x.topo[i];
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        if (a != b) return fail(musaGraphExecUpdateErrorTopologyChanged, n);
      }
      // Same topology: the new plan has the same order; keep the enabled state.
      for (size_t i = 0; i < plan->size(); ++i) (*plan)[i].enabled = (*x.plan)[i].enabled;
      for (size_t i = 0; i < hGraph->nodes.size(); ++i)
        x.index[hGraph->nodes[i].get()] = x.order[i];
      x.plan = plan;
      *updateResult_out = musaGraphExecUpdateSuccess;
      return musaSuccess;
    });
  });
}

musaError_t musaGraphNodeSetEnabled(musaGraphExec_t hGraphExec, musaGraphNode_t hNode,
                                    unsigned int isEnabled) {
  return api([&] {
    return locked([&] {
      if (!node_ok(hNode)) return musaErrorInvalidValue;
      const musaGraphNodeType t = hNode->p.type;
      if (t != musaGraphNodeTypeMemcpy && t != musaGraphNodeTypeMemset &&
          t != musaGraphNodeTypeHost)
        return musaErrorInvalidValue;
      return edit_exec(hGraphExec, hNode, t, [&](ExecNode& e) {
        e.enabled = isEnabled != 0;
        return musaSuccess;
      });
    });
  });
}

musaError_t musaGraphNodeGetEnabled(musaGraphExec_t hGraphExec, musaGraphNode_t hNode,
                                    unsigned int* isEnabled) {
  return api([&] {
    if (isEnabled == nullptr) return musaErrorInvalidValue;
    return locked([&] {
      if (!exec_ok(hGraphExec)) return musaErrorInvalidResourceHandle;
      if (!node_ok(hNode)) return musaErrorInvalidValue;
      auto it = hGraphExec->index.find(hNode);
      if (it == hGraphExec->index.end()) return musaErrorInvalidValue;
      *isEnabled = (*hGraphExec->plan)[it->second].enabled ? 1 : 0;
      return musaSuccess;
    });
  });
}

musaError_t musaGraphExecHostNodeSetParams(musaGraphExec_t hGraphExec, musaGraphNode_t node,
                                           const struct musaHostNodeParams* p) {
  return api([&] {
    SIM_TRY(check_host(p));
    return locked([&] {
      return edit_exec(hGraphExec, node, musaGraphNodeTypeHost, [&](ExecNode& e) {
        e.p.host = *p;
        return musaSuccess;
      });
    });
  });
}

musaError_t musaGraphExecMemcpyNodeSetParams(musaGraphExec_t hGraphExec, musaGraphNode_t node,
                                             const struct musaMemcpy3DParms* p) {
  return api([&] {
    SIM_TRY(check_copy(p));
    return locked([&] {
      return edit_exec(hGraphExec, node, musaGraphNodeTypeMemcpy, [&](ExecNode& e) {
        e.p.copy.p = *p;
        e.p.copy.staging.reset();
        return musaSuccess;
      });
    });
  });
}

musaError_t musaGraphExecMemcpyNodeSetParams1D(musaGraphExec_t hGraphExec, musaGraphNode_t node,
                                               void* dst, const void* src, size_t count,
                                               enum musaMemcpyKind kind) {
  return api([&] {
    const musaMemcpy3DParms c = copy_1d(dst, src, count, kind);
    return musaGraphExecMemcpyNodeSetParams(hGraphExec, node, &c);
  });
}

musaError_t musaGraphExecMemsetNodeSetParams(musaGraphExec_t hGraphExec, musaGraphNode_t node,
                                             const struct musaMemsetParams* p) {
  return api([&] {
    MemsetDesc m;
    SIM_TRY(check_memset(p, &m));
    return locked([&] {
      return edit_exec(hGraphExec, node, musaGraphNodeTypeMemset, [&](ExecNode& e) {
        e.p.memset = m;
        return musaSuccess;
      });
    });
  });
}

musaError_t musaGraphExecChildGraphNodeSetParams(musaGraphExec_t hGraphExec, musaGraphNode_t node,
                                                 musaGraph_t childGraph) {
  return api([&] {
    return locked([&] {
      if (!graph_ok(childGraph)) return musaErrorInvalidValue;
      std::vector<ExecNode> child;
      std::vector<size_t> order;
      std::vector<std::vector<size_t>> topo;
      if (!build_plan(*childGraph, &child, &order, &topo)) return musaErrorInvalidValue;
      return edit_exec(hGraphExec, node, musaGraphNodeTypeGraph, [&](ExecNode& e) {
        if (e.child.size() != child.size()) return musaErrorGraphExecUpdateFailure;
        for (size_t i = 0; i < child.size(); ++i)
          if (e.child[i].p.type != child[i].p.type) return musaErrorGraphExecUpdateFailure;
        e.child = std::move(child);
        return musaSuccess;
      });
    });
  });
}

musaError_t musaGraphExecEventRecordNodeSetEvent(musaGraphExec_t hGraphExec, musaGraphNode_t hNode,
                                                 musaEvent_t event) {
  return api([&] {
    if (!event_ok(event)) return musaErrorInvalidResourceHandle;
    return locked([&] {
      return edit_exec(hGraphExec, hNode, musaGraphNodeTypeEventRecord, [&](ExecNode& e) {
        e.p.event = event;
        return musaSuccess;
      });
    });
  });
}

musaError_t musaGraphExecEventWaitNodeSetEvent(musaGraphExec_t hGraphExec, musaGraphNode_t hNode,
                                               musaEvent_t event) {
  return api([&] {
    if (!event_ok(event)) return musaErrorInvalidResourceHandle;
    return locked([&] {
      return edit_exec(hGraphExec, hNode, musaGraphNodeTypeWaitEvent, [&](ExecNode& e) {
        e.p.event = event;
        return musaSuccess;
      });
    });
  });
}

}  // extern "C"
