// Helpers for the muBLASLt simulator tests: device buffers, element encodings written with the
// compiler's own _Float16 (independent of the library's conversions), and a naive reference
// matmul in double precision.
#ifndef TORCHADA_TESTS_SIM_BLASLT_LT_TEST_UTIL_H
#define TORCHADA_TESTS_SIM_BLASLT_LT_TEST_UTIL_H

#include <mublasLt.h>
#include <musa_runtime.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#define ASSERT_MU_OK(x) ASSERT_EQ(musaSuccess, (x))
#define ASSERT_LT_OK(x) ASSERT_EQ(MUBLAS_STATUS_SUCCESS, (x))
#define EXPECT_LT_OK(x) EXPECT_EQ(MUBLAS_STATUS_SUCCESS, (x))

namespace lt_test {

inline size_t type_size(musaDataType t) {
  switch (t) {
    case MUSA_R_64F:
      return 8;
    case MUSA_R_32F:
      return 4;
    case MUSA_R_16F:
    case MUSA_R_16BF:
      return 2;
    default:
      return 0;
  }
}

// Encodes `v` as type `t` at `p`. Half uses the compiler's _Float16 conversion; bfloat16 values
// in these tests are exactly representable, so truncating the float is exact (checked).
inline void encode(double v, musaDataType t, void* p) {
  switch (t) {
    case MUSA_R_64F:
      std::memcpy(p, &v, 8);
      break;
    case MUSA_R_32F: {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      break;
    }
    case MUSA_R_16F: {
      _Float16 h = static_cast<_Float16>(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      break;
    }
    case MUSA_R_16BF: {
      float f = static_cast<float>(v);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      EXPECT_EQ(0u, u & 0xffffu) << "value " << v << " is not exact in bfloat16";
      uint16_t b = static_cast<uint16_t>(u >> 16);
      std::memcpy(p, &b, 2);
      break;
    }
    default:
      ADD_FAILURE() << "type " << t;
      break;
  }
}

inline double decode(musaDataType t, const void* p) {
  switch (t) {
    case MUSA_R_64F: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case MUSA_R_32F: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case MUSA_R_16F: {
      _Float16 h;
      std::memcpy(&h, p, 2);
      return static_cast<float>(h);
    }
    case MUSA_R_16BF: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      uint32_t u = static_cast<uint32_t>(b) << 16;
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    }
    default:
      return NAN;
  }
}

// Exactly representable test values: multiples of 1/4 in [-2, 2].
inline std::vector<double> random_values(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(-8, 8);
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen) / 4.0;
  return v;
}

// Device memory (host memory in the simulator) filled through musaMemcpy.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) { allocate(bytes); }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) musaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void allocate(size_t bytes) {
    bytes_ = bytes;
    EXPECT_EQ(musaSuccess, musaMalloc(&ptr_, bytes == 0 ? 1 : bytes));
  }
  void upload(const std::vector<uint8_t>& host) {
    ASSERT_LE(host.size(), bytes_);
    ASSERT_MU_OK(musaMemcpy(ptr_, host.data(), host.size(), musaMemcpyHostToDevice));
  }
  std::vector<uint8_t> download() const {
    std::vector<uint8_t> host(bytes_);
    EXPECT_EQ(musaSuccess, musaMemcpy(host.data(), ptr_, bytes_, musaMemcpyDeviceToHost));
    return host;
  }
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// A matrix as the tests store it: values (double) at logical (i, j, batch), placed in memory by
// order/ld/stride, with every other byte of the buffer a sentinel.
struct Matrix {
  musaDataType type = MUSA_R_32F;
  bool row = false;
  int64_t rows = 0, cols = 0, ld = 0, stride = 0;
  int batch = 1;

  int64_t offset(int b, int64_t i, int64_t j) const {
    return b * stride + (row ? i * ld + j : i + j * ld);
  }
  size_t elements() const {
    int64_t last = 0;
    if (rows > 0 && cols > 0) last = offset(batch - 1, rows - 1, cols - 1);
    return static_cast<size_t>(last + 1);
  }
  size_t bytes() const { return elements() * type_size(type); }
};

