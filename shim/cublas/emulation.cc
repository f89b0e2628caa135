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
// mantissa bit count pointer.
//
// The math mode is recorded the same way, because muBLAS has no counterpart for CUDA 13's emulated
// modes: cublasSetMathMode(CUBLAS_FP32_EMULATED_BF16X9_MATH / CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH,
// either or both, with or without CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) sets muBLAS's
// default math (native FP32 and FP64, no TF32: at least as accurate as the emulation promises) and
// cublasGetMathMode answers the mode exactly as set. Compiled once per CUDA ABI.
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

// cuBLAS's math mode -> muBLAS's: the emulated modes become muBLAS's default math; the others
// (TENSOR_OP, PEDANTIC, TF32_TENSOR_OP) by name; the reduction bit is kept. false: not a mode
// cuBLAS defines.
bool musa_math_mode(int mode, mublasMath_t& out) {
  constexpr int kNoReducedReduction = CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
  const int base = mode & ~kNoReducedReduction;
  int emulated_bits = CUBLAS_FP32_EMULATED_BF16X9_MATH;
#if CUBLAS_VER_MAJOR >= 13
  emulated_bits |= CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH;
#endif
  int musa = 0;
  if (base != 0 && (base & ~emulated_bits) == 0)
    musa = MUBLAS_DEFAULT_MATH;
  else if (Pair<cublasMath_t>::valid(static_cast<cublasMath_t>(base)))
    musa = Pair<cublasMath_t>::to_musa(static_cast<cublasMath_t>(base));
  else
    return false;
  if ((mode & kNoReducedReduction) != 0)
    musa |= Pair<cublasMath_t>::to_musa(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  out = static_cast<mublasMath_t>(musa);
  return true;
}

}  // namespace

namespace impl {

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  constexpr Fn id = Fn::k_cublasSetMathMode;
  if (!blas_handles::known_cublas(handle)) return CublasLib::bad_handle(id);
  const auto fn = mublas_backend().table.mublasSetMathMode;
  if (fn == nullptr) return CublasLib::missing(id);
  mublasMath_t musa{};
  if (!musa_math_mode(static_cast<int>(mode), musa)) {
    TORCHADA_LOG(kWarn,
                 "cublasSetMathMode: %d is not a cublasMath_t mode: CUBLAS_STATUS_INVALID_VALUE",
                 static_cast<int>(mode));
    note_error(id);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  const cublasStatus_t s = CublasLib::status(fn(convert<mublasHandle_t>(handle), musa));
  if (s != CUBLAS_STATUS_SUCCESS) return CublasLib::fail(id, s);
  return set(
      id, handle, [](Settings& st, std::intptr_t v) { st.math_mode = static_cast<int>(v); }, mode);
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  constexpr Fn id = Fn::k_cublasGetMathMode;
  if (!blas_handles::known_cublas(handle)) return CublasLib::bad_handle(id);
  return get(id, handle, mode,
             [](const Settings& s) { return static_cast<cublasMath_t>(s.math_mode); });
}

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
