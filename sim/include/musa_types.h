/* torchada: the project's own description of the MUSA runtime's public types.
 *
 * Written for the CPU simulator (sim/) and for building the shim without a MUSA SDK. Names follow
 * MUSA's mechanical rename of the CUDA runtime (see shared/musa-abi.md); enumerator values are
 * assumed equal to CUDA 12/13's and are checked against the real SDK by the shim's static_asserts
 * whenever one is available. Usable from C and C++, and safe to include together with NVIDIA's
 * CUDA headers (no cuda or CU names, no dim3, no __host__).
 */
#ifndef TORCHADA_SIM_MUSA_TYPES_H
#define TORCHADA_SIM_MUSA_TYPES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Version of the runtime this header describes (SDK 5.1.0: M*1000 + m*10 + p) ---------- */
#define MUSART_VERSION 5010

/* ---- Enumerations (values equal to the CUDA runtime's) -------------------------------------- */

enum musaError {
  musaSuccess = 0,
  musaErrorInvalidValue = 1,
  musaErrorMemoryAllocation = 2,
  musaErrorInitializationError = 3,
  musaErrorMusartUnloading = 4,
  musaErrorProfilerDisabled = 5,
  musaErrorProfilerNotInitialized = 6,
  musaErrorProfilerAlreadyStarted = 7,
  musaErrorProfilerAlreadyStopped = 8,
  musaErrorInvalidConfiguration = 9,
  musaErrorVersionTranslation = 10, /* CUDA 13.2's code; MUSA's own is unconfirmed [C] */
  musaErrorInvalidPitchValue = 12,
  musaErrorInvalidSymbol = 13,
  musaErrorInvalidHostPointer = 16,
  musaErrorInvalidDevicePointer = 17,
  musaErrorInvalidTexture = 18,
  musaErrorInvalidTextureBinding = 19,
  musaErrorInvalidChannelDescriptor = 20,
  musaErrorInvalidMemcpyDirection = 21,
  musaErrorAddressOfConstant = 22,
  musaErrorTextureFetchFailed = 23,
  musaErrorTextureNotBound = 24,
  musaErrorSynchronizationError = 25,
  musaErrorInvalidFilterSetting = 26,
  musaErrorInvalidNormSetting = 27,
  musaErrorMixedDeviceExecution = 28,
  musaErrorNotYetImplemented = 31,
  musaErrorMemoryValueTooLarge = 32,
  musaErrorStubLibrary = 34,
  musaErrorInsufficientDriver = 35,
  musaErrorCallRequiresNewerDriver = 36,
  musaErrorInvalidSurface = 37,
  musaErrorDuplicateVariableName = 43,
  musaErrorDuplicateTextureName = 44,
  musaErrorDuplicateSurfaceName = 45,
  musaErrorDevicesUnavailable = 46,
  musaErrorIncompatibleDriverContext = 49,
  musaErrorMissingConfiguration = 52,
  musaErrorPriorLaunchFailure = 53,
  musaErrorLaunchMaxDepthExceeded = 65,
  musaErrorLaunchFileScopedTex = 66,
  musaErrorLaunchFileScopedSurf = 67,
  musaErrorSyncDepthExceeded = 68,
  musaErrorLaunchPendingCountExceeded = 69,
  musaErrorInvalidDeviceFunction = 98,
  musaErrorNoDevice = 100,
  musaErrorInvalidDevice = 101,
  musaErrorDeviceNotLicensed = 102,
  musaErrorSoftwareValidityNotEstablished = 103,
  musaErrorStartupFailure = 127,
  musaErrorInvalidKernelImage = 200,
  musaErrorDeviceUninitialized = 201,
  musaErrorMapBufferObjectFailed = 205,
  musaErrorUnmapBufferObjectFailed = 206,
  musaErrorArrayIsMapped = 207,
  musaErrorAlreadyMapped = 208,
  musaErrorNoKernelImageForDevice = 209,
  musaErrorAlreadyAcquired = 210,
  musaErrorNotMapped = 211,
  musaErrorNotMappedAsArray = 212,
  musaErrorNotMappedAsPointer = 213,
  musaErrorECCUncorrectable = 214,
  musaErrorUnsupportedLimit = 215,
  musaErrorDeviceAlreadyInUse = 216,
  musaErrorPeerAccessUnsupported = 217,
  musaErrorInvalidPtx = 218,
  musaErrorInvalidGraphicsContext = 219,
  musaErrorMtlinkUncorrectable = 220,
  musaErrorJitCompilerNotFound = 221,
  musaErrorUnsupportedPtxVersion = 222,
  musaErrorJitCompilationDisabled = 223,
  musaErrorUnsupportedExecAffinity = 224,
  musaErrorUnsupportedDevSideSync = 225,
  musaErrorContained = 226,
  musaErrorInvalidSource = 300,
  musaErrorFileNotFound = 301,
  musaErrorSharedObjectSymbolNotFound = 302,
  musaErrorSharedObjectInitFailed = 303,
  musaErrorOperatingSystem = 304,
  musaErrorInvalidResourceHandle = 400,
  musaErrorIllegalState = 401,
  musaErrorLossyQuery = 402,
  musaErrorSymbolNotFound = 500,
  musaErrorNotReady = 600,
  musaErrorIllegalAddress = 700,
  musaErrorLaunchOutOfResources = 701,
  musaErrorLaunchTimeout = 702,
  musaErrorLaunchIncompatibleTexturing = 703,
  musaErrorPeerAccessAlreadyEnabled = 704,
  musaErrorPeerAccessNotEnabled = 705,
  musaErrorSetOnActiveProcess = 708,
  musaErrorContextIsDestroyed = 709,
  musaErrorAssert = 710,
  musaErrorTooManyPeers = 711,
  musaErrorHostMemoryAlreadyRegistered = 712,
  musaErrorHostMemoryNotRegistered = 713,
  musaErrorHardwareStackError = 714,
  musaErrorIllegalInstruction = 715,
  musaErrorMisalignedAddress = 716,
  musaErrorInvalidAddressSpace = 717,
  musaErrorInvalidPc = 718,
  musaErrorLaunchFailure = 719,
  musaErrorCooperativeLaunchTooLarge = 720,
  musaErrorTensorMemoryLeak = 721,
  musaErrorNotPermitted = 800,
  musaErrorNotSupported = 801,
  musaErrorSystemNotReady = 802,
  musaErrorSystemDriverMismatch = 803,
  musaErrorCompatNotSupportedOnDevice = 804,
  musaErrorMpsConnectionFailed = 805,
  musaErrorMpsRpcFailure = 806,
  musaErrorMpsServerNotReady = 807,
  musaErrorMpsMaxClientsReached = 808,
  musaErrorMpsMaxConnectionsReached = 809,
  musaErrorMpsClientTerminated = 810,
  musaErrorCdpNotSupported = 811,
  musaErrorCdpVersionMismatch = 812,
  musaErrorStreamCaptureUnsupported = 900,
  musaErrorStreamCaptureInvalidated = 901,
  musaErrorStreamCaptureMerge = 902,
  musaErrorStreamCaptureUnmatched = 903,
  musaErrorStreamCaptureUnjoined = 904,
  musaErrorStreamCaptureIsolation = 905,
  musaErrorStreamCaptureImplicit = 906,
  musaErrorCapturedEvent = 907,
  musaErrorStreamCaptureWrongThread = 908,
  musaErrorTimeout = 909,
  musaErrorGraphExecUpdateFailure = 910,
  musaErrorExternalDevice = 911,
  musaErrorInvalidClusterSize = 912,
  musaErrorFunctionNotLoaded = 913,
  musaErrorInvalidResourceType = 914,
  musaErrorInvalidResourceConfiguration = 915,
  musaErrorStreamDetached = 917, /* CUDA 13.2's code; MUSA's own is unconfirmed [C] */
  musaErrorUnknown = 999,
  musaErrorApiFailureBase = 10000,
};

