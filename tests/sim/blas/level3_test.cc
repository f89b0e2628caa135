// Level 3 and the BLAS-like extensions in the four precisions: every transpose / side / fill /
// diagonal variant, padded leading dimensions (padding must stay untouched), triangles outside
// uplo untouched, against dense products in long double.
#include "api.h"

namespace bt {
namespace {

template <class T>
class Level3 : public Typed<T> {};
TYPED_TEST_SUITE(Level3, AllTypes);

constexpr mublasOperation_t kOps[] = {MUBLAS_OP_N, MUBLAS_OP_T, MUBLAS_OP_C};
constexpr mublasFillMode_t kFills[] = {MUBLAS_FILL_MODE_UPPER, MUBLAS_FILL_MODE_LOWER};
constexpr mublasSideMode_t kSides[] = {MUBLAS_SIDE_LEFT, MUBLAS_SIDE_RIGHT};
constexpr mublasDiagType_t kDiags[] = {MUBLAS_DIAG_NON_UNIT, MUBLAS_DIAG_UNIT};
bool up(mublasFillMode_t f) { return f == MUBLAS_FILL_MODE_UPPER; }
bool left(mublasSideMode_t s) { return s == MUBLAS_SIDE_LEFT; }

// A rows x cols operand stored with leading dimension rows + pad.
template <class T>
struct Operand {
  Operand(Rng& rng, int rows_, int cols_, int pad = 2)
      : rows(rows_),
        cols(cols_),
        ld(std::max(1, rows_ + pad)),
        data(rng.vec<T>(static_cast<size_t>(ld) * std::max(1, cols_))) {}
  Mat<W<T>> dense() const { return load(data.data(), rows, cols, ld); }
  int rows, cols, ld;
  std::vector<T> data;
};

TYPED_TEST(Level3, Gemm) {
  using T = TypeParam;
  Rng rng(1);
  const int m = 7, n = 5, k = 6;
  for (mublasOperation_t ta : kOps)
    for (mublasOperation_t tb : kOps)
      for (bool three_m : {false, true}) {
        if (three_m && !kCplx<T>) continue;
        Operand<T> A(rng, ta == MUBLAS_OP_N ? m : k, ta == MUBLAS_OP_N ? k : m);
        Operand<T> B(rng, tb == MUBLAS_OP_N ? k : n, tb == MUBLAS_OP_N ? n : k, 1);
        Operand<T> C(rng, m, n, 3);
        const auto before = C.data;
        const T alpha = rng.next<T>(), beta = rng.next<T>();
        auto want =
            axpby(wide(alpha), mul(op(A.dense(), ta), op(B.dense(), tb)), wide(beta), C.dense());
        auto fn = Api<T>::gemm;
        if constexpr (kCplx<T>)
          if (three_m) fn = Api<T>::gemm3m;
        MU_OK(fn(this->h_, ta, tb, m, n, k, mu(&alpha), mu(A.data.data()), A.ld, mu(B.data.data()),
                 B.ld, mu(&beta), mu(C.data.data()), C.ld));
        this->sync();
        EXPECT_TRUE(near_mat(C.data.data(), C.ld, want, 4 * (k + 2)))
            << "ops " << ta << " " << tb << (three_m ? " 3m" : "");
        EXPECT_TRUE(untouched_padding(C.data, before, m, C.ld));
      }
}

TYPED_TEST(Level3, GemmBetaZeroAndEmptyK) {
  using T = TypeParam;
  Rng rng(2);
  const int m = 4, n = 3, k = 5;
  Operand<T> A(rng, m, k, 0), B(rng, k, n, 0);
  std::vector<T> C(static_cast<size_t>(m) * n, T(std::numeric_limits<RealT<T>>::quiet_NaN()));
  const T one(1), zero(0);
  MU_OK(Api<T>::gemm(this->h_, MUBLAS_OP_N, MUBLAS_OP_N, m, n, k, mu(&one), mu(A.data.data()), m,
                     mu(B.data.data()), k, mu(&zero), mu(C.data()), m));
  this->sync();
  EXPECT_TRUE(near_mat(C.data(), m, mul(A.dense(), B.dense()), 4 * k)) << "beta 0 reads C";
  // k == 0: C = beta C; A and B may be NULL.
  const T beta(0.5);
  auto want = axpby(W<T>(0), load(C.data(), m, n, m), wide(beta), load(C.data(), m, n, m));
  MU_OK(Api<T>::gemm(this->h_, MUBLAS_OP_N, MUBLAS_OP_N, m, n, 0, mu(&one), nullptr, m, nullptr, 1,
                     mu(&beta), mu(C.data()), m));
  this->sync();
  EXPECT_TRUE(near_mat(C.data(), m, want, 2));
}

TYPED_TEST(Level3, SymmAndHemm) {
  using T = TypeParam;
  Rng rng(3);
  const int m = 6, n = 4;
  for (mublasSideMode_t s : kSides)
    for (mublasFillMode_t u : kFills)
      for (bool herm : {false, true}) {
        const int ka = left(s) ? m : n;
        Operand<T> A(rng, ka, ka), B(rng, m, n), C(rng, m, n, 1);
        const auto before = C.data;
        const T alpha = rng.next<T>(), beta = rng.next<T>();
        const auto S = sym_full(A.dense(), up(u), herm && kCplx<T>);
        auto prod = left(s) ? mul(S, B.dense()) : mul(B.dense(), S);
        auto want = axpby(wide(alpha), prod, wide(beta), C.dense());
        MU_OK((herm ? Api<T>::hemm : Api<T>::symm)(this->h_, s, u, m, n, mu(&alpha),
                                                   mu(A.data.data()), A.ld, mu(B.data.data()), B.ld,
                                                   mu(&beta), mu(C.data.data()), C.ld));
        this->sync();
        EXPECT_TRUE(near_mat(C.data.data(), C.ld, want, 4 * (ka + 2)))
            << (herm ? "hemm" : "symm") << " side " << s << " uplo " << u;
        EXPECT_TRUE(untouched_padding(C.data, before, m, C.ld));
      }
}

enum class Kind { kSyrk, kHerk, kSyr2k, kHer2k, kSyrkx, kHerkx };
const char* name(Kind k) {
  static const char* const names[] = {"syrk", "herk", "syr2k", "her2k", "syrkx", "herkx"};
  return names[static_cast<int>(k)];
}

TYPED_TEST(Level3, RankKUpdates) {
  using T = TypeParam;
  using R = RealT<T>;
  Rng rng(4);
  const int n = 6, k = 4;
  for (Kind kind :
       {Kind::kSyrk, Kind::kHerk, Kind::kSyr2k, Kind::kHer2k, Kind::kSyrkx, Kind::kHerkx}) {
    const bool herm = (kind == Kind::kHerk || kind == Kind::kHer2k || kind == Kind::kHerkx);
    const bool two = kind != Kind::kSyrk && kind != Kind::kHerk;
    for (mublasFillMode_t u : kFills)
      for (mublasOperation_t t : kOps) {
        // Complex types: symmetric forms take N / T, Hermitian ones N / C.
        if (kCplx<T> && t == (herm ? MUBLAS_OP_T : MUBLAS_OP_C)) continue;
        const bool hc = herm && kCplx<T>;
        const int ar = t == MUBLAS_OP_N ? n : k, ac = t == MUBLAS_OP_N ? k : n;
        Operand<T> A(rng, ar, ac), B(rng, ar, ac, 3), C(rng, n, n, 1);
        const auto before = C.data;
        const T alpha = rng.next<T>();
        const T beta = rng.next<T>();
        const R ralpha = R(0.75), rbeta = R(-0.5);
        // op(A): n x k. The second factor is op(X)^T (symmetric) or op(X)^H (Hermitian).
        const mublasOperation_t second = hc ? MUBLAS_OP_C : MUBLAS_OP_T;
        const auto opA = op(A.dense(), t), opB = op(B.dense(), t);
        Mat<W<T>> prod;
        W<T> a = wide(alpha), b = wide(beta);
        if (kind == Kind::kHerk) a = W<T>(ralpha);
        if (herm) b = W<T>(rbeta);
        if (!two) {
          prod = mul(opA, op(opA, second));
        } else if (kind == Kind::kSyrkx || kind == Kind::kHerkx) {
          prod = mul(opA, op(opB, second));
        } else {
          prod = mul(opA, op(opB, second));
          const auto other = mul(opB, op(opA, second));
          const W<T> ca = hc ? cconj(a) : a;
          for (size_t i = 0; i < prod.a.size(); ++i) prod.a[i] += (ca / a) * other.a[i];
        }
        auto c0 = C.dense();
        if (hc)
          for (int i = 0; i < n; ++i) c0(i, i) = W<T>(std::real(c0(i, i)));
        auto want = axpby(a, prod, b, c0);
        if (hc)
          for (int i = 0; i < n; ++i) want(i, i) = W<T>(std::real(want(i, i)));
        mublasStatus_t st = MUBLAS_STATUS_INTERNAL_ERROR;
        auto* Ap = mu(A.data.data());
        auto* Bp = mu(B.data.data());
        auto* Cp = mu(C.data.data());
        switch (kind) {
          case Kind::kSyrk:
            st = Api<T>::syrk(this->h_, u, t, n, k, mu(&alpha), Ap, A.ld, mu(&beta), Cp, C.ld);
            break;
          case Kind::kHerk:
            st = Api<T>::herk(this->h_, u, t, n, k, &ralpha, Ap, A.ld, &rbeta, Cp, C.ld);
            break;
          case Kind::kSyr2k:
            st = Api<T>::syr2k(this->h_, u, t, n, k, mu(&alpha), Ap, A.ld, Bp, B.ld, mu(&beta), Cp,
                               C.ld);
            break;
          case Kind::kHer2k:
            st = Api<T>::her2k(this->h_, u, t, n, k, mu(&alpha), Ap, A.ld, Bp, B.ld, &rbeta, Cp,
                               C.ld);
            break;
          case Kind::kSyrkx:
            st = Api<T>::syrkx(this->h_, u, t, n, k, mu(&alpha), Ap, A.ld, Bp, B.ld, mu(&beta), Cp,
                               C.ld);
            break;
          case Kind::kHerkx:
            st = Api<T>::herkx(this->h_, u, t, n, k, mu(&alpha), Ap, A.ld, Bp, B.ld, &rbeta, Cp,
                               C.ld);
            break;
        }
        MU_OK(st);
        this->sync();
        EXPECT_TRUE(near_tri(C.data.data(), C.ld, want, before, up(u), 8 * (k + 2)))
            << name(kind) << " uplo " << u << " op " << t;
      }
  }
}

template <class T>
class Level3Complex : public Typed<T> {};
TYPED_TEST_SUITE(Level3Complex, ComplexTypes);

// Complex syrk takes OP_N / OP_T only, herk OP_N / OP_C only (real types accept all three).
TYPED_TEST(Level3Complex, RankKRejectsTheWrongTranspose) {
  using T = TypeParam;
  std::vector<T> A(16), C(16);
  const T one(1);
  const RealT<T> r = 1;
  MU_EXPECT(MUBLAS_STATUS_INVALID_VALUE,
            Api<T>::syrk(this->h_, MUBLAS_FILL_MODE_UPPER, MUBLAS_OP_C, 4, 4, mu(&one),
                         mu(A.data()), 4, mu(&one), mu(C.data()), 4));
  MU_EXPECT(MUBLAS_STATUS_INVALID_VALUE,
            Api<T>::herk(this->h_, MUBLAS_FILL_MODE_UPPER, MUBLAS_OP_T, 4, 4, &r, mu(A.data()), 4,
                         &r, mu(C.data()), 4));
}

// Triangular operand: diagonal 2 + noise, off-diagonal scaled down (well conditioned).
template <class T>
Operand<T> tri_operand(Rng& rng, int n) {
  Operand<T> A(rng, n, n);
  for (T& v : A.data) v *= RealT<T>(1.0 / n);
  for (int i = 0; i < n; ++i) A.data[i + static_cast<size_t>(i) * A.ld] += T(2);
  return A;
}

TYPED_TEST(Level3, TrmmOutOfPlaceAndInPlace) {
  using T = TypeParam;
  Rng rng(5);
  const int m = 5, n = 4;
  for (mublasSideMode_t s : kSides)
    for (mublasFillMode_t u : kFills)
      for (mublasOperation_t t : kOps)
        for (mublasDiagType_t d : kDiags) {
          const int ka = left(s) ? m : n;
          auto A = tri_operand<T>(rng, ka);
          Operand<T> B(rng, m, n), C(rng, m, n, 3);
          const T alpha = rng.next<T>();
          const auto Tm = op(tri_full(A.dense(), up(u), d == MUBLAS_DIAG_UNIT), t);
          auto want = axpby(wide(alpha), left(s) ? mul(Tm, B.dense()) : mul(B.dense(), Tm), W<T>(0),
                            Mat<W<T>>());
          const auto b_before = B.data, c_before = C.data;
          MU_OK(Api<T>::trmm(this->h_, s, u, t, d, m, n, mu(&alpha), mu(A.data.data()), A.ld,
                             mu(B.data.data()), B.ld, mu(C.data.data()), C.ld));
          this->sync();
          EXPECT_TRUE(near_mat(C.data.data(), C.ld, want, 4 * (ka + 2)))
              << "side " << s << " uplo " << u << " op " << t << " diag " << d;
          EXPECT_EQ(0, std::memcmp(B.data.data(), b_before.data(), sizeof(T) * B.data.size()))
              << "B changed";
          EXPECT_TRUE(untouched_padding(C.data, c_before, m, C.ld));
          // In place: C is B.
          MU_OK(Api<T>::trmm(this->h_, s, u, t, d, m, n, mu(&alpha), mu(A.data.data()), A.ld,
                             mu(B.data.data()), B.ld, mu(B.data.data()), B.ld));
          this->sync();
          EXPECT_TRUE(near_mat(B.data.data(), B.ld, want, 4 * (ka + 2))) << "in place";
        }
  // In place needs ldb == ldc.
  std::vector<T> A(16, T(1)), B(32);
  const T one(1);
  MU_EXPECT(MUBLAS_STATUS_INVALID_SIZE,
            Api<T>::trmm(this->h_, MUBLAS_SIDE_LEFT, MUBLAS_FILL_MODE_UPPER, MUBLAS_OP_N,
                         MUBLAS_DIAG_UNIT, 4, 4, mu(&one), mu(A.data()), 4, mu(B.data()), 4,
                         mu(B.data()), 8));
}

TYPED_TEST(Level3, Trsm) {
  using T = TypeParam;
  Rng rng(6);
  const int m = 5, n = 4;
  for (mublasSideMode_t s : kSides)
    for (mublasFillMode_t u : kFills)
      for (mublasOperation_t t : kOps)
        for (mublasDiagType_t d : kDiags) {
          const int ka = left(s) ? m : n;
          auto A = tri_operand<T>(rng, ka);
          Operand<T> B(rng, m, n);
          const T alpha = rng.next<T>();
          const auto rhs = axpby(wide(alpha), B.dense(), W<T>(0), Mat<W<T>>());
          MU_OK(Api<T>::trsm(this->h_, s, u, t, d, m, n, mu(&alpha), mu(A.data.data()), A.ld,
                             mu(B.data.data()), B.ld));
          this->sync();
          const auto Tm = op(tri_full(A.dense(), up(u), d == MUBLAS_DIAG_UNIT), t);
          const auto X = B.dense();
          EXPECT_TRUE(near_wide<T>(left(s) ? mul(Tm, X) : mul(X, Tm), rhs, 16 * (ka + 2)))
              << "side " << s << " uplo " << u << " op " << t << " diag " << d;
        }
}

TYPED_TEST(Level3, Geam) {
  using T = TypeParam;
  Rng rng(7);
  const int m = 5, n = 3;
  for (mublasOperation_t ta : kOps)
    for (mublasOperation_t tb : kOps) {
      Operand<T> A(rng, ta == MUBLAS_OP_N ? m : n, ta == MUBLAS_OP_N ? n : m);
      Operand<T> B(rng, tb == MUBLAS_OP_N ? m : n, tb == MUBLAS_OP_N ? n : m, 1);
      Operand<T> C(rng, m, n, 2);
      const auto before = C.data;
      const T alpha = rng.next<T>(), beta = rng.next<T>();
      auto want = axpby(wide(alpha), op(A.dense(), ta), wide(beta), op(B.dense(), tb));
      MU_OK(Api<T>::geam(this->h_, ta, tb, m, n, mu(&alpha), mu(A.data.data()), A.ld, mu(&beta),
                         mu(B.data.data()), B.ld, mu(C.data.data()), C.ld));
      this->sync();
      EXPECT_TRUE(near_mat(C.data.data(), C.ld, want, 4)) << "ops " << ta << " " << tb;
      EXPECT_TRUE(untouched_padding(C.data, before, m, C.ld));
    }
  // Transposition with beta == 0 and no B; in place C == A (op N, same ld).
  Operand<T> A(rng, n, m), C(rng, m, n);
  const T one(1), zero(0), two(2);
  MU_OK(Api<T>::geam(this->h_, MUBLAS_OP_T, MUBLAS_OP_N, m, n, mu(&one), mu(A.data.data()), A.ld,
                     mu(&zero), nullptr, m, mu(C.data.data()), C.ld));
  this->sync();
  EXPECT_TRUE(near_mat(C.data.data(), C.ld, op(A.dense(), MUBLAS_OP_T), 0));
  auto want = axpby(wide(two), C.dense(), W<T>(0), Mat<W<T>>());
  MU_OK(Api<T>::geam(this->h_, MUBLAS_OP_N, MUBLAS_OP_N, m, n, mu(&two), mu(C.data.data()), C.ld,
                     mu(&zero), nullptr, m, mu(C.data.data()), C.ld));
  this->sync();
  EXPECT_TRUE(near_mat(C.data.data(), C.ld, want, 1));
  // In place with a transpose is refused.
  MU_EXPECT(MUBLAS_STATUS_INVALID_VALUE,
            Api<T>::geam(this->h_, MUBLAS_OP_T, MUBLAS_OP_N, m, m, mu(&one), mu(C.data.data()),
                         C.ld, mu(&zero), nullptr, m, mu(C.data.data()), C.ld));
}

TYPED_TEST(Level3, Dgmm) {
  using T = TypeParam;
  Rng rng(8);
  const int m = 5, n = 4;
  for (mublasSideMode_t s : kSides)
    for (int inc : {1, -2}) {
      const int xn = left(s) ? m : n;
      Operand<T> A(rng, m, n), C(rng, m, n, 1);
      auto x = rng.vec<T>(vec_len(xn, inc));
      const auto xv = load_vec(x.data(), xn, inc);
      auto want = A.dense();
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) want(i, j) *= xv(left(s) ? i : j, 0);
      MU_OK(Api<T>::dgmm(this->h_, s, m, n, mu(A.data.data()), A.ld, mu(x.data()), inc,
                         mu(C.data.data()), C.ld));
      this->sync();
      EXPECT_TRUE(near_mat(C.data.data(), C.ld, want, 2)) << "side " << s << " inc " << inc;
    }
}

TYPED_TEST(Level3, PackedFullConversions) {
  using T = TypeParam;
  Rng rng(9);
  const int n = 5, lda = n + 2;
  for (mublasFillMode_t u : kFills) {
    auto P = rng.vec<T>(static_cast<size_t>(n) * (n + 1) / 2);
    auto A = rng.vec<T>(static_cast<size_t>(lda) * n);
    const auto before = A;
    MU_OK(Api<T>::tpttr(this->h_, u, n, mu(P.data()), mu(A.data()), lda));
    this->sync();
    EXPECT_TRUE(near_tri(A.data(), lda, unpack(P.data(), n, up(u)), before, up(u), 0));
    std::vector<T> back(P.size());
    MU_OK(Api<T>::trttp(this->h_, u, n, mu(A.data()), lda, mu(back.data())));
    this->sync();
    EXPECT_EQ(0, std::memcmp(back.data(), P.data(), sizeof(T) * P.size()));
  }
}

}  // namespace
}  // namespace bt
