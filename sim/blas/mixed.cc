// Mixed and half precision: the GemmEx engine (also behind SgemmEx, CgemmEx, Cgemm3mEx and the
// Hgemm routines), CsyrkEx / CherkEx, and the half / bfloat16 batched GEMVs.
//
// Inputs are converted to the execution type (float for 16-bit, int8 and single-precision data,
// double for double precision and for int8 x int8 -> int32, which double computes exactly), the
// product runs in OpenBLAS, and the result is rounded to C's type. The "fast" compute types round
// the inputs first as the tensor cores would: MUBLAS_COMPUTE_32F_FAST_TF32 (and
// MUBLAS_COMPUTE_32F under MUBLAS_TF32_TENSOR_OP_MATH) to TF32, _FAST_16F to binary16,
// _FAST_16BF to bfloat16.
#include "batched.h"
#include "gemm_ex.h"

namespace mublas_sim {

namespace {

enum class Round { kNone, kTf32, kHalf, kBf16 };

struct Plan {
  musaDataType_t scale;  // alpha / beta
  musaDataType_t exec;   // MUSA_R_32F, MUSA_R_64F, MUSA_C_32F or MUSA_C_64F
  Round round;
};

bool valid_compute(const mublasComputeType_t& ct) {
  switch (enum_value(ct)) {
    case MUBLAS_COMPUTE_16F:
    case MUBLAS_COMPUTE_16F_PEDANTIC:
    case MUBLAS_COMPUTE_32F:
    case MUBLAS_COMPUTE_32F_PEDANTIC:
    case MUBLAS_COMPUTE_64F:
    case MUBLAS_COMPUTE_64F_PEDANTIC:
    case MUBLAS_COMPUTE_32I:
    case MUBLAS_COMPUTE_32I_PEDANTIC:
    case MUBLAS_COMPUTE_32F_FAST_16F:
    case MUBLAS_COMPUTE_32F_FAST_16BF:
    case MUBLAS_COMPUTE_32F_FAST_TF32:
      return true;
  }
  return false;
}

bool tf32_math(mublasHandle_t h) {
  return (static_cast<int>(h->math) & ~MUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) ==
         MUBLAS_TF32_TENSOR_OP_MATH;
}

// The supported (A/B type, C type, compute type) combinations, as cuBLAS documents them.
bool make_plan(mublasHandle_t h, musaDataType_t ab, musaDataType_t c, mublasComputeType_t compute,
               Plan* p) {
  auto is = [&](musaDataType_t a_, musaDataType_t c_) { return ab == a_ && c == c_; };
  const bool cplx = is_complex_type(c);
  switch (compute) {
    case MUBLAS_COMPUTE_16F:
    case MUBLAS_COMPUTE_16F_PEDANTIC:
      *p = {MUSA_R_16F, MUSA_R_32F, Round::kNone};
      return is(MUSA_R_16F, MUSA_R_16F);
    case MUBLAS_COMPUTE_32I:
    case MUBLAS_COMPUTE_32I_PEDANTIC:
      *p = {MUSA_R_32I, MUSA_R_64F, Round::kNone};
      return is(MUSA_R_8I, MUSA_R_32I);
    case MUBLAS_COMPUTE_32F:
    case MUBLAS_COMPUTE_32F_PEDANTIC: {
      const bool tf32 =
          compute == MUBLAS_COMPUTE_32F && tf32_math(h) && (ab == MUSA_R_32F || ab == MUSA_C_32F);
      *p = {cplx ? MUSA_C_32F : MUSA_R_32F, cplx ? MUSA_C_32F : MUSA_R_32F,
            tf32 ? Round::kTf32 : Round::kNone};
      return is(MUSA_R_16F, MUSA_R_16F) || is(MUSA_R_16F, MUSA_R_32F) ||
             is(MUSA_R_16BF, MUSA_R_16BF) || is(MUSA_R_16BF, MUSA_R_32F) ||
             is(MUSA_R_8I, MUSA_R_32F) || is(MUSA_R_32F, MUSA_R_32F) || is(MUSA_C_8I, MUSA_C_32F) ||
             is(MUSA_C_32F, MUSA_C_32F);
    }
    case MUBLAS_COMPUTE_32F_FAST_16F:
    case MUBLAS_COMPUTE_32F_FAST_16BF:
    case MUBLAS_COMPUTE_32F_FAST_TF32:
      *p = {cplx ? MUSA_C_32F : MUSA_R_32F, cplx ? MUSA_C_32F : MUSA_R_32F,
            compute == MUBLAS_COMPUTE_32F_FAST_16F    ? Round::kHalf
            : compute == MUBLAS_COMPUTE_32F_FAST_16BF ? Round::kBf16
                                                      : Round::kTf32};
      return is(MUSA_R_32F, MUSA_R_32F) || is(MUSA_C_32F, MUSA_C_32F);
    case MUBLAS_COMPUTE_64F:
    case MUBLAS_COMPUTE_64F_PEDANTIC:
      *p = {cplx ? MUSA_C_64F : MUSA_R_64F, cplx ? MUSA_C_64F : MUSA_R_64F, Round::kNone};
      return is(MUSA_R_64F, MUSA_R_64F) || is(MUSA_C_64F, MUSA_C_64F);
  }
  return false;
}

float apply_round(float v, Round r) {
  switch (r) {
    case Round::kTf32:
      return round_tf32(v);
    case Round::kHalf:
      return round_half(v);
    case Round::kBf16:
      return round_bf16(v);
    case Round::kNone:
      break;
  }
  return v;
}

template <class E>
E round_value(E v, Round r) {
  if constexpr (std::is_same_v<E, float>)
    return apply_round(v, r);
  else if constexpr (std::is_same_v<E, cf>)
    return cf(apply_round(v.real(), r), apply_round(v.imag(), r));
  else
    return v;
}

template <class E>
constexpr musaDataType_t type_of() {
  if constexpr (std::is_same_v<E, float>)
    return MUSA_R_32F;
  else if constexpr (std::is_same_v<E, double>)
    return MUSA_R_64F;
  else if constexpr (std::is_same_v<E, cf>)
    return MUSA_C_32F;
  else
    return MUSA_C_64F;
}

size_t elem_size(musaDataType_t t) {
  size_t s = 0;
  visit_type(t, [&](auto tag) { s = sizeof(typename decltype(tag)::type); });
  return s;
}

// The rows x cols matrix at p (type t, leading dimension ld) as a packed E matrix.
template <class E>
std::vector<E> load_matrix(musaDataType_t t, const void* p, int rows, int cols, int ld, Round r) {
  std::vector<E> out(static_cast<size_t>(rows) * static_cast<size_t>(cols));
  visit_type(t, [&](auto tag) {
    using S = typename decltype(tag)::type;
    const S* s = static_cast<const S*>(p);
    for (int j = 0; j < cols; ++j)
      for (int i = 0; i < rows; ++i)
        out[static_cast<size_t>(idx(i, j, rows))] = round_value(load_as<E>(s[idx(i, j, ld)]), r);
  });
  return out;
}

template <class E>
void store_matrix(musaDataType_t t, const E* in_, int rows, int cols, void* p, int ld) {
  visit_type(t, [&](auto tag) {
    using S = typename decltype(tag)::type;
    S* d = static_cast<S*>(p);
    for (int j = 0; j < cols; ++j)
      for (int i = 0; i < rows; ++i)
        d[idx(i, j, ld)] = store_as<S>(in_[static_cast<size_t>(idx(i, j, rows))]);
  });
}

// One GEMM of the engine, in execution type E.
template <class E>
void run_entry(mublasOperation_t ta, mublasOperation_t tb, int m, int n, int k, E alpha,
               const void* A, musaDataType_t at, int lda, const void* B, musaDataType_t bt, int ldb,
               E beta, void* C, musaDataType_t ct, int ldc, Round r) {
  constexpr musaDataType_t et = type_of<E>();
  if (at == et && bt == et && r == Round::kNone && ct == et) {
    gemm_run<E>(ta, tb, m, n, k, alpha, static_cast<const E*>(A), lda, static_cast<const E*>(B),
                ldb, beta, static_cast<E*>(C), ldc);
    return;
  }
  const int ar = is_n(ta) ? m : k, ac = is_n(ta) ? k : m;
  const int br = is_n(tb) ? k : n, bc = is_n(tb) ? n : k;
  std::vector<E> a, b;
  if (k > 0) {
    a = load_matrix<E>(at, A, ar, ac, lda, r);
    b = load_matrix<E>(bt, B, br, bc, ldb, r);
  }
  const int pa = std::max(1, ar), pb = std::max(1, br);
  if (ct == et) {
    gemm_run<E>(ta, tb, m, n, k, alpha, a.data(), pa, b.data(), pb, beta, static_cast<E*>(C), ldc);
    return;
  }
  std::vector<E> c = beta == E(0) ? std::vector<E>(static_cast<size_t>(m) * n, E(0))
                                  : load_matrix<E>(ct, C, m, n, ldc, Round::kNone);
  gemm_run<E>(ta, tb, m, n, k, alpha, a.data(), pa, b.data(), pb, beta, c.data(), m);
  store_matrix<E>(ct, c.data(), m, n, C, ldc);
}

// Entry i's operand: from the array, or base + i * stride elements (NULL stays NULL).
const void* nth(const void* base, long long stride, size_t elem, int i) {
  if (base == nullptr) return nullptr;
  return static_cast<const char*>(base) +
         static_cast<std::ptrdiff_t>(i) * stride * static_cast<std::ptrdiff_t>(elem);
}

}  // namespace

bool compute_from_data_type(musaDataType_t t, mublasComputeType_t* out) {
  switch (t) {
    case MUSA_R_16F:
      *out = MUBLAS_COMPUTE_16F;
      return true;
    case MUSA_R_32F:
    case MUSA_C_32F:
      *out = MUBLAS_COMPUTE_32F;
      return true;
    case MUSA_R_64F:
    case MUSA_C_64F:
      *out = MUBLAS_COMPUTE_64F;
      return true;
    case MUSA_R_32I:
      *out = MUBLAS_COMPUTE_32I;
      return true;
    default:
      return false;
  }
}

mublasStatus_t gemm_ex(mublasHandle_t h, mublasOperation_t ta, mublasOperation_t tb, int m, int n,
                       int k, const void* alpha, musaDataType_t at, int lda, musaDataType_t bt,
                       int ldb, const void* beta, musaDataType_t ct, int ldc,
                       const mublasComputeType_t& compute, const mublasGemmAlgo_t& algo,
                       const ExOperands& ops, int batch) {
  Check c(h);
  c.e(ta).e(tb).value_if(!valid_compute(compute));
  const int algo_v = enum_value(algo);
  c.value_if(algo_v != MUBLAS_GEMM_DEFAULT && algo_v != MUBLAS_GEMM_DEFAULT_TENSOR_OP);
  check_gemm(c, ta, tb, m, n, k, lda, ldb, ldc).dim(batch);
  MUBLAS_TRY(c.status());
  Plan plan{};
  if (at != bt || !make_plan(h, at, ct, compute, &plan)) return MUBLAS_STATUS_NOT_IMPLEMENTED;
  if (m == 0 || n == 0 || batch == 0) return MUBLAS_STATUS_SUCCESS;
  c.ptrs(alpha, beta);
  if (ops.arrays) {
    c.ptrs(ops.a_arr, ops.b_arr, ops.c_arr);
  } else {
    c.ptr(ops.c);
    if (k > 0) c.ptrs(ops.a, ops.b);
  }
  MUBLAS_TRY(c.status());
  const size_t ea = elem_size(at), eb = elem_size(bt), ec = elem_size(ct);
  return with_exec(plan.exec, [&](auto tag) {
    using E = typename decltype(tag)::type;
    const AnyScalar<E> a(h, plan.scale, alpha), b(h, plan.scale, beta);
    const Round r = plan.round;
    const ExOperands o = ops;
    const FaultSite site = fault_site(h, "gemm (GemmEx)");
    const size_t sa = k > 0 ? matrix_bytes(is_n(ta) ? m : k, is_n(ta) ? k : m, lda, ea) : 0;
    const size_t sb = k > 0 ? matrix_bytes(is_n(tb) ? k : n, is_n(tb) ? n : k, ldb, eb) : 0;
    const size_t sc = matrix_bytes(m, n, ldc, ec);
    return enqueue(h, [=] {
      if (o.arrays) {
        const size_t bytes = static_cast<size_t>(batch) * sizeof(void*);
        if (!operand_ok(site, "A array", o.a_arr, bytes) ||
            !operand_ok(site, "B array", o.b_arr, bytes) ||
            !operand_ok(site, "C array", o.c_arr, bytes))
          return;
      } else if (!operand_ok(site, "A", o.a, strided_bytes(sa, o.sa, batch, ea)) ||
                 !operand_ok(site, "B", o.b, strided_bytes(sb, o.sb, batch, eb)) ||
                 !operand_ok(site, "C", o.c, strided_bytes(sc, o.sc, batch, ec))) {
        return;
      }
      const E av = a(), bv = b();
      for (int i = 0; i < batch; ++i) {
        const void* A = o.arrays ? o.a_arr[i] : nth(o.a, o.sa, ea, i);
        const void* B = o.arrays ? o.b_arr[i] : nth(o.b, o.sb, eb, i);
        void* C = o.arrays ? o.c_arr[i] : const_cast<void*>(nth(o.c, o.sc, ec, i));
        if (C == nullptr || (k > 0 && (A == nullptr || B == nullptr))) continue;
        if (!operand_ok(site, "A", A, sa) || !operand_ok(site, "B", B, sb) ||
            !operand_ok(site, "C", C, sc))
          return;  // the device has faulted: the rest of the batch is not run
        run_entry<E>(ta, tb, m, n, k, av, A, at, lda, B, bt, ldb, bv, C, ct, ldc, r);
      }
    });
  });
}

// CsyrkEx / CherkEx (and the 3m forms): A of type C_8I or C_32F, C of type C_32F.
template <class S>
mublasStatus_t rank_k_ex(mublasHandle_t h, mublasFillMode_t uplo, mublasOperation_t trans, int n,
                         int k, const S* alpha, const void* A, musaDataType_t at, int lda,
                         const S* beta, void* C, musaDataType_t ct, int ldc) {
  constexpr bool herm = !kIsComplex<S>;
  Check c(h);
  c.e(uplo).e(trans);
  if (c.ok()) c.value_if(trans == (herm ? MUBLAS_OP_T : MUBLAS_OP_C));
  c.dim(n).dim(k);
  if (c.ok()) c.ld(lda, is_n(trans) ? n : k).ld(ldc, n);
  MUBLAS_TRY(c.status());
  if ((at != MUSA_C_8I && at != MUSA_C_32F) || ct != MUSA_C_32F)
    return MUBLAS_STATUS_NOT_IMPLEMENTED;
  if (n == 0) return MUBLAS_STATUS_SUCCESS;
  c.ptrs(alpha, beta, C);
  if (k > 0) c.ptr(A);
  MUBLAS_TRY(c.status());
  const Scalar<S> a(h, alpha), b(h, beta);
  const CBLAS_UPLO u = cb_uplo(uplo);
  const CBLAS_TRANSPOSE t = cb_op<cf>(trans);
  return enqueue(h, [=] {
    const int rows = is_n(trans) ? n : k, cols = is_n(trans) ? k : n;
    const std::vector<cf> abuf =
        k > 0 ? load_matrix<cf>(at, A, rows, cols, lda, Round::kNone) : std::vector<cf>{};
    const S av = a(), bv = b();
    cf* cp = static_cast<cf*>(C);
    if constexpr (herm)
      cblas_cherk(kCol, u, t, n, k, av, abuf.data(), std::max(1, rows), bv, cp, ldc);
    else
      cblas_csyrk(kCol, u, t, n, k, &av, abuf.data(), std::max(1, rows), &bv, cp, ldc);
  });
}

}  // namespace mublas_sim