enum musaMemoryType {
  musaMemoryTypeUnregistered = 0,
  musaMemoryTypeHost = 1,
  musaMemoryTypeDevice = 2,
  musaMemoryTypeManaged = 3,
};

enum musaMemcpyKind {
  musaMemcpyHostToHost = 0,
  musaMemcpyHostToDevice = 1,
  musaMemcpyDeviceToHost = 2,
  musaMemcpyDeviceToDevice = 3,
  musaMemcpyDefault = 4,
};

enum musaStreamCaptureStatus {
  musaStreamCaptureStatusNone = 0,
  musaStreamCaptureStatusActive = 1,
  musaStreamCaptureStatusInvalidated = 2,
};

enum musaStreamCaptureMode {
  musaStreamCaptureModeGlobal = 0,
  musaStreamCaptureModeThreadLocal = 1,
  musaStreamCaptureModeRelaxed = 2,
};

enum musaStreamUpdateCaptureDependenciesFlags {
  musaStreamAddCaptureDependencies = 0,
  musaStreamSetCaptureDependencies = 1,
};

enum musaUserObjectFlags {
  musaUserObjectNoDestructorSync = 1,
};

enum musaUserObjectRetainFlags {
  musaGraphUserObjectMove = 1,
};

enum musaFuncCache {
  musaFuncCachePreferNone = 0,
  musaFuncCachePreferShared = 1,
  musaFuncCachePreferL1 = 2,
  musaFuncCachePreferEqual = 3,
};

