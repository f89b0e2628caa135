// Graph and capture calls whose CUDA 12.3+/13 forms carry edge data or result structs that MUSA's
// CUDA 11/12.0-style API does not: default edges are expressed, anything else is refused.
#include <cstring>

#include "abi/impl.h"
#include "core/log.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

bool default_edges(const cudaGraphEdgeData* edges, size_t n) {
  if (edges == nullptr) return true;
  static const cudaGraphEdgeData kDefault{};
  for (size_t i = 0; i < n; ++i)
    if (std::memcmp(&edges[i], &kDefault, sizeof kDefault) != 0) return false;
  return true;
}

cudaError_t refuse_edges(const char* what) {
  TORCHADA_LOG(kWarn,
               "%s: non-default graph edge data (programmatic dependent launch ports) has "
               "no MUSA counterpart",
               what);
  return fail(cudaErrorNotSupported);
}

void zero_edges(cudaGraphEdgeData* edges, size_t n) {
  if (edges) std::memset(static_cast<void*>(edges), 0, n * sizeof *edges);
}

}  // namespace

namespace impl {

cudaError_t TORCHADA_V2(cudaGraphAddDependencies)(cudaGraph_t graph, const cudaGraphNode_t* from,
                                                  const cudaGraphNode_t* to,
                                                  const cudaGraphEdgeData* edgeData,
                                                  size_t numDependencies) {
  if (!default_edges(edgeData, numDependencies)) return refuse_edges("cudaGraphAddDependencies");
  TORCHADA_MUSA_OR_RETURN(TORCHADA_V2(cudaGraphAddDependencies), musaGraphAddDependencies);
  return fail(to_cuda_error(
      musaGraphAddDependencies(convert<musaGraph_t>(graph), convert<const musaGraphNode_t*>(from),
                               convert<const musaGraphNode_t*>(to), numDependencies)));
}

cudaError_t TORCHADA_V2(cudaGraphRemoveDependencies)(cudaGraph_t graph, const cudaGraphNode_t* from,
                                                     const cudaGraphNode_t* to,
                                                     const cudaGraphEdgeData* edgeData,
                                                     size_t numDependencies) {
  if (!default_edges(edgeData, numDependencies)) return refuse_edges("cudaGraphRemoveDependencies");
  TORCHADA_MUSA_OR_RETURN(TORCHADA_V2(cudaGraphRemoveDependencies), musaGraphRemoveDependencies);
  return fail(to_cuda_error(musaGraphRemoveDependencies(
      convert<musaGraph_t>(graph), convert<const musaGraphNode_t*>(from),
      convert<const musaGraphNode_t*>(to), numDependencies)));
}

cudaError_t TORCHADA_V2(cudaGraphGetEdges)(cudaGraph_t graph, cudaGraphNode_t* from,
                                           cudaGraphNode_t* to, cudaGraphEdgeData* edgeData,
                                           size_t* numEdges) {
  TORCHADA_MUSA_OR_RETURN(TORCHADA_V2(cudaGraphGetEdges), musaGraphGetEdges);
  size_t capacity = numEdges ? *numEdges : 0;
  cudaError_t r =
      to_cuda_error(musaGraphGetEdges(convert<musaGraph_t>(graph), convert<musaGraphNode_t*>(from),
                                      convert<musaGraphNode_t*>(to), numEdges));
  if (r == cudaSuccess && from != nullptr)
    zero_edges(edgeData, capacity < *numEdges ? capacity : *numEdges);
  return fail(r);
}

cudaError_t TORCHADA_V2(cudaGraphNodeGetDependencies)(cudaGraphNode_t node,
                                                      cudaGraphNode_t* pDependencies,
                                                      cudaGraphEdgeData* edgeData,
                                                      size_t* pNumDependencies) {
  TORCHADA_MUSA_OR_RETURN(TORCHADA_V2(cudaGraphNodeGetDependencies), musaGraphNodeGetDependencies);
  size_t capacity = pNumDependencies ? *pNumDependencies : 0;
  cudaError_t r = to_cuda_error(musaGraphNodeGetDependencies(
      convert<musaGraphNode_t>(node), convert<musaGraphNode_t*>(pDependencies), pNumDependencies));
  if (r == cudaSuccess && pDependencies != nullptr)
    zero_edges(edgeData, capacity < *pNumDependencies ? capacity : *pNumDependencies);
  return fail(r);
}

cudaError_t TORCHADA_V2(cudaGraphNodeGetDependentNodes)(cudaGraphNode_t node,
                                                        cudaGraphNode_t* pDependentNodes,
                                                        cudaGraphEdgeData* edgeData,
                                                        size_t* pNumDependentNodes) {
  TORCHADA_MUSA_OR_RETURN(TORCHADA_V2(cudaGraphNodeGetDependentNodes),
                          musaGraphNodeGetDependentNodes);
  size_t capacity = pNumDependentNodes ? *pNumDependentNodes : 0;
  cudaError_t r = to_cuda_error(musaGraphNodeGetDependentNodes(
      convert<musaGraphNode_t>(node), convert<musaGraphNode_t*>(pDependentNodes),
      pNumDependentNodes));
  if (r == cudaSuccess && pDependentNodes != nullptr)
    zero_edges(edgeData, capacity < *pNumDependentNodes ? capacity : *pNumDependentNodes);
  return fail(r);
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                 unsigned long long flags) {
  TORCHADA_MUSA_OR_RETURN(cudaGraphInstantiate, musaGraphInstantiateWithFlags);
  return fail(to_cuda_error(musaGraphInstantiateWithFlags(convert<musaGraphExec_t*>(pGraphExec),
                                                          convert<musaGraph_t>(graph), flags)));
}

cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                           cudaGraphInstantiateParams* instantiateParams) {
  if (instantiateParams == nullptr) return fail(cudaErrorInvalidValue);
  TORCHADA_MUSA_OR_RETURN(cudaGraphInstantiateWithParams, musaGraphInstantiateWithFlags);
  instantiateParams->errNode_out = nullptr;
  if (instantiateParams->flags & cudaGraphInstantiateFlagUpload) {
    // Upload is an optimisation; instantiating without it is correct.
    instantiateParams->flags &= ~static_cast<unsigned long long>(cudaGraphInstantiateFlagUpload);
  }
  cudaError_t r = to_cuda_error(musaGraphInstantiateWithFlags(convert<musaGraphExec_t*>(pGraphExec),
                                                              convert<musaGraph_t>(graph),
                                                              instantiateParams->flags));
  instantiateParams->result_out =
      r == cudaSuccess ? cudaGraphInstantiateSuccess : cudaGraphInstantiateError;
  return fail(r);
}
cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                                cudaGraphInstantiateParams* instantiateParams) {
  return impl::cudaGraphInstantiateWithParams(pGraphExec, graph, instantiateParams);
}

cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                cudaGraphExecUpdateResultInfo* resultInfo) {
  if (resultInfo == nullptr) return fail(cudaErrorInvalidValue);
  TORCHADA_MUSA_OR_RETURN(cudaGraphExecUpdate, musaGraphExecUpdate);
  musaGraphNode_t error_node = nullptr;
  enum musaGraphExecUpdateResult result = musaGraphExecUpdateSuccess;
  cudaError_t r = to_cuda_error(musaGraphExecUpdate(
      convert<musaGraphExec_t>(hGraphExec), convert<musaGraph_t>(hGraph), &error_node, &result));
  std::memset(static_cast<void*>(resultInfo), 0, sizeof *resultInfo);
  resultInfo->result = static_cast<enum cudaGraphExecUpdateResult>(static_cast<int>(result));
  resultInfo->errorNode = reinterpret_cast<cudaGraphNode_t>(error_node);
  return fail(r);
}

cudaError_t TORCHADA_CAPTURE_INFO(cudaStream_t stream,
                                  enum cudaStreamCaptureStatus* captureStatus_out,
                                  unsigned long long* id_out, cudaGraph_t* graph_out,
                                  const cudaGraphNode_t** dependencies_out,
                                  const cudaGraphEdgeData** edgeData_out,
                                  size_t* numDependencies_out) {
  TORCHADA_MUSA_OR_RETURN(TORCHADA_CAPTURE_INFO, musaStreamGetCaptureInfo_v2);
  static_assert(Pair<enum cudaStreamCaptureStatus>::kIdentical);
  if (edgeData_out) *edgeData_out = nullptr;  // null means "all default edges"
  return fail(to_cuda_error(musaStreamGetCaptureInfo_v2(
      convert<musaStream_t>(stream), convert<enum musaStreamCaptureStatus*>(captureStatus_out),
      id_out, convert<musaGraph_t*>(graph_out), convert<const musaGraphNode_t**>(dependencies_out),
      numDependencies_out)));
}
cudaError_t TORCHADA_CAPTURE_INFO_PTSZ(cudaStream_t stream,
                                       enum cudaStreamCaptureStatus* captureStatus_out,
                                       unsigned long long* id_out, cudaGraph_t* graph_out,
                                       const cudaGraphNode_t** dependencies_out,
                                       const cudaGraphEdgeData** edgeData_out,
                                       size_t* numDependencies_out) {
  return impl::TORCHADA_CAPTURE_INFO(per_thread(stream), captureStatus_out, id_out, graph_out,
                                     dependencies_out, edgeData_out, numDependencies_out);
}

