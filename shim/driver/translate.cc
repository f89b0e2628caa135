// Driver entry points that translate or are answered by the shim: versions, error names, and
// device attributes under the runtime's compute-capability policy.
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
  const CUresult r = to_cu_result(f(pi, static_cast<MUdevice_attribute>(attrib), dev));
  if (r != CUDA_SUCCESS || (attrib != CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR &&
                            attrib != CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))
    return r;
  int reported = 0;
  if (abi13::impl::cudaDeviceGetAttribute(&reported, static_cast<enum cudaDeviceAttr>(attrib),
                                          dev) == cudaSuccess)
    *pi = reported;
  return r;
}

}  // namespace impl
}  // namespace drv
}  // namespace torchada