enum musaSharedMemConfig {
  musaSharedMemBankSizeDefault = 0,
  musaSharedMemBankSizeFourByte = 1,
  musaSharedMemBankSizeEightByte = 2,
};

enum musaComputeMode {
  musaComputeModeDefault = 0,
  musaComputeModeExclusive = 1,
  musaComputeModeProhibited = 2,
  musaComputeModeExclusiveProcess = 3,
};

enum musaLimit {
  musaLimitStackSize = 0,
  musaLimitPrintfFifoSize = 1,
  musaLimitMallocHeapSize = 2,
  musaLimitDevRuntimeSyncDepth = 3,
  musaLimitDevRuntimePendingLaunchCount = 4,
  musaLimitMaxL2FetchGranularity = 5,
  musaLimitPersistingL2CacheSize = 6,
};

enum musaMemoryAdvise {
  musaMemAdviseSetReadMostly = 1,
  musaMemAdviseUnsetReadMostly = 2,
  musaMemAdviseSetPreferredLocation = 3,
  musaMemAdviseUnsetPreferredLocation = 4,
  musaMemAdviseSetAccessedBy = 5,
  musaMemAdviseUnsetAccessedBy = 6,
};

enum musaMemRangeAttribute {
  musaMemRangeAttributeReadMostly = 1,
  musaMemRangeAttributePreferredLocation = 2,
  musaMemRangeAttributeAccessedBy = 3,
  musaMemRangeAttributeLastPrefetchLocation = 4,
  musaMemRangeAttributePreferredLocationType = 5,
  musaMemRangeAttributePreferredLocationId = 6,
  musaMemRangeAttributeLastPrefetchLocationType = 7,
  musaMemRangeAttributeLastPrefetchLocationId = 8,
};

