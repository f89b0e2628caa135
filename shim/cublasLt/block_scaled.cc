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
//
// 128-element and 128 x 128 block scaling of A and B (A_SCALE_MODE / B_SCALE_MODE = VEC128_32F,
// BLK128x128_32F: DeepSeek-style FP8, PyTorch's blockwise _scaled_mm), also muBLASLt's lack, run
// as one muBLASLt FP8 matmul per 128-element K block with outer-vector scales (muBLASLt's
// OUTER_VEC_32F). Scale tensors are FP32. VEC128_32F's are outer-dimension major: the factor of
// outer index o (row of op(A) / column of op(B)) and K block q lies at q * ld + o, ld the outer
// count rounded up to a multiple of 4 (16 bytes). BLK128x128_32F's are K-block major: the factor
// of outer block o / 128 and K block q lies at (o / 128) * kb + q, kb the number of K blocks (the
// layout PyTorch's blockwise _scaled_mm hands cuBLASLt for its 128 x 128 weights: a
// (K/128, N/128) tensor with strides (1, K/128)). They are read back
// and expanded on the host into one vector per K block (m floats for A, n for B; a SCALAR_32F
// scale, or none, is repeated), uploaded, and for each K block q (the last may be short):
//   P_q(i, j) = (alpha * (sa_q[i] * sb_q[j])) * sum_{l in block q} op(A)(i, l) op(B)(l, j)
//   acc      += P_q   (an FP32 scratch matrix, C of the next matmul with beta 1; acc = P_0 first)
// and the last block's matmul writes D: D = round(P_last + acc) to D's type (D's scale and
// AMAX_D as the caller set them apply there, to the whole sum). Unsupported, named: beta != 0,
// an epilogue, a device pointer mode, a batch, row-major or noted layouts.
//
// NVFP4 (A and B CUDA_R_4F_E2M1, two elements a byte, the first in the low nibble, with
// A_SCALE_MODE / B_SCALE_MODE = VEC16_UE4M3: one unsigned E4M3 factor per 16 K elements, in the
// 128 x 4 tiles of VEC32_UE8M0 with 16-element blocks; the FP32 tensor-wide scale is alpha, as
// cuBLASLt takes it), which MUSA lacks: layouts of that type hold an FP8 stand-in of the same shape
// in muBLASLt (so its heuristics answer; noted, layout_notes). The call reads A, B and their
// factors back, decodes each element times its factor on the host into D's 16-bit type (bf16 for
// an FP32 D): exact, the product of a 2-bit and a 4-bit significand; uploads them and runs one
// muBLASLt matmul (compute 32F: products accumulated in FP32) with the caller's alpha, beta, C, D
// and pointer mode. Unsupported, named: an FP4 D or D_OUT_SCALE (NVFP4 outputs), other than TN,
// an epilogue, a batch, AMAX_D.
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

namespace {

// A muBLASLt matmul descriptor made here, destroyed with the object.
struct OwnedDesc {
  mublasLtMatmulDesc_t d = nullptr;
  ~OwnedDesc() {
    if (d != nullptr) lt().mublasLtMatmulDescDestroy(d);
  }
  template <class T>
  bool set(mublasLtMatmulDescAttributes_t attr, const T& v) {
    return lt().mublasLtMatmulDescSetAttribute(d, attr, &v, sizeof(v)) == MUBLAS_STATUS_SUCCESS;
  }
};

struct Stored {  // a stored operand, muBLASLt's values
  uint32_t type = 0;
  int32_t order = 0, batch = 0;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
};

bool read_stored(cublasLtMatrixLayout_t l, Stored& s) {
  const auto m = convert<mublasLtMatrixLayout_t>(l);
  return layout_get(m, MUBLASLT_MATRIX_LAYOUT_TYPE, s.type) &&
         layout_get(m, MUBLASLT_MATRIX_LAYOUT_ORDER, s.order) &&
         layout_get(m, MUBLASLT_MATRIX_LAYOUT_ROWS, s.rows) &&
         layout_get(m, MUBLASLT_MATRIX_LAYOUT_COLS, s.cols) &&
         layout_get(m, MUBLASLT_MATRIX_LAYOUT_LD, s.ld) &&
         layout_get(m, MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, s.batch);
}

}  // namespace