using namespace mublas_sim;

// ---- Single-precision-compute GEMMs with typed scalars (SgemmEx, CgemmEx, Cgemm3mEx).
#define MUBLAS_GEMM_EX32(NAME, S)                                                                 \
  MUBLAS_C(mublasStatus_t)                                                                        \
  NAME(mublasHandle_t h, mublasOperation_t transa, mublasOperation_t transb, int m, int n, int k, \
       const S* alpha, const void* A, musaDataType_t Atype, int lda, const void* B,               \
       musaDataType_t Btype, int ldb, const S* beta, void* C, musaDataType_t Ctype, int ldc) {    \
    return guard([&] {                                                                            \
      return gemm_ex(h, transa, transb, m, n, k, alpha, Atype, lda, Btype, ldb, beta, Ctype, ldc, \
                     MUBLAS_COMPUTE_32F, MUBLAS_GEMM_DEFAULT, ExOperands::single(A, B, C), 1);    \
    });                                                                                           \
  }
MUBLAS_GEMM_EX32(mublasSgemmEx, float)
MUBLAS_GEMM_EX32(mublasCgemmEx, muComplex)
MUBLAS_GEMM_EX32(mublasCgemm3mEx, muComplex)

// ---- Half-precision GEMMs (compute type 16F).
MUBLAS_C(mublasStatus_t)
mublasHgemm(mublasHandle_t h, mublasOperation_t transa, mublasOperation_t transb, int m, int n,
            int k, const __half* alpha, const __half* A, int lda, const __half* B, int ldb,
            const __half* beta, __half* C, int ldc) {
  return guard([&] {
    return gemm_ex(h, transa, transb, m, n, k, alpha, MUSA_R_16F, lda, MUSA_R_16F, ldb, beta,
                   MUSA_R_16F, ldc, MUBLAS_COMPUTE_16F, MUBLAS_GEMM_DEFAULT,
                   ExOperands::single(A, B, C), 1);
  });
}
MUBLAS_C(mublasStatus_t)
mublasHgemmBatched(mublasHandle_t h, mublasOperation_t transa, mublasOperation_t transb, int m,
                   int n, int k, const __half* alpha, const __half* const Aarray[], int lda,
                   const __half* const Barray[], int ldb, const __half* beta,
                   __half* const Carray[], int ldc, int batchCount) {
  return guard([&] {
    return gemm_ex(h, transa, transb, m, n, k, alpha, MUSA_R_16F, lda, MUSA_R_16F, ldb, beta,
                   MUSA_R_16F, ldc, MUBLAS_COMPUTE_16F, MUBLAS_GEMM_DEFAULT,
                   ExOperands::pointer_arrays(reinterpret_cast<const void* const*>(Aarray),
                                              reinterpret_cast<const void* const*>(Barray),
                                              reinterpret_cast<void* const*>(Carray)),
                   batchCount);
  });
}
MUBLAS_C(mublasStatus_t)
mublasHgemmStridedBatched(mublasHandle_t h, mublasOperation_t transa, mublasOperation_t transb,
                          int m, int n, int k, const __half* alpha, const __half* A, int lda,
                          long long strideA, const __half* B, int ldb, long long strideB,
                          const __half* beta, __half* C, int ldc, long long strideC,
                          int batchCount) {
  return guard([&] {
    return gemm_ex(h, transa, transb, m, n, k, alpha, MUSA_R_16F, lda, MUSA_R_16F, ldb, beta,
                   MUSA_R_16F, ldc, MUBLAS_COMPUTE_16F, MUBLAS_GEMM_DEFAULT,
                   ExOperands::strided(A, strideA, B, strideB, C, strideC), batchCount);
  });
}

