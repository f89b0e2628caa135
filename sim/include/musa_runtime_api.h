/* torchada: the project's own declaration of the MUSA runtime API (libmusart), as implemented by
 * the CPU simulator in sim/runtime. Signatures are CUDA 12's, mechanically renamed, except where
 * shared/musa-abi.md records a different MUSA form:
 *   - musaGraphInstantiate: CUDA 11 five-argument form (error node, log buffer);
 *   - musaGraphExecUpdate: CUDA 11 four-argument form (error node, result);
 *   - dependency functions and musaStreamBeginCaptureToGraph: no edge data;
 *   - musaStreamGetCaptureInfo_v2 only (no three-argument musaStreamGetCaptureInfo).
 * No default arguments, so it is usable from C.
 */
#ifndef TORCHADA_SIM_MUSA_RUNTIME_API_H
#define TORCHADA_SIM_MUSA_RUNTIME_API_H

#include <stddef.h>

#include "musa_types.h"

#if defined(__GNUC__)
#define MUSA_RT_API __attribute__((visibility("default")))
#else
#define MUSA_RT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Device management */
MUSA_RT_API musaError_t musaGetDeviceCount(int* count);
MUSA_RT_API musaError_t musaSetDevice(int device);
MUSA_RT_API musaError_t musaGetDevice(int* device);
MUSA_RT_API musaError_t musaDeviceSynchronize(void);
MUSA_RT_API musaError_t musaDeviceReset(void);
MUSA_RT_API musaError_t musaSetDeviceFlags(unsigned int flags);
MUSA_RT_API musaError_t musaGetDeviceFlags(unsigned int* flags);
MUSA_RT_API musaError_t musaInitDevice(int device, unsigned int deviceFlags, unsigned int flags);
MUSA_RT_API musaError_t musaSetValidDevices(int* device_arr, int len);
MUSA_RT_API musaError_t musaGetDeviceProperties(struct musaDeviceProp* prop, int device);
MUSA_RT_API musaError_t musaDeviceGetAttribute(int* value, enum musaDeviceAttr attr, int device);
MUSA_RT_API musaError_t musaDeviceGetLimit(size_t* pValue, enum musaLimit limit);
MUSA_RT_API musaError_t musaDeviceSetLimit(enum musaLimit limit, size_t value);
MUSA_RT_API musaError_t musaDeviceGetCacheConfig(enum musaFuncCache* pCacheConfig);
MUSA_RT_API musaError_t musaDeviceSetCacheConfig(enum musaFuncCache cacheConfig);
MUSA_RT_API musaError_t musaDeviceGetSharedMemConfig(enum musaSharedMemConfig* pConfig);
MUSA_RT_API musaError_t musaDeviceSetSharedMemConfig(enum musaSharedMemConfig config);
MUSA_RT_API musaError_t musaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority);
MUSA_RT_API musaError_t musaDeviceGetPCIBusId(char* pciBusId, int len, int device);
MUSA_RT_API musaError_t musaDeviceGetByPCIBusId(int* device, const char* pciBusId);
MUSA_RT_API musaError_t musaDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice);
MUSA_RT_API musaError_t musaDeviceEnablePeerAccess(int peerDevice, unsigned int flags);
MUSA_RT_API musaError_t musaDeviceDisablePeerAccess(int peerDevice);
MUSA_RT_API musaError_t musaDeviceGetP2PAttribute(int* value, enum musaDeviceP2PAttr attr,
                                                  int srcDevice, int dstDevice);
MUSA_RT_API musaError_t musaCtxResetPersistingL2Cache(void);

/* ---- Errors and versions */
MUSA_RT_API musaError_t musaGetLastError(void);
MUSA_RT_API musaError_t musaPeekAtLastError(void);
MUSA_RT_API const char* musaGetErrorName(musaError_t error);
MUSA_RT_API const char* musaGetErrorString(musaError_t error);
MUSA_RT_API musaError_t musaRuntimeGetVersion(int* runtimeVersion);
MUSA_RT_API musaError_t musaDriverGetVersion(int* driverVersion);

