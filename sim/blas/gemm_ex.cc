// The GemmEx family's entry points. As in the real muBLAS they have C++ linkage (mangled names);
// the SDK >= 4.2 model exports both the mublasComputeType_t and the musaDataType_t compute-type
// forms, the older model (MUBLAS_SIM_LEGACY_API) only the latter.
#include "gemm_ex.h"

using namespace mublas_sim;

namespace {

template <class F>
mublasStatus_t with_data_compute(musaDataType_t t, F f) {
  mublasComputeType_t c;
  if (!compute_from_data_type(t, &c)) return MUBLAS_STATUS_INVALID_VALUE;
  return f(c);
}

}  // namespace

#ifndef MUBLAS_SIM_LEGACY_API
MUBLAS_API mublasStatus_t mublasGemmEx(mublasHandle_t handle, mublasOperation_t transa,
                                       mublasOperation_t transb, int m, int n, int k,
                                       const void* alpha, const void* A, musaDataType_t Atype,
                                       int lda, const void* B, musaDataType_t Btype, int ldb,
                                       const void* beta, void* C, musaDataType_t Ctype, int ldc,
                                       mublasComputeType_t computeType, mublasGemmAlgo_t algo) {
  return guard([&] {
    return gemm_ex(handle, transa, transb, m, n, k, alpha, Atype, lda, Btype, ldb, beta, Ctype, ldc,
                   computeType, algo, ExOperands::single(A, B, C), 1);
  });
}

MUBLAS_API mublasStatus_t
mublasGemmBatchedEx(mublasHandle_t handle, mublasOperation_t transa, mublasOperation_t transb,
                    int m, int n, int k, const void* alpha, const void* const Aarray[],
                    musaDataType_t Atype, int lda, const void* const Barray[], musaDataType_t Btype,
                    int ldb, const void* beta, void* const Carray[], musaDataType_t Ctype, int ldc,
                    int batchCount, mublasComputeType_t computeType, mublasGemmAlgo_t algo) {
  return guard([&] {
    return gemm_ex(handle, transa, transb, m, n, k, alpha, Atype, lda, Btype, ldb, beta, Ctype, ldc,
                   computeType, algo, ExOperands::pointer_arrays(Aarray, Barray, Carray),
                   batchCount);
  });
}

MUBLAS_API mublasStatus_t mublasGemmStridedBatchedEx(
    mublasHandle_t handle, mublasOperation_t transa, mublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, musaDataType_t Atype, int lda, long long strideA,
    const void* B, musaDataType_t Btype, int ldb, long long strideB, const void* beta, void* C,
    musaDataType_t Ctype, int ldc, long long strideC, int batchCount,
    mublasComputeType_t computeType, mublasGemmAlgo_t algo) {
  return guard([&] {
    return gemm_ex(handle, transa, transb, m, n, k, alpha, Atype, lda, Btype, ldb, beta, Ctype, ldc,
                   computeType, algo, ExOperands::strided(A, strideA, B, strideB, C, strideC),
                   batchCount);
  });
}
#endif

MUBLAS_API mublasStatus_t mublasGemmEx(mublasHandle_t handle, mublasOperation_t transa,
                                       mublasOperation_t transb, int m, int n, int k,
                                       const void* alpha, const void* A, musaDataType_t Atype,
                                       int lda, const void* B, musaDataType_t Btype, int ldb,
                                       const void* beta, void* C, musaDataType_t Ctype, int ldc,
                                       musaDataType_t computeType, mublasGemmAlgo_t algo) {
  return guard([&] {
    return with_data_compute(computeType, [&](mublasComputeType_t c) {
      return gemm_ex(handle, transa, transb, m, n, k, alpha, Atype, lda, Btype, ldb, beta, Ctype,
                     ldc, c, algo, ExOperands::single(A, B, C), 1);
    });
  });
}

MUBLAS_API mublasStatus_t mublasGemmBatchedEx(mublasHandle_t handle, mublasOperation_t transa,
                                              mublasOperation_t transb, int m, int n, int k,
                                              const void* alpha, const void* const Aarray[],
                                              musaDataType_t Atype, int lda,
                                              const void* const Barray[], musaDataType_t Btype,
                                              int ldb, const void* beta, void* const Carray[],
                                              musaDataType_t Ctype, int ldc, int batchCount,
                                              musaDataType_t computeType, mublasGemmAlgo_t algo) {
  return guard([&] {
    return with_data_compute(computeType, [&](mublasComputeType_t c) {
      return gemm_ex(handle, transa, transb, m, n, k, alpha, Atype, lda, Btype, ldb, beta, Ctype,
                     ldc, c, algo, ExOperands::pointer_arrays(Aarray, Barray, Carray), batchCount);
    });
  });
}

MUBLAS_API mublasStatus_t mublasGemmStridedBatchedEx(
    mublasHandle_t handle, mublasOperation_t transa, mublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, musaDataType_t Atype, int lda, long long strideA,
    const void* B, musaDataType_t Btype, int ldb, long long strideB, const void* beta, void* C,
    musaDataType_t Ctype, int ldc, long long strideC, int batchCount, musaDataType_t computeType,
    mublasGemmAlgo_t algo) {
  return guard([&] {
    return with_data_compute(computeType, [&](mublasComputeType_t c) {
      return gemm_ex(handle, transa, transb, m, n, k, alpha, Atype, lda, Btype, ldb, beta, Ctype,
                     ldc, c, algo, ExOperands::strided(A, strideA, B, strideB, C, strideC),
                     batchCount);
    });
  });
}