enum musaDeviceAttr {
  musaDevAttrMaxThreadsPerBlock = 1,
  musaDevAttrMaxBlockDimX = 2,
  musaDevAttrMaxBlockDimY = 3,
  musaDevAttrMaxBlockDimZ = 4,
  musaDevAttrMaxGridDimX = 5,
  musaDevAttrMaxGridDimY = 6,
  musaDevAttrMaxGridDimZ = 7,
  musaDevAttrMaxSharedMemoryPerBlock = 8,
  musaDevAttrTotalConstantMemory = 9,
  musaDevAttrWarpSize = 10,
  musaDevAttrMaxPitch = 11,
  musaDevAttrMaxRegistersPerBlock = 12,
  musaDevAttrClockRate = 13,
  musaDevAttrTextureAlignment = 14,
  musaDevAttrGpuOverlap = 15,
  musaDevAttrMultiProcessorCount = 16,
  musaDevAttrKernelExecTimeout = 17,
  musaDevAttrIntegrated = 18,
  musaDevAttrCanMapHostMemory = 19,
  musaDevAttrComputeMode = 20,
  musaDevAttrMaxTexture1DWidth = 21,
  musaDevAttrMaxTexture2DWidth = 22,
  musaDevAttrMaxTexture2DHeight = 23,
  musaDevAttrMaxTexture3DWidth = 24,
  musaDevAttrMaxTexture3DHeight = 25,
  musaDevAttrMaxTexture3DDepth = 26,
  musaDevAttrMaxTexture2DLayeredWidth = 27,
  musaDevAttrMaxTexture2DLayeredHeight = 28,
  musaDevAttrMaxTexture2DLayeredLayers = 29,
  musaDevAttrSurfaceAlignment = 30,
  musaDevAttrConcurrentKernels = 31,
  musaDevAttrEccEnabled = 32,
  musaDevAttrPciBusId = 33,
  musaDevAttrPciDeviceId = 34,
  musaDevAttrTccDriver = 35,
  musaDevAttrMemoryClockRate = 36,
  musaDevAttrGlobalMemoryBusWidth = 37,
  musaDevAttrL2CacheSize = 38,
  musaDevAttrMaxThreadsPerMultiProcessor = 39,
  musaDevAttrAsyncEngineCount = 40,
  musaDevAttrUnifiedAddressing = 41,
  musaDevAttrMaxTexture1DLayeredWidth = 42,
  musaDevAttrMaxTexture1DLayeredLayers = 43,
  musaDevAttrMaxTexture2DGatherWidth = 45,
  musaDevAttrMaxTexture2DGatherHeight = 46,
  musaDevAttrMaxTexture3DWidthAlt = 47,
  musaDevAttrMaxTexture3DHeightAlt = 48,
  musaDevAttrMaxTexture3DDepthAlt = 49,
  musaDevAttrPciDomainId = 50,
  musaDevAttrTexturePitchAlignment = 51,
  musaDevAttrMaxTextureCubemapWidth = 52,
  musaDevAttrMaxTextureCubemapLayeredWidth = 53,
  musaDevAttrMaxTextureCubemapLayeredLayers = 54,
  musaDevAttrMaxSurface1DWidth = 55,
  musaDevAttrMaxSurface2DWidth = 56,
  musaDevAttrMaxSurface2DHeight = 57,
  musaDevAttrMaxSurface3DWidth = 58,
  musaDevAttrMaxSurface3DHeight = 59,
  musaDevAttrMaxSurface3DDepth = 60,
  musaDevAttrMaxSurface1DLayeredWidth = 61,
  musaDevAttrMaxSurface1DLayeredLayers = 62,
  musaDevAttrMaxSurface2DLayeredWidth = 63,
  musaDevAttrMaxSurface2DLayeredHeight = 64,
  musaDevAttrMaxSurface2DLayeredLayers = 65,
  musaDevAttrMaxSurfaceCubemapWidth = 66,
  musaDevAttrMaxSurfaceCubemapLayeredWidth = 67,
  musaDevAttrMaxSurfaceCubemapLayeredLayers = 68,
  musaDevAttrMaxTexture1DLinearWidth = 69,
  musaDevAttrMaxTexture2DLinearWidth = 70,
  musaDevAttrMaxTexture2DLinearHeight = 71,
  musaDevAttrMaxTexture2DLinearPitch = 72,
  musaDevAttrMaxTexture2DMipmappedWidth = 73,
  musaDevAttrMaxTexture2DMipmappedHeight = 74,
  musaDevAttrComputeCapabilityMajor = 75,
  musaDevAttrComputeCapabilityMinor = 76,
  musaDevAttrMaxTexture1DMipmappedWidth = 77,
  musaDevAttrStreamPrioritiesSupported = 78,
  musaDevAttrGlobalL1CacheSupported = 79,
  musaDevAttrLocalL1CacheSupported = 80,
  musaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
  musaDevAttrMaxRegistersPerMultiprocessor = 82,
  musaDevAttrManagedMemory = 83,
  musaDevAttrIsMultiGpuBoard = 84,
  musaDevAttrMultiGpuBoardGroupID = 85,
  musaDevAttrHostNativeAtomicSupported = 86,
  musaDevAttrSingleToDoublePrecisionPerfRatio = 87,
  musaDevAttrPageableMemoryAccess = 88,
  musaDevAttrConcurrentManagedAccess = 89,
  musaDevAttrComputePreemptionSupported = 90,
  musaDevAttrCanUseHostPointerForRegisteredMem = 91,
  musaDevAttrReserved92 = 92,
  musaDevAttrReserved93 = 93,
  musaDevAttrReserved94 = 94,
  musaDevAttrCooperativeLaunch = 95,
  musaDevAttrReserved96 = 96,
  musaDevAttrCooperativeMultiDeviceLaunch = 96,
  musaDevAttrMaxSharedMemoryPerBlockOptin = 97,
  musaDevAttrCanFlushRemoteWrites = 98,
  musaDevAttrHostRegisterSupported = 99,
  musaDevAttrPageableMemoryAccessUsesHostPageTables = 100,
  musaDevAttrDirectManagedMemAccessFromHost = 101,
  musaDevAttrMaxBlocksPerMultiprocessor = 106,
  musaDevAttrMaxPersistingL2CacheSize = 108,
  musaDevAttrMaxAccessPolicyWindowSize = 109,
  musaDevAttrReservedSharedMemoryPerBlock = 111,
  musaDevAttrSparseMusaArraySupported = 112,
  musaDevAttrHostRegisterReadOnlySupported = 113,
  musaDevAttrTimelineSemaphoreInteropSupported = 114,
  musaDevAttrMaxTimelineSemaphoreInteropSupported = 114,
  musaDevAttrMemoryPoolsSupported = 115,
  musaDevAttrGPUDirectRDMASupported = 116,
  musaDevAttrGPUDirectRDMAFlushWritesOptions = 117,
  musaDevAttrGPUDirectRDMAWritesOrdering = 118,
  musaDevAttrMemoryPoolSupportedHandleTypes = 119,
  musaDevAttrClusterLaunch = 120,
  musaDevAttrDeferredMappingMusaArraySupported = 121,
  musaDevAttrReserved122 = 122,
  musaDevAttrReserved123 = 123,
  musaDevAttrReserved124 = 124,
  musaDevAttrIpcEventSupport = 125,
  musaDevAttrMemSyncDomainCount = 126,
  musaDevAttrReserved127 = 127,
  musaDevAttrReserved128 = 128,
  musaDevAttrReserved129 = 129,
  musaDevAttrNumaConfig = 130,
  musaDevAttrNumaId = 131,
  musaDevAttrReserved132 = 132,
  musaDevAttrMpsEnabled = 133,
  musaDevAttrHostNumaId = 134,
  musaDevAttrD3D12CigSupported = 135,
  musaDevAttrVulkanCigSupported = 138,
  musaDevAttrGpuPciDeviceId = 139,
  musaDevAttrGpuPciSubsystemId = 140,
  musaDevAttrReserved141 = 141,
  musaDevAttrHostNumaMemoryPoolsSupported = 142,
  musaDevAttrHostNumaMultinodeIpcSupported = 143,
  musaDevAttrHostMemoryPoolsSupported = 144,
  musaDevAttrReserved145 = 145,
  musaDevAttrOnlyPartialHostNativeAtomicSupported = 147,
  musaDevAttrMax = 148,
};

