// Vectors that end (or start) at an inaccessible page, through the routines whose OpenBLAS
// kernels were found to read outside them (complex dot products with non-unit increments, zhemv
// with an upper-stored matrix) and their neighbours. A read outside a vector crashes the test.
#include "api.h"

namespace bt {
namespace {

template <class T>
class Fence : public Typed<T> {};
TYPED_TEST_SUITE(Fence, AllTypes);

constexpr int kIncList[] = {1, 2, -1, -3};

TYPED_TEST(Fence, DotProducts) {
  using T = TypeParam;
  Rng rng(31);
  for (int n : {1, 5, 17})
    for (int incx : kIncList)
      for (int incy : kIncList)
        for (bool front : {false, true}) {
          const size_t lx = vec_len(n, incx), ly = vec_len(n, incy);
          Fenced<T> x(lx, front), y(ly, front);
          ASSERT_NE(nullptr, x.data());
          x.fill(rng.vec<T>(lx));
          y.fill(rng.vec<T>(ly));
          const auto xv = load_vec(x.data(), n, incx), yv = load_vec(y.data(), n, incy);
          W<T> u(0), c(0);
          for (int i = 0; i < n; ++i) {
            u += xv(i, 0) * yv(i, 0);
            c += cconj(xv(i, 0)) * yv(i, 0);
          }
          T ru{}, rc{};
          MU_OK(Api<T>::dotu(this->h_, n, mu(x.data()), incx, mu(y.data()), incy, mu(&ru)));
          MU_OK(Api<T>::dotc(this->h_, n, mu(x.data()), incx, mu(y.data()), incy, mu(&rc)));
          EXPECT_LE(mag(wide(ru) - u), 4 * n * eps<T>()) << n << " " << incx << " " << incy;
          EXPECT_LE(mag(wide(rc) - c), 4 * n * eps<T>()) << n << " " << incx << " " << incy;
        }
}

TYPED_TEST(Fence, HermitianProduct) {
  using T = TypeParam;
  Rng rng(32);
  for (int n : {1, 4, 13})
    for (mublasFillMode_t u : {MUBLAS_FILL_MODE_UPPER, MUBLAS_FILL_MODE_LOWER})
      for (int inc : {1, -2})
        for (bool front : {false, true}) {
          Fenced<T> A(static_cast<size_t>(n) * n, front), x(vec_len(n, inc), front),
              y(vec_len(n, inc), front);
          A.fill(rng.vec<T>(static_cast<size_t>(n) * n));
          x.fill(rng.vec<T>(vec_len(n, inc)));
          y.fill(rng.vec<T>(vec_len(n, inc)));
          const T alpha = rng.next<T>(), beta = rng.next<T>();
          const bool upper = u == MUBLAS_FILL_MODE_UPPER;
          auto want = axpby(
              wide(alpha),
              mul(sym_full(load(A.data(), n, n, n), upper, kCplx<T>), load_vec(x.data(), n, inc)),
              wide(beta), load_vec(y.data(), n, inc));
          MU_OK(Api<T>::hemv(this->h_, u, n, mu(&alpha), mu(A.data()), n, mu(x.data()), inc,
                             mu(&beta), mu(y.data()), inc));
          this->sync();
          EXPECT_TRUE(near_vec(y.data(), n, inc, want, 8 * n)) << "n " << n << " uplo " << u;
        }
}

}  // namespace
}  // namespace bt
