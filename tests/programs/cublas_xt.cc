// A cuBLASXt application (cublasXt.h): the host-side multi-GPU BLAS-3 layer, which takes matrices
// in host or device memory, host scalars and size_t sizes, and tiles the work in square blocks of
// cublasXtSetBlockDim's size. Built twice: against NVIDIA's CUDA 13 and CUDA 12 headers and
// libraries (libcublas.so.13 / .12, libcudart.so.13 / .12), so each ABI's exports serve it.
//
// What it checks, every result against a host reference computed in double / complex<double>:
//   - every routine family: gemm (all four types, every N/T/C pair), syrk, syr2k, syrkx (every
//     type), herk, her2k, herkx (complex types), symm (every type), hemm (complex types), trsm
//     and trmm (every type, both sides and fills, N/T/C, unit and non-unit diagonals), spmm
//     (every type, packed A, both sides and fills);
//   - a block size of 32 with sizes like 100 x 77 x 45, so that the tiling has ragged edges in
//     every dimension, a block of 64, and problems smaller than one block; leading dimensions
//     larger than the row count;
//   - that nothing outside the part of C a routine owns is written: the rows between the
//     matrix and its leading dimension, the other triangle of the symmetric/Hermitian outputs
//     (and B of the out-of-place trmm); the triangle a routine must not read (symmetric,
//     Hermitian and triangular A) and a unit diagonal hold a sentinel, so reading them shows;
//   - beta = 0 with a C full of NaN gives finite results (C is then not read), k = 0;
//   - trmm in place (C = B, as cuBLAS allows), where the tiles must be written in an order that
//     reads every B tile before it is overwritten;
//   - host matrices, device matrices (cudaMalloc) and mixes of the two; results are read back
//     on the legacy stream without any synchronisation of our own, so a routine that returned
//     before its work was done shows;
//   - the handle API (create/destroy, device selection, block size, pinning mode, boards, CPU
//     routine and ratio) and argument errors, after which C must be untouched;
//   - pinning with A = B and a C the program registered itself (its registration survives, the
//     library's own is gone after the call), two threads with a handle each, and sharing one.
// With TORCHADA_SIM_DEVICES=2 (or two real GPUs) the same computations run on a handle that
// selected both devices, plus matrices on device 1, the caller's current device kept, and a
// used handle reselected to device 1 alone. Nothing in it knows about torchada: under the shim
// it runs on the simulator's muBLAS.
#include <cublasXt.h>
#include <cuComplex.h>

#include <cmath>
#include <cstdarg>
#include <complex>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "check_cublas.h"

namespace {

using cd = std::complex<double>;
std::mt19937 rng(20261126);

// Per-type conversions to and from complex<double>, names and tolerances (relative to the
// largest element of the expected result: the tiled result sums in another order than the
// reference).
template <class T>
struct Ty;
template <>
struct Ty<float> {
  using Real = float;
  static constexpr bool kComplex = false;
  static constexpr const char* kName = "S";
  static constexpr double kTol = 1e-4;
  static cd get(float v) { return v; }
  static float make(cd v) { return float(v.real()); }
};
template <>
struct Ty<double> {
  using Real = double;
  static constexpr bool kComplex = false;
  static constexpr const char* kName = "D";
  static constexpr double kTol = 1e-12;
  static cd get(double v) { return v; }
  static double make(cd v) { return v.real(); }
};
template <>
struct Ty<cuComplex> {
  using Real = float;
  static constexpr bool kComplex = true;
  static constexpr const char* kName = "C";
  static constexpr double kTol = 1e-4;
  static cd get(cuComplex v) { return {v.x, v.y}; }
  static cuComplex make(cd v) { return make_cuComplex(float(v.real()), float(v.imag())); }
};
template <>
struct Ty<cuDoubleComplex> {
  using Real = double;
  static constexpr bool kComplex = true;
  static constexpr const char* kName = "Z";
  static constexpr double kTol = 1e-12;
  static cd get(cuDoubleComplex v) { return {v.x, v.y}; }
  static cuDoubleComplex make(cd v) { return make_cuDoubleComplex(v.real(), v.imag()); }
};

// The cublasXt entry points per type.
template <class T>
struct Api;
#define XT_REAL_AND_COMPLEX(P)                       \
  static constexpr auto gemm = &cublasXt##P##gemm;   \
  static constexpr auto syrk = &cublasXt##P##syrk;   \
  static constexpr auto syr2k = &cublasXt##P##syr2k; \
  static constexpr auto syrkx = &cublasXt##P##syrkx; \
  static constexpr auto symm = &cublasXt##P##symm;   \
  static constexpr auto trsm = &cublasXt##P##trsm;   \
  static constexpr auto trmm = &cublasXt##P##trmm;   \
  static constexpr auto spmm = &cublasXt##P##spmm;
#define XT_COMPLEX_ONLY(P)                           \
  static constexpr auto herk = &cublasXt##P##herk;   \
  static constexpr auto her2k = &cublasXt##P##her2k; \
  static constexpr auto herkx = &cublasXt##P##herkx; \
  static constexpr auto hemm = &cublasXt##P##hemm;
template <>
struct Api<float> {
  XT_REAL_AND_COMPLEX(S)
};
template <>
struct Api<double> {
  XT_REAL_AND_COMPLEX(D)
};
template <>
struct Api<cuComplex> {
  XT_REAL_AND_COMPLEX(C)
  XT_COMPLEX_ONLY(C)
};
template <>
struct Api<cuDoubleComplex> {
  XT_REAL_AND_COMPLEX(Z)
  XT_COMPLEX_ONLY(Z)
};
#undef XT_REAL_AND_COMPLEX
#undef XT_COMPLEX_ONLY

template <class T>
T rnd() {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  const double re = d(rng);
  return Ty<T>::make(cd(re, Ty<T>::kComplex ? d(rng) : 0.0));
}

const char* op_name(cublasOperation_t op) {
  return op == CUBLAS_OP_N ? "N" : op == CUBLAS_OP_T ? "T" : "C";
}
const char* fill_name(cublasFillMode_t f) {
  return f == CUBLAS_FILL_MODE_LOWER ? "lower" : "upper";
}
const char* side_name(cublasSideMode_t s) { return s == CUBLAS_SIDE_LEFT ? "left" : "right"; }

// Where each operand lives; the cases rotate through these.
enum class Loc { Host, Device };
struct Layout {
  Loc a, b, c;
  const char* name;
};
const Layout kLayouts[] = {
    {Loc::Host, Loc::Host, Loc::Host, "host"},
    {Loc::Device, Loc::Device, Loc::Device, "device"},
    {Loc::Device, Loc::Host, Loc::Host, "A device, B/C host"},
    {Loc::Host, Loc::Device, Loc::Device, "A host, B/C device"},
};
int layout_turn = 0;
const Layout& next_layout() { return kLayouts[layout_turn++ % 4]; }

// A column-major matrix with random contents, padding rows included. `init` is what it holds
// before the call (the reference reads it); ptr() places it in host memory or on the device on
// first use, now() reads what it holds after the call.
template <class T>
struct Mat {
  size_t rows, cols, ld;
  Loc loc;
  std::vector<T> init;
  std::vector<T> host;
  T* dev = nullptr;