enum musaDeviceP2PAttr {
  musaDevP2PAttrPerformanceRank = 1,
  musaDevP2PAttrAccessSupported = 2,
  musaDevP2PAttrNativeAtomicSupported = 3,
  musaDevP2PAttrMusaArrayAccessSupported = 4,
  musaDevP2PAttrOnlyPartialNativeAtomicSupported = 5,
};

enum musaGraphNodeType {
  musaGraphNodeTypeKernel = 0,
  musaGraphNodeTypeMemcpy = 1,
  musaGraphNodeTypeMemset = 2,
  musaGraphNodeTypeHost = 3,
  musaGraphNodeTypeGraph = 4,
  musaGraphNodeTypeEmpty = 5,
  musaGraphNodeTypeWaitEvent = 6,
  musaGraphNodeTypeEventRecord = 7,
  musaGraphNodeTypeExtSemaphoreSignal = 8,
  musaGraphNodeTypeExtSemaphoreWait = 9,
  musaGraphNodeTypeMemAlloc = 10,
  musaGraphNodeTypeMemFree = 11,
  musaGraphNodeTypeConditional = 13,
  musaGraphNodeTypeCount = 14,
};

enum musaGraphExecUpdateResult {
  musaGraphExecUpdateSuccess = 0,
  musaGraphExecUpdateError = 1,
  musaGraphExecUpdateErrorTopologyChanged = 2,
  musaGraphExecUpdateErrorNodeTypeChanged = 3,
  musaGraphExecUpdateErrorFunctionChanged = 4,
  musaGraphExecUpdateErrorParametersChanged = 5,
  musaGraphExecUpdateErrorNotSupported = 6,
  musaGraphExecUpdateErrorUnsupportedFunctionChange = 7,
  musaGraphExecUpdateErrorAttributesChanged = 8,
};

