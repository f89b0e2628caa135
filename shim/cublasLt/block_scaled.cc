// Block-scaled outputs, which muBLASLt lacks: D's output scales (CUBLASLT_MATMUL_DESC_D_OUT_SCALE_
// MODE / _POINTER) of an MXFP8 matmul, computed by the shim. The inputs' block scales
// (VEC32_UE8M0 on A and B) are muBLASLt's own (mublasLt.h): they reach it as set.
//
// A call whose descriptor has D_OUT_SCALE_MODE = VEC32_UE8M0 (noted by attributes.cc) runs here:
//  1. muBLASLt computes x = alpha * (A's scaling) op(A) (B's scaling) op(B) + beta * scaleC * C
//     [+ epilogue] into an FP32 scratch matrix of D's shape (the caller's descriptor, scales and
//     AMAX_D; D's scale applies to FP8 D only, so not to the FP32 scratch).
//  2. The scratch, D's scale (D_SCALE_POINTER, a scalar; 1 when unset) and the output scale tensor
//     are read back on the caller's stream; on the host, per block of 32 consecutive elements of a
//     column of D (m runs innermost in a column-major D; the last block of a column may be short):
//       y      = scaleD * x                                  (FP32 multiply)
//       amax   = max |y| over the block                      (NaN if any y is NaN)
//       q      = amax / Qmax   (FP32 divide; Qmax 448 for E4M3, 57344 for E5M2)
//       scale  = the smallest power of two 2^s >= q, s in [-127, 127] (UE8M0 code s + 127: rounded
//                up so that no element of the block exceeds Qmax; amax 0 gives code 0; amax
//                infinite gives 2^127; NaN gives the NaN code 0xff)
//       D      = y / 2^s rounded to D's type: to nearest, ties to even, saturating to +-Qmax, NaN
//                kept (as cuBLASLt's FP8 outputs)
//     The UE8M0 codes go to the output scale tensor in cuBLASLt's 128 x 4 tiles, with the columns
//     of D as the tile rows and the 32-element blocks as the tile columns (the layout of the
//     inputs' VEC32_UE8M0 factors, mublasLt.h); entries of partial tiles past D are left as they
//     are. D and the scale tensor are written back on the stream.
// The call blocks until its work is done (the scratch is freed after the stream has run it).
// Refused, named: D not FP8 or a NULL D_OUT_SCALE_POINTER (CUBLAS_STATUS_INVALID_VALUE, as
// cuBLASLt), and as unsupported: a batch, a row-major D, pointer arrays or IMMA orders.
// Compiled once per CUDA ABI.
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <memory>

#include "core/backend.h"
#include "cublasLt/cublasLt.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublasLt12_impl.h"
#else
#include "gen/cublasLt13_impl.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace block_scaled {
namespace {

static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559, "IEEE binary32 float");

const MublasLtTable& lt() { return mublasLt_backend().table; }

constexpr Fn kId = Fn::k_cublasLtMatmul;

cublasStatus_t invalid(const char* what) {
  TORCHADA_LOG(kWarn, "cublasLtMatmul: %s: CUBLAS_STATUS_INVALID_VALUE", what);
  note_error(kId);
  return CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t unsupported(const char* why) {
  note_unsupported(kId, why);
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

cublasStatus_t failed(const char* what) {
  TORCHADA_LOG(kWarn, "cublasLtMatmul: %s: CUBLAS_STATUS_EXECUTION_FAILED", what);
  note_error(kId);
  return CUBLAS_STATUS_EXECUTION_FAILED;
}

// An FP8 format (OCP E4M3FN or E5M2).
struct Fp8 {
  int man_bits, bias;
  uint8_t max_code;  // the largest finite magnitude's code
  float max;         // its value
};
constexpr Fp8 kE4M3{3, 7, 0x7e, 448.0f};
constexpr Fp8 kE5M2{2, 15, 0x7b, 57344.0f};

uint32_t bits_of(float x) {
  uint32_t u = 0;
  std::memcpy(&u, &x, sizeof(u));
  return u;
}

// float -> FP8: to nearest, ties to even; beyond the largest finite value (infinity too): that
// value with its sign; NaN: 0x7f with the sign.
uint8_t to_fp8(float x, const Fp8& f) {
  const uint32_t u = bits_of(x);
  const auto sign = static_cast<uint8_t>((u >> 24) & 0x80u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint8_t>(sign | 0x7fu);
  if (abs >= 0x7f800000u) return static_cast<uint8_t>(sign | f.max_code);
  if (abs < 0x00800000u) return sign;  // zero and float subnormals: below half the least FP8
  const int exp = static_cast<int>(abs >> 23) - 127;
  const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
  const int emin = 1 - f.bias;
  const int shift = 23 - f.man_bits + (exp < emin ? emin - exp : 0);
  if (shift > 31) return sign;
  uint32_t q = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u) != 0)) ++q;
  const int64_t code = exp < emin ? static_cast<int64_t>(q)
                                  : (static_cast<int64_t>(exp + f.bias) << f.man_bits) +
                                        static_cast<int64_t>(q) - (int64_t{1} << f.man_bits);
  return static_cast<uint8_t>(sign | (code > f.max_code ? f.max_code : code));
}