/* ---- Memory */
MUSA_RT_API musaError_t musaMalloc(void** devPtr, size_t size);
MUSA_RT_API musaError_t musaFree(void* devPtr);
MUSA_RT_API musaError_t musaMallocHost(void** ptr, size_t size);
MUSA_RT_API musaError_t musaFreeHost(void* ptr);
MUSA_RT_API musaError_t musaHostAlloc(void** pHost, size_t size, unsigned int flags);
MUSA_RT_API musaError_t musaHostRegister(void* ptr, size_t size, unsigned int flags);
MUSA_RT_API musaError_t musaHostUnregister(void* ptr);
MUSA_RT_API musaError_t musaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags);
MUSA_RT_API musaError_t musaHostGetFlags(unsigned int* pFlags, void* pHost);
MUSA_RT_API musaError_t musaMallocManaged(void** devPtr, size_t size, unsigned int flags);
MUSA_RT_API musaError_t musaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height);
MUSA_RT_API musaError_t musaMalloc3D(struct musaPitchedPtr* pitchedDevPtr,
                                     struct musaExtent extent);
MUSA_RT_API musaError_t musaMemGetInfo(size_t* free, size_t* total);
MUSA_RT_API musaError_t musaMemcpy(void* dst, const void* src, size_t count,
                                   enum musaMemcpyKind kind);
MUSA_RT_API musaError_t musaMemcpyAsync(void* dst, const void* src, size_t count,
                                        enum musaMemcpyKind kind, musaStream_t stream);
MUSA_RT_API musaError_t musaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch,
                                     size_t width, size_t height, enum musaMemcpyKind kind);
MUSA_RT_API musaError_t musaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                                          size_t width, size_t height, enum musaMemcpyKind kind,
                                          musaStream_t stream);
MUSA_RT_API musaError_t musaMemcpy3D(const struct musaMemcpy3DParms* p);
MUSA_RT_API musaError_t musaMemcpy3DAsync(const struct musaMemcpy3DParms* p, musaStream_t stream);
MUSA_RT_API musaError_t musaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice,
                                       size_t count);
MUSA_RT_API musaError_t musaMemcpyPeerAsync(void* dst, int dstDevice, const void* src,
                                            int srcDevice, size_t count, musaStream_t stream);
MUSA_RT_API musaError_t musaMemcpy3DPeer(const struct musaMemcpy3DPeerParms* p);
MUSA_RT_API musaError_t musaMemcpy3DPeerAsync(const struct musaMemcpy3DPeerParms* p,
                                              musaStream_t stream);
MUSA_RT_API musaError_t musaMemset(void* devPtr, int value, size_t count);
MUSA_RT_API musaError_t musaMemsetAsync(void* devPtr, int value, size_t count, musaStream_t stream);
MUSA_RT_API musaError_t musaMemset2D(void* devPtr, size_t pitch, int value, size_t width,
                                     size_t height);
MUSA_RT_API musaError_t musaMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width,
                                          size_t height, musaStream_t stream);
MUSA_RT_API musaError_t musaMemset3D(struct musaPitchedPtr pitchedDevPtr, int value,
                                     struct musaExtent extent);
MUSA_RT_API musaError_t musaMemset3DAsync(struct musaPitchedPtr pitchedDevPtr, int value,
                                          struct musaExtent extent, musaStream_t stream);
MUSA_RT_API musaError_t musaPointerGetAttributes(struct musaPointerAttributes* attributes,
                                                 const void* ptr);
MUSA_RT_API musaError_t musaMemAdvise(const void* devPtr, size_t count,
                                      enum musaMemoryAdvise advice, int device);
MUSA_RT_API musaError_t musaMemPrefetchAsync(const void* devPtr, size_t count, int dstDevice,
                                             musaStream_t stream);
