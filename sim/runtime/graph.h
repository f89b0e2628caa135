// Internal graph structures: nodes, graphs, executable graphs, user objects and stream capture.
// Everything here is guarded by Runtime::graph_mu.
#ifndef TORCHADA_SIM_RUNTIME_GRAPH_H
#define TORCHADA_SIM_RUNTIME_GRAPH_H

#include "executor.h"
#include "state.h"

#include <map>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

namespace sim {

struct NodeParams {
  musaGraphNodeType type = musaGraphNodeTypeEmpty;
  CopyDesc copy;
  MemsetDesc memset;
  musaHostNodeParams host{};
  MUevent_st* event = nullptr;
  MUgraph_st* child = nullptr;  // for graph nodes: the child graph, owned by the node
  std::shared_ptr<const KernelLaunch> kernel;  // kernel nodes: a captured musaSimLaunchKernel
};

struct Capture {
  unsigned long long id = 0;
  musaStreamCaptureMode mode = musaStreamCaptureModeGlobal;
  bool invalidated = false;
  bool ended = false;
  MUgraph_st* graph = nullptr;
  bool user_graph = false;  // musaStreamBeginCaptureToGraph: the caller owns the graph
  MUstream_st* origin = nullptr;
  std::thread::id thread;
  std::vector<MUstream_st*> streams;
  std::vector<std::shared_ptr<MUstream_st>> keep;  // streams stay alive while capturing
};

}  // namespace sim

struct MUgraphNode_st {
  MUgraph_st* graph = nullptr;
  sim::NodeParams p;
  std::vector<MUgraphNode_st*> deps;
  std::vector<MUgraphNode_st*> dependents;
};

struct MUgraph_st {
  std::vector<std::unique_ptr<MUgraphNode_st>> nodes;
  std::unordered_map<const MUgraphNode_st*, MUgraphNode_st*> clone_of;  // original -> clone
  std::map<MUuserObject_st*, unsigned> user_objects;
  bool is_child = false;
  ~MUgraph_st();
};

struct MUuserObject_st {
  std::atomic<unsigned> refs{0};
  void* ptr = nullptr;
  musaHostFn_t destroy = nullptr;
};

namespace sim {

struct ExecNode {
  NodeParams p;                 // p.child unused; children are in `child`
  std::vector<ExecNode> child;  // flattened child graph, topological order
  bool enabled = true;
};

}  // namespace sim

struct MUgraphExec_st {
  std::shared_ptr<const std::vector<sim::ExecNode>> plan;   // copy-on-write, topological order
  std::unordered_map<const MUgraphNode_st*, size_t> index;  // graph node -> plan index
  std::vector<int> types;                                   // source graph order
  std::vector<std::vector<size_t>> topo;                    // deps by source index
  std::vector<size_t> order;                                // source index -> plan index
  unsigned long long flags = 0;
  std::map<MUuserObject_st*, unsigned> user_objects;
};

namespace sim {

void release_user_object(MUuserObject_st* o, unsigned count);  // under graph_mu
MUgraph_st* clone_graph(const MUgraph_st& g);                  // registers the new graph
void destroy_graph(MUgraph_st* g);                             // unregisters recursively

}  // namespace sim

#endif  // TORCHADA_SIM_RUNTIME_GRAPH_H
