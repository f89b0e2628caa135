// The cuBLAS GemmEx family -> muBLAS's, which is exported with C++ mangled names in two
// overloads: the compute type as mublasComputeType_t (newer SDKs) or as musaDataType_t (older
// ones, and the only form some ship). The overload the loaded library has is picked at load; the
// _64 entry points are narrowed like the generated ones.
#include <dlfcn.h>

#include "cublas/cublas.h"
#include "cublas/mangled.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublas12_impl.h"
#else
#include "gen/cublas13_impl.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

using H = mublasHandle_t;
using Op = mublasOperation_t;
using Dt = musaDataType_t;
using Algo = mublasGemmAlgo_t;
template <class Compute>
using GemmEx = mublasStatus_t (*)(H, Op, Op, int, int, int, const void*, const void*, Dt, int,
                                  const void*, Dt, int, const void*, void*, Dt, int, Compute, Algo);
template <class Compute>
using GemmBatchedEx = mublasStatus_t (*)(H, Op, Op, int, int, int, const void*, const void* const*,
                                         Dt, int, const void* const*, Dt, int, const void*,
                                         void* const*, Dt, int, int, Compute, Algo);
template <class Compute>
using GemmStridedEx = mublasStatus_t (*)(H, Op, Op, int, int, int, const void*, const void*, Dt,
                                         int, long long, const void*, Dt, int, long long,
                                         const void*, void*, Dt, int, long long, int, Compute,
                                         Algo);

struct GemmExFns {
  GemmEx<mublasComputeType_t> ex;
  GemmEx<Dt> ex_dt;
  GemmBatchedEx<mublasComputeType_t> batched;
  GemmBatchedEx<Dt> batched_dt;
  GemmStridedEx<mublasComputeType_t> strided;
  GemmStridedEx<Dt> strided_dt;
};

const GemmExFns& gemm_ex_fns() {
  static const GemmExFns fns = [] {
    GemmExFns f{};
    const LoadedLibrary& lib = load_musa_library(MusaLibrary::kMublas);
    if (lib.handle == nullptr) return f;
    auto get = [&](const char* name) { return dlsym(lib.handle, name); };
    f.ex = reinterpret_cast<decltype(f.ex)>(get(mangled::kGemmEx));
    f.ex_dt = reinterpret_cast<decltype(f.ex_dt)>(get(mangled::kGemmExDataTypeCompute));
    f.batched = reinterpret_cast<decltype(f.batched)>(get(mangled::kGemmBatchedEx));
    f.batched_dt =
        reinterpret_cast<decltype(f.batched_dt)>(get(mangled::kGemmBatchedExDataTypeCompute));
    f.strided = reinterpret_cast<decltype(f.strided)>(get(mangled::kGemmStridedBatchedEx));
    f.strided_dt = reinterpret_cast<decltype(f.strided_dt)>(
        get(mangled::kGemmStridedBatchedExDataTypeCompute));
    return f;
  }();
  return fns;
}

// cuBLAS compute types as the data type the older overload takes. The CUDA 13 emulated types
// compute natively (at least as accurate as the emulation; symbols/enum_map.txt maps them the same
// way for the newer overload).
bool compute_as_data_type(cublasComputeType_t c, Dt& out) {
  switch (c) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
      out = MUSA_R_16F;
      return true;
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
      out = MUSA_R_32F;
      return true;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
#if CUBLAS_VER_MAJOR >= 13
    case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
#endif
      out = MUSA_R_64F;
      return true;
    case CUBLAS_COMPUTE_32I:
    case CUBLAS_COMPUTE_32I_PEDANTIC:
      out = MUSA_R_32I;
      return true;
    default:
      return false;
  }
}

// Calls whichever overload the library has: `with_compute` or `with_data_type`, each a callable
// taking the MUSA compute argument.
template <class F1, class F2>
cublasStatus_t dispatch(Fn id, bool has_compute, bool has_dt, cublasComputeType_t compute,
                        F1&& with_compute, F2&& with_data_type) {
  if (mublas_backend().failed) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (has_compute) {
    if (!Pair<cublasComputeType_t>::valid(compute)) return CublasLib::invalid_enum(id);
    return CublasLib::status(with_compute(Pair<cublasComputeType_t>::to_musa(compute)));
  }
  if (has_dt) {
    Dt dt{};
    if (!compute_as_data_type(compute, dt)) return CublasLib::invalid_enum(id);
    return CublasLib::status(with_data_type(dt));
  }
  return CublasLib::missing(id);
}