cudaError_t TORCHADA_V2(cudaStreamUpdateCaptureDependencies)(
    cudaStream_t stream, cudaGraphNode_t* dependencies, const cudaGraphEdgeData* dependencyData,
    size_t numDependencies, unsigned int flags) {
  if (!default_edges(dependencyData, numDependencies))
    return refuse_edges("cudaStreamUpdateCaptureDependencies");
  TORCHADA_MUSA_OR_RETURN(TORCHADA_V2(cudaStreamUpdateCaptureDependencies),
                          musaStreamUpdateCaptureDependencies);
  return fail(to_cuda_error(musaStreamUpdateCaptureDependencies(
      convert<musaStream_t>(stream), convert<musaGraphNode_t*>(dependencies), numDependencies,
      flags)));
}
cudaError_t TORCHADA_V2_PTSZ(cudaStreamUpdateCaptureDependencies)(
    cudaStream_t stream, cudaGraphNode_t* dependencies, const cudaGraphEdgeData* dependencyData,
    size_t numDependencies, unsigned int flags) {
  return impl::TORCHADA_V2(cudaStreamUpdateCaptureDependencies)(
      per_thread(stream), dependencies, dependencyData, numDependencies, flags);
}

// musa-abi.md: MUSA may lack musaThreadExchangeStreamCaptureMode (torch_musa stubs it). Use it
// when the runtime has it; otherwise keep the mode per thread here. The mode only decides which
// unsafe calls a capture rejects, so keeping it locally relaxes checking, never correctness.
cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode* mode) {
  if (mode == nullptr) return fail(cudaErrorInvalidValue);
  if (auto f = musart().musaThreadExchangeStreamCaptureMode) {
    static_assert(Pair<enum cudaStreamCaptureMode>::kIdentical);
    return fail(to_cuda_error(f(reinterpret_cast<enum musaStreamCaptureMode*>(mode))));
  }
  thread_local enum cudaStreamCaptureMode t_mode = cudaStreamCaptureModeGlobal;
  enum cudaStreamCaptureMode previous = t_mode;
  t_mode = *mode;
  *mode = previous;
  return cudaSuccess;
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
