// Shared helpers of the simulated muBLAS's tests: element types, random data, an independent
// dense reference in long double, comparisons, and the per-precision function tables.
//
// The references never call BLAS: structured operands (triangular, symmetric, Hermitian, band,
// packed) are expanded to dense matrices by reading their storage definitions, and products are
// plain loops in long double.
#pragma once

#include <mublas.h>
#include <musa_runtime.h>

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <complex>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace bt {

using cf = std::complex<float>;
using cd = std::complex<double>;
using ld_t = long double;
using cl = std::complex<long double>;

#define MU_OK(x) ASSERT_EQ(MUBLAS_STATUS_SUCCESS, (x))
#define MU_EXPECT(st, x) EXPECT_EQ(st, (x)) << #x

template <class T>
struct Info {
  using Real = T;
  using Wide = ld_t;
  using Mu = T;
  static constexpr bool kComplex = false;
};
template <>
struct Info<cf> {
  using Real = float;
  using Wide = cl;
  using Mu = muComplex;
  static constexpr bool kComplex = true;
};
template <>
struct Info<cd> {
  using Real = double;
  using Wide = cl;
  using Mu = muDoubleComplex;
  static constexpr bool kComplex = true;
};
template <class T>
using W = typename Info<T>::Wide;
template <class T>
using RealT = typename Info<T>::Real;
template <class T>
constexpr bool kCplx = Info<T>::kComplex;

// The muBLAS view of test data.
template <class T>
auto mu(T* p) {
  return reinterpret_cast<typename Info<T>::Mu*>(p);
}
template <class T>
auto mu(const T* p) {
  return reinterpret_cast<const typename Info<T>::Mu*>(p);
}
template <class T>
auto mu_arr(T* const* p) {
  return reinterpret_cast<typename Info<T>::Mu* const*>(p);
}
template <class T>
auto mu_arr(const T* const* p) {
  return reinterpret_cast<const typename Info<T>::Mu* const*>(p);
}

template <class T>
double eps() {
  return std::numeric_limits<RealT<T>>::epsilon();
}

// ---- Random data in [-1, 1] (both parts for complex types).
class Rng {
 public:
  explicit Rng(unsigned seed = 12345) : g_(seed) {}
  template <class T>
  T next() {
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    if constexpr (kCplx<T>)
      return T(static_cast<RealT<T>>(d(g_)), static_cast<RealT<T>>(d(g_)));
    else
      return static_cast<T>(d(g_));
  }
  template <class T>
  std::vector<T> vec(size_t n) {
    std::vector<T> v(n);
    for (T& x : v) x = next<T>();
    return v;
  }
  int uniform_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g_); }

 private:
  std::mt19937 g_;
};

template <class T>
W<T> wide(T v) {
  if constexpr (kCplx<T>)
    return cl(v.real(), v.imag());
  else
    return static_cast<ld_t>(v);
}
template <class T>
T narrow(W<T> v) {
  if constexpr (kCplx<T>)
    return T(static_cast<RealT<T>>(v.real()), static_cast<RealT<T>>(v.imag()));
  else
    return static_cast<T>(v);
}
template <class V>
V cconj(V v) {
  if constexpr (std::is_same_v<V, cl>)
    return std::conj(v);
  else
    return v;
}
template <class V>
ld_t mag(V v) {
  return std::abs(v);
}

// ---- Dense wide matrices (column-major).
template <class V>
struct Mat {
  Mat() = default;
  Mat(int r_, int c_) : r(r_), c(c_), a(static_cast<size_t>(r_) * c_, V(0)) {}
  V& operator()(int i, int j) { return a[static_cast<size_t>(i) + static_cast<size_t>(j) * r]; }
  const V& operator()(int i, int j) const {
    return a[static_cast<size_t>(i) + static_cast<size_t>(j) * r];
  }
  int r = 0, c = 0;
  std::vector<V> a;
};

template <class T>
Mat<W<T>> load(const T* p, int r, int c, int ld) {
  Mat<W<T>> m(r, c);
  for (int j = 0; j < c; ++j)
    for (int i = 0; i < r; ++i) m(i, j) = wide(p[i + static_cast<size_t>(j) * ld]);
  return m;
}

// A strided vector (BLAS negative-increment rule) as an n x 1 matrix.
template <class T>
Mat<W<T>> load_vec(const T* p, int n, int inc) {
  Mat<W<T>> m(n, 1);
  const long long start = inc < 0 ? static_cast<long long>(n - 1) * -inc : 0;
  for (int i = 0; i < n; ++i) m(i, 0) = wide(p[start + static_cast<long long>(i) * inc]);
  return m;
}
// Storage length of a strided vector of n elements.
inline size_t vec_len(int n, int inc) {
  return n == 0 ? 1 : 1 + static_cast<size_t>(n - 1) * static_cast<size_t>(std::abs(inc));
}

