// nvcc's registration and launch plumbing, and the calls about kernels the shim answers itself.
// NVIDIA device code is recorded (names, for messages), never loaded: it cannot run on MUSA.
#include <cstring>

#include "abi/impl.h"
#include "core/kernels.h"
#include "core/log.h"
#include "driver/runtime_entry_point.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

// <<<grid, block, shmem, stream>>> pushes a configuration that the launch stub pops right away.
struct CallConfig {
  dim3 grid, block;
  size_t shared_mem;
  void* stream;
};
constexpr int kMaxNesting = 16;
thread_local CallConfig t_configs[kMaxNesting];
thread_local int t_depth = 0;

}  // namespace

namespace impl {

void** __cudaRegisterFatBinary(void* fatCubin) { return register_fat_binary(fatCubin); }
void __cudaRegisterFatBinaryEnd(void** fatCubinHandle) { (void)fatCubinHandle; }
void __cudaUnregisterFatBinary(void** fatCubinHandle) { unregister_fat_binary(fatCubinHandle); }

void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun,
                            const char* deviceName, int thread_limit, uint3* tid, uint3* bid,
                            dim3* bDim, dim3* gDim, int* wSize) {
  (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
  register_kernel(fatCubinHandle, hostFun, deviceName);
}

void __cudaRegisterVar(void** fatCubinHandle, char* hostVar, char* deviceAddress,
                       const char* deviceName, int ext, size_t size, int constant, int global) {
  (void)fatCubinHandle, (void)deviceAddress, (void)ext, (void)constant, (void)global;
  TORCHADA_LOG(kDebug,
               "__device__ variable %s (%zu bytes, host shadow %p) recorded; device "
               "variables of NVIDIA device code are not available on MUSA",
               deviceName ? deviceName : "?", size, static_cast<void*>(hostVar));
}

void __cudaRegisterManagedVar(void** fatCubinHandle, void** hostVarPtrAddress, char* deviceAddress,
                              const char* deviceName, int ext, size_t size, int constant,
                              int global) {
  (void)fatCubinHandle, (void)hostVarPtrAddress, (void)deviceAddress, (void)ext, (void)constant,
      (void)global;
  TORCHADA_LOG(kDebug, "__managed__ variable %s (%zu bytes) recorded, not allocated",
               deviceName ? deviceName : "?", size);
}

char __cudaInitModule(void** fatCubinHandle) {
  (void)fatCubinHandle;
  return 1;  // nothing to initialise: the module's device code is never loaded
}

unsigned int __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                         struct CUstream_st* stream) {
  if (t_depth >= kMaxNesting) return 1;  // nonzero: the launch stub skips the launch
  t_configs[t_depth++] = {gridDim, blockDim, sharedMem, stream};
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                       void* stream) {
  if (t_depth == 0) return fail(cudaErrorMissingConfiguration);
  const CallConfig& c = t_configs[--t_depth];
  if (gridDim) *gridDim = c.grid;
  if (blockDim) *blockDim = c.block;
  if (sharedMem) *sharedMem = c.shared_mem;
  if (stream) *static_cast<void**>(stream) = c.stream;
  return cudaSuccess;
}

// CUDA 13's launch stubs get a kernel handle for the stub's address; the handle is that address,
// so the refusal below can name the kernel.
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* func) {
  if (kernel == nullptr) return fail(cudaErrorInvalidValue);
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<void*>(func));
  return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                               size_t sharedMem, cudaStream_t stream) {
  (void)gridDim, (void)blockDim, (void)args, (void)sharedMem, (void)stream;
  return kernel_unavailable(Fn::k___cudaLaunchKernel, reinterpret_cast<const void*>(kernel));
}
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                    size_t sharedMem, cudaStream_t stream) {
  (void)gridDim, (void)blockDim, (void)args, (void)sharedMem, (void)stream;
  return kernel_unavailable(Fn::k___cudaLaunchKernel_ptsz, reinterpret_cast<const void*>(kernel));
}

cudaError_t cudaFuncGetName(const char** name, const void* func) {
  if (name == nullptr) return fail(cudaErrorInvalidValue);
  const char* n = kernel_name(func);
  *name = n;
  return n ? cudaSuccess : fail(cudaErrorInvalidDeviceFunction);
}

struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
                                                   enum cudaChannelFormatKind f) {
  struct cudaChannelFormatDesc d;
  d.x = x, d.y = y, d.z = z, d.w = w, d.f = f;
  return d;
}

// Driver entry points: symbols/driver.txt, looked up in shim/driver/ (see runtime_entry_point.h).
// cudaGetDriverEntryPoint asks for the caller's own runtime version; the _ptsz exports read
// cudaEnableDefault as the per-thread default stream.
cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult* driverStatus) {
  return driver_entry_point(symbol, funcPtr, CUDART_VERSION, flags, false, driverStatus);
}
cudaError_t cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr,
                                         unsigned long long flags,
                                         enum cudaDriverEntryPointQueryResult* driverStatus) {
  return driver_entry_point(symbol, funcPtr, CUDART_VERSION, flags, true, driverStatus);
}
cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr,
                                             unsigned int cudaVersion, unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult* driverStatus) {
  return driver_entry_point(symbol, funcPtr, cudaVersion, flags, false, driverStatus);
}
cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
    const char* symbol, void** funcPtr, unsigned int cudaVersion, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult* driverStatus) {
  return driver_entry_point(symbol, funcPtr, cudaVersion, flags, true, driverStatus);
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