MUSA_RT_API musaError_t musaMemRangeGetAttribute(void* data, size_t dataSize,
                                                 enum musaMemRangeAttribute attribute,
                                                 const void* devPtr, size_t count);
MUSA_RT_API musaError_t musaMemRangeGetAttributes(void** data, size_t* dataSizes,
                                                  enum musaMemRangeAttribute* attributes,
                                                  size_t numAttributes, const void* devPtr,
                                                  size_t count);
MUSA_RT_API musaError_t musaStreamAttachMemAsync(musaStream_t stream, void* devPtr, size_t length,
                                                 unsigned int flags);

/* ---- Streams and stream capture */
MUSA_RT_API musaError_t musaStreamCreate(musaStream_t* pStream);
MUSA_RT_API musaError_t musaStreamCreateWithFlags(musaStream_t* pStream, unsigned int flags);
MUSA_RT_API musaError_t musaStreamCreateWithPriority(musaStream_t* pStream, unsigned int flags,
                                                     int priority);
MUSA_RT_API musaError_t musaStreamDestroy(musaStream_t stream);
MUSA_RT_API musaError_t musaStreamSynchronize(musaStream_t stream);
MUSA_RT_API musaError_t musaStreamQuery(musaStream_t stream);
MUSA_RT_API musaError_t musaStreamWaitEvent(musaStream_t stream, musaEvent_t event,
                                            unsigned int flags);
MUSA_RT_API musaError_t musaStreamAddCallback(musaStream_t stream, musaStreamCallback_t callback,
                                              void* userData, unsigned int flags);
MUSA_RT_API musaError_t musaLaunchHostFunc(musaStream_t stream, musaHostFn_t fn, void* userData);
MUSA_RT_API musaError_t musaStreamGetFlags(musaStream_t hStream, unsigned int* flags);
MUSA_RT_API musaError_t musaStreamGetPriority(musaStream_t hStream, int* priority);
MUSA_RT_API musaError_t musaStreamGetDevice(musaStream_t hStream, int* device);
MUSA_RT_API musaError_t musaStreamGetId(musaStream_t hStream, unsigned long long* streamId);
MUSA_RT_API musaError_t musaStreamCopyAttributes(musaStream_t dst, musaStream_t src);
MUSA_RT_API musaError_t musaStreamBeginCapture(musaStream_t stream,
                                               enum musaStreamCaptureMode mode);
MUSA_RT_API musaError_t musaStreamBeginCaptureToGraph(musaStream_t stream, musaGraph_t graph,
                                                      const musaGraphNode_t* dependencies,
                                                      size_t numDependencies,
                                                      enum musaStreamCaptureMode mode);
MUSA_RT_API musaError_t musaStreamEndCapture(musaStream_t stream, musaGraph_t* pGraph);
MUSA_RT_API musaError_t musaStreamIsCapturing(musaStream_t stream,
                                              enum musaStreamCaptureStatus* pCaptureStatus);
MUSA_RT_API musaError_t musaStreamGetCaptureInfo_v2(musaStream_t stream,
                                                    enum musaStreamCaptureStatus* captureStatus_out,
                                                    unsigned long long* id_out,
                                                    musaGraph_t* graph_out,
                                                    const musaGraphNode_t** dependencies_out,
                                                    size_t* numDependencies_out);
MUSA_RT_API musaError_t musaStreamUpdateCaptureDependencies(musaStream_t stream,
                                                            musaGraphNode_t* dependencies,
                                                            size_t numDependencies,
                                                            unsigned int flags);
MUSA_RT_API musaError_t musaThreadExchangeStreamCaptureMode(enum musaStreamCaptureMode* mode);