template <class V>
Mat<V> op(const Mat<V>& a, mublasOperation_t t) {
  if (t == MUBLAS_OP_N) return a;
  Mat<V> o(a.c, a.r);
  for (int j = 0; j < a.c; ++j)
    for (int i = 0; i < a.r; ++i) o(j, i) = t == MUBLAS_OP_C ? cconj(a(i, j)) : a(i, j);
  return o;
}

template <class V>
Mat<V> mul(const Mat<V>& a, const Mat<V>& b) {
  Mat<V> o(a.r, b.c);
  for (int j = 0; j < b.c; ++j)
    for (int p = 0; p < a.c; ++p)
      for (int i = 0; i < a.r; ++i) o(i, j) += a(i, p) * b(p, j);
  return o;
}

// alpha * a + beta * b (b may be empty: treated as zero).
template <class V>
Mat<V> axpby(V alpha, const Mat<V>& a, V beta, const Mat<V>& b) {
  Mat<V> o(a.r, a.c);
  for (size_t i = 0; i < o.a.size(); ++i)
    o.a[i] = alpha * a.a[i] + (b.a.empty() ? V(0) : beta * b.a[i]);
  return o;
}

template <class V>
Mat<V> identity(int n) {
  Mat<V> o(n, n);
  for (int i = 0; i < n; ++i) o(i, i) = V(1);
  return o;
}

// The full matrix from the uplo triangle of `s`: symmetric, or Hermitian (diagonal's real part).
template <class V>
Mat<V> sym_full(const Mat<V>& s, bool upper, bool herm) {
  Mat<V> o(s.r, s.c);
  for (int j = 0; j < s.c; ++j)
    for (int i = 0; i < s.r; ++i) {
      const bool stored = upper ? i <= j : i >= j;
      V v = stored ? s(i, j) : (herm ? cconj(s(j, i)) : s(j, i));
      if (herm && i == j) v = V(std::real(v));
      o(i, j) = v;
    }
  return o;
}

// The triangular matrix of the uplo triangle of `s` (unit diagonal if `unit`).
template <class V>
Mat<V> tri_full(const Mat<V>& s, bool upper, bool unit) {
  Mat<V> o(s.r, s.c);
  for (int j = 0; j < s.c; ++j)
    for (int i = 0; i < s.r; ++i) {
      if (i == j)
        o(i, j) = unit ? V(1) : s(i, j);
      else if (upper ? i < j : i > j)
        o(i, j) = s(i, j);
    }
  return o;
}

// Packed column-major offset of (i, j) in the uplo triangle of an n x n matrix.
inline size_t packed_at(bool upper, int n, int i, int j) {
  const size_t J = static_cast<size_t>(j);
  return upper ? static_cast<size_t>(i) + J * (J + 1) / 2
               : static_cast<size_t>(i - j) + J * (2 * static_cast<size_t>(n) - J + 1) / 2;
}

// The uplo triangle of packed AP as a full n x n matrix (zero elsewhere).
template <class T>
Mat<W<T>> unpack(const T* ap, int n, bool upper) {
  Mat<W<T>> o(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = upper ? 0 : j; i <= (upper ? j : n - 1); ++i)
      o(i, j) = wide(ap[packed_at(upper, n, i, j)]);
  return o;
}

// A general band matrix (kl sub-, ku super-diagonals) from BLAS band storage.
template <class T>
Mat<W<T>> unband(const T* ab, int m, int n, int kl, int ku, int lda) {
  Mat<W<T>> o(m, n);
  for (int j = 0; j < n; ++j)
    for (int i = std::max(0, j - ku); i <= std::min(m - 1, j + kl); ++i)
      o(i, j) = wide(ab[static_cast<size_t>(ku + i - j) + static_cast<size_t>(j) * lda]);
  return o;
}
// The uplo triangle of a symmetric / triangular band matrix (k off-diagonals).
template <class T>
Mat<W<T>> unband_tri(const T* ab, int n, int k, int lda, bool upper) {
  return upper ? unband(ab, n, n, 0, k, lda) : unband(ab, n, n, k, 0, lda);
}

// ---- Comparisons. tol is in units of the type's epsilon, scaled by the problem size.

// |got - want| <= tol * eps * (1 + |want|) elementwise (T: the element type the data came from).
template <class T>
::testing::AssertionResult near_wide(const Mat<W<T>>& got, const Mat<W<T>>& want, double tol) {
  for (int j = 0; j < want.c; ++j)
    for (int i = 0; i < want.r; ++i) {
      const ld_t err = mag(got(i, j) - want(i, j));
      if (!(err <= tol * eps<T>() * (1 + mag(want(i, j)))))
        return ::testing::AssertionFailure()
               << "element (" << i << ", " << j << "): got ("
               << static_cast<double>(std::real(got(i, j))) << ", "
               << static_cast<double>(std::imag(got(i, j))) << "), want ("
               << static_cast<double>(std::real(want(i, j))) << ", "
               << static_cast<double>(std::imag(want(i, j))) << "), error "
               << static_cast<double>(err);
    }
  return ::testing::AssertionSuccess();
}