enum musaGraphDebugDotFlags {
  musaGraphDebugDotFlagsVerbose = 1,
  musaGraphDebugDotFlagsKernelNodeParams = 4,
  musaGraphDebugDotFlagsMemcpyNodeParams = 8,
  musaGraphDebugDotFlagsMemsetNodeParams = 16,
  musaGraphDebugDotFlagsHostNodeParams = 32,
  musaGraphDebugDotFlagsEventNodeParams = 64,
  musaGraphDebugDotFlagsExtSemasSignalNodeParams = 128,
  musaGraphDebugDotFlagsExtSemasWaitNodeParams = 0x100,
  musaGraphDebugDotFlagsKernelNodeAttributes = 0x200,
  musaGraphDebugDotFlagsHandles = 0x400,
  musaGraphDebugDotFlagsConditionalNodeParams = 0x8000,
};

enum musaGraphInstantiateFlags {
  musaGraphInstantiateFlagAutoFreeOnLaunch = 1,
  musaGraphInstantiateFlagUpload = 2,
  musaGraphInstantiateFlagDeviceLaunch = 4,
  musaGraphInstantiateFlagUseNodePriority = 8,
};

typedef enum musaError musaError_t;

/* ---- Opaque handles ------------------------------------------------------------------------- */
typedef struct MUstream_st* musaStream_t;
typedef struct MUevent_st* musaEvent_t;
typedef struct MUgraph_st* musaGraph_t;
typedef struct MUgraphNode_st* musaGraphNode_t;
typedef struct MUgraphExec_st* musaGraphExec_t;
typedef struct MUuserObject_st* musaUserObject_t;
typedef struct musaArray* musaArray_t;
typedef const struct musaArray* musaArray_const_t;

/* ---- Callbacks ------------------------------------------------------------------------------ */
typedef void (*musaHostFn_t)(void* userData);
typedef void (*musaStreamCallback_t)(musaStream_t stream, musaError_t status, void* userData);

/* ---- Flags ---------------------------------------------------------------------------------- */
#define musaHostAllocDefault 0x00
#define musaHostAllocPortable 0x01
#define musaHostAllocMapped 0x02
#define musaHostAllocWriteCombined 0x04

#define musaHostRegisterDefault 0x00
#define musaHostRegisterPortable 0x01
#define musaHostRegisterMapped 0x02
#define musaHostRegisterIoMemory 0x04
#define musaHostRegisterReadOnly 0x08

#define musaPeerAccessDefault 0x00

#define musaStreamDefault 0x00
#define musaStreamNonBlocking 0x01
#define musaStreamLegacy ((musaStream_t)0x1)
#define musaStreamPerThread ((musaStream_t)0x2)

#define musaEventDefault 0x00
#define musaEventBlockingSync 0x01
#define musaEventDisableTiming 0x02
#define musaEventInterprocess 0x04
#define musaEventRecordDefault 0x00
#define musaEventRecordExternal 0x01
#define musaEventWaitDefault 0x00
#define musaEventWaitExternal 0x01

#define musaDeviceScheduleAuto 0x00
#define musaDeviceScheduleSpin 0x01
#define musaDeviceScheduleYield 0x02
#define musaDeviceScheduleBlockingSync 0x04
#define musaDeviceBlockingSync 0x04
#define musaDeviceScheduleMask 0x07
#define musaDeviceMapHost 0x08
#define musaDeviceLmemResizeToMax 0x10
#define musaDeviceSyncMemops 0x80
#define musaDeviceMask 0xff

#define musaArrayDefault 0x00
#define musaIpcMemLazyEnablePeerAccess 0x01

#define musaMemAttachGlobal 0x01
#define musaMemAttachHost 0x02
#define musaMemAttachSingle 0x04

#define musaCpuDeviceId ((int)-1)
#define musaInvalidDeviceId ((int)-2)
#define musaInitDeviceFlagsAreValid 0x01

#define MUSA_IPC_HANDLE_SIZE 64

/* ---- Structures ----------------------------------------------------------------------------- */
struct musaPos {
  size_t x;
  size_t y;
  size_t z;
};

struct musaExtent {
  size_t width; /* bytes for linear memory */
  size_t height;
  size_t depth;
};

struct musaPitchedPtr {
  void* ptr;
  size_t pitch;
  size_t xsize;
  size_t ysize;
};