// The UE8M0 code of the smallest power of two >= amax / qmax (see the file comment).
uint8_t ue8m0_scale(float amax, float qmax) {
  if (std::isnan(amax)) return 0xff;
  if (std::isinf(amax)) return 254;
  const float q = amax / qmax;
  if (q == 0.0f) return 0;
  int e = 0;
  const float f = std::frexp(q, &e);  // q = f * 2^e, f in [0.5, 1)
  const int s = f == 0.5f ? e - 1 : e;
  return static_cast<uint8_t>(s < -127 ? 0 : s > 127 ? 254 : s + 127);
}

// Offset of the factor of tile row `outer` and block `block` in cuBLASLt's 128 x 4 tiles.
size_t tiled_offset(int64_t outer, int64_t block, int64_t blocks) {
  const int64_t col_tiles = (blocks + 3) / 4;
  return static_cast<size_t>(((outer / 128) * col_tiles + block / 4) * 512 + (outer % 32) * 16 +
                             (outer % 128 / 32) * 4 + block % 4);
}

template <class T>
bool desc_get(cublasLtMatmulDesc_t desc, mublasLtMatmulDescAttributes_t attr, T& out) {
  size_t written = 0;
  return lt().mublasLtMatmulDescGetAttribute(convert<mublasLtMatmulDesc_t>(desc), attr, &out,
                                             sizeof(out), &written) == MUBLAS_STATUS_SUCCESS &&
         written == sizeof(out);
}

// Device memory for one call, freed once the stream has run the call's work.
class Scratch {
 public:
  explicit Scratch(musaStream_t s) : stream_(s) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    if (base_ == nullptr) return;
    musart().musaStreamSynchronize(stream_);
    musart().musaFree(base_);
  }
  bool allocate(size_t bytes) {
    if (musart().musaMalloc(&base_, bytes) != musaSuccess) {
      base_ = nullptr;
      (void)musart().musaGetLastError();  // the failure is this call's status, not a sticky one
      return false;
    }
    return true;
  }
  void* get() const { return base_; }

 private:
  musaStream_t stream_;
  void* base_ = nullptr;
};

// A muBLASLt layout made here, destroyed with the object.
struct OwnedLayout {
  mublasLtMatrixLayout_t l = nullptr;
  ~OwnedLayout() {
    if (l != nullptr) lt().mublasLtMatrixLayoutDestroy(l);
  }
};

// Sets the descriptor's bias type for the duration of the call (an FP8 D's default bias type is
// C's, an FP32 D's its own), restoring the unset value after.
class BiasTypeFix {
 public:
  BiasTypeFix(cublasLtMatmulDesc_t desc, int32_t c_type) : desc_(desc) {
    int32_t bias_type = 0;
    if (desc_get(desc, MUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bias_type) && bias_type == -1)
      set_ = set(c_type);
  }
  ~BiasTypeFix() {
    if (set_) set(-1);
  }
  BiasTypeFix(const BiasTypeFix&) = delete;
  BiasTypeFix& operator=(const BiasTypeFix&) = delete;

 private:
  bool set(int32_t v) {
    return lt().mublasLtMatmulDescSetAttribute(convert<mublasLtMatmulDesc_t>(desc_),
                                               MUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &v,
                                               sizeof(v)) == MUBLAS_STATUS_SUCCESS;
  }
  cublasLtMatmulDesc_t desc_;
  bool set_ = false;
};

}  // namespace