cublasStatus_t blockwise_matmul(mublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                const desc_notes::Note& note, const void* alpha, const void* A,
                                cublasLtMatrixLayout_t Adesc, const void* B,
                                cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C,
                                cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
                                void* workspace, size_t workspaceSizeInBytes, cudaStream_t stream) {
  (void)C;
  (void)Cdesc;
  const MublasLtTable& t = lt();
  const MusartTable& rt = musart();
  if (t.mublasLtMatmul == nullptr || t.mublasLtMatrixLayoutCreate == nullptr ||
      t.mublasLtMatrixLayoutDestroy == nullptr || t.mublasLtMatrixLayoutGetAttribute == nullptr ||
      t.mublasLtMatmulDescGetAttribute == nullptr || t.mublasLtMatmulDescSetAttribute == nullptr ||
      t.mublasLtMatmulDescCreate == nullptr || t.mublasLtMatmulDescDestroy == nullptr ||
      rt.musaMalloc == nullptr || rt.musaFree == nullptr || rt.musaMemcpyAsync == nullptr ||
      rt.musaStreamSynchronize == nullptr)
    return CublasLtLib::missing(kId);
  if (note.d_out_mode >= 0)
    return unsupported("D_OUT_SCALE_MODE with VEC128_32F or BLK128x128_32F scaling");
  for (const void* l : {static_cast<const void*>(Adesc), static_cast<const void*>(Bdesc),
                        static_cast<const void*>(Cdesc), static_cast<const void*>(Ddesc)}) {
    const layout_notes::Note n = layout_notes::get(l);
    if (n.pointer_array || n.reordered())
      return unsupported(
          "VEC128_32F / BLK128x128_32F scaling with pointer-array batches, IMMA orders or planar "
          "complex layouts");
  }
  Stored a, b, d;
  if (!read_stored(Adesc, a) || !read_stored(Bdesc, b) || !read_stored(Ddesc, d))
    return invalid("a matrix layout is not one muBLASLt can read");
  int32_t op_a = 0, op_b = 0, epilogue = 0, pointer_mode = 0, musa_mode[2] = {};
  void* scale_ptr[2] = {};
  void *d_scale = nullptr, *amax = nullptr;
  if (!desc_get(desc, MUBLASLT_MATMUL_DESC_TRANSA, op_a) ||
      !desc_get(desc, MUBLASLT_MATMUL_DESC_TRANSB, op_b) ||
      !desc_get(desc, MUBLASLT_MATMUL_DESC_EPILOGUE, epilogue) ||
      !desc_get(desc, MUBLASLT_MATMUL_DESC_POINTER_MODE, pointer_mode) ||
      !desc_get(desc, MUBLASLT_MATMUL_DESC_A_SCALE_POINTER, scale_ptr[0]) ||
      !desc_get(desc, MUBLASLT_MATMUL_DESC_B_SCALE_POINTER, scale_ptr[1]) ||
      !desc_get(desc, MUBLASLT_MATMUL_DESC_A_SCALE_MODE, musa_mode[0]) ||
      !desc_get(desc, MUBLASLT_MATMUL_DESC_B_SCALE_MODE, musa_mode[1]) ||
      !desc_get(desc, MUBLASLT_MATMUL_DESC_D_SCALE_POINTER, d_scale) ||
      !desc_get(desc, MUBLASLT_MATMUL_DESC_AMAX_D_POINTER, amax))
    return invalid("the matmul descriptor is not one muBLASLt can read");
  const bool is_fp8_a = a.type == MUSA_R_8F_E4M3 || a.type == MUSA_R_8F_E5M2;
  const bool is_fp8_b = b.type == MUSA_R_8F_E4M3 || b.type == MUSA_R_8F_E5M2;
  if (!is_fp8_a || !is_fp8_b)
    return invalid("VEC128_32F / BLK128x128_32F scaling needs FP8 A and B");
  if (epilogue != MUBLASLT_EPILOGUE_DEFAULT)
    return unsupported("an epilogue with VEC128_32F / BLK128x128_32F scaling");
  if (pointer_mode != MUBLASLT_POINTER_MODE_HOST)
    return unsupported("a device pointer mode with VEC128_32F / BLK128x128_32F scaling");
  if (alpha == nullptr || beta == nullptr) return invalid("alpha or beta is NULL");
  float alpha_v = 0.0f, beta_v = 0.0f;
  std::memcpy(&alpha_v, alpha, sizeof(alpha_v));
  std::memcpy(&beta_v, beta, sizeof(beta_v));
  if (beta_v != 0.0f) return unsupported("beta != 0 with VEC128_32F / BLK128x128_32F scaling");
  if (a.batch != 1 || b.batch != 1 || d.batch != 1)
    return unsupported("a batch with VEC128_32F / BLK128x128_32F scaling");
  if (a.order != MUBLASLT_ORDER_COL || b.order != MUBLASLT_ORDER_COL ||
      d.order != MUBLASLT_ORDER_COL)
    return unsupported("row-major layouts with VEC128_32F / BLK128x128_32F scaling");
  const bool ta = op_a != MUBLAS_OP_N, tb = op_b != MUBLAS_OP_N;
  const uint64_t m = ta ? a.cols : a.rows, k = ta ? a.rows : a.cols;
  const uint64_t n = tb ? b.rows : b.cols;
  if ((tb ? b.cols : b.rows) != k || d.rows != m || d.cols != n)
    return invalid("the shapes of A, B and D do not agree");
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  if (k == 0) return unsupported("k = 0 with VEC128_32F / BLK128x128_32F scaling");

  // The scales, expanded per K block.
  const uint64_t kb = (k + 127) / 128, outer[2] = {m, n};
  const auto s = convert<musaStream_t>(stream);
  std::unique_ptr<float[]> host[2], expanded[2];
  uint64_t host_count[2] = {};
  for (int w = 0; w < 2; ++w) {
    const int32_t mode = note.ab_mode[w];
    if (mode < 0 && musa_mode[w] != MUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F)
      return unsupported(
          "VEC128_32F / BLK128x128_32F scaling of one operand with a mode other than SCALAR_32F "
          "on the other");
    const bool blk = mode == CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
    const uint64_t outer_count = blk ? (outer[w] + 127) / 128
                                 : mode == CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F ? outer[w]
                                                                                   : 1;
    host_count[w] = mode < 0 ? 1 : blk ? outer_count * kb : (outer_count + 3) / 4 * 4 * kb;
    host[w].reset(new (std::nothrow) float[host_count[w]]);
    expanded[w].reset(new (std::nothrow) float[kb * outer[w]]);
    if (!host[w] || !expanded[w]) {
      note_error(kId);
      return CUBLAS_STATUS_ALLOC_FAILED;
    }
    host[w][0] = 1.0f;
    if (scale_ptr[w] == nullptr && mode >= 0)
      return invalid("A_SCALE_POINTER / B_SCALE_POINTER is NULL with a block scale mode");
    if (scale_ptr[w] != nullptr &&
        rt.musaMemcpyAsync(host[w].get(), scale_ptr[w], host_count[w] * sizeof(float),
                           musaMemcpyDeviceToHost, s) != musaSuccess)
      return failed("a scale tensor could not be read back");
  }
  if (rt.musaStreamSynchronize(s) != musaSuccess) return failed("the scale tensors' read back");
  for (int w = 0; w < 2; ++w) {
    const int32_t mode = note.ab_mode[w];
    const bool blk = mode == CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
    const uint64_t ld = (outer[w] + 3) / 4 * 4;  // VEC128_32F's
    for (uint64_t q = 0; q < kb; ++q)
      for (uint64_t o = 0; o < outer[w]; ++o)
        expanded[w][q * outer[w] + o] = mode < 0 ? host[w][0]
                                        : blk    ? host[w][(o / 128) * kb + q]
                                                 : host[w][q * ld + o];
  }

  static std::atomic<bool> logged{false};
  if (!logged.exchange(true, std::memory_order_relaxed))
    TORCHADA_LOG(kInfo,
                 "cublasLtMatmul: VEC128_32F / BLK128x128_32F scaling emulated as one muBLASLt FP8 "
                 "matmul per 128-element K block, FP32-accumulated (logged once)");

  // Scratch: the expanded scales and the FP32 accumulator.
  const size_t scale_floats = kb * (m + n), acc_floats = m * n;
  Scratch scratch(s);
  if (!scratch.allocate((scale_floats + acc_floats) * sizeof(float))) {
    note_error(kId);
    return CUBLAS_STATUS_ALLOC_FAILED;
  }
  float* const dev_sa = static_cast<float*>(scratch.get());
  float* const dev_sb = dev_sa + kb * m;
  float* const acc = dev_sb + kb * n;
  if (rt.musaMemcpyAsync(dev_sa, expanded[0].get(), kb * m * sizeof(float), musaMemcpyHostToDevice,
                         s) != musaSuccess ||
      rt.musaMemcpyAsync(dev_sb, expanded[1].get(), kb * n * sizeof(float), musaMemcpyHostToDevice,
                         s) != musaSuccess)
    return failed("the expanded scales could not be written");

  OwnedDesc od;
  if (t.mublasLtMatmulDescCreate(&od.d, MUBLAS_COMPUTE_32F, MUSA_R_32F) != MUBLAS_STATUS_SUCCESS) {
    od.d = nullptr;
    return invalid("a matmul descriptor could not be made");
  }
  const int32_t outer_vec = MUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  if (!od.set(MUBLASLT_MATMUL_DESC_TRANSA, op_a) || !od.set(MUBLASLT_MATMUL_DESC_TRANSB, op_b) ||
      !od.set(MUBLASLT_MATMUL_DESC_A_SCALE_MODE, outer_vec) ||
      !od.set(MUBLASLT_MATMUL_DESC_B_SCALE_MODE, outer_vec))
    return invalid("the per-block matmul descriptor could not be set");
  OwnedLayout acc_layout;
  if (t.mublasLtMatrixLayoutCreate(&acc_layout.l, MUSA_R_32F, m, n, static_cast<int64_t>(m)) !=
      MUBLAS_STATUS_SUCCESS) {
    acc_layout.l = nullptr;
    return invalid("an FP32 layout of D's shape could not be made");
  }
  const char* const a_bytes = static_cast<const char*>(A);
  const char* const b_bytes = static_cast<const char*>(B);
  for (uint64_t q = 0; q < kb; ++q) {
    const uint64_t kq = q + 1 < kb ? 128 : k - 128 * q;
    const bool last = q + 1 == kb;
    OwnedLayout la, lb;
    // K runs down A's stored rows when op(A) = A^T, across its columns otherwise (FP8: 1 byte).
    const char* const a_q = a_bytes + (ta ? 128 * q : 128 * q * static_cast<uint64_t>(a.ld));
    const char* const b_q = b_bytes + (tb ? 128 * q * static_cast<uint64_t>(b.ld) : 128 * q);
    if (t.mublasLtMatrixLayoutCreate(&la.l, static_cast<musaDataType>(a.type), ta ? kq : m,
                                     ta ? m : kq, a.ld) != MUBLAS_STATUS_SUCCESS ||
        t.mublasLtMatrixLayoutCreate(&lb.l, static_cast<musaDataType>(b.type), tb ? n : kq,
                                     tb ? kq : n, b.ld) != MUBLAS_STATUS_SUCCESS)
      return invalid("a K block's layout could not be made");
    const void* sa_q = dev_sa + q * m;
    const void* sb_q = dev_sb + q * n;
    void* const d_none = nullptr;
    if (!od.set(MUBLASLT_MATMUL_DESC_A_SCALE_POINTER, sa_q) ||
        !od.set(MUBLASLT_MATMUL_DESC_B_SCALE_POINTER, sb_q) ||
        !od.set(MUBLASLT_MATMUL_DESC_D_SCALE_POINTER, last ? d_scale : d_none) ||
        !od.set(MUBLASLT_MATMUL_DESC_AMAX_D_POINTER, last ? amax : d_none))
      return invalid("the per-block matmul descriptor could not be set");
    const float block_beta = q == 0 ? 0.0f : 1.0f;
    const cublasStatus_t st = CublasLtLib::status(
        t.mublasLtMatmul(handle, od.d, &alpha_v, a_q, la.l, b_q, lb.l, &block_beta, acc,
                         acc_layout.l, last ? D : static_cast<void*>(acc),
                         last ? convert<mublasLtMatrixLayout_t>(Ddesc) : acc_layout.l, nullptr,
                         workspace, workspaceSizeInBytes, s));
    if (st != CUBLAS_STATUS_SUCCESS) return CublasLtLib::fail(kId, st);
  }
  if (rt.musaStreamSynchronize(s) != musaSuccess) return failed("the per-block matmuls");
  return CUBLAS_STATUS_SUCCESS;
}