template <class... A>
bool all_valid(A... a) {
  return (arg_ok(a) && ...);
}

// The first value that does not fit an int, if any.
bool first_too_large(std::initializer_list<int64_t> v, long long& bad) {
  for (int64_t x : v) {
    if (!fits_int(x)) {
      bad = x;
      return true;
    }
  }
  return false;
}

#define TORCHADA_NARROW_OR_REFUSE(id, ...)                    \
  if (long long bad = 0; first_too_large({__VA_ARGS__}, bad)) \
    return CublasLib::too_large(id, "one of (" #__VA_ARGS__ ")", bad);

template <class I>
cublasStatus_t gemm_ex(Fn id, cublasHandle_t handle, cublasOperation_t transa,
                       cublasOperation_t transb, I m, I n, I k, const void* alpha, const void* A,
                       cudaDataType Atype, I lda, const void* B, cudaDataType Btype, I ldb,
                       const void* beta, void* C, cudaDataType Ctype, I ldc,
                       cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  if (!blas_handles::known_cublas(handle)) return CublasLib::bad_handle(id);
  if (!all_valid(transa, transb, Atype, Btype, Ctype, algo)) return CublasLib::invalid_enum(id);
  const GemmExFns& f = gemm_ex_fns();
  auto h = convert<H>(handle);
  auto ta = convert<Op>(transa), tb = convert<Op>(transb);
  auto at = convert<Dt>(Atype), bt = convert<Dt>(Btype), ct = convert<Dt>(Ctype);
  auto al = convert<Algo>(algo);
  auto call = [&](auto fn) {
    return [&, fn](auto compute) {
      return fn(h, ta, tb, int(m), int(n), int(k), alpha, A, at, int(lda), B, bt, int(ldb), beta, C,
                ct, int(ldc), compute, al);
    };
  };
  cublasStatus_t s =
      dispatch(id, f.ex != nullptr, f.ex_dt != nullptr, computeType, call(f.ex), call(f.ex_dt));
  if (s != CUBLAS_STATUS_SUCCESS) return CublasLib::fail(id, s);
  return s;
}

template <class I>
cublasStatus_t gemm_batched_ex(Fn id, cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, I m, I n, I k, const void* alpha,
                               const void* const Aarray[], cudaDataType Atype, I lda,
                               const void* const Barray[], cudaDataType Btype, I ldb,
                               const void* beta, void* const Carray[], cudaDataType Ctype, I ldc,
                               I batchCount, cublasComputeType_t computeType,
                               cublasGemmAlgo_t algo) {
  if (!blas_handles::known_cublas(handle)) return CublasLib::bad_handle(id);
  if (!all_valid(transa, transb, Atype, Btype, Ctype, algo)) return CublasLib::invalid_enum(id);
  const GemmExFns& f = gemm_ex_fns();
  auto h = convert<H>(handle);
  auto ta = convert<Op>(transa), tb = convert<Op>(transb);
  auto at = convert<Dt>(Atype), bt = convert<Dt>(Btype), ct = convert<Dt>(Ctype);
  auto al = convert<Algo>(algo);
  auto call = [&](auto fn) {
    return [&, fn](auto compute) {
      return fn(h, ta, tb, int(m), int(n), int(k), alpha, Aarray, at, int(lda), Barray, bt,
                int(ldb), beta, Carray, ct, int(ldc), int(batchCount), compute, al);
    };
  };
  cublasStatus_t s = dispatch(id, f.batched != nullptr, f.batched_dt != nullptr, computeType,
                              call(f.batched), call(f.batched_dt));
  if (s != CUBLAS_STATUS_SUCCESS) return CublasLib::fail(id, s);
  return s;
}

template <class I>
cublasStatus_t gemm_strided_ex(Fn id, cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, I m, I n, I k, const void* alpha,
                               const void* A, cudaDataType Atype, I lda, long long strideA,
                               const void* B, cudaDataType Btype, I ldb, long long strideB,
                               const void* beta, void* C, cudaDataType Ctype, I ldc,
                               long long strideC, I batchCount, cublasComputeType_t computeType,
                               cublasGemmAlgo_t algo) {
  if (!blas_handles::known_cublas(handle)) return CublasLib::bad_handle(id);
  if (!all_valid(transa, transb, Atype, Btype, Ctype, algo)) return CublasLib::invalid_enum(id);
  const GemmExFns& f = gemm_ex_fns();
  auto h = convert<H>(handle);
  auto ta = convert<Op>(transa), tb = convert<Op>(transb);
  auto at = convert<Dt>(Atype), bt = convert<Dt>(Btype), ct = convert<Dt>(Ctype);
  auto al = convert<Algo>(algo);
  auto call = [&](auto fn) {
    return [&, fn](auto compute) {
      return fn(h, ta, tb, int(m), int(n), int(k), alpha, A, at, int(lda), strideA, B, bt, int(ldb),
                strideB, beta, C, ct, int(ldc), strideC, int(batchCount), compute, al);
    };
  };
  cublasStatus_t s = dispatch(id, f.strided != nullptr, f.strided_dt != nullptr, computeType,
                              call(f.strided), call(f.strided_dt));
  if (s != CUBLAS_STATUS_SUCCESS) return CublasLib::fail(id, s);
  return s;
}

}  // namespace