cublasStatus_t matmul(mublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                      const desc_notes::Note& note, const void* alpha, const void* A,
                      cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
                      const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
                      cublasLtMatrixLayout_t Ddesc, void* workspace, size_t workspaceSizeInBytes,
                      cudaStream_t stream) {
  const MublasLtTable& t = lt();
  const MusartTable& rt = musart();
  if (t.mublasLtMatmul == nullptr || t.mublasLtMatrixLayoutCreate == nullptr ||
      t.mublasLtMatrixLayoutDestroy == nullptr || t.mublasLtMatrixLayoutGetAttribute == nullptr ||
      t.mublasLtMatmulDescGetAttribute == nullptr || t.mublasLtMatmulDescSetAttribute == nullptr ||
      rt.musaMalloc == nullptr || rt.musaFree == nullptr || rt.musaMemcpyAsync == nullptr ||
      rt.musaStreamSynchronize == nullptr)
    return CublasLtLib::missing(kId);
  static_assert(CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 == 2, "cuBLASLt's value");
  if (note.d_out_mode != CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0)
    return unsupported("a D_OUT_SCALE_MODE other than VEC32_UE8M0");
  for (const void* l : {static_cast<const void*>(Adesc), static_cast<const void*>(Bdesc),
                        static_cast<const void*>(Cdesc), static_cast<const void*>(Ddesc)}) {
    const layout_notes::Note n = layout_notes::get(l);
    if (n.pointer_array || n.reordered())
      return unsupported(
          "CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE with pointer-array batches, IMMA orders or planar "
          "complex layouts");
  }
  const auto dl = convert<mublasLtMatrixLayout_t>(Ddesc);
  const auto cl = convert<mublasLtMatrixLayout_t>(Cdesc);
  uint32_t d_type = 0, c_type = 0;
  int32_t order = 0, batch = 0;
  uint64_t m = 0, n = 0;
  int64_t ld = 0;
  if (!layout_get(dl, MUBLASLT_MATRIX_LAYOUT_TYPE, d_type) ||
      !layout_get(dl, MUBLASLT_MATRIX_LAYOUT_ORDER, order) ||
      !layout_get(dl, MUBLASLT_MATRIX_LAYOUT_ROWS, m) ||
      !layout_get(dl, MUBLASLT_MATRIX_LAYOUT_COLS, n) ||
      !layout_get(dl, MUBLASLT_MATRIX_LAYOUT_LD, ld) ||
      !layout_get(dl, MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, batch) ||
      !layout_get(cl, MUBLASLT_MATRIX_LAYOUT_TYPE, c_type))
    return invalid("a matrix layout is not one muBLASLt can read");
  const Fp8* fmt = d_type == MUSA_R_8F_E4M3 ? &kE4M3 : d_type == MUSA_R_8F_E5M2 ? &kE5M2 : nullptr;
  if (fmt == nullptr)
    return invalid("CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE VEC32_UE8M0 needs an FP8 D (E4M3, E5M2)");
  if (note.d_out_scale == nullptr)
    return invalid("CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER is NULL");
  if (order != MUBLASLT_ORDER_COL) return unsupported("D_OUT_SCALE_MODE with a row-major D");
  if (batch != 1) return unsupported("D_OUT_SCALE_MODE with a batch (more than one matrix)");
  if (ld < static_cast<int64_t>(m)) return invalid("D's leading dimension is less than its rows");
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;

  static std::atomic<bool> logged{false};
  if (!logged.exchange(true, std::memory_order_relaxed))
    TORCHADA_LOG(kInfo,
                 "cublasLtMatmul: D_OUT_SCALE_MODE VEC32_UE8M0 emulated: muBLASLt computes an FP32 "
                 "D, the shim derives the UE8M0 block scales and the FP8 D (logged once)");

  // 1. x, FP32, into scratch (muBLASLt's own heuristic: an algorithm is a hint, the FP8 D's need
  //    not fit an FP32 one).
  const auto s = convert<musaStream_t>(stream);
  const size_t count = static_cast<size_t>(m) * n;
  Scratch scratch(s);
  if (!scratch.allocate(count * sizeof(float))) {
    note_error(kId);
    return CUBLAS_STATUS_ALLOC_FAILED;
  }
  OwnedLayout xl;
  if (t.mublasLtMatrixLayoutCreate(&xl.l, MUSA_R_32F, m, n, static_cast<int64_t>(m)) !=
      MUBLAS_STATUS_SUCCESS) {
    xl.l = nullptr;
    return invalid("an FP32 layout of D's shape could not be made");
  }
  {
    const BiasTypeFix bias_fix(desc, static_cast<int32_t>(c_type));
    const cublasStatus_t st = CublasLtLib::status(t.mublasLtMatmul(
        handle, convert<mublasLtMatmulDesc_t>(desc), alpha, A,
        convert<mublasLtMatrixLayout_t>(Adesc), B, convert<mublasLtMatrixLayout_t>(Bdesc), beta, C,
        cl, scratch.get(), xl.l, nullptr, workspace, workspaceSizeInBytes, s));
    if (st != CUBLAS_STATUS_SUCCESS) return CublasLtLib::fail(kId, st);
  }

  // 2. Read back x, D's scale and the scale tensor; derive; write D and the scales.
  const int64_t blocks = static_cast<int64_t>((m + 31) / 32);
  const size_t scale_bytes =
      static_cast<size_t>((n + 127) / 128) * static_cast<size_t>((blocks + 3) / 4) * 512;
  const std::unique_ptr<float[]> xs(new (std::nothrow) float[count]);
  const std::unique_ptr<uint8_t[]> out(new (std::nothrow) uint8_t[count]);
  const std::unique_ptr<uint8_t[]> scales(new (std::nothrow) uint8_t[scale_bytes]);
  if (!xs || !out || !scales) {
    note_error(kId);
    return CUBLAS_STATUS_ALLOC_FAILED;
  }
  float* const x = xs.get();
  float scale_d = 1.0f;
  void* d_scale_ptr = nullptr;
  if (!desc_get(desc, MUBLASLT_MATMUL_DESC_D_SCALE_POINTER, d_scale_ptr))
    return invalid("the matmul descriptor is not one muBLASLt can read");
  if (rt.musaMemcpyAsync(x, scratch.get(), count * sizeof(float), musaMemcpyDeviceToHost, s) !=
          musaSuccess ||
      rt.musaMemcpyAsync(scales.get(), note.d_out_scale, scale_bytes, musaMemcpyDeviceToHost, s) !=
          musaSuccess ||
      (d_scale_ptr != nullptr && rt.musaMemcpyAsync(&scale_d, d_scale_ptr, sizeof(scale_d),
                                                    musaMemcpyDeviceToHost, s) != musaSuccess) ||
      rt.musaStreamSynchronize(s) != musaSuccess)
    return failed("D's FP32 result, D's scale or the output scale tensor could not be read back");

  for (uint64_t j = 0; j < n; ++j) {
    for (int64_t b = 0; b < blocks; ++b) {
      const uint64_t lo = static_cast<uint64_t>(b) * 32, hi = lo + 32 < m ? lo + 32 : m;
      float* y = x + j * m;
      float amax = 0.0f;
      for (uint64_t i = lo; i < hi; ++i) {
        y[i] = scale_d * y[i];
        const float mag = std::fabs(y[i]);
        if (mag > amax || std::isnan(mag)) amax = std::isnan(amax) ? amax : mag;
      }
      const uint8_t code = ue8m0_scale(amax, fmt->max);
      scales[tiled_offset(static_cast<int64_t>(j), b, blocks)] = code;
      const int shift = code == 0xff ? 0 : 127 - int{code};
      for (uint64_t i = lo; i < hi; ++i)
        out[j * m + i] =
            code == 0xff ? static_cast<uint8_t>(0x7f) : to_fp8(std::ldexp(y[i], shift), *fmt);
    }
  }
  char* const d = static_cast<char*>(D);
  bool ok = rt.musaMemcpyAsync(note.d_out_scale, scales.get(), scale_bytes, musaMemcpyHostToDevice,
                               s) == musaSuccess;
  if (ld == static_cast<int64_t>(m)) {
    ok = ok && rt.musaMemcpyAsync(d, out.get(), count, musaMemcpyHostToDevice, s) == musaSuccess;
  } else {
    for (uint64_t j = 0; ok && j < n; ++j)
      ok = rt.musaMemcpyAsync(d + j * static_cast<uint64_t>(ld), out.get() + j * m, m,
                              musaMemcpyHostToDevice, s) == musaSuccess;
  }
  if (!ok || rt.musaStreamSynchronize(s) != musaSuccess)
    return failed("D or its output scales could not be written");
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace block_scaled
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
