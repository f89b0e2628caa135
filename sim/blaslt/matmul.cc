// mublasLtMatmul: D = epilogue(alpha * op(A) * op(B) + beta * C [+ bias]) computed with OpenBLAS,
// run as a host function on the caller's stream so it is ordered with the stream's other work
// (device memory is host memory in the simulator).
//
// Everything is checked and every buffer is allocated before the work is enqueued: once
// mublasLtMatmul returns SUCCESS the host function cannot fail.
#include "elements.h"
#include "internal.h"

#include <cblas.h>

#include "../blas/gemm_library.h"
#include "../runtime/sim_ext.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace lt {
namespace {

template <typename T>
T gelu(T x) {
  const T k = static_cast<T>(0.7978845608028654);  // sqrt(2 / pi)
  return static_cast<T>(0.5) * x *
         (static_cast<T>(1) + std::tanh(k * (x + static_cast<T>(0.044715) * x * x * x)));
}

// d/dx of gelu() above.
template <typename T>
T gelu_grad(T x) {
  const T k = static_cast<T>(0.7978845608028654);
  const T c = static_cast<T>(0.044715);
  const T t = std::tanh(k * (x + c * x * x * x));
  return static_cast<T>(0.5) * (static_cast<T>(1) + t) +
         static_cast<T>(0.5) * x * (static_cast<T>(1) - t * t) * k *
             (static_cast<T>(1) + static_cast<T>(3) * c * x * x);
}

bool aligned(const void* p, size_t a) { return a != 0 && reinterpret_cast<uintptr_t>(p) % a == 0; }

struct Job final : Work {
  Kind kind = Kind::kF32;
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  bool ta = false, tb = false;
  Operand a, b, c, d;
  int32_t pointer_mode = MUBLASLT_POINTER_MODE_HOST;
  int32_t scale_type = MUSA_R_32F;
  const void* alpha = nullptr;  // device pointers (device and vector modes)
  const void* beta = nullptr;
  double alpha_host = 1.0, beta_host = 0.0;  // host values (HOST, BETA_HOST modes)
  int64_t alpha_stride = 0;
  EpilogueInfo epi;
  char* bias_ptr = nullptr;  // input (bias) or output (bias gradient)
  int32_t bias_type = MUSA_R_32F;
  int64_t bias_stride = 0;
  char* aux = nullptr;  // GELU input / ReLU bit mask
  int32_t aux_type = MUSA_R_32F;
  int64_t aux_ld = 0, aux_stride = 0;
  // FP8 scaling (mublasLt.h, "FP8 matmuls"): A, B, C, D scales (NULL: 1), their modes, and the
  // max |x| over D written to amax_d (one float) when set.
  bool fp8 = false;
  const void* scale[4] = {};
  int32_t scale_mode[4] = {};
  float* amax_d = nullptr;
  float amax = 0.0f;
  float scale_of(int which, int64_t batch_index) const;
  // VEC32_UE8M0 factors of A and B (NULL: none), applied to the packed operands.
  const uint8_t* block_factors[2] = {};
  // Whether A / B are used in place by the BLAS call (else packed into a column-major copy).
  bool a_direct = false, b_direct = false;
  // The common case (PyTorch's linear and addmm: fp32 compute and column-major fp32 D and C,
  // host scalars, at most a bias, ReLU or GELU): BLAS writes D itself (D = C first when they
  // differ) and the epilogue runs in place, with no scratch matrix (d_direct).
  bool d_direct = false;
  void run_d_direct();
  // Scratch, allocated at enqueue time, of the compute precision.
  std::vector<float> fa, fb, ft, fbias;
  std::vector<double> da, db, dt, dbias;

  template <typename T>
  std::vector<T>& pa();
  template <typename T>
  std::vector<T>& pb();
  template <typename T>
  std::vector<T>& pt();
  template <typename T>
  std::vector<T>& pbias();

  // The device whose stream runs the job (where an operand beyond its allocation faults).
  int device = 0;
  bool operands_in_memory() const;