constexpr uint8_t kSentinel = 0x5a;

inline std::vector<uint8_t> pack(const Matrix& m, const std::vector<double>& values) {
  std::vector<uint8_t> out(m.bytes(), kSentinel);
  const size_t es = type_size(m.type);
  size_t idx = 0;
  for (int b = 0; b < m.batch; ++b)
    for (int64_t j = 0; j < m.cols; ++j)
      for (int64_t i = 0; i < m.rows; ++i)
        encode(values[idx++], m.type, out.data() + m.offset(b, i, j) * static_cast<int64_t>(es));
  return out;
}

inline double value_at(const Matrix& m, const std::vector<uint8_t>& bytes, int b, int64_t i,
                       int64_t j) {
  return decode(m.type, bytes.data() + m.offset(b, i, j) * static_cast<int64_t>(type_size(m.type)));
}

inline double ref_gelu(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

// RAII wrappers.
struct Handle {
  mublasLtHandle_t h = nullptr;
  Handle() { EXPECT_EQ(MUBLAS_STATUS_SUCCESS, mublasLtCreate(&h)); }
  ~Handle() { mublasLtDestroy(h); }
};
struct Desc {
  mublasLtMatmulDesc_t d = nullptr;
  Desc(mublasComputeType_t c, musaDataType_t s) {
    EXPECT_EQ(MUBLAS_STATUS_SUCCESS, mublasLtMatmulDescCreate(&d, c, s));
  }
  ~Desc() { mublasLtMatmulDescDestroy(d); }
  template <typename T>
  mublasStatus_t set(mublasLtMatmulDescAttributes_t a, T v) {
    return mublasLtMatmulDescSetAttribute(d, a, &v, sizeof(v));
  }
};
struct Layout {
  mublasLtMatrixLayout_t l = nullptr;
  Layout(musaDataType t, uint64_t r, uint64_t c, int64_t ld) {
    EXPECT_EQ(MUBLAS_STATUS_SUCCESS, mublasLtMatrixLayoutCreate(&l, t, r, c, ld));
  }
  explicit Layout(const Matrix& m) : Layout(m.type, m.rows, m.cols, m.ld) {
    int32_t order = m.row ? MUBLASLT_ORDER_ROW : MUBLASLT_ORDER_COL;
    EXPECT_EQ(MUBLAS_STATUS_SUCCESS, set(MUBLASLT_MATRIX_LAYOUT_ORDER, order));
    EXPECT_EQ(MUBLAS_STATUS_SUCCESS, set(MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t{m.batch}));
    EXPECT_EQ(MUBLAS_STATUS_SUCCESS, set(MUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, m.stride));
  }
  ~Layout() { mublasLtMatrixLayoutDestroy(l); }
  template <typename T>
  mublasStatus_t set(mublasLtMatrixLayoutAttribute_t a, T v) {
    return mublasLtMatrixLayoutSetAttribute(l, a, &v, sizeof(v));
  }
};
struct Pref {
  mublasLtMatmulPreference_t p = nullptr;
  Pref() { EXPECT_EQ(MUBLAS_STATUS_SUCCESS, mublasLtMatmulPreferenceCreate(&p)); }
  ~Pref() { mublasLtMatmulPreferenceDestroy(p); }
  template <typename T>
  mublasStatus_t set(mublasLtMatmulPreferenceAttributes_t a, T v) {
    return mublasLtMatmulPreferenceSetAttribute(p, a, &v, sizeof(v));
  }
};
struct Stream {
  musaStream_t s = nullptr;
  Stream() { EXPECT_EQ(musaSuccess, musaStreamCreate(&s)); }
  ~Stream() { musaStreamDestroy(s); }
};

}  // namespace lt_test

#endif  // TORCHADA_TESTS_SIM_BLASLT_LT_TEST_UTIL_H