namespace {

// E2M1: 1 sign, 2 exponent, 1 mantissa bit; magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6.
float e2m1(uint8_t nibble) {
  static constexpr float kMagnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float v = kMagnitude[nibble & 7];
  return (nibble & 8) != 0 ? -v : v;
}

// Unsigned E4M3 (the sign bit ignored): 4 exponent bits (bias 7), 3 mantissa bits; 0x7f is NaN.
float ue4m3(uint8_t code) {
  const int c = code & 0x7f, e = c >> 3, m = c & 7;
  if (c == 0x7f) return std::numeric_limits<float>::quiet_NaN();
  return e == 0 ? std::ldexp(static_cast<float>(m), -9)
                : std::ldexp(static_cast<float>(8 + m), e - 10);
}

// An exactly representable float's 16-bit pattern: bf16 (the high half) or fp16 (normal values,
// zero, infinity and NaN; the decoded products are no smaller than 2^-10).
uint16_t to_16bit(float v, bool bf16) {
  const uint32_t u = bits_of(v);
  if (bf16) return static_cast<uint16_t>(u >> 16);
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
  if (abs == 0) return sign;
  const int exp = static_cast<int>(abs >> 23) - 127;
  if (exp > 15) return static_cast<uint16_t>(sign | 0x7c00u);
  return static_cast<uint16_t>(sign | ((exp + 15) << 10) | ((abs & 0x7fffffu) >> 13));
}

}  // namespace