  void execute() override;
  template <typename T>
  void run_typed();
  template <typename T>
  const T* prepare(const Operand& o, int64_t batch_index, bool direct, std::vector<T>& pack,
                   int* ld) const;
};

template <>
std::vector<float>& Job::pa<float>() {
  return fa;
}
template <>
std::vector<float>& Job::pb<float>() {
  return fb;
}
template <>
std::vector<float>& Job::pt<float>() {
  return ft;
}
template <>
std::vector<float>& Job::pbias<float>() {
  return fbias;
}
template <>
std::vector<double>& Job::pbias<double>() {
  return dbias;
}
template <>
std::vector<double>& Job::pa<double>() {
  return da;
}
template <>
std::vector<double>& Job::pb<double>() {
  return db;
}
template <>
std::vector<double>& Job::pt<double>() {
  return dt;
}

void gemm(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
          float* c, int ldc) {
  sim_gemm::table().s(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                      m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}
void gemm(bool ta, bool tb, int m, int n, int k, const double* a, int lda, const double* b, int ldb,
          double* c, int ldc) {
  sim_gemm::table().d(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                      m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
}

// The operand of batch `batch_index` as a column-major matrix for BLAS: in place (a row-major
// operand is the column-major view of its transpose) or packed (rows x cols, ld = rows).
template <typename T>
const T* Job::prepare(const Operand& o, int64_t batch_index, bool direct, std::vector<T>& pack,
                      int* ld) const {
  if (direct) {
    *ld = static_cast<int>(o.ld);
    return reinterpret_cast<const T*>(o.at(batch_index, 0, 0));
  }
  for (int64_t j = 0; j < o.cols; ++j) {
    for (int64_t i = 0; i < o.rows; ++i) {
      pack[static_cast<size_t>(i + j * o.rows)] =
          static_cast<T>(load(o.at(batch_index, i, j), o.type));
    }
  }
  *ld = static_cast<int>(o.rows);
  return pack.data();
}

double read_scalar(const void* p, int32_t scale_type, int64_t index) {
  const size_t es = data_type_size(scale_type);
  return load(static_cast<const char*>(p) + index * static_cast<int64_t>(es), scale_type);
}

// The scale of matrix `which` (0 A .. 3 D) for a batch instance: 1 when unset, the per-batch
// value, or the scalar. Outer vectors are read per element by run_typed.
float Job::scale_of(int which, int64_t batch_index) const {
  const void* p = scale[which];
  if (p == nullptr || scale_mode[which] == MUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F ||
      scale_mode[which] == MUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0) {
    return 1.0f;
  }
  const bool per_batch = scale_mode[which] == MUBLASLT_MATMUL_MATRIX_SCALE_PER_BATCH_SCALAR_32F;
  return static_cast<float>(read_scalar(p, MUSA_R_32F, per_batch ? batch_index : 0));
}

// UE8M0, the MXFP8 block factor: 2^(e - 127); 0xff is NaN.
float ue8m0(uint8_t e) { return e == 0xff ? NAN : std::ldexp(1.0f, int{e} - 127); }

// Multiplies a packed operand (column-major, rows x cols; K along its rows or its columns) by its
// 32-element block factors, laid out in cuBLASLt's 128 x 4 tiles (mublasLt.h, VEC32_UE8M0).
template <typename T>
void apply_block_factors(T* pack, int64_t rows, int64_t cols, bool k_along_rows,
                         const uint8_t* factors) {
  const int64_t k_blocks = ((k_along_rows ? rows : cols) + 31) / 32;
  const int64_t col_tiles = (k_blocks + 3) / 4;
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t outer = k_along_rows ? c : r, block = (k_along_rows ? r : c) / 32;
      const int64_t at = ((outer / 128) * col_tiles + block / 4) * 512 + (outer % 32) * 16 +
                         (outer % 128 / 32) * 4 + block % 4;
      pack[r + c * rows] *= static_cast<T>(ue8m0(factors[at]));
    }
  }
}

// col += bias, m elements. The two never overlap (D is an output, the bias an input); saying so
// lets the compiler vectorise without a run-time overlap check: the scalar loop made PyTorch's
// linear with bias (512x64 @ 64x256) cost a third more than the GEMM alone.
void add_column(float* __restrict col, const float* __restrict bias, int64_t m) {
  for (int64_t i = 0; i < m; ++i) col[i] += bias[i];
}

// col = max(col + bias, 0) (bias may be NULL); NaN becomes 0 like fmax.
void relu_column(float* __restrict col, const float* __restrict bias, int64_t m) {
  if (bias == nullptr) {
    for (int64_t i = 0; i < m; ++i) col[i] = col[i] > 0.0f ? col[i] : 0.0f;
  } else {
    for (int64_t i = 0; i < m; ++i) {
      const float v = col[i] + bias[i];
      col[i] = v > 0.0f ? v : 0.0f;
    }
  }
}

void Job::run_d_direct() {
  const float alpha_s = static_cast<float>(alpha_host), beta_s = static_cast<float>(beta_host);
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  for (int64_t bi = 0; bi < batch; ++bi) {
    float* d0 = reinterpret_cast<float*>(const_cast<char*>(d.at(bi, 0, 0)));
    const int ldd = static_cast<int>(d.ld);
    if (beta_s != 0.0f && c.at(bi, 0, 0) != d.at(bi, 0, 0)) {
      for (int64_t j = 0; j < n; ++j) {  // memmove: C and D may overlap
        std::memmove(d0 + j * d.ld, c.at(bi, 0, j), static_cast<size_t>(m) * sizeof(float));
      }
    }
    int lda = 0, ldb = 0;
    const float* pa_ = prepare<float>(a, bi, a_direct, fa, &lda);
    const float* pb_ = prepare<float>(b, bi, b_direct, fb, &ldb);
    const bool ta_eff = a_direct ? (ta != a.row) : ta;
    const bool tb_eff = b_direct ? (tb != b.row) : tb;
    sim_gemm::table().s(CblasColMajor, ta_eff ? CblasTrans : CblasNoTrans,
                        tb_eff ? CblasTrans : CblasNoTrans, mi, ni, ki, alpha_s, pa_, lda, pb_, ldb,
                        beta_s, d0, ldd);
    // The flags in locals and one loop per combination: the bias-only and ReLU loops (PyTorch's
    // addmm / linear with bias, with ReLU) vectorise; a per-element test of members does not.
    const bool relu = epi.relu, gelu = epi.gelu;
    if (!epi.bias_in && !relu && !gelu) continue;
    const float* bias_f =
        epi.bias_in ? reinterpret_cast<const float*>(bias_ptr) + bi * bias_stride : nullptr;
    for (int64_t j = 0; j < n; ++j) {
      float* col = d0 + j * d.ld;
      if (!gelu && !relu) {
        add_column(col, bias_f, m);
      } else if (!gelu) {
        relu_column(col, bias_f, m);
      } else {
        for (int64_t i = 0; i < m; ++i) {
          float v = bias_f != nullptr ? col[i] + bias_f[i] : col[i];
          if (relu) v = v > 0.0f ? v : 0.0f;
          col[i] = lt::gelu(v);
        }
      }
    }
  }
}

template <typename T>
void Job::run_typed() {
  std::vector<T>& t = pt<T>();
  for (int64_t bi = 0; bi < batch; ++bi) {
    if (m > 0 && n > 0 && k > 0) {
      int lda = 0, ldb = 0;
      const T* pa_ = prepare<T>(a, bi, a_direct, pa<T>(), &lda);
      const T* pb_ = prepare<T>(b, bi, b_direct, pb<T>(), &ldb);
      // MXFP8: K runs along A's stored rows when op(A) = A^T, along B's when op(B) = B.
      if (block_factors[0] != nullptr) {
        apply_block_factors(pa<T>().data(), a.rows, a.cols, ta, block_factors[0]);
      }
      if (block_factors[1] != nullptr) {
        apply_block_factors(pb<T>().data(), b.rows, b.cols, !tb, block_factors[1]);
      }
      // In place, a row-major operand is its transpose: flip the operation.
      const bool ta_eff = a_direct ? (ta != a.row) : ta;
      const bool tb_eff = b_direct ? (tb != b.row) : tb;
      gemm(ta_eff, tb_eff, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), pa_, lda,
           pb_, ldb, t.data(), static_cast<int>(m));
    } else {
      std::fill(t.begin(), t.end(), T(0));
    }
    // Scalars of this batch (per-row vectors are read in the loop).
    const bool alpha_vec = pointer_mode == MUBLASLT_POINTER_MODE_DEVICE_VECTOR ||
                           pointer_mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO ||
                           pointer_mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST;
    const bool beta_vec = pointer_mode == MUBLASLT_POINTER_MODE_DEVICE_VECTOR;
    T alpha_s = static_cast<T>(alpha_host), beta_s = static_cast<T>(beta_host);
    if (pointer_mode == MUBLASLT_POINTER_MODE_DEVICE) {
      alpha_s = static_cast<T>(read_scalar(alpha, scale_type, 0));
      beta_s = static_cast<T>(read_scalar(beta, scale_type, 0));
    } else if (pointer_mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO) {
      beta_s = T(0);
    }
    const size_t bias_es = data_type_size(bias_type), aux_es = data_type_size(aux_type);
    auto bias_at = [&](int64_t idx) { return bias_ptr + (bi * bias_stride + idx) * bias_es; };
    std::vector<T>& sums = pbias<T>();  // bias gradient of D's rows
    std::fill(sums.begin(), sums.end(), T(0));
    // FP8 scales of this batch instance; outer vectors (A: per row, B: per column) below.
    const T sa = static_cast<T>(scale_of(0, bi)), sb = static_cast<T>(scale_of(1, bi));
    const T sc = static_cast<T>(scale_of(2, bi));
    const T sd = is_fp8(d.type) ? static_cast<T>(scale_of(3, bi)) : T(1);  // FP8 D only
    const bool a_vec =
        scale[0] != nullptr && scale_mode[0] == MUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    const bool b_vec =
        scale[1] != nullptr && scale_mode[1] == MUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < m; ++i) {
        T al = alpha_vec ? static_cast<T>(read_scalar(alpha, scale_type, bi * alpha_stride + i))
                         : alpha_s;
        T be = beta_vec ? static_cast<T>(read_scalar(beta, scale_type, i)) : beta_s;
        if (fp8) {
          al *= (a_vec ? static_cast<T>(read_scalar(scale[0], MUSA_R_32F, i)) : sa) *
                (b_vec ? static_cast<T>(read_scalar(scale[1], MUSA_R_32F, j)) : sb);
          be *= sc;
        }
        T v = al * t[static_cast<size_t>(i + j * m)];
        if (be != T(0)) v += be * static_cast<T>(load(c.at(bi, i, j), c.type));
        if (epi.bias_in) v += static_cast<T>(load(bias_at(i), bias_type));
        const int64_t aux_idx = bi * aux_stride + j * aux_ld + i;
        if (epi.gelu_aux) store<T>(aux + aux_idx * aux_es, aux_type, v);
        if (epi.relu_mask()) {
          unsigned char* byte = reinterpret_cast<unsigned char*>(aux) + aux_idx / 8;
          const unsigned char bit = static_cast<unsigned char>(1u << (aux_idx % 8));
          if (epi.relu_aux) {
            *byte = v > T(0) ? (*byte | bit) : (*byte & static_cast<unsigned char>(~bit));
          } else if ((*byte & bit) == 0) {  // DRELU: the forward pass clipped this element
            v = T(0);
          }
        }
        if (epi.dgelu) v *= gelu_grad(static_cast<T>(load(aux + aux_idx * aux_es, aux_type)));
        if (epi.relu) v = v > T(0) ? v : T(0);  // max(v, 0); NaN becomes 0 like fmax
        if (epi.gelu) v = lt::gelu(v);
        if (epi.bgrad) sums[static_cast<size_t>(i)] += v;
        if (fp8) {
          const float mag = std::fabs(static_cast<float>(v));
          if (mag > amax || std::isnan(mag)) amax = mag;  // NaN sticks
          v *= sd;
        }
        store<T>(const_cast<char*>(d.at(bi, i, j)), d.type, v);
      }
    }
    if (epi.bgrad) {
      for (int64_t i = 0; i < m; ++i) store<T>(bias_at(i), bias_type, sums[static_cast<size_t>(i)]);
    }
    if (epi.bgrada) {  // row sums of op(A), m x k
      for (int64_t i = 0; i < m; ++i) {
        T sum = T(0);
        for (int64_t l = 0; l < k; ++l) {
          sum += static_cast<T>(load(ta ? a.at(bi, l, i) : a.at(bi, i, l), a.type));
        }
        store<T>(bias_at(i), bias_type, sum);
      }
    }
    if (epi.bgradb) {  // column sums of op(B), k x n
      for (int64_t jj = 0; jj < n; ++jj) {
        T sum = T(0);
        for (int64_t l = 0; l < k; ++l) {
          sum += static_cast<T>(load(tb ? b.at(bi, jj, l) : b.at(bi, l, jj), b.type));
        }
        store<T>(bias_at(jj), bias_type, sum);
      }
    }
  }
}

