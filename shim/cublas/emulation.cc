// The CUDA 13 emulation controls of a cuBLAS handle
// (cublasSet/GetEmulationStrategy, CUDA 12 and 13; the special-value mask and
// the fixed-point settings, CUDA 13 only). They let NVIDIA's cuBLAS trade
// accuracy for speed by emulating a precision with narrower arithmetic; muBLAS
// has no such emulation and computes every GEMM in its native precision, which
// is at least as accurate as any of them. So a setting is checked as cuBLAS
// checks it, recorded per handle in the shim's handle table
// (core/blas_handles.h: forgotten by cublasDestroy) and read back; it changes
// no result. Before any set, a handle answers NVIDIA's defaults: strategy
// CUBLAS_EMULATION_STRATEGY_DEFAULT, special values
// CUDA_EMULATION_SPECIAL_VALUES_SUPPORT_DEFAULT, mantissa control
// CUDA_EMULATION_MANTISSA_CONTROL_DYNAMIC, bit offset 0 (documented defaults),
// maximum mantissa bit count 0 (the value NVIDIA documents as "reset to the
// library's default": the default count itself is not documented) and no
// mantissa bit count pointer. Compiled once per CUDA ABI.
#include <cstdint>

#include "core/blas_handles.h"
#include "cublas/cublas.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublas12_impl.h"
#else
#include "gen/cublas13_impl.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

using Settings = blas_handles::Settings;

cublasStatus_t refuse(Fn id, cublasStatus_t s, const char* why) {
  TORCHADA_LOG(kWarn, "%s: %s: %s", kFnNames[static_cast<int>(id)], why,
               s == CUBLAS_STATUS_INVALID_VALUE ? "CUBLAS_STATUS_INVALID_VALUE"
                                                : "CUBLAS_STATUS_NOT_INITIALIZED");
  note_error(id);
  return s;
}

cublasStatus_t not_a_handle(Fn id) {
  return refuse(id, CUBLAS_STATUS_NOT_INITIALIZED, "not a handle cublasCreate returned");
}

// Reads one setting of `handle` into *out.
template <class T, class F>
cublasStatus_t get(Fn id, cublasHandle_t handle, T* out, F&& field) {
  if (handle == nullptr) return not_a_handle(id);
  if (out == nullptr) return refuse(id, CUBLAS_STATUS_INVALID_VALUE, "NULL output");
  Settings s;
  if (!blas_handles::get_settings(handle, &s)) return not_a_handle(id);
  *out = field(s);
  return CUBLAS_STATUS_SUCCESS;
}

// Records one setting of `handle`: `apply` stores the (already checked) value.
cublasStatus_t set(Fn id, cublasHandle_t handle, void (*apply)(Settings&, std::intptr_t),
                   std::intptr_t value) {
  if (handle == nullptr) return not_a_handle(id);
  if (!blas_handles::change_settings(handle, apply, value)) return not_a_handle(id);
  return CUBLAS_STATUS_SUCCESS;
}

bool known_strategy(cublasEmulationStrategy_t v) {
  switch (v) {
    case CUBLAS_EMULATION_STRATEGY_DEFAULT:
    case CUBLAS_EMULATION_STRATEGY_PERFORMANT:
    case CUBLAS_EMULATION_STRATEGY_EAGER:
      return true;
  }
  return false;
}

}  // namespace