template <class T>
::testing::AssertionResult near_mat(const T* got, int ld, const Mat<W<T>>& want, double tol) {
  return near_wide<T>(load(got, want.r, want.c, ld), want, tol);
}

template <class T>
::testing::AssertionResult near_vec(const T* got, int n, int inc, const Mat<W<T>>& want,
                                    double tol) {
  return near_wide<T>(load_vec(got, n, inc), want, tol);
}

// Only the uplo triangle of got (n x n) must match want; elsewhere got must equal `before`.
template <class T>
::testing::AssertionResult near_tri(const T* got, int ld, const Mat<W<T>>& want,
                                    const std::vector<T>& before, bool upper, double tol) {
  for (int j = 0; j < want.c; ++j)
    for (int i = 0; i < ld; ++i) {
      const size_t at = i + static_cast<size_t>(j) * ld;
      const bool in_tri = i < want.r && (upper ? i <= j : i >= j);
      if (in_tri) {
        const ld_t err = mag(wide(got[at]) - want(i, j));
        if (!(err <= tol * eps<T>() * (1 + mag(want(i, j)))))
          return ::testing::AssertionFailure() << "triangle element (" << i << ", " << j
                                               << "): error " << static_cast<double>(err);
      } else if (std::memcmp(&got[at], &before[at], sizeof(T)) != 0) {
        return ::testing::AssertionFailure()
               << "element (" << i << ", " << j << ") outside the triangle was changed";
      }
    }
  return ::testing::AssertionSuccess();
}

// Elements of a column-major buffer outside the rows x cols block must equal `before`.
template <class T>
::testing::AssertionResult untouched_padding(const std::vector<T>& got,
                                             const std::vector<T>& before, int rows, int ld) {
  for (size_t at = 0; at < got.size(); ++at)
    if (static_cast<int>(at % static_cast<size_t>(ld)) >= rows &&
        std::memcmp(&got[at], &before[at], sizeof(T)) != 0)
      return ::testing::AssertionFailure() << "padding element " << at << " was changed";
  return ::testing::AssertionSuccess();
}

// A buffer placed against an inaccessible page (before its first byte, or after its last), so
// that a read outside it faults instead of passing unnoticed.
template <class T>
class Fenced {
 public:
  Fenced(size_t n, bool fence_front) : n_(n) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t bytes = n * sizeof(T);
    const size_t pages = (bytes + page - 1) / page;
    map_len_ = (pages + 2) * page;
    void* m = mmap(nullptr, map_len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return;
    map_ = static_cast<char*>(m);
    mprotect(map_, page, PROT_NONE);
    mprotect(map_ + (pages + 1) * page, page, PROT_NONE);
    data_ = reinterpret_cast<T*>(fence_front ? map_ + page : map_ + (pages + 1) * page - bytes);
  }
  ~Fenced() {
    if (map_ != nullptr) munmap(map_, map_len_);
  }
  Fenced(const Fenced&) = delete;
  Fenced& operator=(const Fenced&) = delete;
  T* data() { return data_; }
  void fill(const std::vector<T>& v) { std::copy(v.begin(), v.begin() + n_, data_); }

 private:
  size_t n_;
  size_t map_len_ = 0;
  char* map_ = nullptr;
  T* data_ = nullptr;
};

// ---- A handle per test.
class BlasTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(MUBLAS_STATUS_SUCCESS, mublasCreate(&h_)); }
  void TearDown() override {
    if (h_ != nullptr) {
      EXPECT_EQ(MUBLAS_STATUS_SUCCESS, mublasDestroy(h_));
    }
  }
  // Waits for the handle's stream.
  void sync() {
    musaStream_t s = nullptr;
    ASSERT_EQ(MUBLAS_STATUS_SUCCESS, mublasGetStream(h_, &s));
    ASSERT_EQ(musaSuccess, musaStreamSynchronize(s));
  }
  mublasHandle_t h_ = nullptr;
};

template <class T>
class Typed : public BlasTest {};
using AllTypes = ::testing::Types<float, double, cf, cd>;
using RealTypes = ::testing::Types<float, double>;
using ComplexTypes = ::testing::Types<cf, cd>;

// A host function that holds a stream until released: proves ordering and execution-time reads.
class Gate {
 public:
  static void wait_fn(void* p) {
    auto* g = static_cast<Gate*>(p);
    std::unique_lock<std::mutex> lock(g->mu_);
    g->entered_ = true;
    g->cv_.notify_all();
    g->cv_.wait(lock, [g] { return g->open_; });
  }
  void hold(musaStream_t s) { ASSERT_EQ(musaSuccess, musaLaunchHostFunc(s, wait_fn, this)); }
  void wait_entered() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return entered_; });
  }
  void open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false;
  bool open_ = false;
};

}  // namespace bt
