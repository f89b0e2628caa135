// Level 2 in the four precisions: every operation / fill / diagonal variant, full, band and
// packed storage, strided and negative increments, against dense products in long double.
#include "api.h"

namespace bt {
namespace {

template <class T>
class Level2 : public Typed<T> {};
TYPED_TEST_SUITE(Level2, AllTypes);

constexpr mublasOperation_t kOps[] = {MUBLAS_OP_N, MUBLAS_OP_T, MUBLAS_OP_C};
constexpr mublasFillMode_t kFills[] = {MUBLAS_FILL_MODE_UPPER, MUBLAS_FILL_MODE_LOWER};
constexpr mublasDiagType_t kDiags[] = {MUBLAS_DIAG_NON_UNIT, MUBLAS_DIAG_UNIT};
struct Incs {
  int x, y;
};
constexpr Incs kIncs[] = {{1, 1}, {2, -1}, {-3, 2}};

bool up(mublasFillMode_t f) { return f == MUBLAS_FILL_MODE_UPPER; }

TYPED_TEST(Level2, Gemv) {
  using T = TypeParam;
  Rng rng(1);
  const int m = 7, n = 5, lda = m + 2;
  for (mublasOperation_t t : kOps)
    for (Incs inc : kIncs) {
      const int xn = t == MUBLAS_OP_N ? n : m, yn = t == MUBLAS_OP_N ? m : n;
      auto A = rng.vec<T>(static_cast<size_t>(lda) * n);
      auto x = rng.vec<T>(vec_len(xn, inc.x)), y = rng.vec<T>(vec_len(yn, inc.y));
      const T alpha = rng.next<T>(), beta = rng.next<T>();
      auto want =
          axpby(wide(alpha), mul(op(load(A.data(), m, n, lda), t), load_vec(x.data(), xn, inc.x)),
                wide(beta), load_vec(y.data(), yn, inc.y));
      MU_OK(Api<T>::gemv(this->h_, t, m, n, mu(&alpha), mu(A.data()), lda, mu(x.data()), inc.x,
                         mu(&beta), mu(y.data()), inc.y));
      this->sync();
      EXPECT_TRUE(near_vec(y.data(), yn, inc.y, want, 4 * (n + m))) << "op " << t;
    }
  // beta == 0: y is not read (NaN in y does not propagate).
  auto A = rng.vec<T>(static_cast<size_t>(m) * n), x = rng.vec<T>(n);
  std::vector<T> y(m, T(std::numeric_limits<RealT<T>>::quiet_NaN()));
  const T one(1), zero(0);
  MU_OK(Api<T>::gemv(this->h_, MUBLAS_OP_N, m, n, mu(&one), mu(A.data()), m, mu(x.data()), 1,
                     mu(&zero), mu(y.data()), 1));
  this->sync();
  EXPECT_TRUE(
      near_vec(y.data(), m, 1, mul(load(A.data(), m, n, m), load_vec(x.data(), n, 1)), 4 * n));
}

TYPED_TEST(Level2, Gbmv) {
  using T = TypeParam;
  Rng rng(2);
  const int m = 7, n = 6, kl = 2, ku = 1, lda = kl + ku + 2;
  for (mublasOperation_t t : kOps)
    for (Incs inc : kIncs) {
      const int xn = t == MUBLAS_OP_N ? n : m, yn = t == MUBLAS_OP_N ? m : n;
      auto A = rng.vec<T>(static_cast<size_t>(lda) * n);
      auto x = rng.vec<T>(vec_len(xn, inc.x)), y = rng.vec<T>(vec_len(yn, inc.y));
      const T alpha = rng.next<T>(), beta = rng.next<T>();
      auto dense = unband(A.data(), m, n, kl, ku, lda);
      auto want = axpby(wide(alpha), mul(op(dense, t), load_vec(x.data(), xn, inc.x)), wide(beta),
                        load_vec(y.data(), yn, inc.y));
      MU_OK(Api<T>::gbmv(this->h_, t, m, n, kl, ku, mu(&alpha), mu(A.data()), lda, mu(x.data()),
                         inc.x, mu(&beta), mu(y.data()), inc.y));
      this->sync();
      EXPECT_TRUE(near_vec(y.data(), yn, inc.y, want, 4 * (n + m))) << "op " << t;
    }
}

// Triangular operands in full, band (k off-diagonals) and packed storage, well conditioned:
// diagonal entries 3 + noise, off-diagonal entries scaled by 1 / n.
enum class Store { kFull, kBand, kPacked };

template <class T>
struct TriOperand {
  std::vector<T> data;
  int lda = 1;
  Mat<W<T>> dense;  // the triangular matrix it stands for
};

template <class T>
TriOperand<T> tri_operand(Rng& rng, Store s, int n, int k, bool upper, bool unit) {
  TriOperand<T> o;
  Mat<W<T>> stored;
  if (s == Store::kFull) {
    o.lda = n + 1;
    o.data = rng.vec<T>(static_cast<size_t>(o.lda) * n);
    for (T& v : o.data) v *= RealT<T>(1.0 / n);
    for (int i = 0; i < n; ++i) o.data[i + static_cast<size_t>(i) * o.lda] += T(3);
    stored = load(o.data.data(), n, n, o.lda);
  } else if (s == Store::kBand) {
    o.lda = k + 2;
    o.data = rng.vec<T>(static_cast<size_t>(o.lda) * n);
    for (T& v : o.data) v *= RealT<T>(1.0 / n);
    for (int j = 0; j < n; ++j) o.data[(upper ? k : 0) + static_cast<size_t>(j) * o.lda] += T(3);
    stored = unband_tri(o.data.data(), n, k, o.lda, upper);
  } else {
    o.data = rng.vec<T>(static_cast<size_t>(n) * (n + 1) / 2);
    for (T& v : o.data) v *= RealT<T>(1.0 / n);
    for (int i = 0; i < n; ++i) o.data[packed_at(upper, n, i, i)] += T(3);
    stored = unpack(o.data.data(), n, upper);
  }
  o.dense = tri_full(stored, upper, unit);
  return o;
}

template <class T>
mublasStatus_t tri_call(mublasHandle_t h, Store s, bool solve, mublasFillMode_t u,
                        mublasOperation_t t, mublasDiagType_t d, int n, int k,
                        const TriOperand<T>& a, T* x, int incx) {
  const auto* A = mu(a.data.data());
  switch (s) {
    case Store::kFull:
      return (solve ? Api<T>::trsv : Api<T>::trmv)(h, u, t, d, n, A, a.lda, mu(x), incx);
    case Store::kBand:
      return (solve ? Api<T>::tbsv : Api<T>::tbmv)(h, u, t, d, n, k, A, a.lda, mu(x), incx);
    case Store::kPacked:
      return (solve ? Api<T>::tpsv : Api<T>::tpmv)(h, u, t, d, n, A, mu(x), incx);
  }
  return MUBLAS_STATUS_INTERNAL_ERROR;
}

TYPED_TEST(Level2, TriangularProductsAndSolves) {
  using T = TypeParam;
  Rng rng(3);
  const int n = 6, k = 2;
  for (Store s : {Store::kFull, Store::kBand, Store::kPacked})
    for (mublasFillMode_t u : kFills)
      for (mublasOperation_t t : kOps)
        for (mublasDiagType_t d : kDiags)
          for (int inc : {1, -2}) {
            const auto a = tri_operand<T>(rng, s, n, k, up(u), d == MUBLAS_DIAG_UNIT);
            auto x = rng.vec<T>(vec_len(n, inc));
            const auto x0 = load_vec(x.data(), n, inc);
            // Product: x = op(A) x.
            MU_OK(tri_call(this->h_, s, false, u, t, d, n, k, a, x.data(), inc));
            this->sync();
            EXPECT_TRUE(near_vec(x.data(), n, inc, mul(op(a.dense, t), x0), 8 * n))
                << "mv store " << int(s) << " uplo " << u << " op " << t << " diag " << d;
            // Solve: op(A) x = b, checked through the residual.
            auto b = rng.vec<T>(vec_len(n, inc));
            const auto b0 = load_vec(b.data(), n, inc);
            MU_OK(tri_call(this->h_, s, true, u, t, d, n, k, a, b.data(), inc));
            this->sync();
            EXPECT_TRUE(near_wide<T>(mul(op(a.dense, t), load_vec(b.data(), n, inc)), b0, 16 * n))
                << "sv store " << int(s) << " uplo " << u << " op " << t << " diag " << d;
          }
}

TYPED_TEST(Level2, HermitianAndSymmetricProducts) {
  using T = TypeParam;
  Rng rng(4);
  const int n = 6, k = 2;
  for (mublasFillMode_t u : kFills)
    for (Incs inc : kIncs) {
      auto x = rng.vec<T>(vec_len(n, inc.x)), y0 = rng.vec<T>(vec_len(n, inc.y));
      const T alpha = rng.next<T>(), beta = rng.next<T>();
      const auto xv = load_vec(x.data(), n, inc.x), yv = load_vec(y0.data(), n, inc.y);
      auto check = [&](const char* what, const Mat<W<T>>& dense, auto&& call) {
        auto y = y0;
        MU_OK(call(y.data()));
        this->sync();
        auto want = axpby(wide(alpha), mul(dense, xv), wide(beta), yv);
        EXPECT_TRUE(near_vec(y.data(), n, inc.y, want, 8 * n)) << what << " uplo " << u;
      };
      const int lda = n + 1;
      auto A = rng.vec<T>(static_cast<size_t>(lda) * n);
      // hemv (symv for real types) and, for complex types, the complex symmetric symv.
      check("hemv", sym_full(load(A.data(), n, n, lda), up(u), kCplx<T>), [&](T* y) {
        return Api<T>::hemv(this->h_, u, n, mu(&alpha), mu(A.data()), lda, mu(x.data()), inc.x,
                            mu(&beta), mu(y), inc.y);
      });
      check("symv", sym_full(load(A.data(), n, n, lda), up(u), false), [&](T* y) {
        return Api<T>::symv(this->h_, u, n, mu(&alpha), mu(A.data()), lda, mu(x.data()), inc.x,
                            mu(&beta), mu(y), inc.y);
      });
      const int ldb = k + 2;
      auto B = rng.vec<T>(static_cast<size_t>(ldb) * n);
      check("hbmv", sym_full(unband_tri(B.data(), n, k, ldb, up(u)), up(u), kCplx<T>), [&](T* y) {
        return Api<T>::hbmv(this->h_, u, n, k, mu(&alpha), mu(B.data()), ldb, mu(x.data()), inc.x,
                            mu(&beta), mu(y), inc.y);
      });
      auto P = rng.vec<T>(static_cast<size_t>(n) * (n + 1) / 2);
      check("hpmv", sym_full(unpack(P.data(), n, up(u)), up(u), kCplx<T>), [&](T* y) {
        return Api<T>::hpmv(this->h_, u, n, mu(&alpha), mu(P.data()), mu(x.data()), inc.x,
                            mu(&beta), mu(y), inc.y);
      });
    }
}

TYPED_TEST(Level2, GeneralRankOne) {
  using T = TypeParam;
  Rng rng(5);
  const int m = 6, n = 4, lda = m + 1;
  for (bool conj : {false, true})
    for (Incs inc : kIncs) {
      auto A = rng.vec<T>(static_cast<size_t>(lda) * n);
      auto x = rng.vec<T>(vec_len(m, inc.x)), y = rng.vec<T>(vec_len(n, inc.y));
      const T alpha = rng.next<T>();
      const auto before = A;
      auto want = load(A.data(), m, n, lda);
      const auto xv = load_vec(x.data(), m, inc.x), yv = load_vec(y.data(), n, inc.y);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i)
          want(i, j) += wide(alpha) * xv(i, 0) * (conj ? cconj(yv(j, 0)) : yv(j, 0));
      MU_OK((conj ? Api<T>::gerc : Api<T>::geru)(this->h_, m, n, mu(&alpha), mu(x.data()), inc.x,
                                                 mu(y.data()), inc.y, mu(A.data()), lda));
      this->sync();
      EXPECT_TRUE(near_mat(A.data(), lda, want, 8)) << "conj " << conj;
      EXPECT_TRUE(untouched_padding(A, before, m, lda));
    }
}

// The uplo triangle after A += alpha x y^H + conj(alpha) y x^H (her2), alpha x x^H (her), or the
// symmetric forms without conjugation; Hermitian results have real diagonals.
template <class T>
Mat<W<T>> rank_update(const Mat<W<T>>& a0, bool upper, W<T> alpha, const Mat<W<T>>& x,
                      const Mat<W<T>>* y, bool herm) {
  Mat<W<T>> o = a0;
  const int n = a0.r;
  for (int j = 0; j < n; ++j)
    for (int i = upper ? 0 : j; i <= (upper ? j : n - 1); ++i) {
      W<T> d;
      auto cj = [&](W<T> v) { return herm ? cconj(v) : v; };
      if (y == nullptr)
        d = alpha * x(i, 0) * cj(x(j, 0));
      else
        d = alpha * x(i, 0) * cj((*y)(j, 0)) + cj(alpha) * (*y)(i, 0) * cj(x(j, 0));
      o(i, j) += d;
      if (herm && i == j) o(i, j) = W<T>(std::real(o(i, j)));
    }
  return o;
}

TYPED_TEST(Level2, SymmetricAndHermitianRankUpdates) {
  using T = TypeParam;
  using R = RealT<T>;
  Rng rng(6);
  const int n = 5, lda = n + 2;
  for (mublasFillMode_t u : kFills)
    for (Incs inc : kIncs) {
      auto x = rng.vec<T>(vec_len(n, inc.x)), y = rng.vec<T>(vec_len(n, inc.y));
      const auto xv = load_vec(x.data(), n, inc.x), yv = load_vec(y.data(), n, inc.y);
      const T alpha = rng.next<T>();
      const R ralpha = R(0.625);
      const bool herm = kCplx<T>;
      // Full storage: her (real alpha), her2, and the symmetric syr / syr2.
      struct Case {
        const char* name;
        bool rank2, sym;
      };
      for (Case c : {Case{"her", false, false}, Case{"her2", true, false}, Case{"syr", false, true},
                     Case{"syr2", true, true}}) {
        auto A = rng.vec<T>(static_cast<size_t>(lda) * n);
        const auto before = A;
        const bool h = herm && !c.sym;
        const W<T> a = c.rank2 || c.sym ? wide(alpha) : W<T>(ralpha);
        auto want =
            rank_update<T>(load(A.data(), n, n, lda), up(u), a, xv, c.rank2 ? &yv : nullptr, h);
        mublasStatus_t st;
        if (c.sym && c.rank2)
          st = Api<T>::syr2(this->h_, u, n, mu(&alpha), mu(x.data()), inc.x, mu(y.data()), inc.y,
                            mu(A.data()), lda);
        else if (c.sym)
          st = Api<T>::syr(this->h_, u, n, mu(&alpha), mu(x.data()), inc.x, mu(A.data()), lda);
        else if (c.rank2)
          st = Api<T>::her2(this->h_, u, n, mu(&alpha), mu(x.data()), inc.x, mu(y.data()), inc.y,
                            mu(A.data()), lda);
        else
          st = Api<T>::her(this->h_, u, n, &ralpha, mu(x.data()), inc.x, mu(A.data()), lda);
        MU_OK(st);
        this->sync();
        EXPECT_TRUE(near_tri(A.data(), lda, want, before, up(u), 8)) << c.name << " uplo " << u;
      }
      // Packed storage: hpr, hpr2.
      for (bool rank2 : {false, true}) {
        auto P = rng.vec<T>(static_cast<size_t>(n) * (n + 1) / 2);
        const W<T> a = rank2 ? wide(alpha) : W<T>(ralpha);
        auto want =
            rank_update<T>(unpack(P.data(), n, up(u)), up(u), a, xv, rank2 ? &yv : nullptr, herm);
        if (rank2)
          MU_OK(Api<T>::hpr2(this->h_, u, n, mu(&alpha), mu(x.data()), inc.x, mu(y.data()), inc.y,
                             mu(P.data())));
        else
          MU_OK(Api<T>::hpr(this->h_, u, n, &ralpha, mu(x.data()), inc.x, mu(P.data())));
        this->sync();
        EXPECT_TRUE(near_wide<T>(unpack(P.data(), n, up(u)), want, 8))
            << (rank2 ? "hpr2" : "hpr") << " uplo " << u;
      }
    }
}

}  // namespace
}  // namespace bt