  Mat(size_t r, size_t c, size_t ld_, Loc l) : rows(r), cols(c), ld(ld_), loc(l) {
    init.resize(ld * (cols ? cols : 1));
    for (auto& x : init) x = rnd<T>();
  }
  Mat(const Mat&) = delete;
  Mat& operator=(const Mat&) = delete;
  ~Mat() {
    if (dev) cudaFree(dev);
  }
  cd operator()(size_t i, size_t j) const { return Ty<T>::get(init[i + j * ld]); }
  void set(size_t i, size_t j, cd v) { init[i + j * ld] = Ty<T>::make(v); }
  T* ptr() {
    if (loc == Loc::Host) {
      if (host.empty()) host = init;
      return host.data();
    }
    if (!dev) {
      CUDA_CHECK(cudaMalloc(&dev, init.size() * sizeof(T)));
      CUDA_CHECK(cudaMemcpy(dev, init.data(), init.size() * sizeof(T), cudaMemcpyHostToDevice));
    }
    return dev;
  }
  std::vector<T> now() const {
    if (loc == Loc::Host) return host.empty() ? init : host;
    std::vector<T> h(init.size());
    if (dev) CUDA_CHECK(cudaMemcpy(h.data(), dev, h.size() * sizeof(T), cudaMemcpyDeviceToHost));
    return dev ? h : init;
  }
  bool untouched() const {
    const std::vector<T> h = now();
    return std::memcmp(h.data(), init.data(), h.size() * sizeof(T)) == 0;
  }
};

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

// A call that had to succeed; false (and a FAIL line) when it did not.
bool ran(cublasStatus_t st, const std::string& what) {
  if (st == CUBLAS_STATUS_SUCCESS) return true;
  EXPECT_TRUE_MSG(false, (what + ": returned " + cublasGetStatusName(st)).c_str());
  return false;
}

// Where NVIDIA's cublasXt and torchada's differ by design (seen on an H100, cuBLAS 13.1): NVIDIA's
// returns without scaling C when k = 0 (BLAS, and torchada, compute C = beta C), answers spmm with
// CUBLAS_STATUS_NOT_SUPPORTED (torchada computes it) and computes a herk with trans T or a syrk
// with trans C (BLAS refuses them, as torchada does). Those checks are skipped on NVIDIA's devices.
bool nvidia_differs(const char* what, const char* why) {
  static const bool nvidia = check::NvidiaDevice();
  if (nvidia) check::Skip(what, why);
  return nvidia;
}
constexpr const char* kK0 = "NVIDIA's cublasXt leaves C as it was when k = 0";

// Compares C after the call with `want` on the elements `mine` says the routine writes, and
// requires every other element (padding rows, the other triangle) to hold its initial bits.
template <class T>
void expect_result(const std::string& what, const Mat<T>& C, const std::vector<cd>& want,
                   const std::function<bool(size_t, size_t)>& mine) {
  const std::vector<T> got = C.now();
  double err = 0, scale = 1;
  bool finite = true, kept = true;
  for (size_t j = 0; j < C.cols; ++j)
    for (size_t i = 0; i < C.ld; ++i) {
      const size_t at = i + j * C.ld;
      if (i < C.rows && mine(i, j)) {
        const cd g = Ty<T>::get(got[at]);
        if (!std::isfinite(g.real()) || !std::isfinite(g.imag())) finite = false;
        err = std::fmax(err, std::abs(g - want[at]));
        scale = std::fmax(scale, std::abs(want[at]));
      } else if (std::memcmp(&got[at], &C.init[at], sizeof(T)) != 0) {
        kept = false;
      }
    }
  err /= scale;
  std::string msg = what + fmt(": rel. error %.2e", err);
  if (!finite) msg += ", NON-FINITE values";
  if (!kept) msg += ", WROTE elements it does not own";
  EXPECT_TRUE_MSG(finite && kept && err <= Ty<T>::kTol, msg.c_str());
}

bool everywhere(size_t, size_t) { return true; }
std::function<bool(size_t, size_t)> triangle(cublasFillMode_t uplo, size_t n) {
  return [uplo, n](size_t i, size_t j) {
    return i < n && j < n && (uplo == CUBLAS_FILL_MODE_LOWER ? i >= j : i <= j);
  };
}

// Element (i, j) of op(M).
template <class T>
cd op_at(const Mat<T>& M, cublasOperation_t op, size_t i, size_t j) {
  if (op == CUBLAS_OP_N) return M(i, j);
  return op == CUBLAS_OP_T ? M(j, i) : std::conj(M(j, i));
}

// Element (i, j) of the symmetric (or Hermitian) matrix whose `uplo` triangle M holds.
template <class T>
cd sym_at(const Mat<T>& M, cublasFillMode_t uplo, bool herm, size_t i, size_t j) {
  const bool stored = uplo == CUBLAS_FILL_MODE_LOWER ? i >= j : i <= j;
  if (stored) return herm && i == j ? cd(M(i, i).real(), 0) : M(i, j);
  return herm ? std::conj(M(j, i)) : M(j, i);
}

// Fills the triangle of a dim x dim matrix that a routine must not read with a sentinel.
template <class T>
void poison_other_triangle(Mat<T>& A, cublasFillMode_t uplo, size_t dim) {
  for (size_t j = 0; j < dim; ++j)
    for (size_t i = 0; i < dim; ++i)
      if (uplo == CUBLAS_FILL_MODE_LOWER ? i < j : i > j) A.set(i, j, cd(777, 777));
}

// A cd scalar as the type's scalar.
template <class T>
T sc(cd v) {
  return Ty<T>::make(v);
}

const cd kAlpha(0.75, -0.5), kBeta(0.5, 0.25);

// ---------------------------------------------------------------------------------------------
// GEMM: C = alpha op(A) op(B) + beta C.

template <class T>
void gemm_case(cublasXtHandle_t h, cublasOperation_t ta, cublasOperation_t tb, size_t m, size_t n,
               size_t k, cd alpha, cd beta, const Layout& lay, bool nan_c = false,
               const char* note = "") {
  const size_t ar = ta == CUBLAS_OP_N ? m : k, ac = ta == CUBLAS_OP_N ? k : m;
  const size_t br = tb == CUBLAS_OP_N ? k : n, bc = tb == CUBLAS_OP_N ? n : k;
  Mat<T> A(ar, ac, ar + 3, lay.a), B(br, bc, br + 1, lay.b), C(m, n, m + 2, lay.c);
  if (nan_c)
    for (size_t j = 0; j < n; ++j)
      for (size_t i = 0; i < m; ++i)
        C.set(
            i, j,
            cd(std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()));
  std::vector<cd> want(C.init.size());
  for (size_t j = 0; j < n; ++j)
    for (size_t i = 0; i < m; ++i) {
      cd acc = 0;
      for (size_t q = 0; q < k; ++q) acc += op_at(A, ta, i, q) * op_at(B, tb, q, j);
      const cd a = Ty<T>::get(sc<T>(alpha)), b = Ty<T>::get(sc<T>(beta));
      want[i + j * C.ld] = a * acc + (b == 0.0 ? cd(0) : b * C(i, j));
    }
  const T al = sc<T>(alpha), be = sc<T>(beta);
  const std::string what = fmt("%sgemm %s,%s m=%zu n=%zu k=%zu (%s)%s", Ty<T>::kName, op_name(ta),
                               op_name(tb), m, n, k, lay.name, note);
  if (ran(Api<T>::gemm(h, ta, tb, m, n, k, &al, A.ptr(), A.ld, B.ptr(), B.ld, &be, C.ptr(), C.ld),
          what))
    expect_result(what, C, want, everywhere);
}

template <class T>
void gemm_all(cublasXtHandle_t h) {
  const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
  for (auto ta : ops)
    for (auto tb : ops) gemm_case<T>(h, ta, tb, 100, 77, 45, kAlpha, kBeta, next_layout());
  gemm_case<T>(h, CUBLAS_OP_N, CUBLAS_OP_T, 5, 3, 4, kAlpha, kBeta, next_layout(), false,
               ", smaller than a block");
  gemm_case<T>(h, CUBLAS_OP_T, CUBLAS_OP_N, 64, 96, 33, kAlpha, kBeta, next_layout(), false,
               ", whole blocks in m and n");
  for (const Layout& lay : kLayouts)
    gemm_case<T>(h, CUBLAS_OP_N, CUBLAS_OP_N, 70, 41, 90, kAlpha, 0.0, lay, true,
                 ", beta 0 and C all NaN");
}

// ---------------------------------------------------------------------------------------------
// The rank-k updates on the `uplo` triangle of the n x n matrix C, with X = op(A) and
// Y = op(B) (Y = X for syrk/herk), both n x k; f is conj for the Hermitian forms:
//   syrk/herk/syrkx/herkx: C = alpha X f(Y)^T + beta C
//   syr2k/her2k:           C = alpha X f(Y)^T + alpha' Y f(X)^T + beta C  (alpha' = f(alpha))
// The Hermitian forms leave a real diagonal.

enum class Rank { K, KX, TwoK };

template <class T>
std::vector<cd> rank_reference(const Mat<T>& A, const Mat<T>& B, const Mat<T>& C, Rank form,
                               bool herm, cublasFillMode_t uplo, cublasOperation_t trans, size_t n,
                               size_t k, cd alpha, cd beta) {
  auto f = [herm](cd v) { return herm ? std::conj(v) : v; };
  const Mat<T>& Bm = form == Rank::K ? A : B;
  std::vector<cd> want(C.init.size());
  const auto mine = triangle(uplo, n);
  for (size_t j = 0; j < n; ++j)
    for (size_t i = 0; i < n; ++i) {
      if (!mine(i, j)) continue;
      cd xy = 0, yx = 0;
      for (size_t q = 0; q < k; ++q) {
        xy += op_at(A, trans, i, q) * f(op_at(Bm, trans, j, q));
        if (form == Rank::TwoK) yx += op_at(Bm, trans, i, q) * f(op_at(A, trans, j, q));
      }
      cd v = alpha * xy + (form == Rank::TwoK ? f(alpha) * yx : cd(0));
      if (beta != 0.0) v += beta * C(i, j);
      if (herm && i == j) v = cd(v.real(), 0);
      want[i + j * C.ld] = v;
    }
  return want;
}

// One rank-k case of any form; `call` makes the cublasXt call with (A, B, C).
template <class T, class Call>
void rank_case(const char* name, Rank form, bool herm, cublasFillMode_t uplo,
               cublasOperation_t trans, size_t n, size_t k, cd alpha, cd beta, const Layout& lay,
               Call call, bool nan_c = false, const char* note = "") {
  const size_t ar = trans == CUBLAS_OP_N ? n : k, ac = trans == CUBLAS_OP_N ? k : n;
  Mat<T> A(ar, ac, ar + 2, lay.a), B(ar, ac, ar + 4, lay.b), C(n, n, n + 3, lay.c);
  if (herm) {
    // A Hermitian C has a real diagonal.
    for (size_t i = 0; i < n; ++i) C.set(i, i, cd(C(i, i).real(), 0));
  }
  if (herm && form == Rank::KX) {
    // herkx assumes op(A) op(B)^H is Hermitian: B is A with its k index scaled by real factors.
    std::uniform_real_distribution<double> d(0.5, 1.5);
    std::vector<double> s(k);
    for (auto& x : s) x = d(rng);
    for (size_t j = 0; j < ac; ++j)
      for (size_t i = 0; i < ar; ++i) B.set(i, j, A(i, j) * s[trans == CUBLAS_OP_N ? j : i]);
  }
  if (nan_c)
    for (size_t j = 0; j < n; ++j)
      for (size_t i = 0; i < n; ++i)
        if (triangle(uplo, n)(i, j)) C.set(i, j, cd(std::numeric_limits<double>::quiet_NaN(), 0));
  const std::vector<cd> want = rank_reference(A, B, C, form, herm, uplo, trans, n, k, alpha, beta);
  const std::string what = fmt("%s%s %s %s n=%zu k=%zu (%s)%s", Ty<T>::kName, name, fill_name(uplo),
                               op_name(trans), n, k, lay.name, note);
  if (ran(call(A, B, C), what)) expect_result(what, C, want, triangle(uplo, n));
}

template <class T>
void symmetric_rank_all(cublasXtHandle_t h) {
  using A_ = Mat<T>;
  // Complex syrk-family forms take N or T; real ones also C (the same as T).
  std::vector<cublasOperation_t> ops = {CUBLAS_OP_N, CUBLAS_OP_T};
  if (!Ty<T>::kComplex) ops.push_back(CUBLAS_OP_C);
  for (auto uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
    for (auto trans : ops) {
      const T al = sc<T>(kAlpha), be = sc<T>(kBeta);
      const cd a = Ty<T>::get(al), b = Ty<T>::get(be);
      rank_case<T>("syrk", Rank::K, false, uplo, trans, 100, 45, a, b, next_layout(),
                   [&](A_& A, A_&, A_& C) {
                     return Api<T>::syrk(h, uplo, trans, 100, 45, &al, A.ptr(), A.ld, &be, C.ptr(),
                                         C.ld);
                   });
      rank_case<T>("syr2k", Rank::TwoK, false, uplo, trans, 100, 45, a, b, next_layout(),
                   [&](A_& A, A_& B, A_& C) {
                     return Api<T>::syr2k(h, uplo, trans, 100, 45, &al, A.ptr(), A.ld, B.ptr(),
                                          B.ld, &be, C.ptr(), C.ld);
                   });
      rank_case<T>("syrkx", Rank::KX, false, uplo, trans, 77, 100, a, b, next_layout(),
                   [&](A_& A, A_& B, A_& C) {
                     return Api<T>::syrkx(h, uplo, trans, 77, 100, &al, A.ptr(), A.ld, B.ptr(),
                                          B.ld, &be, C.ptr(), C.ld);
                   });
    }
  const T al = sc<T>(kAlpha), zero = sc<T>(0.0);
  rank_case<T>(
      "syrk", Rank::K, false, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, 6, 5, Ty<T>::get(al), 0.0,
      next_layout(),
      [&](A_& A, A_&, A_& C) {
        return Api<T>::syrk(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, 6, 5, &al, A.ptr(), A.ld, &zero,
                            C.ptr(), C.ld);
      },
      true, ", smaller than a block, beta 0 and C NaN");
  rank_case<T>(
      "syr2k", Rank::TwoK, false, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, 100, 45, Ty<T>::get(al), 0.0,
      next_layout(),
      [&](A_& A, A_& B, A_& C) {
        return Api<T>::syr2k(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, 100, 45, &al, A.ptr(), A.ld,
                             B.ptr(), B.ld, &zero, C.ptr(), C.ld);
      },
      true, ", beta 0 and C NaN");
  const T be = sc<T>(kBeta);
  if (nvidia_differs("syrk with k = 0", kK0)) return;
  rank_case<T>(
      "syrk", Rank::K, false, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, 70, 0, Ty<T>::get(al),
      Ty<T>::get(be), next_layout(),
      [&](A_& A, A_&, A_& C) {
        return Api<T>::syrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, 70, 0, &al, A.ptr(), A.ld, &be,
                            C.ptr(), C.ld);
      },
      false, ", k = 0 (C = beta C)");
}

template <class T>
void hermitian_rank_all(cublasXtHandle_t h) {
  using A_ = Mat<T>;
  using R = typename Ty<T>::Real;
  for (auto uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
    for (auto trans : {CUBLAS_OP_N, CUBLAS_OP_C}) {
      const T al = sc<T>(kAlpha);
      const R ral = R(-0.75), rbe = R(0.5);
      const cd a = Ty<T>::get(al);
      rank_case<T>("herk", Rank::K, true, uplo, trans, 100, 45, double(ral), double(rbe),
                   next_layout(), [&](A_& A, A_&, A_& C) {
                     return Api<T>::herk(h, uplo, trans, 100, 45, &ral, A.ptr(), A.ld, &rbe,
                                         C.ptr(), C.ld);
                   });
      rank_case<T>("her2k", Rank::TwoK, true, uplo, trans, 100, 45, a, double(rbe), next_layout(),
                   [&](A_& A, A_& B, A_& C) {
                     return Api<T>::her2k(h, uplo, trans, 100, 45, &al, A.ptr(), A.ld, B.ptr(),
                                          B.ld, &rbe, C.ptr(), C.ld);
                   });
      // herkx's alpha is complex but the result must stay Hermitian: a real alpha.
      const T ral_c = sc<T>(1.25);
      rank_case<T>("herkx", Rank::KX, true, uplo, trans, 77, 100, 1.25, double(rbe), next_layout(),
                   [&](A_& A, A_& B, A_& C) {
                     return Api<T>::herkx(h, uplo, trans, 77, 100, &ral_c, A.ptr(), A.ld, B.ptr(),
                                          B.ld, &rbe, C.ptr(), C.ld);
                   });
    }
  const R ral = R(2.0), rbe = R(-0.5);
  if (nvidia_differs("herk with k = 0", kK0)) return;
  rank_case<T>(
      "herk", Rank::K, true, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_C, 70, 0, double(ral), double(rbe),
      next_layout(),
      [&](A_& A, A_&, A_& C) {
        return Api<T>::herk(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_C, 70, 0, &ral, A.ptr(), A.ld,
                            &rbe, C.ptr(), C.ld);
      },
      false, ", k = 0 (C = beta C)");
}

// ---------------------------------------------------------------------------------------------
// SYMM / HEMM / SPMM: C = alpha A B + beta C (left) or alpha B A + beta C (right), A symmetric
// or Hermitian with only its `uplo` triangle read (SPMM: symmetric, packed).

template <class T>
std::vector<cd> symm_reference(const Mat<T>& A, bool herm, cublasSideMode_t side,
                               cublasFillMode_t uplo, const Mat<T>& B, const Mat<T>& C, cd alpha,
                               cd beta) {
  std::vector<cd> want(C.init.size());
  const size_t m = C.rows, n = C.cols;
  for (size_t j = 0; j < n; ++j)
    for (size_t i = 0; i < m; ++i) {
      cd acc = 0;
      if (side == CUBLAS_SIDE_LEFT)
        for (size_t q = 0; q < m; ++q) acc += sym_at(A, uplo, herm, i, q) * B(q, j);
      else
        for (size_t q = 0; q < n; ++q) acc += B(i, q) * sym_at(A, uplo, herm, q, j);
      want[i + j * C.ld] = alpha * acc + (beta == 0.0 ? cd(0) : beta * C(i, j));
    }
  return want;
}

enum class SymForm { Symm, Hemm, Spmm };

template <class T>
void symm_case(cublasXtHandle_t h, SymForm form, cublasSideMode_t side, cublasFillMode_t uplo,
               size_t m, size_t n, const Layout& lay, cd beta = kBeta, bool nan_c = false,
               const char* note = "") {
  const bool herm = form == SymForm::Hemm;
  const size_t dim = side == CUBLAS_SIDE_LEFT ? m : n;
  Mat<T> A(dim, dim, dim + 3, lay.a), B(m, n, m + 1, lay.b), C(m, n, m + 5, lay.c);
  poison_other_triangle(A, uplo, dim);
  if (herm)
    for (size_t i = 0; i < dim; ++i) A.set(i, i, cd(A(i, i).real(), 0));
  if (nan_c)
    for (size_t j = 0; j < n; ++j)
      for (size_t i = 0; i < m; ++i) C.set(i, j, cd(std::numeric_limits<double>::quiet_NaN(), 0));
  const T al = sc<T>(kAlpha), be = sc<T>(beta);
  const std::vector<cd> want =
      symm_reference(A, herm, side, uplo, B, C, Ty<T>::get(al), Ty<T>::get(be));
  const char* name = form == SymForm::Symm ? "symm" : form == SymForm::Hemm ? "hemm" : "spmm";
  const std::string what = fmt("%s%s %s %s m=%zu n=%zu (%s)%s", Ty<T>::kName, name, side_name(side),
                               fill_name(uplo), m, n, lay.name, note);
  cublasStatus_t st;
  if (form == SymForm::Spmm) {
    // The packed triangle, column by column.
    Mat<T> AP(dim * (dim + 1) / 2, 1, dim * (dim + 1) / 2, lay.a);
    size_t at = 0;
    for (size_t j = 0; j < dim; ++j)
      for (size_t i = 0; i < dim; ++i)
        if (uplo == CUBLAS_FILL_MODE_LOWER ? i >= j : i <= j) AP.init[at++] = A.init[i + j * A.ld];
    st = Api<T>::spmm(h, side, uplo, m, n, &al, AP.ptr(), B.ptr(), B.ld, &be, C.ptr(), C.ld);
    EXPECT_TRUE_MSG(AP.untouched(), (what + ": AP untouched").c_str());
  } else if constexpr (Ty<T>::kComplex) {
    st = (herm ? Api<T>::hemm : Api<T>::symm)(h, side, uplo, m, n, &al, A.ptr(), A.ld, B.ptr(),
                                              B.ld, &be, C.ptr(), C.ld);
  } else {
    st = Api<T>::symm(h, side, uplo, m, n, &al, A.ptr(), A.ld, B.ptr(), B.ld, &be, C.ptr(), C.ld);
  }
  if (ran(st, what)) expect_result(what, C, want, everywhere);
}

template <class T>
void symm_all(cublasXtHandle_t h) {
  std::vector<SymForm> forms = {SymForm::Symm};
  if (!nvidia_differs("spmm", "NVIDIA's cublasXt answers CUBLAS_STATUS_NOT_SUPPORTED"))
    forms.push_back(SymForm::Spmm);
  if (Ty<T>::kComplex) forms.push_back(SymForm::Hemm);
  for (SymForm form : forms)
    for (auto side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT})
      for (auto uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
        symm_case<T>(h, form, side, uplo, 100, 77, next_layout());
  symm_case<T>(h, SymForm::Symm, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, 3, 7, next_layout(),
               0.0, true, ", smaller than a block, beta 0 and C NaN");
  symm_case<T>(h, SymForm::Symm, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, 100, 77, next_layout(),
               0.0, true, ", beta 0 and C NaN");
}

// ---------------------------------------------------------------------------------------------
// TRSM (op(A) X = alpha B or X op(A) = alpha B, X over B) and the out-of-place TRMM
// (C = alpha op(A) B or alpha B op(A)). A is triangular: the other triangle holds a sentinel,
// and so does the diagonal when it is unit.

template <class T>
cd tri_at(const Mat<T>& A, cublasFillMode_t uplo, cublasDiagType_t diag, size_t i, size_t j) {
  if (i == j) return diag == CUBLAS_DIAG_UNIT ? cd(1) : A(i, i);
  const bool stored = uplo == CUBLAS_FILL_MODE_LOWER ? i > j : i < j;
  return stored ? A(i, j) : cd(0);
}
template <class T>
cd op_tri(const Mat<T>& A, cublasFillMode_t uplo, cublasDiagType_t diag, cublasOperation_t op,
          size_t i, size_t j) {
  if (op == CUBLAS_OP_N) return tri_at(A, uplo, diag, i, j);
  const cd v = tri_at(A, uplo, diag, j, i);
  return op == CUBLAS_OP_T ? v : std::conj(v);
}

// A dim x dim triangular matrix; `solvable`: strictly diagonally dominant (off-diagonal
// elements at most 1/dim, a diagonal of magnitude >= 1.5), so the solve is well conditioned.
template <class T>
void make_triangular(Mat<T>& A, cublasFillMode_t uplo, cublasDiagType_t diag, size_t dim,
                     bool solvable) {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (size_t j = 0; j < dim; ++j)
    for (size_t i = 0; i < dim; ++i)
      if (i != j && solvable) A.set(i, j, A(i, j) / double(dim));
  poison_other_triangle(A, uplo, dim);
  for (size_t i = 0; i < dim; ++i)
    A.set(
        i, i,
        diag == CUBLAS_DIAG_UNIT ? cd(9, 9) : cd(2.0 + 0.5 * d(rng), Ty<T>::kComplex ? d(rng) : 0));
}

template <class T>
void trsm_case(cublasXtHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,
               cublasOperation_t trans, cublasDiagType_t diag, size_t m, size_t n,
               const Layout& lay, const char* note = "") {
  const size_t dim = side == CUBLAS_SIDE_LEFT ? m : n;
  Mat<T> A(dim, dim, dim + 2, lay.a), B(m, n, m + 3, lay.b);
  make_triangular(A, uplo, diag, dim, true);
  const T al = sc<T>(kAlpha);
  const cd alpha = Ty<T>::get(al);
  const std::string what =
      fmt("%strsm %s %s %s %s m=%zu n=%zu (%s)%s", Ty<T>::kName, side_name(side), fill_name(uplo),
          op_name(trans), diag == CUBLAS_DIAG_UNIT ? "unit" : "non-unit", m, n, lay.name, note);
  if (!ran(Api<T>::trsm(h, side, uplo, trans, diag, m, n, &al, A.ptr(), A.ld, B.ptr(), B.ld), what))
    return;
  // The residual op(A) X - alpha B (or X op(A) - alpha B) of the X left in B, and the padding.
  Mat<T> X(m, n, B.ld, Loc::Host);
  X.init = B.now();
  double res = 0, scale = 1;
  bool finite = true, kept = true;
  for (size_t j = 0; j < n; ++j)
    for (size_t i = 0; i < B.ld; ++i) {
      if (i >= m) {
        kept = kept && std::memcmp(&X.init[i + j * B.ld], &B.init[i + j * B.ld], sizeof(T)) == 0;
        continue;
      }
      cd lhs = 0;
      if (side == CUBLAS_SIDE_LEFT)
        for (size_t q = 0; q < m; ++q) lhs += op_tri(A, uplo, diag, trans, i, q) * X(q, j);
      else
        for (size_t q = 0; q < n; ++q) lhs += X(i, q) * op_tri(A, uplo, diag, trans, q, j);
      const cd rhs = alpha * B(i, j);
      if (!std::isfinite(std::abs(X(i, j)))) finite = false;
      res = std::fmax(res, std::abs(lhs - rhs));
      scale = std::fmax(scale, std::abs(rhs));
    }
  res /= scale;
  std::string msg = what + fmt(": rel. residual %.2e", res);
  if (!finite) msg += ", NON-FINITE values";
  if (!kept) msg += ", WROTE the padding rows";
  EXPECT_TRUE_MSG(finite && kept && res <= Ty<T>::kTol, msg.c_str());
  EXPECT_TRUE_MSG(A.untouched(), (what + ": A untouched").c_str());
}

// in_place: C is B (cuBLAS's trmm is in place when given the same matrix twice).
template <class T>
void trmm_case(cublasXtHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,
               cublasOperation_t trans, cublasDiagType_t diag, size_t m, size_t n,
               const Layout& lay, const char* note = "", bool in_place = false) {
  const size_t dim = side == CUBLAS_SIDE_LEFT ? m : n;
  Mat<T> A(dim, dim, dim + 1, lay.a), B(m, n, m + 2, lay.b), Cown(m, n, m + 4, lay.c);
  Mat<T>& C = in_place ? B : Cown;
  make_triangular(A, uplo, diag, dim, false);
  const T al = sc<T>(kAlpha);
  const cd alpha = Ty<T>::get(al);
  std::vector<cd> want(C.init.size());
  for (size_t j = 0; j < n; ++j)
    for (size_t i = 0; i < m; ++i) {
      cd acc = 0;
      if (side == CUBLAS_SIDE_LEFT)
        for (size_t q = 0; q < m; ++q) acc += op_tri(A, uplo, diag, trans, i, q) * B(q, j);
      else
        for (size_t q = 0; q < n; ++q) acc += B(i, q) * op_tri(A, uplo, diag, trans, q, j);
      want[i + j * C.ld] = alpha * acc;
    }
  const std::string what =
      fmt("%strmm %s %s %s %s m=%zu n=%zu (%s)%s", Ty<T>::kName, side_name(side), fill_name(uplo),
          op_name(trans), diag == CUBLAS_DIAG_UNIT ? "unit" : "non-unit", m, n, lay.name, note);
  if (!ran(Api<T>::trmm(h, side, uplo, trans, diag, m, n, &al, A.ptr(), A.ld, B.ptr(), B.ld,
                        C.ptr(), C.ld),
           what))
    return;
  expect_result(what, C, want, everywhere);
  if (!in_place) EXPECT_TRUE_MSG(B.untouched(), (what + ": B untouched (out of place)").c_str());
}

template <class T>
void triangular_all(cublasXtHandle_t h) {
  for (auto side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT})
    for (auto uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
      for (auto trans : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C})
        for (auto diag : {CUBLAS_DIAG_NON_UNIT, CUBLAS_DIAG_UNIT}) {
          trsm_case<T>(h, side, uplo, trans, diag, 100, 77, next_layout());
          trmm_case<T>(h, side, uplo, trans, diag, 100, 77, next_layout());
        }
  // In place: each tile of the product may overwrite B only once no other tile reads it.
  for (auto side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT})
    for (auto uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
      for (auto trans : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C})
        trmm_case<T>(h, side, uplo, trans, CUBLAS_DIAG_NON_UNIT, 100, 77, next_layout(),
                     ", in place (C = B)", true);
  trsm_case<T>(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, 7, 4,
               next_layout(), ", smaller than a block");
  trmm_case<T>(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, 7, 4,
               next_layout(), ", smaller than a block");
}

