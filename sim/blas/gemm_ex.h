// Internal to libmublas: the mixed-precision GEMM engine behind the GemmEx family, SgemmEx,
// CgemmEx and the Hgemm routines (mixed.cc).
#pragma once

#include "common.h"

namespace mublas_sim {

// A, B, C of one batch entry: from pointer arrays (read when the work runs) or from base
// pointers and element strides.
struct ExOperands {
  const void* const* a_arr = nullptr;
  const void* const* b_arr = nullptr;
  void* const* c_arr = nullptr;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  long long sa = 0, sb = 0, sc = 0;
  bool arrays = false;

  static ExOperands single(const void* A, const void* B, void* C) {
    ExOperands o;
    o.a = A;
    o.b = B;
    o.c = C;
    return o;
  }
  static ExOperands strided(const void* A, long long sa_, const void* B, long long sb_, void* C,
                            long long sc_) {
    ExOperands o = single(A, B, C);
    o.sa = sa_;
    o.sb = sb_;
    o.sc = sc_;
    return o;
  }
  static ExOperands pointer_arrays(const void* const* A, const void* const* B, void* const* C) {
    ExOperands o;
    o.a_arr = A;
    o.b_arr = B;
    o.c_arr = C;
    o.arrays = true;
    return o;
  }
};

// C_i = alpha op(A_i) op(B_i) + beta C_i for i < batch, with the data types and compute type of
// cublasGemmEx. Unsupported type combinations give MUBLAS_STATUS_NOT_IMPLEMENTED. The compute type
// and algorithm are taken by reference so that values outside their enumerations are refused
// without being loaded (see enum_value).
mublasStatus_t gemm_ex(mublasHandle_t h, mublasOperation_t ta, mublasOperation_t tb, int m, int n,
                       int k, const void* alpha, musaDataType_t at, int lda, musaDataType_t bt,
                       int ldb, const void* beta, musaDataType_t ct, int ldc,
                       const mublasComputeType_t& compute, const mublasGemmAlgo_t& algo,
                       const ExOperands& ops, int batch);

// The compute type that the older API's data-type argument stands for; false if none.
bool compute_from_data_type(musaDataType_t t, mublasComputeType_t* out);

}  // namespace mublas_sim
