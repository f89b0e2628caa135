// Level 1 in the four precisions against loops in long double, with unit, strided and negative
// increments.
#include "api.h"

namespace bt {
namespace {

template <class T>
class Level1 : public Typed<T> {};
TYPED_TEST_SUITE(Level1, AllTypes);

struct Incs {
  int x, y;
};
constexpr Incs kIncs[] = {{1, 1}, {2, -3}, {-1, 2}};
constexpr int kN = 13;

TYPED_TEST(Level1, Axpy) {
  using T = TypeParam;
  Rng rng;
  for (Incs inc : kIncs) {
    auto x = rng.vec<T>(vec_len(kN, inc.x)), y = rng.vec<T>(vec_len(kN, inc.y));
    const T alpha = rng.next<T>();
    auto want =
        axpby(wide(alpha), load_vec(x.data(), kN, inc.x), W<T>(1), load_vec(y.data(), kN, inc.y));
    MU_OK(Api<T>::axpy(this->h_, kN, mu(&alpha), mu(x.data()), inc.x, mu(y.data()), inc.y));
    this->sync();
    EXPECT_TRUE(near_vec(y.data(), kN, inc.y, want, 4)) << "incx " << inc.x << " incy " << inc.y;
  }
  // n == 0 changes nothing.
  auto y = rng.vec<T>(4);
  const auto before = y;
  const T alpha(1);
  MU_OK(Api<T>::axpy(this->h_, 0, mu(&alpha), mu(y.data()), 1, mu(y.data()), 1));
  this->sync();
  EXPECT_EQ(0, std::memcmp(y.data(), before.data(), sizeof(T) * y.size()));
}

TYPED_TEST(Level1, CopyAndSwap) {
  using T = TypeParam;
  Rng rng(7);
  for (Incs inc : kIncs) {
    auto x = rng.vec<T>(vec_len(kN, inc.x)), y = rng.vec<T>(vec_len(kN, inc.y));
    const auto x0 = load_vec(x.data(), kN, inc.x), y0 = load_vec(y.data(), kN, inc.y);
    MU_OK(Api<T>::swap(this->h_, kN, mu(x.data()), inc.x, mu(y.data()), inc.y));
    this->sync();
    EXPECT_TRUE(near_vec(x.data(), kN, inc.x, y0, 0));
    EXPECT_TRUE(near_vec(y.data(), kN, inc.y, x0, 0));
    MU_OK(Api<T>::copy(this->h_, kN, mu(x.data()), inc.x, mu(y.data()), inc.y));
    this->sync();
    EXPECT_TRUE(near_vec(y.data(), kN, inc.y, y0, 0));
  }
}

TYPED_TEST(Level1, Scal) {
  using T = TypeParam;
  Rng rng(3);
  for (int inc : {1, 3}) {
    auto x = rng.vec<T>(vec_len(kN, inc));
    const T alpha = rng.next<T>();
    auto want = axpby(wide(alpha), load_vec(x.data(), kN, inc), W<T>(0), Mat<W<T>>());
    MU_OK(Api<T>::scal(this->h_, kN, mu(&alpha), mu(x.data()), inc));
    this->sync();
    EXPECT_TRUE(near_vec(x.data(), kN, inc, want, 2));
  }
  // incx <= 0: nothing to do (BLAS).
  auto x = rng.vec<T>(kN);
  const auto before = x;
  const T alpha(2);
  MU_OK(Api<T>::scal(this->h_, kN, mu(&alpha), mu(x.data()), -1));
  this->sync();
  EXPECT_EQ(0, std::memcmp(x.data(), before.data(), sizeof(T) * x.size()));
  if constexpr (kCplx<T>) {  // Csscal / Zdscal: real alpha
    const RealT<T> ra = 0.75;
    auto want = axpby(W<T>(ra), load_vec(x.data(), kN, 1), W<T>(0), Mat<W<T>>());
    MU_OK(Api<T>::rscal(this->h_, kN, &ra, mu(x.data()), 1));
    this->sync();
    EXPECT_TRUE(near_vec(x.data(), kN, 1, want, 2));
  }
}

TYPED_TEST(Level1, DotProducts) {
  using T = TypeParam;
  Rng rng(11);
  for (Incs inc : kIncs) {
    auto x = rng.vec<T>(vec_len(kN, inc.x)), y = rng.vec<T>(vec_len(kN, inc.y));
    const auto xv = load_vec(x.data(), kN, inc.x), yv = load_vec(y.data(), kN, inc.y);
    W<T> u(0), c(0);
    for (int i = 0; i < kN; ++i) {
      u += xv(i, 0) * yv(i, 0);
      c += cconj(xv(i, 0)) * yv(i, 0);
    }
    T ru{}, rc{};
    MU_OK(Api<T>::dotu(this->h_, kN, mu(x.data()), inc.x, mu(y.data()), inc.y, mu(&ru)));
    MU_OK(Api<T>::dotc(this->h_, kN, mu(x.data()), inc.x, mu(y.data()), inc.y, mu(&rc)));
    // Host pointer mode: the results are there when the calls return.
    EXPECT_LE(mag(wide(ru) - u), 4 * kN * eps<T>());
    EXPECT_LE(mag(wide(rc) - c), 4 * kN * eps<T>());
  }
  T r(5);
  MU_OK(Api<T>::dotu(this->h_, 0, mu(&r), 1, mu(&r), 1, mu(&r)));
  EXPECT_EQ(T(0), r) << "n == 0 gives 0";
}

TYPED_TEST(Level1, Nrm2AndAsum) {
  using T = TypeParam;
  using R = RealT<T>;
  Rng rng(5);
  for (int inc : {1, 2}) {
    auto x = rng.vec<T>(vec_len(kN, inc));
    const auto xv = load_vec(x.data(), kN, inc);
    ld_t ss = 0, sa = 0;
    for (int i = 0; i < kN; ++i) {
      ss += std::norm(cl(xv(i, 0)));
      sa += std::abs(std::real(xv(i, 0))) + std::abs(std::imag(xv(i, 0)));
    }
    R nrm = -1, asum = -1;
    MU_OK(Api<T>::nrm2(this->h_, kN, mu(x.data()), inc, &nrm));
    MU_OK(Api<T>::asum(this->h_, kN, mu(x.data()), inc, &asum));
    EXPECT_NEAR(std::sqrt(static_cast<double>(ss)), nrm, 4 * kN * eps<T>());
    EXPECT_NEAR(static_cast<double>(sa), asum, 4 * kN * eps<T>());
  }
  // n <= 0 or incx <= 0 give 0.
  auto x = rng.vec<T>(4);
  R r = 7;
  MU_OK(Api<T>::nrm2(this->h_, 4, mu(x.data()), 0, &r));
  EXPECT_EQ(R(0), r);
  r = 7;
  MU_OK(Api<T>::asum(this->h_, -3, mu(x.data()), 1, &r));
  EXPECT_EQ(R(0), r);
}

TYPED_TEST(Level1, IamaxIamin) {
  using T = TypeParam;
  Rng rng(9);
  for (int inc : {1, 3}) {
    auto x = rng.vec<T>(vec_len(kN, inc));
    // Element 8 (1-based 9) largest, element 4 (1-based 5) smallest, by |re| + |im|.
    for (int i = 0; i < kN; ++i) {
      T& e = x[static_cast<size_t>(i) * inc];
      if constexpr (kCplx<T>)
        e = T(RealT<T>(0.5) + RealT<T>(0.01) * i, RealT<T>(-0.25));
      else
        e = T((i % 2 ? -1 : 1) * (0.5 + 0.01 * i));
    }
    x[static_cast<size_t>(8) * inc] *= RealT<T>(3);
    x[static_cast<size_t>(4) * inc] *= RealT<T>(0.1);
    int imax = -1, imin = -1;
    MU_OK(Api<T>::iamax(this->h_, kN, mu(x.data()), inc, &imax));
    MU_OK(Api<T>::iamin(this->h_, kN, mu(x.data()), inc, &imin));
    EXPECT_EQ(9, imax);
    EXPECT_EQ(5, imin);
  }
  // Ties: the first index.
  std::vector<T> same(5, T(1));
  int r = -1;
  MU_OK(Api<T>::iamax(this->h_, 5, mu(same.data()), 1, &r));
  EXPECT_EQ(1, r);
  MU_OK(Api<T>::iamax(this->h_, 0, mu(same.data()), 1, &r));
  EXPECT_EQ(0, r);
}

TYPED_TEST(Level1, Rot) {
  using T = TypeParam;
  using R = RealT<T>;
  Rng rng(13);
  for (Incs inc : kIncs) {
    auto x = rng.vec<T>(vec_len(kN, inc.x)), y = rng.vec<T>(vec_len(kN, inc.y));
    const auto xv = load_vec(x.data(), kN, inc.x), yv = load_vec(y.data(), kN, inc.y);
    const R c = 0.6, s = 0.8;
    Mat<W<T>> wx(kN, 1), wy(kN, 1);
    for (int i = 0; i < kN; ++i) {
      wx(i, 0) = ld_t(c) * xv(i, 0) + ld_t(s) * yv(i, 0);
      wy(i, 0) = ld_t(c) * yv(i, 0) - ld_t(s) * xv(i, 0);
    }
    MU_OK(Api<T>::rot(this->h_, kN, mu(x.data()), inc.x, mu(y.data()), inc.y, &c, &s));
    this->sync();
    EXPECT_TRUE(near_vec(x.data(), kN, inc.x, wx, 4));
    EXPECT_TRUE(near_vec(y.data(), kN, inc.y, wy, 4));
  }
  if constexpr (kCplx<T>) {  // complex sine: x = c x + s y, y = c y - conj(s) x
    auto x = rng.vec<T>(kN), y = rng.vec<T>(kN);
    const auto xv = load_vec(x.data(), kN, 1), yv = load_vec(y.data(), kN, 1);
    const R c = 0.6;
    const T s(0.48, 0.64);
    Mat<W<T>> wx(kN, 1), wy(kN, 1);
    for (int i = 0; i < kN; ++i) {
      wx(i, 0) = ld_t(c) * xv(i, 0) + wide(s) * yv(i, 0);
      wy(i, 0) = ld_t(c) * yv(i, 0) - std::conj(wide(s)) * xv(i, 0);
    }
    MU_OK(Api<T>::rotc(this->h_, kN, mu(x.data()), 1, mu(y.data()), 1, &c, mu(&s)));
    this->sync();
    EXPECT_TRUE(near_vec(x.data(), kN, 1, wx, 4));
    EXPECT_TRUE(near_vec(y.data(), kN, 1, wy, 4));
  }
}

TYPED_TEST(Level1, Rotg) {
  using T = TypeParam;
  Rng rng(17);
  for (int trial = 0; trial < 5; ++trial) {
    const T a0 = rng.next<T>(), b0 = rng.next<T>();
    T a = a0, b = b0, s{};
    RealT<T> c = 0;
    MU_OK(Api<T>::rotg(this->h_, mu(&a), mu(&b), &c, mu(&s)));
    // [c s; -conj(s) c] [a0; b0] = [r; 0] with r returned in a, and c^2 + |s|^2 = 1.
    const W<T> r = wide(a);
    EXPECT_LE(mag(ld_t(c) * wide(a0) + wide(s) * wide(b0) - r), 8 * eps<T>());
    EXPECT_LE(mag(-cconj(wide(s)) * wide(a0) + ld_t(c) * wide(b0)), 8 * eps<T>());
    EXPECT_NEAR(1.0, static_cast<double>(ld_t(c) * c + std::norm(cl(wide(s)))), 8 * eps<T>());
  }
}

template <class T>
class Level1Real : public Typed<T> {};
TYPED_TEST_SUITE(Level1Real, RealTypes);

// The modified Givens transformation H for each flag value, applied to (x, y).
template <class T>
void apply_h(const T* p, ld_t& x, ld_t& y) {
  ld_t h11, h12, h21, h22;
  if (p[0] == -2) return;
  if (p[0] == -1) {
    h11 = p[1], h21 = p[2], h12 = p[3], h22 = p[4];
  } else if (p[0] == 0) {
    h11 = 1, h21 = p[2], h12 = p[3], h22 = 1;
  } else {
    h11 = p[1], h21 = -1, h12 = 1, h22 = p[4];
  }
  const ld_t nx = h11 * x + h12 * y, ny = h21 * x + h22 * y;
  x = nx;
  y = ny;
}

TYPED_TEST(Level1Real, Rotm) {
  using T = TypeParam;
  Rng rng(19);
  for (T flag : {T(-1), T(0), T(1), T(-2)}) {
    for (Incs inc : kIncs) {
      auto x = rng.vec<T>(vec_len(kN, inc.x)), y = rng.vec<T>(vec_len(kN, inc.y));
      const T param[5] = {flag, T(0.5), T(-0.25), T(0.75), T(1.5)};
      auto wx = load_vec(x.data(), kN, inc.x), wy = load_vec(y.data(), kN, inc.y);
      for (int i = 0; i < kN; ++i) apply_h(param, wx(i, 0), wy(i, 0));
      if constexpr (std::is_same_v<T, float>)
        MU_OK(mublasSrotm(this->h_, kN, x.data(), inc.x, y.data(), inc.y, param));
      else
        MU_OK(mublasDrotm(this->h_, kN, x.data(), inc.x, y.data(), inc.y, param));
      this->sync();
      EXPECT_TRUE(near_vec(x.data(), kN, inc.x, wx, 4)) << "flag " << flag;
      EXPECT_TRUE(near_vec(y.data(), kN, inc.y, wy, 4)) << "flag " << flag;
    }
  }
}

TYPED_TEST(Level1Real, Rotmg) {
  using T = TypeParam;
  Rng rng(23);
  for (int trial = 0; trial < 8; ++trial) {
    T d1 = T(0.5) + std::abs(rng.next<T>()), d2 = T(0.5) + std::abs(rng.next<T>());
    T x1 = rng.next<T>();
    const T y1 = rng.next<T>();
    const ld_t d1_0 = d1, d2_0 = d2, x1_0 = x1;
    T param[5] = {};
    if constexpr (std::is_same_v<T, float>)
      MU_OK(mublasSrotmg(this->h_, &d1, &d2, &x1, &y1, param));
    else
      MU_OK(mublasDrotmg(this->h_, &d1, &d2, &x1, &y1, param));
    // H maps (x1, y1) to (x1', 0), and preserves the weighted norm d1 x^2 + d2 y^2.
    ld_t x = x1_0, y = y1;
    apply_h(param, x, y);
    EXPECT_LE(std::abs(y), 16 * eps<T>());
    EXPECT_LE(std::abs(x - x1), 16 * eps<T>() * (1 + std::abs(x)));
    EXPECT_NEAR(static_cast<double>(d1_0 * x1_0 * x1_0 + d2_0 * y1 * y1),
                static_cast<double>(ld_t(d1) * x1 * x1), 64 * eps<T>());
  }
}

}  // namespace
}  // namespace bt