// Bytes of `batch` matrices of an operand's layout (its batch stride apart) from its base.
size_t operand_bytes(const Operand& o, int64_t batch) {
  if (o.base == nullptr || o.rows <= 0 || o.cols <= 0 || batch <= 0) return 0;
  const int64_t one = o.row ? (o.rows - 1) * o.ld + o.cols : (o.cols - 1) * o.ld + o.rows;
  const int64_t all = o.stride > 0 ? (batch - 1) * o.stride + one : one;
  return static_cast<size_t>(all) * o.esize;
}

// A, B, C and D inside the allocations they start in: else what a GPU's kernel makes of it, the
// device's sticky musaErrorIllegalAddress at the next synchronisation, one line naming the
// operand, and nothing computed.
bool Job::operands_in_memory() const {
  const struct {
    const char* name;
    const Operand& o;
    bool used;
  } ops[] = {{"A", a, k > 0}, {"B", b, k > 0}, {"C", c, true}, {"D", d, true}};
  if (m <= 0 || n <= 0) return true;
  for (const auto& op : ops) {
    const size_t bytes = op.used ? operand_bytes(op.o, batch) : 0;
    if (musaSimCheckOperand(device, "mublasLtMatmul", op.name, op.o.base, bytes) != musaSuccess)
      return false;
  }
  return true;
}

