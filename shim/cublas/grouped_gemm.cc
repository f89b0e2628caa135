// cuBLAS grouped GEMM (cublasSgemmGroupedBatched, cublasDgemmGroupedBatched,
// cublasGemmGroupedBatchedEx and their _64 forms), which muBLAS lacks: emulated by one
// pointer-array batched GEMM per group (mublasSgemmBatched / mublasDgemmBatched /
// mublasGemmBatchedEx), issued in group order on the handle's stream, so the groups complete in
// stream order like NVIDIA's single launch.
//
// Group i covers group_size[i] consecutive entries of Aarray / Barray / Carray (the arrays are the
// concatenation over the groups) and takes alpha_array[i] / beta_array[i]. Those follow the
// handle's pointer mode: host values, or device pointers that are only offset here and handed to
// muBLAS, which reads them on the device in the same mode. Every argument of every group is
// checked before anything is issued, so a refused call leaves C untouched; a muBLAS failure part
// way through is returned as is (the earlier groups have been issued, as a failing kernel would
// leave them on NVIDIA's side). Compiled once per CUDA ABI.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cublas/cublas.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublas12_impl.h"
#else
#include "gen/cublas13_impl.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

// An operation from the caller's array, read from its bytes: the array may hold a value outside
// the enum (refused below), and loading that as a cublasOperation_t is undefined.
template <class I>
cublasOperation_t op_at(const cublasOperation_t* ops, I i) {
  std::underlying_type_t<cublasOperation_t> v;
  std::memcpy(&v, ops + i, sizeof v);
  return static_cast<cublasOperation_t>(v);
}

// The entries that take part in one call: what muBLAS is given for group i.
template <class I>
struct GroupArrays {
  const cublasOperation_t* transa;
  const cublasOperation_t* transb;
  const I* m;
  const I* n;
  const I* k;
  const I* lda;
  const I* ldb;
  const I* ldc;
  const I* group_size;
};

cublasStatus_t invalid(Fn id, const char* what, long long group, long long v) {
  TORCHADA_LOG(kWarn, "%s: %s of group %lld is %lld: CUBLAS_STATUS_INVALID_VALUE",
               kFnNames[static_cast<int>(id)], what, group, v);
  note_error(id);
  return CUBLAS_STATUS_INVALID_VALUE;
}