// Every routine family, every type it has.
template <class T>
void all_routines(cublasXtHandle_t h) {
  gemm_all<T>(h);
  symmetric_rank_all<T>(h);
  if constexpr (Ty<T>::kComplex) hermitian_rank_all<T>(h);
  symm_all<T>(h);
  triangular_all<T>(h);
}

// ---------------------------------------------------------------------------------------------
// The handle API.

bool cpu_routine_called = false;
void cpu_dgemm_never(void) { cpu_routine_called = true; }

void handle_api(int devices) {
  std::printf("handle API\n");
  cublasXtHandle_t h = nullptr;
  EXPECT_TRUE_MSG(cublasXtCreate(&h) == CUBLAS_STATUS_SUCCESS && h != nullptr,
                  "cublasXtCreate gives a handle");
  if (!h) return;
  int dev0[] = {0};
  EXPECT_TRUE_MSG(cublasXtDeviceSelect(h, 1, dev0) == CUBLAS_STATUS_SUCCESS,
                  "cublasXtDeviceSelect(1, {0})");

  int block = 0;
  EXPECT_TRUE_MSG(cublasXtGetBlockDim(h, &block) == CUBLAS_STATUS_SUCCESS && block > 0,
                  fmt("default block dimension positive (%d)", block).c_str());
  EXPECT_TRUE_MSG(cublasXtSetBlockDim(h, 48) == CUBLAS_STATUS_SUCCESS, "SetBlockDim(48)");
  block = 0;
  EXPECT_TRUE_MSG(cublasXtGetBlockDim(h, &block) == CUBLAS_STATUS_SUCCESS && block == 48,
                  "GetBlockDim reads 48 back");
  EXPECT_TRUE_MSG(cublasXtSetBlockDim(h, 0) == CUBLAS_STATUS_INVALID_VALUE,
                  "SetBlockDim(0): INVALID_VALUE");
  EXPECT_TRUE_MSG(cublasXtSetBlockDim(h, -16) == CUBLAS_STATUS_INVALID_VALUE,
                  "SetBlockDim(-16): INVALID_VALUE");
  block = 0;
  cublasXtGetBlockDim(h, &block);
  EXPECT_TRUE_MSG(block == 48, "refused SetBlockDim calls leave the block dimension at 48");
  // The block dimension set takes effect: a 48-block GEMM with ragged edges.
  gemm_case<double>(h, CUBLAS_OP_T, CUBLAS_OP_N, 101, 50, 97, kAlpha, kBeta, kLayouts[0], false,
                    ", block 48");
  // A block far larger than the matrices: each matrix is one tile. Staging buffers of
  // blockDim^2 elements (64 GiB for double complex) would not fit any device; torchada's tiles
  // are no larger than the matrices. NVIDIA's cublasXt stages whole blocks: on an H100 the GEMM
  // answers CUBLAS_STATUS_INTERNAL_ERROR and leaves the context broken (an illegal address), so
  // there this is not a check.
  EXPECT_TRUE_MSG(cublasXtSetBlockDim(h, 65536) == CUBLAS_STATUS_SUCCESS, "SetBlockDim(65536)");
  if (check::NvidiaDevice()) {
    check::Skip("GEMM and TRSM with a block of 65536",
                "NVIDIA's cublasXt stages blockDim^2 elements per tile");
  } else {
    gemm_case<cuDoubleComplex>(h, CUBLAS_OP_N, CUBLAS_OP_C, 100, 77, 45, kAlpha, kBeta, kLayouts[0],
                               false, ", block 65536");
    trsm_case<double>(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                      CUBLAS_DIAG_NON_UNIT, 60, 40, kLayouts[1], ", block 65536");
  }
  CUBLAS_CHECK(cublasXtSetBlockDim(h, 48));

  cublasXtPinnedMemMode_t mode = CUBLASXT_PINNING_ENABLED;
  EXPECT_TRUE_MSG(cublasXtGetPinningMemMode(h, &mode) == CUBLAS_STATUS_SUCCESS &&
                      mode == CUBLASXT_PINNING_DISABLED,
                  "pinning mode: DISABLED by default");
  EXPECT_TRUE_MSG(cublasXtSetPinningMemMode(h, CUBLASXT_PINNING_ENABLED) == CUBLAS_STATUS_SUCCESS,
                  "SetPinningMemMode(ENABLED)");
  mode = CUBLASXT_PINNING_DISABLED;
  cublasXtGetPinningMemMode(h, &mode);
  EXPECT_TRUE_MSG(mode == CUBLASXT_PINNING_ENABLED, "pinning mode: ENABLED reads back");
  gemm_case<cuDoubleComplex>(h, CUBLAS_OP_C, CUBLAS_OP_N, 60, 70, 50, kAlpha, kBeta, kLayouts[0],
                             false, ", pinning enabled");
  EXPECT_TRUE_MSG(cublasXtSetPinningMemMode(h, CUBLASXT_PINNING_DISABLED) == CUBLAS_STATUS_SUCCESS,
                  "SetPinningMemMode(DISABLED)");
  mode = CUBLASXT_PINNING_ENABLED;
  cublasXtGetPinningMemMode(h, &mode);
  EXPECT_TRUE_MSG(mode == CUBLASXT_PINNING_DISABLED, "pinning mode: DISABLED reads back");

  int boards = 0;
  EXPECT_TRUE_MSG(cublasXtMaxBoards(&boards) == CUBLAS_STATUS_SUCCESS && boards >= 1,
                  fmt("cublasXtMaxBoards >= 1 (%d)", boards).c_str());
  boards = 0;
  EXPECT_TRUE_MSG(cublasXtGetNumBoards(1, dev0, &boards) == CUBLAS_STATUS_SUCCESS && boards >= 1,
                  fmt("cublasXtGetNumBoards(1, {0}) >= 1 (%d)", boards).c_str());

  // A CPU routine for DGEMM with a CPU ratio of 0: accepted, and never called.
  EXPECT_TRUE_MSG(
      cublasXtSetCpuRoutine(h, CUBLASXT_GEMM, CUBLASXT_DOUBLE,
                            reinterpret_cast<void*>(&cpu_dgemm_never)) == CUBLAS_STATUS_SUCCESS,
      "SetCpuRoutine(GEMM, DOUBLE) accepted");
  EXPECT_TRUE_MSG(
      cublasXtSetCpuRatio(h, CUBLASXT_GEMM, CUBLASXT_DOUBLE, 0.0f) == CUBLAS_STATUS_SUCCESS,
      "SetCpuRatio(GEMM, DOUBLE, 0) accepted");
  gemm_case<double>(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, kAlpha, kBeta, kLayouts[0], false,
                    ", CPU ratio 0");
  EXPECT_TRUE_MSG(!cpu_routine_called, "a CPU ratio of 0 sends no work to the CPU routine");
  EXPECT_TRUE_MSG(cublasXtDestroy(h) == CUBLAS_STATUS_SUCCESS, "cublasXtDestroy");

  // Device selection: an id past the last device is refused.
  cublasXtHandle_t h2 = nullptr;
  CUBLAS_CHECK(cublasXtCreate(&h2));
  int bad[] = {devices + 3};
  EXPECT_TRUE_MSG(
      cublasXtDeviceSelect(h2, 1, bad) != CUBLAS_STATUS_SUCCESS,
      fmt("cublasXtDeviceSelect(1, {%d}) with %d device(s) refused", bad[0], devices).c_str());
  int negative[] = {-1};
  EXPECT_TRUE_MSG(cublasXtDeviceSelect(h2, 1, negative) != CUBLAS_STATUS_SUCCESS,
                  "cublasXtDeviceSelect(1, {-1}) refused");
  EXPECT_TRUE_MSG(cublasXtDestroy(h2) == CUBLAS_STATUS_SUCCESS, "cublasXtDestroy (second handle)");
}