void Job::execute() {
  if (!operands_in_memory()) return;
  if (d_direct) {
    run_d_direct();
  } else if (kind == Kind::kF64) {
    run_typed<double>();
  } else {
    amax = 0.0f;  // a graph runs the same work again
    run_typed<float>();
    if (amax_d != nullptr) *amax_d = amax;
  }
}

template <typename T>
void allocate_scratch(Job& j) {
  if (!j.d_direct) j.pt<T>().resize(static_cast<size_t>(j.m * j.n));
  if (j.epi.bgrad) j.pbias<T>().resize(static_cast<size_t>(j.m));
  if (j.m > 0 && j.n > 0 && j.k > 0) {
    if (!j.a_direct) j.pa<T>().resize(static_cast<size_t>(j.a.rows * j.a.cols));
    if (!j.b_direct) j.pb<T>().resize(static_cast<size_t>(j.b.rows * j.b.cols));
  }
}

}  // namespace
}  // namespace lt

using lt::state;
using lt::valid;

extern "C" MUBLASLT_API mublasStatus_t mublasLtMatmul(
    mublasLtHandle_t lightHandle, mublasLtMatmulDesc_t computeDesc, const void* alpha,
    const void* A, mublasLtMatrixLayout_t Adesc, const void* B, mublasLtMatrixLayout_t Bdesc,
    const void* beta, const void* C, mublasLtMatrixLayout_t Cdesc, void* D,
    mublasLtMatrixLayout_t Ddesc, const mublasLtMatmulAlgo_t* algo, void* workspace,
    size_t workspaceSizeInBytes, musaStream_t stream) {
  static const char* const kFn = "mublasLtMatmul";
  (void)workspace;  // the simulator needs none
  (void)workspaceSizeInBytes;
  if (!valid(lightHandle)) return lt::log_error(kFn, MUBLAS_STATUS_INVALID_HANDLE, "handle");
  if (!valid(computeDesc) || !valid(Adesc) || !valid(Bdesc) || !valid(Cdesc) || !valid(Ddesc)) {
    return lt::log_error(kFn, MUBLAS_STATUS_INVALID_VALUE, "descriptor or layout");
  }
  const lt::DescState& ds = *state(computeDesc);
  const lt::LayoutState &la = *state(Adesc), &lb = *state(Bdesc), &lc = *state(Cdesc),
                        &ld = *state(Ddesc);
  mublasStatus_t st = lt::check_problem(ds, la, lb, lc, ld);
  if (st != MUBLAS_STATUS_SUCCESS) return lt::log_error(kFn, st, "problem");
  if (algo != nullptr) {
    st = lt::check_algo(algo, ds, la, lb, lc, ld);
    if (st != MUBLAS_STATUS_SUCCESS) return lt::log_error(kFn, st, "algo");
  }
  const int32_t mode = ds.pointer_mode;
  const bool beta_zero_mode = mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO;
  if (alpha == nullptr || (beta == nullptr && !beta_zero_mode)) {
    return lt::log_error(kFn, MUBLAS_STATUS_INVALID_VALUE, "alpha/beta");
  }
  if (lt::compute_kind(ds.compute_type) == lt::Kind::kI32) {
    return lt::enqueue_int_matmul(kFn, ds, la, lb, lc, ld, alpha, A, B, beta, C, D, stream);
  }
  if (lt::is_complex(static_cast<int32_t>(la.type))) {
    return lt::enqueue_complex_matmul(kFn, ds, la, lb, lc, ld, alpha, A, B, beta, C, D, stream);
  }

  auto job = std::unique_ptr<lt::Job>(new (std::nothrow) lt::Job);
  if (!job) return lt::log_error(kFn, MUBLAS_STATUS_MEMORY_ERROR, "job");
  lt::Job& j = *job;
  j.kind = lt::compute_kind(ds.compute_type);
  j.m = static_cast<int64_t>(ld.rows);
  j.n = static_cast<int64_t>(ld.cols);
  j.ta = ds.transa != MUBLAS_OP_N;
  j.tb = ds.transb != MUBLAS_OP_N;
  j.k = static_cast<int64_t>(j.ta ? la.rows : la.cols);
  j.batch = ld.batch_count;
  j.a = lt::make_operand(A, la);
  j.b = lt::make_operand(B, lb);
  j.c = lt::make_operand(C, lc);
  j.d = lt::make_operand(D, ld);
  if (stream == nullptr || musaStreamGetDevice(stream, &j.device) != musaSuccess)
    musaGetDevice(&j.device);
  j.pointer_mode = mode;
  j.scale_type = ds.scale_type;
  j.alpha_stride = ds.alpha_vector_batch_stride;
  j.epi = lt::epilogue_info(ds.epilogue);
  // Nothing to compute: D is empty and no bias gradient has elements.
  const bool bias_out_empty = j.epi.bgradb ? j.n == 0 : j.m == 0;
  if ((j.m == 0 || j.n == 0) && (!j.epi.writes_bias() || bias_out_empty)) {
    return MUBLAS_STATUS_SUCCESS;
  }

  // Host scalars are read now, like cuBLASLt; device ones when the work runs.
  if (mode == MUBLASLT_POINTER_MODE_HOST) {
    j.alpha_host = lt::read_scalar(alpha, ds.scale_type, 0);
    j.beta_host = lt::read_scalar(beta, ds.scale_type, 0);
  } else if (mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST) {
    j.beta_host = lt::read_scalar(beta, ds.scale_type, 0);
  }
  j.alpha = alpha;
  j.beta = beta;
  // C is read unless beta is known to be zero now (a zero beta never reads C, as in cuBLASLt).
  bool c_needed = true;
  if (mode == MUBLASLT_POINTER_MODE_HOST ||
      mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST) {
    c_needed = j.beta_host != 0.0;
  } else if (beta_zero_mode) {
    c_needed = false;
  }
  st = lt::check_matrices(kFn, j.m == 0 || j.n == 0, j.k, c_needed, A, B, C, D, lc, ld);
  if (st != MUBLAS_STATUS_SUCCESS) return st;

  j.fp8 = lt::is_fp8(static_cast<int32_t>(la.type));
  for (int i = 0; i < 4; ++i) {
    j.scale[i] = ds.scale[i];
    j.scale_mode[i] = ds.scale_mode[i];
  }
  for (int i = 0; i < 2; ++i) {
    if (ds.scale_mode[i] == MUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0) {
      j.block_factors[i] = static_cast<const uint8_t*>(ds.scale[i]);
    }
  }
  j.amax_d = static_cast<float*>(ds.amax_d);
  if (j.epi.uses_bias()) {
    if (ds.bias == nullptr) return lt::log_error(kFn, MUBLAS_STATUS_INVALID_VALUE, "bias");
    j.bias_ptr = static_cast<char*>(const_cast<void*>(ds.bias));
    // Default: D's type; C's (16F, 16BF or 32F) for FP8 D.
    const auto wide_d =
        static_cast<int32_t>(lt::is_fp8(static_cast<int32_t>(ld.type)) ? lc.type : ld.type);
    j.bias_type = ds.bias_data_type == -1 ? wide_d : ds.bias_data_type;
    j.bias_stride = ds.bias_batch_stride;
  }
  if (j.epi.uses_aux()) {
    if (ds.aux == nullptr) return lt::log_error(kFn, MUBLAS_STATUS_INVALID_VALUE, "aux");
    j.aux = static_cast<char*>(ds.aux);
    j.aux_type = ds.aux_data_type == -1 ? static_cast<int32_t>(ld.type) : ds.aux_data_type;
    j.aux_ld = ds.aux_ld;
    j.aux_stride = ds.aux_batch_stride;
  }
  if ((j.epi.bgrada && j.k > 0 && A == nullptr) || (j.epi.bgradb && j.k > 0 && B == nullptr)) {
    return lt::log_error(kFn, MUBLAS_STATUS_INVALID_VALUE, "NULL matrix");
  }

  // BLAS takes A and B in place when they are already of the compute precision and aligned.
  const int32_t native = j.kind == lt::Kind::kF64 ? MUSA_R_64F : MUSA_R_32F;
  j.a_direct = j.a.type == native && lt::aligned(A, j.a.esize);
  j.b_direct = j.b.type == native && lt::aligned(B, j.b.esize);
  j.d_direct = j.kind != lt::Kind::kF64 && !j.fp8 && mode == MUBLASLT_POINTER_MODE_HOST &&
               j.k > 0 && j.d.type == MUSA_R_32F && !j.d.row && lt::aligned(D, j.d.esize) &&
               (!c_needed || (j.c.type == MUSA_R_32F && !j.c.row)) &&
               (!j.epi.bias_in || (j.bias_type == MUSA_R_32F && lt::aligned(j.bias_ptr, 4))) &&
               !j.epi.uses_aux() && !j.epi.writes_bias() && j.m <= INT32_MAX && j.n <= INT32_MAX &&
               j.k <= INT32_MAX && j.d.ld <= INT32_MAX;
  try {
    if (j.kind == lt::Kind::kF64) {
      lt::allocate_scratch<double>(j);
    } else {
      lt::allocate_scratch<float>(j);
    }
  } catch (const std::bad_alloc&) {
    return lt::log_error(kFn, MUBLAS_STATUS_MEMORY_ERROR, "scratch");
  } catch (const std::length_error&) {
    return lt::log_error(kFn, MUBLAS_STATUS_MEMORY_ERROR, "scratch");
  }
  lt::log_message(5, kFn, "m=%lld n=%lld k=%lld batch=%lld", static_cast<long long>(j.m),
                  static_cast<long long>(j.n), static_cast<long long>(j.k),
                  static_cast<long long>(j.batch));
  st = lt::enqueue(std::unique_ptr<lt::Work>(job.release()), stream);
  if (st != MUBLAS_STATUS_SUCCESS) return lt::log_error(kFn, st, "stream refused the work");
  return MUBLAS_STATUS_SUCCESS;
}
