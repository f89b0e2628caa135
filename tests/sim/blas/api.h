// The muBLAS functions of each precision, so that one typed test covers S, D, C and Z. For real
// types the Hermitian entries are the symmetric functions (a real Hermitian matrix is
// symmetric), "dotc" is dot and "rotc" is absent.
#pragma once

#include "blas_test.h"

namespace bt {

template <class T>
struct Api;

#define BT_API_COMMON(P)                                                    \
  static constexpr auto axpy = mublas##P##axpy;                             \
  static constexpr auto copy = mublas##P##copy;                             \
  static constexpr auto swap = mublas##P##swap;                             \
  static constexpr auto scal = mublas##P##scal;                             \
  static constexpr auto rotg = mublas##P##rotg;                             \
  static constexpr auto gemv = mublas##P##gemv;                             \
  static constexpr auto gbmv = mublas##P##gbmv;                             \
  static constexpr auto trmv = mublas##P##trmv;                             \
  static constexpr auto tbmv = mublas##P##tbmv;                             \
  static constexpr auto tpmv = mublas##P##tpmv;                             \
  static constexpr auto trsv = mublas##P##trsv;                             \
  static constexpr auto tbsv = mublas##P##tbsv;                             \
  static constexpr auto tpsv = mublas##P##tpsv;                             \
  static constexpr auto symv = mublas##P##symv;                             \
  static constexpr auto syr = mublas##P##syr;                               \
  static constexpr auto syr2 = mublas##P##syr2;                             \
  static constexpr auto gemm = mublas##P##gemm;                             \
  static constexpr auto symm = mublas##P##symm;                             \
  static constexpr auto syrk = mublas##P##syrk;                             \
  static constexpr auto syr2k = mublas##P##syr2k;                           \
  static constexpr auto syrkx = mublas##P##syrkx;                           \
  static constexpr auto trmm = mublas##P##trmm;                             \
  static constexpr auto trsm = mublas##P##trsm;                             \
  static constexpr auto geam = mublas##P##geam;                             \
  static constexpr auto dgmm = mublas##P##dgmm;                             \
  static constexpr auto tpttr = mublas##P##tpttr;                           \
  static constexpr auto trttp = mublas##P##trttp;                           \
  static constexpr auto gemmBatched = mublas##P##gemmBatched;               \
  static constexpr auto gemmStridedBatched = mublas##P##gemmStridedBatched; \
  static constexpr auto gemvBatched = mublas##P##gemvBatched;               \
  static constexpr auto gemvStridedBatched = mublas##P##gemvStridedBatched; \
  static constexpr auto trsmBatched = mublas##P##trsmBatched;               \
  static constexpr auto getrfBatched = mublas##P##getrfBatched;             \
  static constexpr auto getriBatched = mublas##P##getriBatched;             \
  static constexpr auto getrsBatched = mublas##P##getrsBatched;             \
  static constexpr auto matinvBatched = mublas##P##matinvBatched;           \
  static constexpr auto geqrfBatched = mublas##P##geqrfBatched;             \
  static constexpr auto gelsBatched = mublas##P##gelsBatched;

// Real: symmetric functions stand in for the Hermitian ones.
#define BT_API_REAL(P)                            \
  BT_API_COMMON(P)                                \
  static constexpr auto dotu = mublas##P##dot;    \
  static constexpr auto dotc = mublas##P##dot;    \
  static constexpr auto nrm2 = mublas##P##nrm2;   \
  static constexpr auto asum = mublas##P##asum;   \
  static constexpr auto rot = mublas##P##rot;     \
  static constexpr auto hemv = mublas##P##symv;   \
  static constexpr auto hbmv = mublas##P##sbmv;   \
  static constexpr auto hpmv = mublas##P##spmv;   \
  static constexpr auto geru = mublas##P##ger;    \
  static constexpr auto gerc = mublas##P##ger;    \
  static constexpr auto her = mublas##P##syr;     \
  static constexpr auto hpr = mublas##P##spr;     \
  static constexpr auto her2 = mublas##P##syr2;   \
  static constexpr auto hpr2 = mublas##P##spr2;   \
  static constexpr auto hemm = mublas##P##symm;   \
  static constexpr auto herk = mublas##P##syrk;   \
  static constexpr auto her2k = mublas##P##syr2k; \
  static constexpr auto herkx = mublas##P##syrkx;

// Complex: R is the prefix of the real-result / real-scalar functions (Sc, Dz / Cs, Zd).
#define BT_API_COMPLEX(P, NR, RS)                 \
  BT_API_COMMON(P)                                \
  static constexpr auto dotu = mublas##P##dotu;   \
  static constexpr auto dotc = mublas##P##dotc;   \
  static constexpr auto nrm2 = mublas##NR##nrm2;  \
  static constexpr auto asum = mublas##NR##asum;  \
  static constexpr auto rot = mublas##RS##rot;    \
  static constexpr auto rotc = mublas##P##rot;    \
  static constexpr auto rscal = mublas##RS##scal; \
  static constexpr auto hemv = mublas##P##hemv;   \
  static constexpr auto hbmv = mublas##P##hbmv;   \
  static constexpr auto hpmv = mublas##P##hpmv;   \
  static constexpr auto geru = mublas##P##geru;   \
  static constexpr auto gerc = mublas##P##gerc;   \
  static constexpr auto her = mublas##P##her;     \
  static constexpr auto hpr = mublas##P##hpr;     \
  static constexpr auto her2 = mublas##P##her2;   \
  static constexpr auto hpr2 = mublas##P##hpr2;   \
  static constexpr auto hemm = mublas##P##hemm;   \
  static constexpr auto herk = mublas##P##herk;   \
  static constexpr auto her2k = mublas##P##her2k; \
  static constexpr auto herkx = mublas##P##herkx; \
  static constexpr auto gemm3m = mublas##P##gemm3m;

template <>
struct Api<float> {
  BT_API_REAL(S)
  static constexpr auto iamax = mublasIsamax;
  static constexpr auto iamin = mublasIsamin;
};
template <>
struct Api<double> {
  BT_API_REAL(D)
  static constexpr auto iamax = mublasIdamax;
  static constexpr auto iamin = mublasIdamin;
};
template <>
struct Api<cf> {
  BT_API_COMPLEX(C, Sc, Cs)
  static constexpr auto iamax = mublasIcamax;
  static constexpr auto iamin = mublasIcamin;
};
template <>
struct Api<cd> {
  BT_API_COMPLEX(Z, Dz, Zd)
  static constexpr auto iamax = mublasIzamax;
  static constexpr auto iamin = mublasIzamin;
};

}  // namespace bt