// ---- CsyrkEx, CherkEx and their 3m forms.
#define MUBLAS_RANK_K_EX(NAME, S)                                                            \
  MUBLAS_C(mublasStatus_t)                                                                   \
  NAME(mublasHandle_t h, mublasFillMode_t uplo, mublasOperation_t trans, int n, int k,       \
       const S* alpha, const void* A, musaDataType_t Atype, int lda, const S* beta, void* C, \
       musaDataType_t Ctype, int ldc) {                                                      \
    return call(MUBLAS_IMPL(rank_k_ex), h, uplo, trans, n, k, alpha, A, Atype, lda, beta, C, \
                Ctype, ldc);                                                                 \
  }
MUBLAS_RANK_K_EX(mublasCsyrkEx, muComplex)
MUBLAS_RANK_K_EX(mublasCsyrk3mEx, muComplex)
MUBLAS_RANK_K_EX(mublasCherkEx, float)
MUBLAS_RANK_K_EX(mublasCherk3mEx, float)

// ---- Half / bfloat16 batched GEMVs: matrix and x of type TA, y of type TY, float scalars.
namespace {

template <class T>
using Storage = std::remove_pointer_t<decltype(in(static_cast<T*>(nullptr)))>;

template <class TA, class TY, class Src>
mublasStatus_t gemv_mixed(mublasHandle_t h, mublasOperation_t trans, int m, int n,
                          const float* alpha, int lda, int incx, const float* beta, int incy,
                          int batch, Src src) {
  return guard([&] {
    return gemv_batched_core<float>(h, trans, m, n, alpha, lda, incx, beta, incy, batch, src,
                                    gemv_job<float, TA, TY>());
  });
}

}  // namespace

