// Loads and stores of one element in any of the engines' element types (elementwise::Kind),
// converted to and from the compute type. Shared by the elementwise and reduction kernels.
#pragma once

#include "elementwise.h"
#include "portable.cuh"

namespace torchada::TORCHADA_KERNELS_NS {
namespace memory {

using elementwise::Kind;

// Bytes of one element of `k`.
__host__ __device__ constexpr int size_of(Kind k) {
  switch (k) {
    case Kind::kBool:
    case Kind::kUInt8:
    case Kind::kInt8:
      return 1;
    case Kind::kInt16:
    case Kind::kFloat16:
    case Kind::kBFloat16:
      return 2;
    case Kind::kInt32:
    case Kind::kFloat32:
      return 4;
    case Kind::kInt64:
    case Kind::kFloat64:
      return 8;
  }
  return 0;
}

template <class T>
__device__ __forceinline__ T load(const char* p, Kind k) {
  switch (k) {
    case Kind::kBool:
      return static_cast<T>(*reinterpret_cast<const bool*>(p));
    case Kind::kUInt8:
      return static_cast<T>(*reinterpret_cast<const uint8_t*>(p));
    case Kind::kInt8:
      return static_cast<T>(*reinterpret_cast<const int8_t*>(p));
    case Kind::kInt16:
      return static_cast<T>(*reinterpret_cast<const int16_t*>(p));
    case Kind::kInt32:
      return static_cast<T>(*reinterpret_cast<const int32_t*>(p));
    case Kind::kInt64:
      return static_cast<T>(*reinterpret_cast<const int64_t*>(p));
    case Kind::kFloat16:
      return static_cast<T>(to_float(*reinterpret_cast<const __half*>(p)));
    case Kind::kBFloat16:
      return static_cast<T>(to_float(*reinterpret_cast<const bf16_t*>(p)));
    case Kind::kFloat32:
      return static_cast<T>(*reinterpret_cast<const float*>(p));
    case Kind::kFloat64:
      return static_cast<T>(*reinterpret_cast<const double*>(p));
  }
  return T(0);
}

// Floating values stored into an integral type truncate as C++ (and PyTorch's kernels) do.
template <class T>
__device__ __forceinline__ void store(char* p, Kind k, T v) {
  switch (k) {
    case Kind::kBool:
      *reinterpret_cast<bool*>(p) = v != T(0);
      return;
    case Kind::kUInt8:
      *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(static_cast<int64_t>(v));
      return;
    case Kind::kInt8:
      *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(static_cast<int64_t>(v));
      return;
    case Kind::kInt16:
      *reinterpret_cast<int16_t*>(p) = static_cast<int16_t>(static_cast<int64_t>(v));
      return;
    case Kind::kInt32:
      *reinterpret_cast<int32_t*>(p) = static_cast<int32_t>(static_cast<int64_t>(v));
      return;
    case Kind::kInt64:
      *reinterpret_cast<int64_t*>(p) = static_cast<int64_t>(v);
      return;
    case Kind::kFloat16:
      *reinterpret_cast<__half*>(p) = from_float<__half>(static_cast<float>(v));
      return;
    case Kind::kBFloat16:
      *reinterpret_cast<bf16_t*>(p) = from_float<bf16_t>(static_cast<float>(v));
      return;
    case Kind::kFloat32:
      *reinterpret_cast<float*>(p) = static_cast<float>(v);
      return;
    case Kind::kFloat64:
      *reinterpret_cast<double*>(p) = static_cast<double>(v);
      return;
  }
}

}  // namespace memory
}  // namespace torchada::TORCHADA_KERNELS_NS