/* ---- Events */
MUSA_RT_API musaError_t musaEventCreate(musaEvent_t* event);
MUSA_RT_API musaError_t musaEventCreateWithFlags(musaEvent_t* event, unsigned int flags);
MUSA_RT_API musaError_t musaEventDestroy(musaEvent_t event);
MUSA_RT_API musaError_t musaEventRecord(musaEvent_t event, musaStream_t stream);
MUSA_RT_API musaError_t musaEventRecordWithFlags(musaEvent_t event, musaStream_t stream,
                                                 unsigned int flags);
MUSA_RT_API musaError_t musaEventQuery(musaEvent_t event);
MUSA_RT_API musaError_t musaEventSynchronize(musaEvent_t event);
MUSA_RT_API musaError_t musaEventElapsedTime(float* ms, musaEvent_t start, musaEvent_t end);

/* ---- Inter-process sharing and profiler control */
MUSA_RT_API musaError_t musaIpcGetMemHandle(musaIpcMemHandle_t* handle, void* devPtr);
MUSA_RT_API musaError_t musaIpcOpenMemHandle(void** devPtr, musaIpcMemHandle_t handle,
                                             unsigned int flags);
MUSA_RT_API musaError_t musaIpcCloseMemHandle(void* devPtr);
MUSA_RT_API musaError_t musaIpcGetEventHandle(musaIpcEventHandle_t* handle, musaEvent_t event);
MUSA_RT_API musaError_t musaIpcOpenEventHandle(musaEvent_t* event, musaIpcEventHandle_t handle);
MUSA_RT_API musaError_t musaProfilerStart(void);
MUSA_RT_API musaError_t musaProfilerStop(void);

/* ---- User objects */
MUSA_RT_API musaError_t musaUserObjectCreate(musaUserObject_t* object_out, void* ptr,
                                             musaHostFn_t destroy, unsigned int initialRefcount,
                                             unsigned int flags);
MUSA_RT_API musaError_t musaUserObjectRetain(musaUserObject_t object, unsigned int count);
MUSA_RT_API musaError_t musaUserObjectRelease(musaUserObject_t object, unsigned int count);
MUSA_RT_API musaError_t musaGraphRetainUserObject(musaGraph_t graph, musaUserObject_t object,
                                                  unsigned int count, unsigned int flags);
MUSA_RT_API musaError_t musaGraphReleaseUserObject(musaGraph_t graph, musaUserObject_t object,
                                                   unsigned int count);

/* ---- Graphs */
MUSA_RT_API musaError_t musaGraphCreate(musaGraph_t* pGraph, unsigned int flags);
MUSA_RT_API musaError_t musaGraphDestroy(musaGraph_t graph);
MUSA_RT_API musaError_t musaGraphDestroyNode(musaGraphNode_t node);
MUSA_RT_API musaError_t musaGraphClone(musaGraph_t* pGraphClone, musaGraph_t originalGraph);
MUSA_RT_API musaError_t musaGraphNodeFindInClone(musaGraphNode_t* pNode,
                                                 musaGraphNode_t originalNode,
                                                 musaGraph_t clonedGraph);
MUSA_RT_API musaError_t musaGraphAddEmptyNode(musaGraphNode_t* pGraphNode, musaGraph_t graph,
                                              const musaGraphNode_t* pDependencies,
                                              size_t numDependencies);
MUSA_RT_API musaError_t musaGraphAddHostNode(musaGraphNode_t* pGraphNode, musaGraph_t graph,
                                             const musaGraphNode_t* pDependencies,
                                             size_t numDependencies,
                                             const struct musaHostNodeParams* pNodeParams);
MUSA_RT_API musaError_t musaGraphAddMemcpyNode(musaGraphNode_t* pGraphNode, musaGraph_t graph,
                                               const musaGraphNode_t* pDependencies,
                                               size_t numDependencies,
                                               const struct musaMemcpy3DParms* pCopyParams);
MUSA_RT_API musaError_t musaGraphAddMemcpyNode1D(musaGraphNode_t* pGraphNode, musaGraph_t graph,
                                                 const musaGraphNode_t* pDependencies,
                                                 size_t numDependencies, void* dst, const void* src,
                                                 size_t count, enum musaMemcpyKind kind);
