// Driver entry points that translate or are answered by the shim: versions, error names, and
// device attributes under the runtime's compute-capability policy.
#include <cudaProfiler.h>
#include <cuda_runtime_api.h>

#include "driver/driver.h"
#include "driver/entry_points.h"
#include "gen/driver_impl.h"

namespace torchada {
// The CUDA 13 runtime's cudaDeviceGetAttribute (shim/runtime/device.cc), which applies
// TORCHADA_REPORT_CC: the driver reports the compute capability the runtime reports.
inline namespace abi13 {
namespace impl {
cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device);
}  // namespace impl
}  // namespace abi13

namespace drv {
namespace impl {

CUresult shim_cuDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = driver_version();
  return CUDA_SUCCESS;
}

CUresult shim_cuGetErrorName(CUresult error, const char** pStr) {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (const CuResultName& n : kCuResultNames) {
    if (n.code == error) {
      *pStr = n.name;
      return CUDA_SUCCESS;
    }
  }
  *pStr = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult shim_cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice_v1 dev) {
  // musa-abi.md: MUdevice_attribute assumed equal to CUdevice_attribute (like musaDeviceAttr to
  // cudaDeviceAttr); the ones this function depends on are checked.
  static_assert(static_cast<int>(MU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) ==
                        static_cast<int>(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) &&
                    static_cast<int>(MU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) ==
                        static_cast<int>(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
                "MUdevice_attribute compute capability values");
  static_assert(static_cast<int>(cudaDevAttrComputeCapabilityMajor) ==
                        static_cast<int>(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) &&
                    static_cast<int>(cudaDevAttrComputeCapabilityMinor) ==
                        static_cast<int>(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
                "cudaDeviceAttr compute capability values");
  const auto f = driver_table().p_muDeviceGetAttribute;
  if (f == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
  CUresult r = to_cu_result(f(pi, static_cast<MUdevice_attribute>(attrib), dev));
  // Every id cuda.h defines gets a value: one the MUSA driver does not know (a newer CUDA
  // feature) is answered as a CUDA device without that feature answers, 0.
  if (r == CUDA_ERROR_INVALID_VALUE && pi != nullptr && static_cast<int>(attrib) >= 1 &&
      static_cast<int>(attrib) < static_cast<int>(CU_DEVICE_ATTRIBUTE_MAX)) {
    *pi = 0;
    r = CUDA_SUCCESS;
  }
  if (r != CUDA_SUCCESS || (attrib != CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR &&
                            attrib != CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))
    return r;
  int reported = 0;
  if (abi13::impl::cudaDeviceGetAttribute(&reported, static_cast<enum cudaDeviceAttr>(attrib),
                                          dev) == cudaSuccess)
    *pi = reported;
  return r;
}

CUresult shim_cuDeviceComputeCapability(int* major, int* minor, CUdevice_v1 dev) {
  if (major == nullptr || minor == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUresult r =
      shim_cuDeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  if (r != CUDA_SUCCESS) return r;
  return shim_cuDeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
}

// No GPUDirect RDMA peer writes into MUSA memory through torchada, so a valid flush has nothing to
// wait for; invalid arguments are refused as CUDA refuses them.
CUresult shim_cuFlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget target,
                                         CUflushGPUDirectRDMAWritesScope scope) {
  if (target != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX) return CUDA_ERROR_INVALID_VALUE;
  if (scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER &&
      scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES)
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

// No NVIDIA profiler can attach to work that runs on MUSA; without one, CUDA's own calls do
// nothing and succeed.
CUresult shim_cuProfilerInitialize(const char*, const char*, CUoutput_mode) { return CUDA_SUCCESS; }
CUresult shim_cuProfilerStart() { return CUDA_SUCCESS; }
CUresult shim_cuProfilerStop() { return CUDA_SUCCESS; }

}  // namespace impl
}  // namespace drv
}  // namespace torchada
