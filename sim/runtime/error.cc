// Error names and descriptions (generated once from the musaError enumerators; the wording is
// this project's own), and the per-thread last error.
#include "state.h"

namespace sim {
namespace {

struct ErrorText {
  musaError_t code;
  const char* name;
  const char* text;
};

constexpr ErrorText kErrors[] = {
    {musaSuccess, "musaSuccess", "no error"},
    {musaErrorInvalidValue, "musaErrorInvalidValue",
     "an argument is out of range or a required pointer is NULL"},
    {musaErrorMemoryAllocation, "musaErrorMemoryAllocation", "out of memory"},
    {musaErrorInitializationError, "musaErrorInitializationError",
     "the MUSA runtime could not be initialised"},
    {musaErrorMusartUnloading, "musaErrorMusartUnloading", "the MUSA runtime is shutting down"},
    {musaErrorProfilerDisabled, "musaErrorProfilerDisabled", "profiler disabled error"},
    {musaErrorProfilerNotInitialized, "musaErrorProfilerNotInitialized",
     "profiler not initialized error"},
    {musaErrorProfilerAlreadyStarted, "musaErrorProfilerAlreadyStarted",
     "profiler already started error"},
    {musaErrorProfilerAlreadyStopped, "musaErrorProfilerAlreadyStopped",
     "profiler already stopped error"},
    {musaErrorInvalidConfiguration, "musaErrorInvalidConfiguration", "invalid configuration error"},
    {musaErrorInvalidPitchValue, "musaErrorInvalidPitchValue",
     "a pitch is smaller than the row width or too large"},
    {musaErrorInvalidSymbol, "musaErrorInvalidSymbol", "invalid symbol error"},
    {musaErrorInvalidHostPointer, "musaErrorInvalidHostPointer",
     "the pointer is not a host pointer"},
    {musaErrorInvalidDevicePointer, "musaErrorInvalidDevicePointer",
     "the pointer is not a device pointer"},
    {musaErrorInvalidTexture, "musaErrorInvalidTexture", "invalid texture error"},
    {musaErrorInvalidTextureBinding, "musaErrorInvalidTextureBinding",
     "invalid texture binding error"},
    {musaErrorInvalidChannelDescriptor, "musaErrorInvalidChannelDescriptor",
     "invalid channel descriptor error"},
    {musaErrorInvalidMemcpyDirection, "musaErrorInvalidMemcpyDirection",
     "the copy direction is not a valid musaMemcpyKind"},
    {musaErrorAddressOfConstant, "musaErrorAddressOfConstant", "address of constant error"},
    {musaErrorTextureFetchFailed, "musaErrorTextureFetchFailed", "texture fetch failed error"},
    {musaErrorTextureNotBound, "musaErrorTextureNotBound", "texture not bound error"},
    {musaErrorSynchronizationError, "musaErrorSynchronizationError", "synchronization error"},
    {musaErrorInvalidFilterSetting, "musaErrorInvalidFilterSetting",
     "invalid filter setting error"},
    {musaErrorInvalidNormSetting, "musaErrorInvalidNormSetting", "invalid norm setting error"},
    {musaErrorMixedDeviceExecution, "musaErrorMixedDeviceExecution",
     "mixed device execution error"},
    {musaErrorNotYetImplemented, "musaErrorNotYetImplemented", "not yet implemented error"},
    {musaErrorMemoryValueTooLarge, "musaErrorMemoryValueTooLarge", "memory value too large error"},
    {musaErrorStubLibrary, "musaErrorStubLibrary", "stub library error"},
    {musaErrorInsufficientDriver, "musaErrorInsufficientDriver",
     "the installed MUSA driver is older than the runtime"},
    {musaErrorCallRequiresNewerDriver, "musaErrorCallRequiresNewerDriver",
     "call requires newer driver error"},
    {musaErrorInvalidSurface, "musaErrorInvalidSurface", "invalid surface error"},
    {musaErrorDuplicateVariableName, "musaErrorDuplicateVariableName",
     "duplicate variable name error"},
    {musaErrorDuplicateTextureName, "musaErrorDuplicateTextureName",
     "duplicate texture name error"},
    {musaErrorDuplicateSurfaceName, "musaErrorDuplicateSurfaceName",
     "duplicate surface name error"},
    {musaErrorDevicesUnavailable, "musaErrorDevicesUnavailable", "devices unavailable error"},
    {musaErrorIncompatibleDriverContext, "musaErrorIncompatibleDriverContext",
     "incompatible driver context error"},
    {musaErrorMissingConfiguration, "musaErrorMissingConfiguration", "missing configuration error"},
    {musaErrorPriorLaunchFailure, "musaErrorPriorLaunchFailure", "prior launch failure error"},
    {musaErrorLaunchMaxDepthExceeded, "musaErrorLaunchMaxDepthExceeded",
     "launch max depth exceeded error"},
    {musaErrorLaunchFileScopedTex, "musaErrorLaunchFileScopedTex", "launch file scoped tex error"},
    {musaErrorLaunchFileScopedSurf, "musaErrorLaunchFileScopedSurf",
     "launch file scoped surf error"},
    {musaErrorSyncDepthExceeded, "musaErrorSyncDepthExceeded", "sync depth exceeded error"},
    {musaErrorLaunchPendingCountExceeded, "musaErrorLaunchPendingCountExceeded",
     "launch pending count exceeded error"},
    {musaErrorInvalidDeviceFunction, "musaErrorInvalidDeviceFunction",
     "the device function cannot be launched on this device"},
    {musaErrorNoDevice, "musaErrorNoDevice", "no MUSA-capable device is present"},
    {musaErrorInvalidDevice, "musaErrorInvalidDevice",
     "the device ordinal does not name a MUSA device"},
    {musaErrorDeviceNotLicensed, "musaErrorDeviceNotLicensed", "device not licensed error"},
    {musaErrorSoftwareValidityNotEstablished, "musaErrorSoftwareValidityNotEstablished",
     "software validity not established error"},
    {musaErrorStartupFailure, "musaErrorStartupFailure", "startup failure error"},
    {musaErrorInvalidKernelImage, "musaErrorInvalidKernelImage", "invalid kernel image error"},
    {musaErrorDeviceUninitialized, "musaErrorDeviceUninitialized", "device uninitialized error"},
    {musaErrorMapBufferObjectFailed, "musaErrorMapBufferObjectFailed",
     "map buffer object failed error"},
    {musaErrorUnmapBufferObjectFailed, "musaErrorUnmapBufferObjectFailed",
     "unmap buffer object failed error"},
    {musaErrorArrayIsMapped, "musaErrorArrayIsMapped", "array is mapped error"},
    {musaErrorAlreadyMapped, "musaErrorAlreadyMapped", "already mapped error"},
    {musaErrorNoKernelImageForDevice, "musaErrorNoKernelImageForDevice",
     "no kernel image is available for this device"},
    {musaErrorAlreadyAcquired, "musaErrorAlreadyAcquired", "already acquired error"},
    {musaErrorNotMapped, "musaErrorNotMapped", "not mapped error"},
    {musaErrorNotMappedAsArray, "musaErrorNotMappedAsArray", "not mapped as array error"},
    {musaErrorNotMappedAsPointer, "musaErrorNotMappedAsPointer", "not mapped as pointer error"},
    {musaErrorECCUncorrectable, "musaErrorECCUncorrectable", "ecc uncorrectable error"},
    {musaErrorUnsupportedLimit, "musaErrorUnsupportedLimit", "the limit is not supported"},
    {musaErrorDeviceAlreadyInUse, "musaErrorDeviceAlreadyInUse", "device already in use error"},
    {musaErrorPeerAccessUnsupported, "musaErrorPeerAccessUnsupported",
     "peer access is not supported between these devices"},
    {musaErrorInvalidPtx, "musaErrorInvalidPtx", "invalid ptx error"},
    {musaErrorInvalidGraphicsContext, "musaErrorInvalidGraphicsContext",
     "invalid graphics context error"},
    {musaErrorMtlinkUncorrectable, "musaErrorMtlinkUncorrectable", "mtlink uncorrectable error"},
    {musaErrorJitCompilerNotFound, "musaErrorJitCompilerNotFound", "jit compiler not found error"},
    {musaErrorUnsupportedPtxVersion, "musaErrorUnsupportedPtxVersion",
     "unsupported ptx version error"},
    {musaErrorJitCompilationDisabled, "musaErrorJitCompilationDisabled",
     "jit compilation disabled error"},
    {musaErrorUnsupportedExecAffinity, "musaErrorUnsupportedExecAffinity",
     "unsupported exec affinity error"},
    {musaErrorUnsupportedDevSideSync, "musaErrorUnsupportedDevSideSync",
     "unsupported dev side sync error"},
    {musaErrorContained, "musaErrorContained", "contained error"},
    {musaErrorInvalidSource, "musaErrorInvalidSource", "invalid source error"},
    {musaErrorFileNotFound, "musaErrorFileNotFound", "file not found error"},
    {musaErrorSharedObjectSymbolNotFound, "musaErrorSharedObjectSymbolNotFound",
     "shared object symbol not found error"},
    {musaErrorSharedObjectInitFailed, "musaErrorSharedObjectInitFailed",
     "shared object init failed error"},
    {musaErrorOperatingSystem, "musaErrorOperatingSystem", "operating system error"},
    {musaErrorInvalidResourceHandle, "musaErrorInvalidResourceHandle",
     "the handle does not name a live stream, event, graph or other object"},
    {musaErrorIllegalState, "musaErrorIllegalState",
     "the object is in a state that does not allow the operation"},
    {musaErrorLossyQuery, "musaErrorLossyQuery", "lossy query error"},
    {musaErrorSymbolNotFound, "musaErrorSymbolNotFound", "symbol not found error"},
    {musaErrorNotReady, "musaErrorNotReady", "the work has not completed yet"},
    {musaErrorIllegalAddress, "musaErrorIllegalAddress", "an illegal memory address was accessed"},
    {musaErrorLaunchOutOfResources, "musaErrorLaunchOutOfResources",
     "launch out of resources error"},
    {musaErrorLaunchTimeout, "musaErrorLaunchTimeout", "launch timeout error"},
    {musaErrorLaunchIncompatibleTexturing, "musaErrorLaunchIncompatibleTexturing",
     "launch incompatible texturing error"},
    {musaErrorPeerAccessAlreadyEnabled, "musaErrorPeerAccessAlreadyEnabled",
     "peer access is already enabled for this device pair"},
    {musaErrorPeerAccessNotEnabled, "musaErrorPeerAccessNotEnabled",
     "peer access has not been enabled for this device pair"},
    {musaErrorSetOnActiveProcess, "musaErrorSetOnActiveProcess",
     "the setting cannot change once the device is active"},
    {musaErrorContextIsDestroyed, "musaErrorContextIsDestroyed", "context is destroyed error"},
    {musaErrorAssert, "musaErrorAssert", "device-side assert triggered"},
    {musaErrorTooManyPeers, "musaErrorTooManyPeers", "too many peers error"},
    {musaErrorHostMemoryAlreadyRegistered, "musaErrorHostMemoryAlreadyRegistered",
     "the host memory range is already registered"},
    {musaErrorHostMemoryNotRegistered, "musaErrorHostMemoryNotRegistered",
     "the host memory range is not registered"},
    {musaErrorHardwareStackError, "musaErrorHardwareStackError", "hardware stack error"},
    {musaErrorIllegalInstruction, "musaErrorIllegalInstruction", "illegal instruction error"},
    {musaErrorMisalignedAddress, "musaErrorMisalignedAddress", "misaligned address error"},
    {musaErrorInvalidAddressSpace, "musaErrorInvalidAddressSpace", "invalid address space error"},
    {musaErrorInvalidPc, "musaErrorInvalidPc", "invalid pc error"},
    {musaErrorLaunchFailure, "musaErrorLaunchFailure", "a launch failed"},
    {musaErrorCooperativeLaunchTooLarge, "musaErrorCooperativeLaunchTooLarge",
     "cooperative launch too large error"},
    {musaErrorTensorMemoryLeak, "musaErrorTensorMemoryLeak", "tensor memory leak error"},
    {musaErrorNotPermitted, "musaErrorNotPermitted", "the operation is not permitted"},
    {musaErrorNotSupported, "musaErrorNotSupported",
     "the operation is not supported on this device or by this runtime"},
    {musaErrorSystemNotReady, "musaErrorSystemNotReady", "system not ready error"},
    {musaErrorSystemDriverMismatch, "musaErrorSystemDriverMismatch",
     "system driver mismatch error"},
    {musaErrorCompatNotSupportedOnDevice, "musaErrorCompatNotSupportedOnDevice",
     "compat not supported on device error"},
    {musaErrorMpsConnectionFailed, "musaErrorMpsConnectionFailed", "mps connection failed error"},
    {musaErrorMpsRpcFailure, "musaErrorMpsRpcFailure", "mps rpc failure error"},
    {musaErrorMpsServerNotReady, "musaErrorMpsServerNotReady", "mps server not ready error"},
    {musaErrorMpsMaxClientsReached, "musaErrorMpsMaxClientsReached",
     "mps max clients reached error"},
    {musaErrorMpsMaxConnectionsReached, "musaErrorMpsMaxConnectionsReached",
     "mps max connections reached error"},
    {musaErrorMpsClientTerminated, "musaErrorMpsClientTerminated", "mps client terminated error"},
    {musaErrorCdpNotSupported, "musaErrorCdpNotSupported", "cdp not supported error"},
    {musaErrorCdpVersionMismatch, "musaErrorCdpVersionMismatch", "cdp version mismatch error"},
    {musaErrorStreamCaptureUnsupported, "musaErrorStreamCaptureUnsupported",
     "the operation is not permitted while a stream is being captured"},
    {musaErrorStreamCaptureInvalidated, "musaErrorStreamCaptureInvalidated",
     "the stream capture was invalidated by an earlier error"},
    {musaErrorStreamCaptureMerge, "musaErrorStreamCaptureMerge",
     "the operation would merge two separate captures"},
    {musaErrorStreamCaptureUnmatched, "musaErrorStreamCaptureUnmatched",
     "the capture was not begun on this stream"},
    {musaErrorStreamCaptureUnjoined, "musaErrorStreamCaptureUnjoined",
     "the capture forked into another stream that was not joined back"},
    {musaErrorStreamCaptureIsolation, "musaErrorStreamCaptureIsolation",
     "the operation would create a dependency on work outside the capture"},
    {musaErrorStreamCaptureImplicit, "musaErrorStreamCaptureImplicit",
     "the operation would implicitly depend on a capturing stream through the legacy stream"},
    {musaErrorCapturedEvent, "musaErrorCapturedEvent",
     "the event was recorded in a capture and cannot be used this way"},
    {musaErrorStreamCaptureWrongThread, "musaErrorStreamCaptureWrongThread",
     "the capture must be ended on the thread that began it"},
    {musaErrorTimeout, "musaErrorTimeout", "the wait timed out"},
    {musaErrorGraphExecUpdateFailure, "musaErrorGraphExecUpdateFailure",
     "the executable graph could not be updated in place"},
    {musaErrorExternalDevice, "musaErrorExternalDevice", "external device error"},
    {musaErrorInvalidClusterSize, "musaErrorInvalidClusterSize", "invalid cluster size error"},
    {musaErrorFunctionNotLoaded, "musaErrorFunctionNotLoaded", "function not loaded error"},
    {musaErrorInvalidResourceType, "musaErrorInvalidResourceType", "invalid resource type error"},
    {musaErrorInvalidResourceConfiguration, "musaErrorInvalidResourceConfiguration",
     "invalid resource configuration error"},
    {musaErrorVersionTranslation, "musaErrorVersionTranslation",
     "graph node parameters of a newer runtime could not be translated"},
    {musaErrorStreamDetached, "musaErrorStreamDetached", "the stream is detached"},
    {musaErrorUnknown, "musaErrorUnknown", "an unexpected internal error occurred"},
    {musaErrorApiFailureBase, "musaErrorApiFailureBase", "api failure base error"},
};

const ErrorText* find_error(musaError_t e) {
  for (const ErrorText& t : kErrors)
    if (t.code == e) return &t;
  return nullptr;
}

}  // namespace
}  // namespace sim

using namespace sim;

extern "C" {

const char* musaGetErrorName(musaError_t error) {
  const ErrorText* t = find_error(error);
  return t != nullptr ? t->name : "unrecognized error code";
}

const char* musaGetErrorString(musaError_t error) {
  const ErrorText* t = find_error(error);
  return t != nullptr ? t->text : "unrecognized error code";
}

musaError_t musaGetLastError(void) {
  try {
    ThreadState& s = ts();
    const musaError_t e = s.last_error;
    s.last_error = musaSuccess;
    const musaError_t fault = sticky_fault();  // not cleared: a faulted device stays faulted
    return fault != musaSuccess ? fault : e;
  } catch (...) {
    return musaErrorUnknown;
  }
}

musaError_t musaPeekAtLastError(void) {
  try {
    const musaError_t fault = sticky_fault();
    return fault != musaSuccess ? fault : ts().last_error;
  } catch (...) {
    return musaErrorUnknown;
  }
}

}  // extern "C"