MUSA_RT_API musaError_t musaGraphAddMemsetNode(musaGraphNode_t* pGraphNode, musaGraph_t graph,
                                               const musaGraphNode_t* pDependencies,
                                               size_t numDependencies,
                                               const struct musaMemsetParams* pMemsetParams);
MUSA_RT_API musaError_t musaGraphAddChildGraphNode(musaGraphNode_t* pGraphNode, musaGraph_t graph,
                                                   const musaGraphNode_t* pDependencies,
                                                   size_t numDependencies, musaGraph_t childGraph);
MUSA_RT_API musaError_t musaGraphAddEventRecordNode(musaGraphNode_t* pGraphNode, musaGraph_t graph,
                                                    const musaGraphNode_t* pDependencies,
                                                    size_t numDependencies, musaEvent_t event);
MUSA_RT_API musaError_t musaGraphAddEventWaitNode(musaGraphNode_t* pGraphNode, musaGraph_t graph,
                                                  const musaGraphNode_t* pDependencies,
                                                  size_t numDependencies, musaEvent_t event);
MUSA_RT_API musaError_t musaGraphChildGraphNodeGetGraph(musaGraphNode_t node, musaGraph_t* pGraph);
MUSA_RT_API musaError_t musaGraphEventRecordNodeGetEvent(musaGraphNode_t node,
                                                         musaEvent_t* event_out);
MUSA_RT_API musaError_t musaGraphEventRecordNodeSetEvent(musaGraphNode_t node, musaEvent_t event);
MUSA_RT_API musaError_t musaGraphEventWaitNodeGetEvent(musaGraphNode_t node,
                                                       musaEvent_t* event_out);
MUSA_RT_API musaError_t musaGraphEventWaitNodeSetEvent(musaGraphNode_t node, musaEvent_t event);
MUSA_RT_API musaError_t musaGraphHostNodeGetParams(musaGraphNode_t node,
                                                   struct musaHostNodeParams* pNodeParams);
MUSA_RT_API musaError_t musaGraphHostNodeSetParams(musaGraphNode_t node,
                                                   const struct musaHostNodeParams* pNodeParams);
MUSA_RT_API musaError_t musaGraphMemcpyNodeGetParams(musaGraphNode_t node,
                                                     struct musaMemcpy3DParms* pNodeParams);
MUSA_RT_API musaError_t musaGraphMemcpyNodeSetParams(musaGraphNode_t node,
                                                     const struct musaMemcpy3DParms* pNodeParams);
MUSA_RT_API musaError_t musaGraphMemcpyNodeSetParams1D(musaGraphNode_t node, void* dst,
                                                       const void* src, size_t count,
                                                       enum musaMemcpyKind kind);
MUSA_RT_API musaError_t musaGraphMemsetNodeGetParams(musaGraphNode_t node,
                                                     struct musaMemsetParams* pNodeParams);
MUSA_RT_API musaError_t musaGraphMemsetNodeSetParams(musaGraphNode_t node,
                                                     const struct musaMemsetParams* pNodeParams);
MUSA_RT_API musaError_t musaGraphGetNodes(musaGraph_t graph, musaGraphNode_t* nodes,
                                          size_t* numNodes);
MUSA_RT_API musaError_t musaGraphGetRootNodes(musaGraph_t graph, musaGraphNode_t* pRootNodes,
                                              size_t* pNumRootNodes);
MUSA_RT_API musaError_t musaGraphGetEdges(musaGraph_t graph, musaGraphNode_t* from,
                                          musaGraphNode_t* to, size_t* numEdges);
MUSA_RT_API musaError_t musaGraphNodeGetType(musaGraphNode_t node, enum musaGraphNodeType* pType);
MUSA_RT_API musaError_t musaGraphNodeGetDependencies(musaGraphNode_t node,
                                                     musaGraphNode_t* pDependencies,
                                                     size_t* pNumDependencies);