// Argument errors; every refused call leaves C as it was.
void argument_errors(cublasXtHandle_t h) {
  std::printf("argument errors\n");
  const size_t m = 40, n = 30, k = 20;
  Mat<double> A(m, k, m, Loc::Host), B(k, n, k, Loc::Host), C(m, n, m, Loc::Host);
  Mat<double> S(m, m, m, Loc::Host);  // a square A, large enough for every routine below
  Mat<double> Cd(m, n, m, Loc::Device);
  Mat<cuComplex> Ac(n, k, n, Loc::Host), Cc(n, n, n, Loc::Host);
  const double al = 1.5, be = 0.5;
  const float ral = 1.0f, rbe = 0.5f;
  const cuComplex cal = make_cuComplex(1.0f, 0.0f);
  auto bad = [](cublasStatus_t st, cublasStatus_t want, const char* what) {
    EXPECT_TRUE_MSG(
        st == want,
        fmt("%s: %s (want %s)", what, cublasGetStatusName(st), cublasGetStatusName(want)).c_str());
  };
  bad(cublasXtDgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &al, A.ptr(), m, B.ptr(), k, &be,
                    C.ptr(), m),
      CUBLAS_STATUS_NOT_INITIALIZED, "Dgemm with a NULL handle");
  bad(cublasXtDsyrk(nullptr, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, m, k, &al, A.ptr(), m, &be,
                    C.ptr(), m),
      CUBLAS_STATUS_NOT_INITIALIZED, "Dsyrk with a NULL handle");
  // The calls on a handle's settings answer a NULL handle with INVALID_VALUE (the routines above
  // with NOT_INITIALIZED), as NVIDIA's cublasXt does.
  int null_block = 0, null_device[] = {0};
  cublasXtPinnedMemMode_t null_mode = CUBLASXT_PINNING_DISABLED;
  bad(cublasXtSetBlockDim(nullptr, 64), CUBLAS_STATUS_INVALID_VALUE,
      "SetBlockDim with a NULL handle");
  bad(cublasXtGetBlockDim(nullptr, &null_block), CUBLAS_STATUS_INVALID_VALUE,
      "GetBlockDim with a NULL handle");
  bad(cublasXtDeviceSelect(nullptr, 1, null_device), CUBLAS_STATUS_INVALID_VALUE,
      "DeviceSelect with a NULL handle");
  bad(cublasXtSetPinningMemMode(nullptr, CUBLASXT_PINNING_DISABLED), CUBLAS_STATUS_INVALID_VALUE,
      "SetPinningMemMode with a NULL handle");
  bad(cublasXtGetPinningMemMode(nullptr, &null_mode), CUBLAS_STATUS_INVALID_VALUE,
      "GetPinningMemMode with a NULL handle");
  bad(cublasXtSetCpuRatio(nullptr, CUBLASXT_GEMM, CUBLASXT_FLOAT, 0.5f),
      CUBLAS_STATUS_INVALID_VALUE, "SetCpuRatio with a NULL handle");
  bad(cublasXtDestroy(nullptr), CUBLAS_STATUS_INVALID_VALUE, "Destroy with a NULL handle");
  bad(cublasXtDgemm(h, static_cast<cublasOperation_t>(77), CUBLAS_OP_N, m, n, k, &al, A.ptr(), m,
                    B.ptr(), k, &be, C.ptr(), m),
      CUBLAS_STATUS_INVALID_VALUE, "Dgemm with transa 77");
  bad(cublasXtDgemm(h, CUBLAS_OP_N, static_cast<cublasOperation_t>(77), m, n, k, &al, A.ptr(), m,
                    B.ptr(), k, &be, Cd.ptr(), m),
      CUBLAS_STATUS_INVALID_VALUE, "Dgemm with transb 77 (device C)");
  bad(cublasXtDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &al, A.ptr(), m - 1, B.ptr(), k, &be,
                    C.ptr(), m),
      CUBLAS_STATUS_INVALID_VALUE, "Dgemm with lda < m");
  bad(cublasXtDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &al, A.ptr(), m, B.ptr(), k - 1, &be,
                    C.ptr(), m),
      CUBLAS_STATUS_INVALID_VALUE, "Dgemm with ldb < k");
  bad(cublasXtDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &al, A.ptr(), m, B.ptr(), k, &be,
                    Cd.ptr(), m - 1),
      CUBLAS_STATUS_INVALID_VALUE, "Dgemm with ldc < m (device C)");
  bad(cublasXtDsyrk(h, static_cast<cublasFillMode_t>(77), CUBLAS_OP_N, m, k, &al, A.ptr(), m, &be,
                    C.ptr(), m),
      CUBLAS_STATUS_INVALID_VALUE, "Dsyrk with uplo 77");
  bad(cublasXtDsymm(h, static_cast<cublasSideMode_t>(77), CUBLAS_FILL_MODE_LOWER, m, n, &al,
                    S.ptr(), m, S.ptr(), m, &be, C.ptr(), m),
      CUBLAS_STATUS_INVALID_VALUE, "Dsymm with side 77");
  bad(cublasXtDtrmm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                    static_cast<cublasDiagType_t>(77), m, n, &al, S.ptr(), n, S.ptr(), m, C.ptr(),
                    m),
      CUBLAS_STATUS_INVALID_VALUE, "Dtrmm with diag 77");
  bad(cublasXtDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,
                    m, n, &al, S.ptr(), m - 1, C.ptr(), m),
      CUBLAS_STATUS_INVALID_VALUE, "Dtrsm with lda < m");
  bad(cublasXtDspmm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, m, n, &al, S.ptr(), S.ptr(), m - 1,
                    &be, C.ptr(), m),
      CUBLAS_STATUS_INVALID_VALUE, "Dspmm with ldb < m");
  if (!nvidia_differs("Cherk with trans T, Csyrk with trans C",
                      "NVIDIA's cublasXt computes them")) {
    bad(cublasXtCherk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, n, k, &ral, Ac.ptr(), n, &rbe,
                      Cc.ptr(), n),
        CUBLAS_STATUS_INVALID_VALUE, "Cherk with trans T (N or C only)");
    bad(cublasXtCsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_C, n, k, &cal, Ac.ptr(), n, &cal,
                      Cc.ptr(), n),
        CUBLAS_STATUS_INVALID_VALUE, "Csyrk with trans C (N or T only)");
  }
  EXPECT_TRUE_MSG(C.untouched() && Cd.untouched() && Cc.untouched(),
                  "refused calls left C untouched");

  // Empty problems succeed and write nothing; k = 0 scales C by beta.
  EXPECT_TRUE_MSG(cublasXtDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 0, n, k, &al, A.ptr(), m, B.ptr(), k,
                                &be, C.ptr(), m) == CUBLAS_STATUS_SUCCESS &&
                      C.untouched(),
                  "Dgemm with m = 0: success, C untouched");
  if (!nvidia_differs("Dgemm with k = 0", kK0))
    gemm_case<double>(h, CUBLAS_OP_N, CUBLAS_OP_N, 50, 40, 0, 1.5, 0.5, kLayouts[0], false,
                      ", k = 0 (C = beta C)");
}