struct musaMemcpy3DParms {
  musaArray_t srcArray;
  struct musaPos srcPos;
  struct musaPitchedPtr srcPtr;
  musaArray_t dstArray;
  struct musaPos dstPos;
  struct musaPitchedPtr dstPtr;
  struct musaExtent extent;
  enum musaMemcpyKind kind;
};

struct musaMemcpy3DPeerParms {
  musaArray_t srcArray;
  struct musaPos srcPos;
  struct musaPitchedPtr srcPtr;
  int srcDevice;
  musaArray_t dstArray;
  struct musaPos dstPos;
  struct musaPitchedPtr dstPtr;
  int dstDevice;
  struct musaExtent extent;
};

struct musaMemsetParams {
  void* dst;
  size_t pitch;
  unsigned int value;
  unsigned int elementSize; /* 1, 2 or 4 */
  size_t width;             /* in elements */
  size_t height;
};

struct musaHostNodeParams {
  musaHostFn_t fn;
  void* userData;
};

struct musaPointerAttributes {
  enum musaMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
};

typedef struct musaIpcMemHandle_st {
  char reserved[MUSA_IPC_HANDLE_SIZE];
} musaIpcMemHandle_t;

typedef struct musaIpcEventHandle_st {
  char reserved[MUSA_IPC_HANDLE_SIZE];
} musaIpcEventHandle_t;

/* Also defined by musa.h (the driver's MUuuid): whichever header comes first. */
#ifndef MU_UUID_HAS_BEEN_DEFINED
#define MU_UUID_HAS_BEEN_DEFINED
struct MUuuid_st {
  char bytes[16];
};
#endif
typedef struct MUuuid_st musaUUID_t;

/* The CUDA 11.x field list: 728 bytes on x86-64 (shared/musa-abi.md). */
struct musaDeviceProp {
  char name[256];
  musaUUID_t uuid;
  char luid[8];
  unsigned int luidDeviceNodeMask;
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;
  size_t totalConstMem;
  int major;
  int minor;
  size_t textureAlignment;
  size_t texturePitchAlignment;
  int deviceOverlap;
  int multiProcessorCount;
  int kernelExecTimeoutEnabled;
  int integrated;
  int canMapHostMemory;
  int computeMode;
  int maxTexture1D;
  int maxTexture1DMipmap;
  int maxTexture1DLinear;
  int maxTexture2D[2];
  int maxTexture2DMipmap[2];
  int maxTexture2DLinear[3];
  int maxTexture2DGather[2];
  int maxTexture3D[3];
  int maxTexture3DAlt[3];
  int maxTextureCubemap;
  int maxTexture1DLayered[2];
  int maxTexture2DLayered[3];
  int maxTextureCubemapLayered[2];
  int maxSurface1D;
  int maxSurface2D[2];
  int maxSurface3D[3];
  int maxSurface1DLayered[2];
  int maxSurface2DLayered[3];
  int maxSurfaceCubemap;
  int maxSurfaceCubemapLayered[2];
  size_t surfaceAlignment;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int tccDriver;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryClockRate;
  int memoryBusWidth;
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  int globalL1CacheSupported;
  int localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  int hostNativeAtomicSupported;
  int singleToDoublePrecisionPerfRatio;
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int computePreemptionSupported;
  int canUseHostPointerForRegisteredMem;
  int cooperativeLaunch;
  int cooperativeMultiDeviceLaunch;
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables;
  int directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
};

#ifdef __cplusplus
} /* extern "C" */
#endif

#if defined(__x86_64__) || defined(__aarch64__)
#ifdef __cplusplus
static_assert(sizeof(struct musaDeviceProp) == 728,
              "musaDeviceProp must be 728 bytes (CUDA 11.x layout)");
static_assert(sizeof(musaIpcMemHandle_t) == 64, "musaIpcMemHandle_t must be 64 bytes");
#else
_Static_assert(sizeof(struct musaDeviceProp) == 728,
               "musaDeviceProp must be 728 bytes (CUDA 11.x layout)");
_Static_assert(sizeof(musaIpcMemHandle_t) == 64, "musaIpcMemHandle_t must be 64 bytes");
#endif
#endif

#endif /* TORCHADA_SIM_MUSA_TYPES_H */
