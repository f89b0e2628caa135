// Element access shared by the matmul and the matrix transform: operands as laid out by a
// layout descriptor, and loads/stores of every computable type at any alignment.
#ifndef TORCHADA_SIM_BLASLT_ELEMENTS_H
#define TORCHADA_SIM_BLASLT_ELEMENTS_H

#include "fp8.h"
#include "half.h"
#include "internal.h"

#include <complex>

#include <cmath>
#include <limits>

namespace lt {

// A matrix operand as stored: element (i, j) of batch b is at
// base + (b * stride + (row ? i * ld + j : i + j * ld)) * esize.
struct Operand {
  const char* base = nullptr;
  int32_t type = MUSA_R_32F;
  bool row = false;
  int64_t rows = 0, cols = 0, ld = 0, stride = 0;
  size_t esize = 4;

  const char* at(int64_t b, int64_t i, int64_t j) const {
    const int64_t off = b * stride + (row ? i * ld + j : i + j * ld);
    return base + off * static_cast<int64_t>(esize);
  }
};

inline Operand make_operand(const void* ptr, const LayoutState& l) {
  Operand o;
  o.base = static_cast<const char*>(ptr);
  o.type = static_cast<int32_t>(l.type);
  o.row = l.order == MUBLASLT_ORDER_ROW;
  o.rows = static_cast<int64_t>(l.rows);
  o.cols = static_cast<int64_t>(l.cols);
  o.ld = l.ld;
  o.stride = l.batch_stride;
  o.esize = data_type_size(o.type);
  return o;
}

// Loads one element of type `type` at `p` (any alignment) as double.
inline double load(const void* p, int32_t type) {
  switch (type) {
    case MUSA_R_32F: {
      float f;
      std::memcpy(&f, p, sizeof(f));
      return f;
    }
    case MUSA_R_64F: {
      double d;
      std::memcpy(&d, p, sizeof(d));
      return d;
    }
    case MUSA_R_16F: {
      uint16_t h;
      std::memcpy(&h, p, sizeof(h));
      return half_to_float(h);
    }
    case MUSA_R_16BF: {
      uint16_t h;
      std::memcpy(&h, p, sizeof(h));
      return bf16_to_float(h);
    }
    case MUSA_R_8F_E4M3:
      return fp8_e4m3_to_float(*static_cast<const uint8_t*>(p));
    case MUSA_R_8F_E5M2:
      return fp8_e5m2_to_float(*static_cast<const uint8_t*>(p));
    case MUSA_R_8I:
      return *static_cast<const int8_t*>(p);
    case MUSA_R_32I: {
      int32_t i;
      std::memcpy(&i, p, sizeof(i));
      return i;
    }
    default:
      return 0.0;
  }
}

// `v` as the integer type I, as cuBLASLt stores a floating-point result to an integer matrix:
// rounded to nearest, ties to even (nearbyint in the default rounding mode), saturated to I's
// range; NaN is 0.
template <typename I>
inline I saturate_round(double v) {
  if (std::isnan(v)) return 0;
  const double r = std::nearbyint(v);
  if (r <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (r >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(r);
}

// A complex element (a real type's: imaginary part 0), parts loaded as above.
inline std::complex<double> load_complex(const void* p, int32_t type) {
  if (!is_complex(type)) return {load(p, type), 0.0};
  const int32_t part = complex_part(type);
  return {load(p, part), load(static_cast<const char*>(p) + data_type_size(part), part)};
}

// Stores `v` (already in the compute precision) as `type` (FP8: rounded and saturated, fp8.h;
// integers: saturate_round).
template <typename T>
inline void store(void* p, int32_t type, T v) {
  switch (type) {
    case MUSA_R_32F: {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, sizeof(f));
      break;
    }
    case MUSA_R_64F: {
      const double d = static_cast<double>(v);
      std::memcpy(p, &d, sizeof(d));
      break;
    }
    case MUSA_R_16F: {
      const uint16_t h = float_to_half(static_cast<float>(v));
      std::memcpy(p, &h, sizeof(h));
      break;
    }
    case MUSA_R_16BF: {
      const uint16_t h = float_to_bf16(static_cast<float>(v));
      std::memcpy(p, &h, sizeof(h));
      break;
    }
    case MUSA_R_8F_E4M3:
      *static_cast<uint8_t*>(p) = float_to_fp8(static_cast<float>(v), kE4M3);
      break;
    case MUSA_R_8F_E5M2:
      *static_cast<uint8_t*>(p) = float_to_fp8(static_cast<float>(v), kE5M2);
      break;
    case MUSA_R_8I:
      *static_cast<int8_t*>(p) = saturate_round<int8_t>(static_cast<double>(v));
      break;
    case MUSA_R_32I: {
      const int32_t i = saturate_round<int32_t>(static_cast<double>(v));
      std::memcpy(p, &i, sizeof(i));
      break;
    }
    default:
      break;
  }
}

// Stores a complex value: both parts for a complex type (each rounded as above), the real part
// for a real one.
inline void store_complex(void* p, int32_t type, std::complex<double> v) {
  if (!is_complex(type)) {
    store<double>(p, type, v.real());
    return;
  }
  const int32_t part = complex_part(type);
  store<double>(p, part, v.real());
  store<double>(static_cast<char*>(p) + data_type_size(part), part, v.imag());
}

}  // namespace lt

#endif  // TORCHADA_SIM_BLASLT_ELEMENTS_H