// A DGEMM C = op(A) B + 0.5 C made ahead (the random data on this thread), run by run(), checked by
// check().
struct PreparedGemm {
  cublasOperation_t ta;
  size_t m, n, k;
  Mat<double> A, B, C;
  std::vector<cd> want;
  cublasStatus_t status = CUBLAS_STATUS_NOT_SUPPORTED;
  PreparedGemm(cublasOperation_t ta_, size_t m_, size_t n_, size_t k_, Loc loc)
      : ta(ta_),
        m(m_),
        n(n_),
        k(k_),
        A(ta == CUBLAS_OP_N ? m : k, ta == CUBLAS_OP_N ? k : m, (ta == CUBLAS_OP_N ? m : k) + 1,
          loc),
        B(k, n, k, loc),
        C(m, n, m, loc),
        want(C.init.size()) {
    for (size_t j = 0; j < n; ++j)
      for (size_t i = 0; i < m; ++i) {
        cd acc = 0;
        for (size_t q = 0; q < k; ++q) acc += op_at(A, ta, i, q) * B(q, j);
        want[i + j * C.ld] = acc + 0.5 * C(i, j);
      }
    A.ptr(), B.ptr(), C.ptr();
  }
  void run(cublasXtHandle_t h) {
    const double one = 1.0, half = 0.5;
    status = cublasXtDgemm(h, ta, CUBLAS_OP_N, m, n, k, &one, A.ptr(), A.ld, B.ptr(), B.ld, &half,
                           C.ptr(), C.ld);
  }
  void check(const std::string& what) {
    if (ran(status, what)) expect_result(what, C, want, everywhere);
  }
};