// clang-format off
#define MUBLAS_GEMV_MIXED(NAME, TA, TY)                                                         \
  MUBLAS_C(mublasStatus_t) mublas##NAME##gemvBatched(mublasHandle_t h, mublasOperation_t trans, \
      int m, int n, const float* alpha, const TA* const Aarray[], int lda,                      \
      const TA* const xarray[], int incx, const float* beta, TY* const yarray[], int incy,      \
      int batchCount) {                                                                         \
    using A_ = Storage<TA>;                                                                     \
    using Y_ = Storage<TY>;                                                                     \
    return gemv_mixed<A_, Y_>(h, trans, m, n, alpha, lda, incx, beta, incy, batchCount,        \
        PtrArrays<const A_, const A_, Y_>{in(Aarray), in(xarray), in(yarray)});                 \
  }                                                                                             \
  MUBLAS_C(mublasStatus_t) mublas##NAME##gemvStridedBatched(mublasHandle_t h,                   \
      mublasOperation_t trans, int m, int n, const float* alpha, const TA* A, int lda,          \
      long long strideA, const TA* x, int incx, long long stridex, const float* beta, TY* y,    \
      int incy, long long stridey, int batchCount) {                                            \
    using A_ = Storage<TA>;                                                                     \
    using Y_ = Storage<TY>;                                                                     \
    return gemv_mixed<A_, Y_>(h, trans, m, n, alpha, lda, incx, beta, incy, batchCount,        \
        Strided3<const A_, const A_, Y_>{in(A), strideA, in(x), stridex, in(y), stridey});      \
  }
MUBLAS_GEMV_MIXED(HSH, __half, __half)
MUBLAS_GEMV_MIXED(HSS, __half, float)
MUBLAS_GEMV_MIXED(TST, __mt_bfloat16, __mt_bfloat16)
MUBLAS_GEMV_MIXED(TSS, __mt_bfloat16, float)
// clang-format on