MUSA_RT_API musaError_t musaGraphNodeGetDependentNodes(musaGraphNode_t node,
                                                       musaGraphNode_t* pDependentNodes,
                                                       size_t* pNumDependentNodes);
MUSA_RT_API musaError_t musaGraphAddDependencies(musaGraph_t graph, const musaGraphNode_t* from,
                                                 const musaGraphNode_t* to, size_t numDependencies);
MUSA_RT_API musaError_t musaGraphRemoveDependencies(musaGraph_t graph, const musaGraphNode_t* from,
                                                    const musaGraphNode_t* to,
                                                    size_t numDependencies);
MUSA_RT_API musaError_t musaGraphNodeGetEnabled(musaGraphExec_t hGraphExec, musaGraphNode_t hNode,
                                                unsigned int* isEnabled);
MUSA_RT_API musaError_t musaGraphNodeSetEnabled(musaGraphExec_t hGraphExec, musaGraphNode_t hNode,
                                                unsigned int isEnabled);
MUSA_RT_API musaError_t musaGraphDebugDotPrint(musaGraph_t graph, const char* path,
                                               unsigned int flags);
MUSA_RT_API musaError_t musaGraphInstantiate(musaGraphExec_t* pGraphExec, musaGraph_t graph,
                                             musaGraphNode_t* pErrorNode, char* pLogBuffer,
                                             size_t bufferSize);
MUSA_RT_API musaError_t musaGraphInstantiateWithFlags(musaGraphExec_t* pGraphExec,
                                                      musaGraph_t graph, unsigned long long flags);
MUSA_RT_API musaError_t musaGraphExecDestroy(musaGraphExec_t graphExec);
MUSA_RT_API musaError_t musaGraphLaunch(musaGraphExec_t graphExec, musaStream_t stream);
MUSA_RT_API musaError_t musaGraphUpload(musaGraphExec_t graphExec, musaStream_t stream);
MUSA_RT_API musaError_t musaGraphExecGetFlags(musaGraphExec_t graphExec, unsigned long long* flags);
MUSA_RT_API musaError_t musaGraphExecUpdate(musaGraphExec_t hGraphExec, musaGraph_t hGraph,
                                            musaGraphNode_t* hErrorNode_out,
                                            enum musaGraphExecUpdateResult* updateResult_out);
MUSA_RT_API musaError_t musaGraphExecHostNodeSetParams(
    musaGraphExec_t hGraphExec, musaGraphNode_t node, const struct musaHostNodeParams* pNodeParams);
MUSA_RT_API musaError_t musaGraphExecMemcpyNodeSetParams(
    musaGraphExec_t hGraphExec, musaGraphNode_t node, const struct musaMemcpy3DParms* pNodeParams);
MUSA_RT_API musaError_t musaGraphExecMemcpyNodeSetParams1D(musaGraphExec_t hGraphExec,
                                                           musaGraphNode_t node, void* dst,
                                                           const void* src, size_t count,
                                                           enum musaMemcpyKind kind);
MUSA_RT_API musaError_t musaGraphExecMemsetNodeSetParams(
    musaGraphExec_t hGraphExec, musaGraphNode_t node, const struct musaMemsetParams* pNodeParams);
MUSA_RT_API musaError_t musaGraphExecChildGraphNodeSetParams(musaGraphExec_t hGraphExec,
                                                             musaGraphNode_t node,
                                                             musaGraph_t childGraph);
MUSA_RT_API musaError_t musaGraphExecEventRecordNodeSetEvent(musaGraphExec_t hGraphExec,
                                                             musaGraphNode_t hNode,
                                                             musaEvent_t event);
MUSA_RT_API musaError_t musaGraphExecEventWaitNodeSetEvent(musaGraphExec_t hGraphExec,
                                                           musaGraphNode_t hNode,
                                                           musaEvent_t event);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TORCHADA_SIM_MUSA_RUNTIME_API_H */
