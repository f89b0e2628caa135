// Batched routines in the four precisions: GEMM / GEMV / TRSM (pointer arrays and strides) and
// the LAPACK-style LU, inverse, solve, QR and least-squares routines, checked through
// reconstructions and residuals computed in long double.
#include "api.h"

namespace bt {
namespace {

template <class T>
class Batched : public Typed<T> {};
TYPED_TEST_SUITE(Batched, AllTypes);

constexpr int kBatch = 3;

TYPED_TEST(Batched, GemmPointerArraysAndStrided) {
  using T = TypeParam;
  Rng rng(1);
  const int m = 5, n = 4, k = 3;
  for (mublasOperation_t ta : {MUBLAS_OP_N, MUBLAS_OP_T, MUBLAS_OP_C})
    for (mublasOperation_t tb : {MUBLAS_OP_N, MUBLAS_OP_C}) {
      const int ar = ta == MUBLAS_OP_N ? m : k, ac = ta == MUBLAS_OP_N ? k : m;
      const int br = tb == MUBLAS_OP_N ? k : n, bc = tb == MUBLAS_OP_N ? n : k;
      const int lda = ar + 1, ldb = br, ldc = m + 2;
      const long long sa = static_cast<long long>(lda) * ac + 3, sb = ldb * bc,
                      sc = static_cast<long long>(ldc) * n + 1;
      auto A = rng.vec<T>(sa * kBatch), B = rng.vec<T>(sb * kBatch), C = rng.vec<T>(sc * kBatch);
      const auto C0 = C;
      const T alpha = rng.next<T>(), beta = rng.next<T>();
      std::vector<Mat<W<T>>> want;
      for (int i = 0; i < kBatch; ++i)
        want.push_back(axpby(wide(alpha),
                             mul(op(load(A.data() + i * sa, ar, ac, lda), ta),
                                 op(load(B.data() + i * sb, br, bc, ldb), tb)),
                             wide(beta), load(C.data() + i * sc, m, n, ldc)));
      MU_OK(Api<T>::gemmStridedBatched(this->h_, ta, tb, m, n, k, mu(&alpha), mu(A.data()), lda, sa,
                                       mu(B.data()), ldb, sb, mu(&beta), mu(C.data()), ldc, sc,
                                       kBatch));
      this->sync();
      for (int i = 0; i < kBatch; ++i)
        EXPECT_TRUE(near_mat(C.data() + i * sc, ldc, want[i], 4 * (k + 2)))
            << "strided entry " << i << " ops " << ta << " " << tb;
      // The same through pointer arrays, in reverse order.
      C = C0;
      std::vector<const T*> pa, pb;
      std::vector<T*> pc;
      for (int i = kBatch - 1; i >= 0; --i) {
        pa.push_back(A.data() + i * sa);
        pb.push_back(B.data() + i * sb);
        pc.push_back(C.data() + i * sc);
      }
      MU_OK(Api<T>::gemmBatched(this->h_, ta, tb, m, n, k, mu(&alpha), mu_arr(pa.data()), lda,
                                mu_arr(pb.data()), ldb, mu(&beta), mu_arr(pc.data()), ldc, kBatch));
      this->sync();
      for (int i = 0; i < kBatch; ++i)
        EXPECT_TRUE(near_mat(C.data() + i * sc, ldc, want[i], 4 * (k + 2))) << "array entry " << i;
    }
}

TYPED_TEST(Batched, GemvPointerArraysAndStrided) {
  using T = TypeParam;
  Rng rng(2);
  const int m = 6, n = 4, lda = m + 1;
  for (mublasOperation_t t : {MUBLAS_OP_N, MUBLAS_OP_T, MUBLAS_OP_C}) {
    const int xn = t == MUBLAS_OP_N ? n : m, yn = t == MUBLAS_OP_N ? m : n;
    const int incx = 2, incy = -1;
    const long long sa = static_cast<long long>(lda) * n, sx = vec_len(xn, incx) + 1,
                    sy = vec_len(yn, incy);
    auto A = rng.vec<T>(sa * kBatch), x = rng.vec<T>(sx * kBatch), y = rng.vec<T>(sy * kBatch);
    const auto y0 = y;
    const T alpha = rng.next<T>(), beta = rng.next<T>();
    std::vector<Mat<W<T>>> want;
    for (int i = 0; i < kBatch; ++i)
      want.push_back(axpby(
          wide(alpha),
          mul(op(load(A.data() + i * sa, m, n, lda), t), load_vec(x.data() + i * sx, xn, incx)),
          wide(beta), load_vec(y.data() + i * sy, yn, incy)));
    MU_OK(Api<T>::gemvStridedBatched(this->h_, t, m, n, mu(&alpha), mu(A.data()), lda, sa,
                                     mu(x.data()), incx, sx, mu(&beta), mu(y.data()), incy, sy,
                                     kBatch));
    this->sync();
    for (int i = 0; i < kBatch; ++i)
      EXPECT_TRUE(near_vec(y.data() + i * sy, yn, incy, want[i], 4 * (m + n))) << "strided " << i;
    y = y0;
    std::vector<const T*> pa, px;
    std::vector<T*> py;
    for (int i = 0; i < kBatch; ++i) {
      pa.push_back(A.data() + i * sa);
      px.push_back(x.data() + i * sx);
      py.push_back(y.data() + i * sy);
    }
    MU_OK(Api<T>::gemvBatched(this->h_, t, m, n, mu(&alpha), mu_arr(pa.data()), lda,
                              mu_arr(px.data()), incx, mu(&beta), mu_arr(py.data()), incy, kBatch));
    this->sync();
    for (int i = 0; i < kBatch; ++i)
      EXPECT_TRUE(near_vec(y.data() + i * sy, yn, incy, want[i], 4 * (m + n))) << "array " << i;
  }
}

TYPED_TEST(Batched, TrsmBatched) {
  using T = TypeParam;
  Rng rng(3);
  const int m = 4, n = 3;
  for (mublasSideMode_t s : {MUBLAS_SIDE_LEFT, MUBLAS_SIDE_RIGHT})
    for (mublasFillMode_t u : {MUBLAS_FILL_MODE_UPPER, MUBLAS_FILL_MODE_LOWER}) {
      const int ka = s == MUBLAS_SIDE_LEFT ? m : n;
      std::vector<std::vector<T>> As, Bs;
      std::vector<const T*> pa;
      std::vector<T*> pb;
      std::vector<Mat<W<T>>> rhs;
      const T alpha = rng.next<T>();
      for (int i = 0; i < kBatch; ++i) {
        As.push_back(rng.vec<T>(static_cast<size_t>(ka) * ka));
        for (int d = 0; d < ka; ++d) As.back()[d + static_cast<size_t>(d) * ka] += T(3);
        Bs.push_back(rng.vec<T>(static_cast<size_t>(m) * n));
        rhs.push_back(axpby(wide(alpha), load(Bs.back().data(), m, n, m), W<T>(0), Mat<W<T>>()));
      }
      for (int i = 0; i < kBatch; ++i) {
        pa.push_back(As[i].data());
        pb.push_back(Bs[i].data());
      }
      MU_OK(Api<T>::trsmBatched(this->h_, s, u, MUBLAS_OP_T, MUBLAS_DIAG_NON_UNIT, m, n, mu(&alpha),
                                mu_arr(pa.data()), ka, mu_arr(pb.data()), m, kBatch));
      this->sync();
      for (int i = 0; i < kBatch; ++i) {
        const auto Tm =
            op(tri_full(load(As[i].data(), ka, ka, ka), u == MUBLAS_FILL_MODE_UPPER, false),
               MUBLAS_OP_T);
        const auto X = load(Bs[i].data(), m, n, m);
        EXPECT_TRUE(near_wide<T>(s == MUBLAS_SIDE_LEFT ? mul(Tm, X) : mul(X, Tm), rhs[i], 64))
            << "side " << s << " uplo " << u << " entry " << i;
      }
    }
}

// P A = L U from getrf's output (pivots 1-based, applied in order; NULL: no pivoting).
template <class T>
Mat<W<T>> lu_product(const T* lu, int n, int lda, const int* piv) {
  const auto F = load(lu, n, n, lda);
  Mat<W<T>> L(n, n), U(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      if (i > j) L(i, j) = F(i, j);
      if (i == j) L(i, j) = W<T>(1);
      if (i <= j) U(i, j) = F(i, j);
    }
  auto A = mul(L, U);  // = P A0: undo the interchanges in reverse
  if (piv != nullptr)
    for (int j = n - 1; j >= 0; --j)
      for (int c = 0; c < n; ++c) std::swap(A(j, c), A(piv[j] - 1, c));
  return A;
}

TYPED_TEST(Batched, LuFactorisationInverseAndSolve) {
  using T = TypeParam;
  Rng rng(4);
  const int n = 5, lda = n + 1, nrhs = 2;
  for (bool pivot : {true, false}) {
    std::vector<std::vector<T>> A(kBatch);
    std::vector<T*> pa;
    std::vector<Mat<W<T>>> orig;
    for (int i = 0; i < kBatch; ++i) {
      A[i] = rng.vec<T>(static_cast<size_t>(lda) * n);
      if (!pivot)  // diagonally dominant: LU without pivoting is stable
        for (int d = 0; d < n; ++d) A[i][d + static_cast<size_t>(d) * lda] += T(4);
      orig.push_back(load(A[i].data(), n, n, lda));
      pa.push_back(A[i].data());
    }
    std::vector<int> piv(static_cast<size_t>(n) * kBatch, -1), info(kBatch, -1);
    MU_OK(Api<T>::getrfBatched(this->h_, n, mu_arr(pa.data()), lda, pivot ? piv.data() : nullptr,
                               info.data(), kBatch));
    this->sync();
    for (int i = 0; i < kBatch; ++i) {
      EXPECT_EQ(0, info[i]);
      EXPECT_TRUE(near_wide<T>(
          lu_product(A[i].data(), n, lda, pivot ? piv.data() + i * n : nullptr), orig[i], 32))
          << "getrf entry " << i << " pivot " << pivot;
    }
    // Inverse from the factors: A0 C = I.
    std::vector<std::vector<T>> C(kBatch, std::vector<T>(static_cast<size_t>(n) * n));
    std::vector<const T*> cpa(pa.begin(), pa.end());
    std::vector<T*> pc;
    for (auto& c : C) pc.push_back(c.data());
    MU_OK(Api<T>::getriBatched(this->h_, n, mu_arr(cpa.data()), lda, pivot ? piv.data() : nullptr,
                               mu_arr(pc.data()), n, info.data(), kBatch));
    this->sync();
    for (int i = 0; i < kBatch; ++i) {
      EXPECT_EQ(0, info[i]);
      EXPECT_TRUE(near_wide<T>(mul(orig[i], load(C[i].data(), n, n, n)), identity<W<T>>(n), 256))
          << "getri entry " << i;
    }
    // Solves op(A0) X = B.
    for (mublasOperation_t t : {MUBLAS_OP_N, MUBLAS_OP_T, MUBLAS_OP_C}) {
      std::vector<std::vector<T>> B(kBatch);
      std::vector<T*> pb;
      std::vector<Mat<W<T>>> rhs;
      for (auto& b : B) {
        b = rng.vec<T>(static_cast<size_t>(n + 2) * nrhs);
        rhs.push_back(load(b.data(), n, nrhs, n + 2));
        pb.push_back(b.data());
      }
      int hinfo = -1;
      MU_OK(Api<T>::getrsBatched(this->h_, t, n, nrhs, mu_arr(cpa.data()), lda,
                                 pivot ? piv.data() : nullptr, mu_arr(pb.data()), n + 2, &hinfo,
                                 kBatch));
      EXPECT_EQ(0, hinfo);
      this->sync();
      for (int i = 0; i < kBatch; ++i)
        EXPECT_TRUE(
            near_wide<T>(mul(op(orig[i], t), load(B[i].data(), n, nrhs, n + 2)), rhs[i], 256))
            << "getrs op " << t << " entry " << i;
    }
  }
  // A singular matrix: info is the first zero pivot.
  std::vector<T> S(static_cast<size_t>(n) * n, T(0));
  for (int i = 0; i < n; ++i) S[i + static_cast<size_t>(i) * n] = T(i == 2 ? 0 : 1);
  T* ps = S.data();
  std::vector<int> piv(n);
  int info = -1;
  MU_OK(Api<T>::getrfBatched(this->h_, n, mu_arr(&ps), n, piv.data(), &info, 1));
  this->sync();
  EXPECT_EQ(3, info);
  int hinfo = 0;
  MU_EXPECT(MUBLAS_STATUS_INVALID_SIZE,
            Api<T>::getrsBatched(this->h_, MUBLAS_OP_N, n, -1, mu_arr(&ps), n, piv.data(),
                                 mu_arr(&ps), n, &hinfo, 1));
  EXPECT_EQ(-4, hinfo);
}

TYPED_TEST(Batched, MatinvBatched) {
  using T = TypeParam;
  Rng rng(5);
  const int n = 6;
  std::vector<std::vector<T>> A(kBatch), C(kBatch, std::vector<T>(static_cast<size_t>(n) * n));
  std::vector<const T*> pa;
  std::vector<T*> pc;
  for (int i = 0; i < kBatch; ++i) {
    A[i] = rng.vec<T>(static_cast<size_t>(n) * n);
    pa.push_back(A[i].data());
    pc.push_back(C[i].data());
  }
  std::vector<int> info(kBatch, -1);
  MU_OK(Api<T>::matinvBatched(this->h_, n, mu_arr(pa.data()), n, mu_arr(pc.data()), n, info.data(),
                              kBatch));
  this->sync();
  for (int i = 0; i < kBatch; ++i) {
    EXPECT_EQ(0, info[i]);
    EXPECT_TRUE(near_wide<T>(mul(load(A[i].data(), n, n, n), load(C[i].data(), n, n, n)),
                             identity<W<T>>(n), 512))
        << "entry " << i;
  }
  MU_EXPECT(MUBLAS_STATUS_INVALID_SIZE,
            Api<T>::matinvBatched(this->h_, 33, mu_arr(pa.data()), 33, mu_arr(pc.data()), 33,
                                  info.data(), 1));
}

// Q = H(1) ... H(k) from geqrf's reflectors; returns Q R.
template <class T>
Mat<W<T>> qr_product(const T* f, int m, int n, int lda, const T* tau) {
  const auto F = load(f, m, n, lda);
  Mat<W<T>> Q = identity<W<T>>(m);
  for (int k = std::min(m, n) - 1; k >= 0; --k) {
    Mat<W<T>> v(m, 1);
    v(k, 0) = W<T>(1);
    for (int i = k + 1; i < m; ++i) v(i, 0) = F(i, k);
    // Q = H(k) Q with H = I - tau v v^H.
    const auto vhq = mul(op(v, MUBLAS_OP_C), Q);
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < m; ++i) Q(i, j) -= wide(tau[k]) * v(i, 0) * vhq(0, j);
  }
  Mat<W<T>> R(m, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i <= std::min(j, m - 1); ++i) R(i, j) = F(i, j);
  return mul(Q, R);
}

TYPED_TEST(Batched, GeqrfAndGels) {
  using T = TypeParam;
  Rng rng(6);
  const int m = 7, n = 4, lda = m + 1, nrhs = 2, ldc = m;
  std::vector<std::vector<T>> A(kBatch), tau(kBatch, std::vector<T>(n));
  std::vector<T*> pa, pt;
  std::vector<Mat<W<T>>> orig;
  for (int i = 0; i < kBatch; ++i) {
    A[i] = rng.vec<T>(static_cast<size_t>(lda) * n);
    orig.push_back(load(A[i].data(), m, n, lda));
    pa.push_back(A[i].data());
    pt.push_back(tau[i].data());
  }
  int info = -1;
  MU_OK(Api<T>::geqrfBatched(this->h_, m, n, mu_arr(pa.data()), lda, mu_arr(pt.data()), &info,
                             kBatch));
  EXPECT_EQ(0, info);
  this->sync();
  for (int i = 0; i < kBatch; ++i)
    EXPECT_TRUE(near_wide<T>(qr_product(A[i].data(), m, n, lda, tau[i].data()), orig[i], 64))
        << "geqrf entry " << i;
  // Least squares: the residual is orthogonal to A's columns (A^H (A X - C) = 0).
  std::vector<std::vector<T>> C(kBatch);
  std::vector<T*> pc;
  std::vector<Mat<W<T>>> rhs;
  for (int i = 0; i < kBatch; ++i) {
    const auto fresh = rng.vec<T>(A[i].size());
    std::copy(fresh.begin(), fresh.end(), A[i].begin());  // pa keeps pointing at A[i]
    orig[i] = load(A[i].data(), m, n, lda);
    C[i] = rng.vec<T>(static_cast<size_t>(ldc) * nrhs);
    rhs.push_back(load(C[i].data(), m, nrhs, ldc));
    pc.push_back(C[i].data());
  }
  std::vector<int> dev_info(kBatch, -1);
  MU_OK(Api<T>::gelsBatched(this->h_, MUBLAS_OP_N, m, n, nrhs, mu_arr(pa.data()), lda,
                            mu_arr(pc.data()), ldc, &info, dev_info.data(), kBatch));
  EXPECT_EQ(0, info);
  this->sync();
  for (int i = 0; i < kBatch; ++i) {
    EXPECT_EQ(0, dev_info[i]);
    const auto X = load(C[i].data(), n, nrhs, ldc);
    const auto r = axpby(W<T>(1), mul(orig[i], X), W<T>(-1), rhs[i]);
    EXPECT_TRUE(near_wide<T>(mul(op(orig[i], MUBLAS_OP_C), r), Mat<W<T>>(n, nrhs), 256))
        << "gels entry " << i;
  }
  MU_EXPECT(MUBLAS_STATUS_NOT_IMPLEMENTED,
            Api<T>::gelsBatched(this->h_, MUBLAS_OP_T, m, n, nrhs, mu_arr(pa.data()), lda,
                                mu_arr(pc.data()), ldc, &info, dev_info.data(), kBatch));
}

}  // namespace
}  // namespace bt