// cuBLAS's argument checks for every group (negative sizes, leading dimensions smaller than the
// matrices they describe, operations without a muBLAS counterpart, no pointer arrays for a
// non-empty group: `matrices` is false when Aarray, Barray or Carray is NULL), then the range
// checks of the _64 forms into muBLAS's 32-bit arguments. Success when the call may go ahead.
template <class I>
cublasStatus_t check_groups(Fn id, cublasHandle_t handle, I group_count, const GroupArrays<I>& g,
                            const void* alpha, const void* beta, bool matrices, bool narrowing) {
  if (mublas_backend().failed) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (handle == nullptr) {
    TORCHADA_LOG(kWarn, "%s: NULL handle: CUBLAS_STATUS_NOT_INITIALIZED",
                 kFnNames[static_cast<int>(id)]);
    note_error(id);
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  if (group_count < 0) {
    TORCHADA_LOG(kWarn, "%s: group_count = %lld: CUBLAS_STATUS_INVALID_VALUE",
                 kFnNames[static_cast<int>(id)], static_cast<long long>(group_count));
    note_error(id);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (group_count == 0) return CUBLAS_STATUS_SUCCESS;
  if (g.transa == nullptr || g.transb == nullptr || g.m == nullptr || g.n == nullptr ||
      g.k == nullptr || g.lda == nullptr || g.ldb == nullptr || g.ldc == nullptr ||
      g.group_size == nullptr || alpha == nullptr || beta == nullptr) {
    TORCHADA_LOG(kWarn,
                 "%s: a per-group array (operations, sizes, leading dimensions, alpha, beta or "
                 "group sizes) is NULL: CUBLAS_STATUS_INVALID_VALUE",
                 kFnNames[static_cast<int>(id)]);
    note_error(id);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  for (I i = 0; i < group_count; ++i) {
    if (!arg_ok(op_at(g.transa, i)) || !arg_ok(op_at(g.transb, i)))
      return CublasLib::invalid_enum(id);
    if (g.m[i] < 0) return invalid(id, "m", i, g.m[i]);
    if (g.n[i] < 0) return invalid(id, "n", i, g.n[i]);
    if (g.k[i] < 0) return invalid(id, "k", i, g.k[i]);
    if (g.group_size[i] < 0) return invalid(id, "group_size", i, g.group_size[i]);
    if (g.group_size[i] > 0 && !matrices) {
      TORCHADA_LOG(kWarn, "%s: Aarray, Barray or Carray is NULL: CUBLAS_STATUS_INVALID_VALUE",
                   kFnNames[static_cast<int>(id)]);
      note_error(id);
      return CUBLAS_STATUS_INVALID_VALUE;
    }
    const I a_rows = g.transa[i] == CUBLAS_OP_N ? g.m[i] : g.k[i];
    const I b_rows = g.transb[i] == CUBLAS_OP_N ? g.k[i] : g.n[i];
    if (g.lda[i] < (a_rows > 1 ? a_rows : 1)) return invalid(id, "lda", i, g.lda[i]);
    if (g.ldb[i] < (b_rows > 1 ? b_rows : 1)) return invalid(id, "ldb", i, g.ldb[i]);
    if (g.ldc[i] < (g.m[i] > 1 ? g.m[i] : 1)) return invalid(id, "ldc", i, g.ldc[i]);
  }
  if (narrowing) {
    for (I i = 0; i < group_count; ++i) {
      const struct {
        const char* what;
        long long v;
      } values[] = {{"m", g.m[i]},
                    {"n", g.n[i]},
                    {"k", g.k[i]},
                    {"lda", g.lda[i]},
                    {"ldb", g.ldb[i]},
                    {"ldc", g.ldc[i]},
                    {"group_size", g.group_size[i]}};
      for (const auto& v : values)
        if (!fits_int(v.v)) return CublasLib::too_large(id, v.what, v.v);
    }
  }
  return CUBLAS_STATUS_SUCCESS;
}

// Issues group after group: `batched(i, offset)` makes muBLAS's call for group i, whose matrices
// start at entry `offset` of the pointer arrays. Empty groups issue nothing.
template <class I, class F>
cublasStatus_t run_groups(Fn id, I group_count, const GroupArrays<I>& g, F&& batched) {
  std::size_t offset = 0;
  for (I i = 0; i < group_count; ++i) {
    const I size = g.group_size[i];
    if (size == 0) continue;
    const cublasStatus_t s = batched(i, offset);
    if (s != CUBLAS_STATUS_SUCCESS) {
      TORCHADA_LOG(kWarn, "%s: group %lld of %lld (%lld GEMMs) failed: %d",
                   kFnNames[static_cast<int>(id)], static_cast<long long>(i),
                   static_cast<long long>(group_count), static_cast<long long>(size),
                   static_cast<int>(s));
      return CublasLib::fail(id, s);
    }
    offset += static_cast<std::size_t>(size);
  }
  return CUBLAS_STATUS_SUCCESS;
}

template <class T>
struct RealGemm;
template <>
struct RealGemm<float> {
  static auto fn() { return mublas_backend().table.mublasSgemmBatched; }
};
template <>
struct RealGemm<double> {
  static auto fn() { return mublas_backend().table.mublasDgemmBatched; }
};

// cublasSgemmGroupedBatched / cublasDgemmGroupedBatched and their _64 forms.
template <class T, class I>
cublasStatus_t grouped_real(Fn id, cublasHandle_t handle, const cublasOperation_t transa[],
                            const cublasOperation_t transb[], const I m[], const I n[], const I k[],
                            const T alpha[], const T* const A[], const I lda[], const T* const B[],
                            const I ldb[], const T beta[], T* const C[], const I ldc[],
                            I group_count, const I group_size[]) {
  const GroupArrays<I> g{transa, transb, m, n, k, lda, ldb, ldc, group_size};
  const cublasStatus_t checked = check_groups<I>(id, handle, group_count, g, alpha, beta,
                                                 A && B && C, sizeof(I) > sizeof(int));
  if (checked != CUBLAS_STATUS_SUCCESS || group_count == 0) return checked;
  const auto fn = RealGemm<T>::fn();
  if (fn == nullptr) return CublasLib::missing(id);
  const auto h = convert<mublasHandle_t>(handle);
  return run_groups<I>(id, group_count, g, [&](I i, std::size_t at) {
    // alpha + i and beta + i: the group's scalars, host or device addresses alike.
    return CublasLib::status(fn(h, convert<mublasOperation_t>(transa[i]),
                                convert<mublasOperation_t>(transb[i]), int(m[i]), int(n[i]),
                                int(k[i]), alpha + i, A + at, int(lda[i]), B + at, int(ldb[i]),
                                beta + i, C + at, int(ldc[i]), int(group_size[i])));
  });
}

// The size of one alpha / beta for a compute type (cuBLAS's scale type: half for 16F compute,
// float for the 32F family, the FP32 emulation included, int32 for 32I, double for 64F and its
// emulation); 0 for unknown values.
std::size_t scalar_size(cublasComputeType_t c) {
  switch (c) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
      return 2;
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
    case CUBLAS_COMPUTE_32I:
    case CUBLAS_COMPUTE_32I_PEDANTIC:
      return 4;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
#if CUBLAS_VER_MAJOR >= 13
    case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
#endif
      return 8;
    default:
      return 0;
  }
}

// cublasGemmGroupedBatchedEx and its _64 form: each group through the hand-written GemmBatchedEx
// translation (shim/cublas/gemm_ex.cc: whichever muBLAS overload is loaded), with cuBLAS's default
// algorithm (the grouped call takes none).
template <class I>
cublasStatus_t grouped_ex(Fn id, cublasHandle_t handle, const cublasOperation_t transa[],
                          const cublasOperation_t transb[], const I m[], const I n[], const I k[],
                          const void* alpha, const void* const A[], cudaDataType_t Atype,
                          const I lda[], const void* const B[], cudaDataType_t Btype, const I ldb[],
                          const void* beta, void* const C[], cudaDataType_t Ctype, const I ldc[],
                          I group_count, const I group_size[], cublasComputeType_t computeType) {
  const GroupArrays<I> g{transa, transb, m, n, k, lda, ldb, ldc, group_size};
  const cublasStatus_t checked = check_groups<I>(id, handle, group_count, g, alpha, beta,
                                                 A && B && C, sizeof(I) > sizeof(int));
  if (checked != CUBLAS_STATUS_SUCCESS || group_count == 0) return checked;
  if (!arg_ok(Atype) || !arg_ok(Btype) || !arg_ok(Ctype)) return CublasLib::invalid_enum(id);
  const std::size_t scalar = scalar_size(computeType);
  if (scalar == 0) {
    TORCHADA_LOG(kWarn,
                 "%s: compute type %d is not one grouped GEMM supports: "
                 "CUBLAS_STATUS_NOT_SUPPORTED",
                 kFnNames[static_cast<int>(id)], static_cast<int>(computeType));
    note_error(id);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  const auto* alphas = static_cast<const unsigned char*>(alpha);
  const auto* betas = static_cast<const unsigned char*>(beta);
  return run_groups<I>(id, group_count, g, [&](I i, std::size_t at) {
    const std::size_t scalar_at = static_cast<std::size_t>(i) * scalar;
    return impl::cublasGemmBatchedEx(handle, transa[i], transb[i], int(m[i]), int(n[i]), int(k[i]),
                                     alphas + scalar_at, A + at, Atype, int(lda[i]), B + at, Btype,
                                     int(ldb[i]), betas + scalar_at, C + at, Ctype, int(ldc[i]),
                                     int(group_size[i]), computeType, CUBLAS_GEMM_DEFAULT);
  });
}

}  // namespace

namespace impl {

cublasStatus_t cublasSgemmGroupedBatched(
    cublasHandle_t handle, const cublasOperation_t transa_array[],
    const cublasOperation_t transb_array[], const int m_array[], const int n_array[],
    const int k_array[], const float alpha_array[], const float* const Aarray[],
    const int lda_array[], const float* const Barray[], const int ldb_array[],
    const float beta_array[], float* const Carray[], const int ldc_array[], int group_count,
    const int group_size[]) {
  return grouped_real<float, int>(Fn::k_cublasSgemmGroupedBatched, handle, transa_array,
                                  transb_array, m_array, n_array, k_array, alpha_array, Aarray,
                                  lda_array, Barray, ldb_array, beta_array, Carray, ldc_array,
                                  group_count, group_size);
}

cublasStatus_t cublasSgemmGroupedBatched_64(
    cublasHandle_t handle, const cublasOperation_t transa_array[],
    const cublasOperation_t transb_array[], const int64_t m_array[], const int64_t n_array[],
    const int64_t k_array[], const float alpha_array[], const float* const Aarray[],
    const int64_t lda_array[], const float* const Barray[], const int64_t ldb_array[],
    const float beta_array[], float* const Carray[], const int64_t ldc_array[], int64_t group_count,
    const int64_t group_size[]) {
  return grouped_real<float, int64_t>(Fn::k_cublasSgemmGroupedBatched_64, handle, transa_array,
                                      transb_array, m_array, n_array, k_array, alpha_array, Aarray,
                                      lda_array, Barray, ldb_array, beta_array, Carray, ldc_array,
                                      group_count, group_size);
}

cublasStatus_t cublasDgemmGroupedBatched(
    cublasHandle_t handle, const cublasOperation_t transa_array[],
    const cublasOperation_t transb_array[], const int m_array[], const int n_array[],
    const int k_array[], const double alpha_array[], const double* const Aarray[],
    const int lda_array[], const double* const Barray[], const int ldb_array[],
    const double beta_array[], double* const Carray[], const int ldc_array[], int group_count,
    const int group_size[]) {
  return grouped_real<double, int>(Fn::k_cublasDgemmGroupedBatched, handle, transa_array,
                                   transb_array, m_array, n_array, k_array, alpha_array, Aarray,
                                   lda_array, Barray, ldb_array, beta_array, Carray, ldc_array,
                                   group_count, group_size);
}

cublasStatus_t cublasDgemmGroupedBatched_64(
    cublasHandle_t handle, const cublasOperation_t transa_array[],
    const cublasOperation_t transb_array[], const int64_t m_array[], const int64_t n_array[],
    const int64_t k_array[], const double alpha_array[], const double* const Aarray[],
    const int64_t lda_array[], const double* const Barray[], const int64_t ldb_array[],
    const double beta_array[], double* const Carray[], const int64_t ldc_array[],
    int64_t group_count, const int64_t group_size[]) {
  return grouped_real<double, int64_t>(Fn::k_cublasDgemmGroupedBatched_64, handle, transa_array,
                                       transb_array, m_array, n_array, k_array, alpha_array, Aarray,
                                       lda_array, Barray, ldb_array, beta_array, Carray, ldc_array,
                                       group_count, group_size);
}

cublasStatus_t cublasGemmGroupedBatchedEx(
    cublasHandle_t handle, const cublasOperation_t transa_array[],
    const cublasOperation_t transb_array[], const int m_array[], const int n_array[],
    const int k_array[], const void* alpha_array, const void* const Aarray[], cudaDataType_t Atype,
    const int lda_array[], const void* const Barray[], cudaDataType_t Btype, const int ldb_array[],
    const void* beta_array, void* const Carray[], cudaDataType_t Ctype, const int ldc_array[],
    int group_count, const int group_size[], cublasComputeType_t computeType) {
  return grouped_ex<int>(Fn::k_cublasGemmGroupedBatchedEx, handle, transa_array, transb_array,
                         m_array, n_array, k_array, alpha_array, Aarray, Atype, lda_array, Barray,
                         Btype, ldb_array, beta_array, Carray, Ctype, ldc_array, group_count,
                         group_size, computeType);
}

cublasStatus_t cublasGemmGroupedBatchedEx_64(
    cublasHandle_t handle, const cublasOperation_t transa_array[],
    const cublasOperation_t transb_array[], const int64_t m_array[], const int64_t n_array[],
    const int64_t k_array[], const void* alpha_array, const void* const Aarray[],
    cudaDataType_t Atype, const int64_t lda_array[], const void* const Barray[],
    cudaDataType_t Btype, const int64_t ldb_array[], const void* beta_array, void* const Carray[],
    cudaDataType_t Ctype, const int64_t ldc_array[], int64_t group_count,
    const int64_t group_size[], cublasComputeType_t computeType) {
  return grouped_ex<int64_t>(Fn::k_cublasGemmGroupedBatchedEx_64, handle, transa_array,
                             transb_array, m_array, n_array, k_array, alpha_array, Aarray, Atype,
                             lda_array, Barray, Btype, ldb_array, beta_array, Carray, Ctype,
                             ldc_array, group_count, group_size, computeType);
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