// What a program around the routines may rely on: pinning with aliased and user-registered
// matrices, handles used from two threads at once, and with two devices, matrices on the second
// one, the caller's current device kept, a handle selecting other devices after use.
void surroundings(int devices) {
  std::printf("pinning, threads, devices\n");
  cublasXtHandle_t h = nullptr;
  CUBLAS_CHECK(cublasXtCreate(&h));
  int dev0[] = {0};
  CUBLAS_CHECK(cublasXtDeviceSelect(h, 1, dev0));
  CUBLAS_CHECK(cublasXtSetBlockDim(h, 32));
  CUBLAS_CHECK(cublasXtSetPinningMemMode(h, CUBLASXT_PINNING_ENABLED));
  {
    // A is also B (C = A^T A), C is registered by the program: the library pins what it can for
    // the call, leaves the program's registration alone and unpins its own before returning.
    const size_t n = 90;
    Mat<double> A(n, n, n, Loc::Host), C(n, n, n, Loc::Host);
    double* a = A.ptr();
    double* c = C.ptr();
    CUDA_CHECK(cudaHostRegister(c, C.init.size() * sizeof(double), cudaHostRegisterDefault));
    std::vector<cd> want(C.init.size());
    for (size_t j = 0; j < n; ++j)
      for (size_t i = 0; i < n; ++i) {
        cd acc = 0;
        for (size_t q = 0; q < n; ++q) acc += A(q, i) * A(q, j);
        want[i + j * n] = 2.0 * acc - C(i, j);
      }
    const double two = 2.0, minus_one = -1.0;
    const std::string what = "Dgemm T,N with A = B, C registered by the program (pinning enabled)";
    if (ran(cublasXtDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &two, a, n, a, n, &minus_one, c, n),
            what))
      expect_result(what, C, want, everywhere);
    // The library's own failed registration (A twice) is not left for the program to find.
    const cudaError_t last = cudaGetLastError();
    EXPECT_TRUE_MSG(
        last == cudaSuccess,
        fmt("no runtime error left behind by the call (%s)", cudaGetErrorName(last)).c_str());
    EXPECT_TRUE_MSG(cudaHostUnregister(c) == cudaSuccess,
                    "the program's registration of C survived the call");
    const cudaError_t again = cudaHostRegister(a, A.init.size() * sizeof(double), 0);
    EXPECT_TRUE_MSG(again == cudaSuccess, "A is no longer registered after the call");
    if (again == cudaSuccess) cudaHostUnregister(a);
    cudaGetLastError();
  }
  PreparedGemm pinned_device(CUBLAS_OP_N, 80, 50, 70, Loc::Device);
  pinned_device.run(h);
  pinned_device.check("Dgemm of device matrices with pinning enabled");
  CUBLAS_CHECK(cublasXtSetPinningMemMode(h, CUBLASXT_PINNING_DISABLED));

  // Two threads, one handle each, at the same time; then both on one handle.
  {
    cublasXtHandle_t h2 = nullptr;
    CUBLAS_CHECK(cublasXtCreate(&h2));
    CUBLAS_CHECK(cublasXtDeviceSelect(h2, 1, dev0));
    CUBLAS_CHECK(cublasXtSetBlockDim(h2, 48));
    PreparedGemm g1(CUBLAS_OP_T, 150, 120, 110, Loc::Host),
        g2(CUBLAS_OP_N, 130, 140, 100, Loc::Device);
    std::thread t1([&] { g1.run(h); }), t2([&] { g2.run(h2); });
    t1.join(), t2.join();
    g1.check("Dgemm on one handle while another thread uses a second one (host)");
    g2.check("Dgemm on the second handle, concurrently (device)");
    PreparedGemm g3(CUBLAS_OP_N, 100, 90, 80, Loc::Host), g4(CUBLAS_OP_C, 70, 110, 60, Loc::Host);
    std::thread t3([&] { g3.run(h); }), t4([&] { g4.run(h); });
    t3.join(), t4.join();
    g3.check("Dgemm from one of two threads sharing a handle");
    g4.check("Dgemm from the other thread sharing the handle");
    CUBLAS_CHECK(cublasXtDestroy(h2));
  }
  CUBLAS_CHECK(cublasXtDestroy(h));

  if (devices < 2) return;
  int both[] = {0, 1}, second[] = {1};
  CUBLAS_CHECK(cublasXtCreate(&h));
  CUBLAS_CHECK(cublasXtDeviceSelect(h, 2, both));
  CUBLAS_CHECK(cublasXtSetBlockDim(h, 32));
  // Matrices allocated on device 1; the call made while device 1 is current, which it stays.
  CUDA_CHECK(cudaSetDevice(1));
  PreparedGemm on1(CUBLAS_OP_T, 100, 77, 45, Loc::Device);
  on1.run(h);
  int current = -1;
  CUDA_CHECK(cudaGetDevice(&current));
  EXPECT_TRUE_MSG(current == 1, fmt("the current device is still 1 (%d)", current).c_str());
  on1.check("Dgemm of matrices on device 1, on devices {0, 1}");
  // The same handle, reselected to device 1 alone after use, called from device 0.
  CUDA_CHECK(cudaSetDevice(0));
  EXPECT_TRUE_MSG(cublasXtDeviceSelect(h, 1, second) == CUBLAS_STATUS_SUCCESS,
                  "a used handle selects device 1 alone");
  PreparedGemm host_on1(CUBLAS_OP_N, 100, 77, 45, Loc::Host);
  host_on1.run(h);
  current = -1;
  CUDA_CHECK(cudaGetDevice(&current));
  EXPECT_TRUE_MSG(current == 0, fmt("the current device is still 0 (%d)", current).c_str());
  host_on1.check("Dgemm of host matrices, on device 1 alone after reselection");
  PreparedGemm dev0_on1(CUBLAS_OP_N, 64, 64, 64, Loc::Device);  // allocated on device 0
  dev0_on1.run(h);
  dev0_on1.check("Dgemm of device-0 matrices, on device 1 alone");
  CUBLAS_CHECK(cublasXtDestroy(h));
}