namespace impl {

cublasStatus_t cublasSetEmulationStrategy(cublasHandle_t handle,
                                          cublasEmulationStrategy_t emulationStrategy) {
  constexpr Fn id = Fn::k_cublasSetEmulationStrategy;
  if (handle != nullptr && !known_strategy(emulationStrategy))
    return refuse(id, CUBLAS_STATUS_INVALID_VALUE, "unknown cublasEmulationStrategy_t value");
  return set(
      id, handle, [](Settings& s, std::intptr_t v) { s.emulation_strategy = static_cast<int>(v); },
      emulationStrategy);
}

cublasStatus_t cublasGetEmulationStrategy(cublasHandle_t handle,
                                          cublasEmulationStrategy_t* emulationStrategy) {
  return get(Fn::k_cublasGetEmulationStrategy, handle, emulationStrategy, [](const Settings& s) {
    return static_cast<cublasEmulationStrategy_t>(s.emulation_strategy);
  });
}

#if TORCHADA_CUDA_ABI >= 13

cublasStatus_t cublasSetEmulationSpecialValuesSupport(cublasHandle_t handle,
                                                      cudaEmulationSpecialValuesSupport mask) {
  constexpr Fn id = Fn::k_cublasSetEmulationSpecialValuesSupport;
  // Any mask is taken and recorded as given: NVIDIA's cuBLAS 13.1 does not refuse bits beyond
  // INFINITY and NAN (seen on an H100).
  return set(
      id, handle, [](Settings& s, std::intptr_t v) { s.special_values = static_cast<int>(v); },
      mask);
}

cublasStatus_t cublasGetEmulationSpecialValuesSupport(cublasHandle_t handle,
                                                      cudaEmulationSpecialValuesSupport* mask) {
  return get(Fn::k_cublasGetEmulationSpecialValuesSupport, handle, mask, [](const Settings& s) {
    return static_cast<cudaEmulationSpecialValuesSupport>(s.special_values);
  });
}

cublasStatus_t cublasSetFixedPointEmulationMantissaControl(
    cublasHandle_t handle, cudaEmulationMantissaControl mantissaControl) {
  constexpr Fn id = Fn::k_cublasSetFixedPointEmulationMantissaControl;
  if (handle != nullptr && mantissaControl != CUDA_EMULATION_MANTISSA_CONTROL_DYNAMIC &&
      mantissaControl != CUDA_EMULATION_MANTISSA_CONTROL_FIXED)
    return refuse(id, CUBLAS_STATUS_INVALID_VALUE, "unknown cudaEmulationMantissaControl value");
  return set(
      id, handle, [](Settings& s, std::intptr_t v) { s.mantissa_control = static_cast<int>(v); },
      mantissaControl);
}

cublasStatus_t cublasGetFixedPointEmulationMantissaControl(
    cublasHandle_t handle, cudaEmulationMantissaControl* mantissaControl) {
  return get(Fn::k_cublasGetFixedPointEmulationMantissaControl, handle, mantissaControl,
             [](const Settings& s) {
               return static_cast<cudaEmulationMantissaControl>(s.mantissa_control);
             });
}

cublasStatus_t cublasSetFixedPointEmulationMaxMantissaBitCount(cublasHandle_t handle,
                                                               int maxMantissaBitCount) {
  constexpr Fn id = Fn::k_cublasSetFixedPointEmulationMaxMantissaBitCount;
  if (handle != nullptr && maxMantissaBitCount < 0)
    return refuse(id, CUBLAS_STATUS_INVALID_VALUE, "negative maximum mantissa bit count");
  return set(
      id, handle, [](Settings& s, std::intptr_t v) { s.max_mantissa_bits = static_cast<int>(v); },
      maxMantissaBitCount);
}

cublasStatus_t cublasGetFixedPointEmulationMaxMantissaBitCount(cublasHandle_t handle,
                                                               int* maxMantissaBitCount) {
  return get(Fn::k_cublasGetFixedPointEmulationMaxMantissaBitCount, handle, maxMantissaBitCount,
             [](const Settings& s) { return s.max_mantissa_bits; });
}

cublasStatus_t cublasSetFixedPointEmulationMantissaBitOffset(cublasHandle_t handle,
                                                             int mantissaBitOffset) {
  // Any offset: NVIDIA documents negative ones (fewer bits) as well as positive
  // ones.
  return set(
      Fn::k_cublasSetFixedPointEmulationMantissaBitOffset, handle,
      [](Settings& s, std::intptr_t v) { s.mantissa_bit_offset = static_cast<int>(v); },
      mantissaBitOffset);
}

cublasStatus_t cublasGetFixedPointEmulationMantissaBitOffset(cublasHandle_t handle,
                                                             int* mantissaBitOffset) {
  return get(Fn::k_cublasGetFixedPointEmulationMantissaBitOffset, handle, mantissaBitOffset,
             [](const Settings& s) { return s.mantissa_bit_offset; });
}

cublasStatus_t cublasSetFixedPointEmulationMantissaBitCountPointer(cublasHandle_t handle,
                                                                   int* mantissaBitCount) {
  // NULL is a valid setting (no count reported); the pointer is only kept:
  // muBLAS computes natively, so there is no emulation whose bit count could be
  // written there.
  return set(
      Fn::k_cublasSetFixedPointEmulationMantissaBitCountPointer, handle,
      [](Settings& s, std::intptr_t v) { s.mantissa_bit_count = reinterpret_cast<int*>(v); },
      reinterpret_cast<std::intptr_t>(mantissaBitCount));
}

cublasStatus_t cublasGetFixedPointEmulationMantissaBitCountPointer(cublasHandle_t handle,
                                                                   int** mantissaBitCount) {
  return get(Fn::k_cublasGetFixedPointEmulationMantissaBitCountPointer, handle, mantissaBitCount,
             [](const Settings& s) { return s.mantissa_bit_count; });
}

#endif  // TORCHADA_CUDA_ABI >= 13

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