namespace impl {

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C,
                            cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo) {
  return gemm_ex<int>(Fn::k_cublasGemmEx, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B,
                      Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                               const void* alpha, const void* A, cudaDataType Atype, int64_t lda,
                               const void* B, cudaDataType Btype, int64_t ldb, const void* beta,
                               void* C, cudaDataType Ctype, int64_t ldc,
                               cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  TORCHADA_NARROW_OR_REFUSE(Fn::k_cublasGemmEx_64, m, n, k, lda, ldb, ldc)
  return gemm_ex<int64_t>(Fn::k_cublasGemmEx_64, handle, transa, transb, m, n, k, alpha, A, Atype,
                          lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                   cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                   const void* const Aarray[], cudaDataType Atype, int lda,
                                   const void* const Barray[], cudaDataType Btype, int ldb,
                                   const void* beta, void* const Carray[], cudaDataType Ctype,
                                   int ldc, int batchCount, cublasComputeType_t computeType,
                                   cublasGemmAlgo_t algo) {
  return gemm_batched_ex<int>(Fn::k_cublasGemmBatchedEx, handle, transa, transb, m, n, k, alpha,
                              Aarray, Atype, lda, Barray, Btype, ldb, beta, Carray, Ctype, ldc,
                              batchCount, computeType, algo);
}

cublasStatus_t cublasGemmBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                      cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                      const void* alpha, const void* const Aarray[],
                                      cudaDataType Atype, int64_t lda, const void* const Barray[],
                                      cudaDataType Btype, int64_t ldb, const void* beta,
                                      void* const Carray[], cudaDataType Ctype, int64_t ldc,
                                      int64_t batchCount, cublasComputeType_t computeType,
                                      cublasGemmAlgo_t algo) {
  TORCHADA_NARROW_OR_REFUSE(Fn::k_cublasGemmBatchedEx_64, m, n, k, lda, ldb, ldc, batchCount)
  return gemm_batched_ex<int64_t>(Fn::k_cublasGemmBatchedEx_64, handle, transa, transb, m, n, k,
                                  alpha, Aarray, Atype, lda, Barray, Btype, ldb, beta, Carray,
                                  Ctype, ldc, batchCount, computeType, algo);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const void* alpha, const void* A, cudaDataType Atype,
                                          int lda, long long strideA, const void* B,
                                          cudaDataType Btype, int ldb, long long strideB,
                                          const void* beta, void* C, cudaDataType Ctype, int ldc,
                                          long long strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return gemm_strided_ex<int>(Fn::k_cublasGemmStridedBatchedEx, handle, transa, transb, m, n, k,
                              alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype,
                              ldc, strideC, batchCount, computeType, algo);
}

cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const void* alpha, const void* A, cudaDataType Atype, int64_t lda, long long strideA,
    const void* B, cudaDataType Btype, int64_t ldb, long long strideB, const void* beta, void* C,
    cudaDataType Ctype, int64_t ldc, long long strideC, int64_t batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  TORCHADA_NARROW_OR_REFUSE(Fn::k_cublasGemmStridedBatchedEx_64, m, n, k, lda, ldb, ldc, batchCount)
  return gemm_strided_ex<int64_t>(Fn::k_cublasGemmStridedBatchedEx_64, handle, transa, transb, m, n,
                                  k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C,
                                  Ctype, ldc, strideC, batchCount, computeType, algo);
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
