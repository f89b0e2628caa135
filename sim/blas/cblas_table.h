// Internal to libmublas: OpenBLAS's CBLAS routines by element type, so that one template serves
// the four precisions. The "he" entries of the real types are the symmetric routines (a real
// Hermitian matrix is symmetric), so Ssymv and Chemv share one template; complex symmetric
// routines that CBLAS lacks (csymv, csyr, csyr2) are written in level2.cc.
#pragma once

#include <cblas.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "common.h"
#include "gemm_library.h"

namespace mublas_sim {

static_assert(sizeof(blasint) == sizeof(int), "OpenBLAS must use 32-bit integers (LP64)");

// A scalar as CBLAS takes it: by value for real types, by address for complex ones.
template <class T>
inline auto sv(const T& v) {
  if constexpr (kIsComplex<T>)
    return static_cast<const void*>(&v);
  else
    return v;
}

template <class T>
inline CBLAS_TRANSPOSE cb_op(mublasOperation_t op) {
  if (op == MUBLAS_OP_N) return CblasNoTrans;
  if (op == MUBLAS_OP_C && kIsComplex<T>) return CblasConjTrans;
  return CblasTrans;
}
inline CBLAS_UPLO cb_uplo(mublasFillMode_t u) { return is_upper(u) ? CblasUpper : CblasLower; }
inline CBLAS_DIAG cb_diag(mublasDiagType_t d) { return is_unit(d) ? CblasUnit : CblasNonUnit; }
inline CBLAS_SIDE cb_side(mublasSideMode_t s) { return is_left(s) ? CblasLeft : CblasRight; }
constexpr CBLAS_ORDER kCol = CblasColMajor;

// Debian 12's OpenBLAS (0.3.21) picks an AVX-512 scasum kernel on Skylake-X and Zen 4 CPUs that
// returns wrong sums for most lengths above 8 (|re| + |im| of some elements counted twice or not
// at all); OPENBLAS_CORETYPE=Haswell is right. scasum is one loop, so it is computed here on every
// CPU rather than trusted to whichever kernel the machine selects.
inline float scasum_checked(blasint n, const void* x, blasint incx) {
  const float* v = static_cast<const float*>(x);
  double sum = 0;
  for (blasint i = 0; i < n; ++i) {
    const float* e = v + 2 * static_cast<std::ptrdiff_t>(i) * incx;
    sum += std::fabs(e[0]) + std::fabs(e[1]);
  }
  return static_cast<float>(sum);
}

template <class T>
struct Cb;

template <>
struct Cb<float> {
  static constexpr auto gemv = cblas_sgemv;
  static constexpr auto gbmv = cblas_sgbmv;
  static constexpr auto trmv = cblas_strmv;
  static constexpr auto tbmv = cblas_stbmv;
  static constexpr auto tpmv = cblas_stpmv;
  static constexpr auto trsv = cblas_strsv;
  static constexpr auto tbsv = cblas_stbsv;
  static constexpr auto tpsv = cblas_stpsv;
  static constexpr auto hemv = cblas_ssymv;
  static constexpr auto hbmv = cblas_ssbmv;
  static constexpr auto hpmv = cblas_sspmv;
  static constexpr auto geru = cblas_sger;
  static constexpr auto gerc = cblas_sger;
  static constexpr auto her = cblas_ssyr;
  static constexpr auto hpr = cblas_sspr;
  static constexpr auto her2 = cblas_ssyr2;
  static constexpr auto hpr2 = cblas_sspr2;
  static auto gemm() { return sim_gemm::table().s; }
  static constexpr auto symm = cblas_ssymm;
  static constexpr auto hemm = cblas_ssymm;
  static constexpr auto syrk = cblas_ssyrk;
  static constexpr auto herk = cblas_ssyrk;
  static constexpr auto syr2k = cblas_ssyr2k;
  static constexpr auto her2k = cblas_ssyr2k;
  static constexpr auto trmm = cblas_strmm;
  static constexpr auto trsm = cblas_strsm;
  static constexpr auto axpy = cblas_saxpy;
  static constexpr auto copy = cblas_scopy;
  static constexpr auto swap = cblas_sswap;
  static constexpr auto scal = cblas_sscal;
  static constexpr auto nrm2 = cblas_snrm2;
  static constexpr auto asum = cblas_sasum;
  static constexpr auto iamax = cblas_isamax;
  static constexpr auto iamin = cblas_isamin;
};

template <>
struct Cb<double> {
  static constexpr auto gemv = cblas_dgemv;
  static constexpr auto gbmv = cblas_dgbmv;
  static constexpr auto trmv = cblas_dtrmv;
  static constexpr auto tbmv = cblas_dtbmv;
  static constexpr auto tpmv = cblas_dtpmv;
  static constexpr auto trsv = cblas_dtrsv;
  static constexpr auto tbsv = cblas_dtbsv;
  static constexpr auto tpsv = cblas_dtpsv;
  static constexpr auto hemv = cblas_dsymv;
  static constexpr auto hbmv = cblas_dsbmv;
  static constexpr auto hpmv = cblas_dspmv;
  static constexpr auto geru = cblas_dger;
  static constexpr auto gerc = cblas_dger;
  static constexpr auto her = cblas_dsyr;
  static constexpr auto hpr = cblas_dspr;
  static constexpr auto her2 = cblas_dsyr2;
  static constexpr auto hpr2 = cblas_dspr2;
  static auto gemm() { return sim_gemm::table().d; }
  static constexpr auto symm = cblas_dsymm;
  static constexpr auto hemm = cblas_dsymm;
  static constexpr auto syrk = cblas_dsyrk;
  static constexpr auto herk = cblas_dsyrk;
  static constexpr auto syr2k = cblas_dsyr2k;
  static constexpr auto her2k = cblas_dsyr2k;
  static constexpr auto trmm = cblas_dtrmm;
  static constexpr auto trsm = cblas_dtrsm;
  static constexpr auto axpy = cblas_daxpy;
  static constexpr auto copy = cblas_dcopy;
  static constexpr auto swap = cblas_dswap;
  static constexpr auto scal = cblas_dscal;
  static constexpr auto nrm2 = cblas_dnrm2;
  static constexpr auto asum = cblas_dasum;
  static constexpr auto iamax = cblas_idamax;
  static constexpr auto iamin = cblas_idamin;
};

template <>
struct Cb<cf> {
  static constexpr auto gemv = cblas_cgemv;
  static constexpr auto gbmv = cblas_cgbmv;
  static constexpr auto trmv = cblas_ctrmv;
  static constexpr auto tbmv = cblas_ctbmv;
  static constexpr auto tpmv = cblas_ctpmv;
  static constexpr auto trsv = cblas_ctrsv;
  static constexpr auto tbsv = cblas_ctbsv;
  static constexpr auto tpsv = cblas_ctpsv;
  static constexpr auto hemv = cblas_chemv;
  static constexpr auto hbmv = cblas_chbmv;
  static constexpr auto hpmv = cblas_chpmv;
  static constexpr auto geru = cblas_cgeru;
  static constexpr auto gerc = cblas_cgerc;
  static constexpr auto her = cblas_cher;
  static constexpr auto hpr = cblas_chpr;
  static constexpr auto her2 = cblas_cher2;
  static constexpr auto hpr2 = cblas_chpr2;
  static auto gemm() { return sim_gemm::table().c; }
  static constexpr auto symm = cblas_csymm;
  static constexpr auto hemm = cblas_chemm;
  static constexpr auto syrk = cblas_csyrk;
  static constexpr auto herk = cblas_cherk;
  static constexpr auto syr2k = cblas_csyr2k;
  static constexpr auto her2k = cblas_cher2k;
  static constexpr auto trmm = cblas_ctrmm;
  static constexpr auto trsm = cblas_ctrsm;
  static constexpr auto axpy = cblas_caxpy;
  static constexpr auto copy = cblas_ccopy;
  static constexpr auto swap = cblas_cswap;
  static constexpr auto scal = cblas_cscal;
  static constexpr auto nrm2 = cblas_scnrm2;
  static constexpr auto asum = scasum_checked;
  static constexpr auto iamax = cblas_icamax;
  static constexpr auto iamin = cblas_icamin;
};

template <>
struct Cb<cd> {
  static constexpr auto gemv = cblas_zgemv;
  static constexpr auto gbmv = cblas_zgbmv;
  static constexpr auto trmv = cblas_ztrmv;
  static constexpr auto tbmv = cblas_ztbmv;
  static constexpr auto tpmv = cblas_ztpmv;
  static constexpr auto trsv = cblas_ztrsv;
  static constexpr auto tbsv = cblas_ztbsv;
  static constexpr auto tpsv = cblas_ztpsv;
  static constexpr auto hemv = cblas_zhemv;
  static constexpr auto hbmv = cblas_zhbmv;
  static constexpr auto hpmv = cblas_zhpmv;
  static constexpr auto geru = cblas_zgeru;
  static constexpr auto gerc = cblas_zgerc;
  static constexpr auto her = cblas_zher;
  static constexpr auto hpr = cblas_zhpr;
  static constexpr auto her2 = cblas_zher2;
  static constexpr auto hpr2 = cblas_zhpr2;
  static auto gemm() { return sim_gemm::table().z; }
  static constexpr auto symm = cblas_zsymm;
  static constexpr auto hemm = cblas_zhemm;
  static constexpr auto syrk = cblas_zsyrk;
  static constexpr auto herk = cblas_zherk;
  static constexpr auto syr2k = cblas_zsyr2k;
  static constexpr auto her2k = cblas_zher2k;
  static constexpr auto trmm = cblas_ztrmm;
  static constexpr auto trsm = cblas_ztrsm;
  static constexpr auto axpy = cblas_zaxpy;
  static constexpr auto copy = cblas_zcopy;
  static constexpr auto swap = cblas_zswap;
  static constexpr auto scal = cblas_zscal;
  static constexpr auto nrm2 = cblas_dznrm2;
  static constexpr auto asum = cblas_dzasum;
  static constexpr auto iamax = cblas_izamax;
  static constexpr auto iamin = cblas_izamin;
};

// Dot products (CBLAS returns complex results through a pointer).
inline float cb_dot(int n, const float* x, int incx, const float* y, int incy, bool) {
  return cblas_sdot(n, x, incx, y, incy);
}
inline double cb_dot(int n, const double* x, int incx, const double* y, int incy, bool) {
  return cblas_ddot(n, x, incx, y, incy);
}
// OpenBLAS 0.3.21's complex dot kernels (SKYLAKEX, as shipped by Debian 12) read past the end
// or the start of the vectors when an increment is not 1, which faults when the vector ends at
// an unmapped page: strided vectors are first copied to contiguous buffers.
template <class T>
T cb_dot_complex(int n, const T* x, int incx, const T* y, int incy, bool conj) {
  static_assert(kIsComplex<T>);
  std::vector<T> xs, ys;
  if (incx != 1) {
    xs.resize(static_cast<size_t>(n));
    const T* p = vec_start(x, n, incx);
    for (int i = 0; i < n; ++i)
      xs[static_cast<size_t>(i)] = p[static_cast<std::ptrdiff_t>(i) * incx];
    x = xs.data();
  }
  if (incy != 1) {
    ys.resize(static_cast<size_t>(n));
    const T* p = vec_start(y, n, incy);
    for (int i = 0; i < n; ++i)
      ys[static_cast<size_t>(i)] = p[static_cast<std::ptrdiff_t>(i) * incy];
    y = ys.data();
  }
  T r;
  if constexpr (std::is_same_v<T, cf>)
    (conj ? cblas_cdotc_sub : cblas_cdotu_sub)(n, x, 1, y, 1, &r);
  else
    (conj ? cblas_zdotc_sub : cblas_zdotu_sub)(n, x, 1, y, 1, &r);
  return r;
}
inline cf cb_dot(int n, const cf* x, int incx, const cf* y, int incy, bool conj) {
  return cb_dot_complex(n, x, incx, y, incy, conj);
}
inline cd cb_dot(int n, const cd* x, int incx, const cd* y, int incy, bool conj) {
  return cb_dot_complex(n, x, incx, y, incy, conj);
}

}  // namespace mublas_sim