int device_count() {
  int n = 0;
  CUDA_CHECK(cudaGetDeviceCount(&n));
  return n;
}

}  // namespace

int main() {
  std::printf("cublas_xt (cuBLAS %d)\n", CUBLAS_VER_MAJOR);
  const int devices = device_count();
  std::printf("%d device(s)\n", devices);
  handle_api(devices);
  cudaGetLastError();  // what the refused calls above may have left

  // The routines, on a handle over one device or (when there are two) two.
  cublasXtHandle_t h = nullptr;
  CUBLAS_CHECK(cublasXtCreate(&h));
  int ids[] = {0, 1};
  const int used = devices >= 2 ? 2 : 1;
  CUBLAS_CHECK(cublasXtDeviceSelect(h, used, ids));
  CUBLAS_CHECK(cublasXtSetBlockDim(h, 32));
  std::printf("routines on %d device(s), block 32\n", used);
  all_routines<float>(h);
  all_routines<double>(h);
  all_routines<cuComplex>(h);
  all_routines<cuDoubleComplex>(h);
  // Successful calls on host and device matrices leave no error for cudaGetLastError.
  const cudaError_t last = cudaGetLastError();
  EXPECT_TRUE_MSG(
      last == cudaSuccess,
      fmt("no runtime error left behind by the routines (%s)", cudaGetErrorName(last)).c_str());
  argument_errors(h);
  CUBLAS_CHECK(cublasXtSetBlockDim(h, 64));
  std::printf("block 64\n");
  gemm_case<float>(h, CUBLAS_OP_T, CUBLAS_OP_T, 150, 130, 70, kAlpha, kBeta, next_layout(), false,
                   ", block 64");
  trsm_case<cuDoubleComplex>(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_C,
                             CUBLAS_DIAG_NON_UNIT, 90, 150, next_layout(), ", block 64");
  CUBLAS_CHECK(cublasXtDestroy(h));

  surroundings(devices);
  return check::Report("cublas_xt");
}