cublasStatus_t nvfp4_matmul(mublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                            const desc_notes::Note& note, const void* alpha, const void* A,
                            cublasLtMatrixLayout_t Adesc, const void* B,
                            cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C,
                            cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
                            void* workspace, size_t workspaceSizeInBytes, cudaStream_t stream) {
  const MublasLtTable& t = lt();
  const MusartTable& rt = musart();
  if (t.mublasLtMatmul == nullptr || t.mublasLtMatrixLayoutCreate == nullptr ||
      t.mublasLtMatrixLayoutDestroy == nullptr || t.mublasLtMatrixLayoutGetAttribute == nullptr ||
      t.mublasLtMatmulDescGetAttribute == nullptr || t.mublasLtMatmulDescSetAttribute == nullptr ||
      t.mublasLtMatmulDescCreate == nullptr || t.mublasLtMatmulDescDestroy == nullptr ||
      rt.musaMalloc == nullptr || rt.musaFree == nullptr || rt.musaMemcpyAsync == nullptr ||
      rt.musaStreamSynchronize == nullptr)
    return CublasLtLib::missing(kId);
  const layout_notes::Note na = layout_notes::get(Adesc), nb = layout_notes::get(Bdesc);
  const layout_notes::Note nc = layout_notes::get(Cdesc), nd = layout_notes::get(Ddesc);
  if (nc.fp4 || nd.fp4 || note.d_out_mode >= 0)
    return unsupported("NVFP4 outputs (a CUDA_R_4F_E2M1 C or D, D_OUT_SCALE_MODE)");
  constexpr int32_t kVec16 = CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
  if (!na.fp4 || !nb.fp4 || note.ab_mode[0] != kVec16 || note.ab_mode[1] != kVec16)
    return unsupported(
        "NVFP4 other than CUDA_R_4F_E2M1 A and B both with VEC16_UE4M3 scales (A_SCALE_MODE, "
        "B_SCALE_MODE)");
  for (const layout_notes::Note& n : {na, nb, nc, nd})
    if (n.pointer_array || n.reordered())
      return unsupported("NVFP4 with pointer-array batches, IMMA orders or planar layouts");
  Stored a, b, d;
  if (!read_stored(Adesc, a) || !read_stored(Bdesc, b) || !read_stored(Ddesc, d))
    return invalid("a matrix layout is not one muBLASLt can read");
  int32_t op_a = 0, op_b = 0, epilogue = 0, pointer_mode = 0;
  void* scale_ptr[2] = {};
  void* amax = nullptr;
  if (!desc_get(desc, MUBLASLT_MATMUL_DESC_TRANSA, op_a) ||
      !desc_get(desc, MUBLASLT_MATMUL_DESC_TRANSB, op_b) ||
      !desc_get(desc, MUBLASLT_MATMUL_DESC_EPILOGUE, epilogue) ||
      !desc_get(desc, MUBLASLT_MATMUL_DESC_POINTER_MODE, pointer_mode) ||
      !desc_get(desc, MUBLASLT_MATMUL_DESC_A_SCALE_POINTER, scale_ptr[0]) ||
      !desc_get(desc, MUBLASLT_MATMUL_DESC_B_SCALE_POINTER, scale_ptr[1]) ||
      !desc_get(desc, MUBLASLT_MATMUL_DESC_AMAX_D_POINTER, amax))
    return invalid("the matmul descriptor is not one muBLASLt can read");
  if (op_a != MUBLAS_OP_T || op_b != MUBLAS_OP_N)
    return unsupported("NVFP4 other than TN (op(A) = A^T, op(B) = B)");
  if (epilogue != MUBLASLT_EPILOGUE_DEFAULT) return unsupported("an epilogue with NVFP4");
  if (amax != nullptr) return unsupported("AMAX_D with NVFP4 and a 16/32-bit D");
  if (a.batch != 1 || b.batch != 1 || d.batch != 1) return unsupported("a batch with NVFP4");
  if (a.order != MUBLASLT_ORDER_COL || b.order != MUBLASLT_ORDER_COL ||
      d.order != MUBLASLT_ORDER_COL)
    return unsupported("row-major layouts with NVFP4");
  if (d.type != MUSA_R_16BF && d.type != MUSA_R_16F && d.type != MUSA_R_32F)
    return unsupported("NVFP4 with a D other than 16F, 16BF or 32F");
  if (scale_ptr[0] == nullptr || scale_ptr[1] == nullptr)
    return invalid("A_SCALE_POINTER or B_SCALE_POINTER is NULL with VEC16_UE4M3");
  const uint64_t k = a.rows, m = a.cols, n = b.cols;
  if (b.rows != k || d.rows != m || d.cols != n)
    return invalid("the shapes of A, B and D do not agree");
  if (a.ld < static_cast<int64_t>(k) || b.ld < static_cast<int64_t>(k) || a.ld % 2 != 0 ||
      b.ld % 2 != 0)
    return invalid("an FP4 leading dimension is less than K or odd");
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;

  static std::atomic<bool> logged{false};
  if (!logged.exchange(true, std::memory_order_relaxed))
    TORCHADA_LOG(kInfo,
                 "cublasLtMatmul: NVFP4 emulated: E2M1 x UE4M3 decoded exactly to 16-bit operands, "
                 "one muBLASLt matmul accumulating in FP32 (logged once)");

  // Read back the packed operands and the factors.
  const auto s = convert<musaStream_t>(stream);
  const bool bf16 = d.type != MUSA_R_16F;
  const uint64_t kblocks = (k + 15) / 16, outer[2] = {m, n};
  const Stored* ops[2] = {&a, &b};
  const void* data[2] = {A, B};
  std::unique_ptr<uint8_t[]> packed[2], factors[2];
  std::unique_ptr<uint16_t[]> decoded[2];
  size_t packed_bytes[2] = {}, factor_bytes[2] = {};
  for (int w = 0; w < 2; ++w) {
    packed_bytes[w] =
        static_cast<size_t>((static_cast<uint64_t>(ops[w]->ld) * (outer[w] - 1) + k + 1) / 2);
    factor_bytes[w] = static_cast<size_t>((outer[w] + 127) / 128 * ((kblocks + 3) / 4) * 512);
    packed[w].reset(new (std::nothrow) uint8_t[packed_bytes[w]]);
    factors[w].reset(new (std::nothrow) uint8_t[factor_bytes[w]]);
    decoded[w].reset(new (std::nothrow) uint16_t[k * outer[w]]);
    if (!packed[w] || !factors[w] || !decoded[w]) {
      note_error(kId);
      return CUBLAS_STATUS_ALLOC_FAILED;
    }
    if (rt.musaMemcpyAsync(packed[w].get(), data[w], packed_bytes[w], musaMemcpyDeviceToHost, s) !=
            musaSuccess ||
        rt.musaMemcpyAsync(factors[w].get(), scale_ptr[w], factor_bytes[w], musaMemcpyDeviceToHost,
                           s) != musaSuccess)
      return failed("an FP4 operand or its factors could not be read back");
  }
  if (rt.musaStreamSynchronize(s) != musaSuccess) return failed("the FP4 operands' read back");
  for (int w = 0; w < 2; ++w) {
    const uint64_t ld = static_cast<uint64_t>(ops[w]->ld);
    for (uint64_t o = 0; o < outer[w]; ++o) {
      for (uint64_t l = 0; l < k; ++l) {
        const uint64_t at = o * ld + l;
        const uint8_t byte = packed[w][at / 2];
        const auto nibble = static_cast<uint8_t>(at % 2 == 0 ? byte & 0xf : byte >> 4);
        const float f = ue4m3(factors[w][tiled_offset(
            static_cast<int64_t>(o), static_cast<int64_t>(l / 16), static_cast<int64_t>(kblocks))]);
        decoded[w][o * k + l] = to_16bit(e2m1(nibble) * f, bf16);
      }
    }
  }

  Scratch scratch(s);
  if (!scratch.allocate((m + n) * k * sizeof(uint16_t))) {
    note_error(kId);
    return CUBLAS_STATUS_ALLOC_FAILED;
  }
  uint16_t* const dev_a = static_cast<uint16_t*>(scratch.get());
  uint16_t* const dev_b = dev_a + m * k;
  if (rt.musaMemcpyAsync(dev_a, decoded[0].get(), m * k * sizeof(uint16_t), musaMemcpyHostToDevice,
                         s) != musaSuccess ||
      rt.musaMemcpyAsync(dev_b, decoded[1].get(), n * k * sizeof(uint16_t), musaMemcpyHostToDevice,
                         s) != musaSuccess)
    return failed("the decoded operands could not be written");
  OwnedDesc od;
  if (t.mublasLtMatmulDescCreate(&od.d, MUBLAS_COMPUTE_32F, MUSA_R_32F) != MUBLAS_STATUS_SUCCESS) {
    od.d = nullptr;
    return invalid("a matmul descriptor could not be made");
  }
  if (!od.set(MUBLASLT_MATMUL_DESC_TRANSA, op_a) || !od.set(MUBLASLT_MATMUL_DESC_TRANSB, op_b) ||
      !od.set(MUBLASLT_MATMUL_DESC_POINTER_MODE, pointer_mode))
    return invalid("the decoded matmul's descriptor could not be set");
  OwnedLayout la, lb;
  const auto type16 = bf16 ? MUSA_R_16BF : MUSA_R_16F;
  if (t.mublasLtMatrixLayoutCreate(&la.l, type16, k, m, static_cast<int64_t>(k)) !=
          MUBLAS_STATUS_SUCCESS ||
      t.mublasLtMatrixLayoutCreate(&lb.l, type16, k, n, static_cast<int64_t>(k)) !=
          MUBLAS_STATUS_SUCCESS)
    return invalid("a decoded operand's layout could not be made");
  const cublasStatus_t st = CublasLtLib::status(t.mublasLtMatmul(
      handle, od.d, alpha, dev_a, la.l, dev_b, lb.l, beta, C,
      convert<mublasLtMatrixLayout_t>(Cdesc), D, convert<mublasLtMatrixLayout_t>(Ddesc), nullptr,
      workspace, workspaceSizeInBytes, s));
  if (st != CUBLAS_STATUS_SUCCESS) return CublasLtLib::fail(kId, st);
  if (rt.musaStreamSynchronize(s) != musaSuccess) return failed("the decoded matmul");
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace block_scaled
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
