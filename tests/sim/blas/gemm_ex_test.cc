// Mixed precision: the GemmEx family (every documented type combination, batched forms, both
// compute-type forms), the fast compute types' input rounding, TF32 math mode, Hgemm, SgemmEx /
// CgemmEx, CsyrkEx / CherkEx, the half / bfloat16 batched GEMVs and the level-1 Ex routines.
// The binary16 reference is the compiler's _Float16; the bfloat16 one is written here.
#include "api.h"

#include <cstdint>

namespace bt {
namespace {

class Mixed : public BlasTest {};

#if defined(__FLT16_MAX__)
constexpr bool kHaveFloat16 = true;
uint16_t half_bits(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
float half_value(uint16_t u) {
  _Float16 h;
  std::memcpy(&h, &u, 2);
  return static_cast<float>(h);
}
#else
constexpr bool kHaveFloat16 = false;
uint16_t half_bits(float) { return 0; }
float half_value(uint16_t) { return 0; }
#endif
#define NEED_FLOAT16() \
  if (!kHaveFloat16) GTEST_SKIP() << "the compiler has no _Float16 to serve as the reference"

uint32_t fbits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float fval(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
float bf16_value(uint16_t b) { return fval(static_cast<uint32_t>(b) << 16); }
// Nearest bfloat16, ties to even, chosen by comparing distances in double.
uint16_t bf16_ref(float f) {
  if (std::isnan(f)) return 0x7fc0;
  const uint32_t u = fbits(f);
  const uint16_t lo = static_cast<uint16_t>(u >> 16);
  const uint16_t hi = static_cast<uint16_t>(lo + 1);  // next away from zero
  const double dl = std::abs(static_cast<double>(f) - bf16_value(lo));
  const double dh = std::abs(static_cast<double>(f) - bf16_value(hi));
  if (dl < dh) return lo;
  if (dh < dl) return hi;
  return (lo & 1) ? hi : lo;
}
float tf32_ref(float f) {  // nearest with a 10-bit mantissa, ties to even
  const uint32_t u = fbits(f);
  const uint32_t lo = u & ~0x1fffu, hi = lo + 0x2000u;
  const double dl = std::abs(static_cast<double>(f) - fval(lo));
  const double dh = std::abs(static_cast<double>(f) - fval(hi));
  if (dl < dh) return fval(lo);
  if (dh < dl) return fval(hi);
  return fval((lo & 0x2000u) ? hi : lo);
}

TEST_F(Mixed, HalfToFloatIsExactForEveryValue) {
  NEED_FLOAT16();
  // C (1 x 65536, float) = 1.0 * B (every binary16 pattern), through GemmEx.
  const int n = 65536;
  std::vector<uint16_t> b(n);
  for (int i = 0; i < n; ++i) b[i] = static_cast<uint16_t>(i);
  const uint16_t one = half_bits(1.0f);
  std::vector<float> c(n, -1.0f);
  const float alpha = 1, beta = 0;
  MU_OK(mublasGemmEx(h_, MUBLAS_OP_N, MUBLAS_OP_N, 1, n, 1, &alpha, &one, MUSA_R_16F, 1, b.data(),
                     MUSA_R_16F, 1, &beta, c.data(), MUSA_R_32F, 1, MUBLAS_COMPUTE_32F,
                     MUBLAS_GEMM_DEFAULT));
  sync();
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    const float want = half_value(b[i]);
    if (std::isnan(want) ? !std::isnan(c[i]) : c[i] != want) ++bad;
  }
  EXPECT_EQ(0, bad);
}

TEST_F(Mixed, FloatToHalfAndBf16RoundToNearestEven) {
  NEED_FLOAT16();
  // y = alpha x with y = 0 (AxpyEx, execution in float): y_i = round(alpha * x_i), products that
  // land between, on and beyond binary16 / bfloat16 values, subnormals and overflow included.
  Rng rng(1);
  const int n = 4096;
  std::vector<float> xf(n);
  for (int i = 0; i < n; ++i) {
    const double mag = std::ldexp(1.0, rng.uniform_int(-26, 17));
    xf[i] = static_cast<float>(rng.next<double>() * mag);
  }
  const float alpha = 1.0f + 1.0f / 3;
  for (musaDataType_t t : {MUSA_R_16F, MUSA_R_16BF}) {
    std::vector<uint16_t> x(n), y(n, 0);
    for (int i = 0; i < n; ++i)
      x[i] = t == MUSA_R_16F ? half_bits(xf[i]) : static_cast<uint16_t>(fbits(xf[i]) >> 16);
    MU_OK(mublasAxpyEx(h_, n, &alpha, MUSA_R_32F, x.data(), t, 1, y.data(), t, 1, MUSA_R_32F));
    sync();
    int bad = 0;
    for (int i = 0; i < n; ++i) {
      const float xv = t == MUSA_R_16F ? half_value(x[i]) : bf16_value(x[i]);
      const float prod = alpha * xv;
      const uint16_t want = t == MUSA_R_16F ? half_bits(prod) : bf16_ref(prod);
      if (want != y[i] && !(prod == 0 && (y[i] & 0x7fff) == 0)) ++bad;
    }
    EXPECT_EQ(0, bad) << "type " << t;
  }
}

// Random data exactly representable in a MUSA type, as raw bytes plus its values as doubles.
struct Data {
  std::vector<unsigned char> raw;
  std::vector<cd> v;
};

Data make_data(Rng& rng, musaDataType_t t, size_t n) {
  Data d;
  d.v.resize(n);
  switch (t) {
    case MUSA_R_16F:
    case MUSA_R_16BF: {
      std::vector<uint16_t> s(n);
      for (size_t i = 0; i < n; ++i) {
        const float f = static_cast<float>(rng.uniform_int(-64, 64)) / 32;  // exact in both
        s[i] = t == MUSA_R_16F ? half_bits(f) : static_cast<uint16_t>(fbits(f) >> 16);
        d.v[i] = f;
      }
      d.raw.assign(reinterpret_cast<unsigned char*>(s.data()),
                   reinterpret_cast<unsigned char*>(s.data() + n));
      break;
    }
    case MUSA_R_8I:
    case MUSA_C_8I: {
      const size_t parts = t == MUSA_C_8I ? 2 : 1;
      std::vector<int8_t> s(n * parts);
      for (auto& e : s) e = static_cast<int8_t>(rng.uniform_int(-128, 127));
      for (size_t i = 0; i < n; ++i) d.v[i] = parts == 2 ? cd(s[2 * i], s[2 * i + 1]) : cd(s[i], 0);
      d.raw.assign(reinterpret_cast<unsigned char*>(s.data()),
                   reinterpret_cast<unsigned char*>(s.data() + s.size()));
      break;
    }
    case MUSA_R_32I: {
      std::vector<int32_t> s(n);
      for (size_t i = 0; i < n; ++i) {
        s[i] = rng.uniform_int(-1000, 1000);
        d.v[i] = s[i];
      }
      d.raw.assign(reinterpret_cast<unsigned char*>(s.data()),
                   reinterpret_cast<unsigned char*>(s.data() + n));
      break;
    }
    case MUSA_R_32F:
    case MUSA_R_64F:
    case MUSA_C_32F:
    case MUSA_C_64F: {
      const bool dbl = t == MUSA_R_64F || t == MUSA_C_64F;
      const bool cpx = t == MUSA_C_32F || t == MUSA_C_64F;
      const size_t parts = cpx ? 2 : 1, es = dbl ? 8 : 4;
      d.raw.resize(n * parts * es);
      for (size_t i = 0; i < n; ++i) {
        double p[2] = {rng.next<double>(), cpx ? rng.next<double>() : 0.0};
        for (size_t q = 0; q < parts; ++q) {
          if (dbl) {
            std::memcpy(&d.raw[(i * parts + q) * es], &p[q], 8);
          } else {
            const float f = static_cast<float>(p[q]);
            p[q] = f;
            std::memcpy(&d.raw[(i * parts + q) * es], &f, 4);
          }
        }
        d.v[i] = cd(p[0], p[1]);
      }
      break;
    }
    default:
      ADD_FAILURE() << "no test data for type " << t;
  }
  return d;
}

// Element i of raw data of type t as a complex double.
cd value_at(musaDataType_t t, const void* p, size_t i) {
  switch (t) {
    case MUSA_R_16F:
      return half_value(static_cast<const uint16_t*>(p)[i]);
    case MUSA_R_16BF:
      return bf16_value(static_cast<const uint16_t*>(p)[i]);
    case MUSA_R_32F:
      return static_cast<const float*>(p)[i];
    case MUSA_R_64F:
      return static_cast<const double*>(p)[i];
    case MUSA_C_32F:
      return cd(static_cast<const cf*>(p)[i]);
    case MUSA_C_64F:
      return static_cast<const cd*>(p)[i];
    case MUSA_R_32I:
      return static_cast<const int32_t*>(p)[i];
    default:
      return 0;
  }
}

// A scalar of the scale type as raw bytes.
std::vector<unsigned char> scalar(musaDataType_t t, cd v) {
  std::vector<unsigned char> r(16);
  switch (t) {
    case MUSA_R_16F: {
      const uint16_t b = half_bits(static_cast<float>(v.real()));
      std::memcpy(r.data(), &b, 2);
      break;
    }
    case MUSA_R_32F: {
      const float f = static_cast<float>(v.real());
      std::memcpy(r.data(), &f, 4);
      break;
    }
    case MUSA_R_64F:
      std::memcpy(r.data(), &v, 8);
      break;
    case MUSA_C_32F: {
      const cf f(v);
      std::memcpy(r.data(), &f, 8);
      break;
    }
    case MUSA_C_64F:
      std::memcpy(r.data(), &v, 16);
      break;
    case MUSA_R_32I: {
      const int32_t i = static_cast<int32_t>(v.real());
      std::memcpy(r.data(), &i, 4);
      break;
    }
    default:
      break;
  }
  return r;
}

struct Combo {
  musaDataType_t ab, c;
  mublasComputeType_t compute;
  musaDataType_t scale;
  double tol;  // relative to the output's magnitude scale
};

const Combo kCombos[] = {
    {MUSA_R_16F, MUSA_R_16F, MUBLAS_COMPUTE_16F, MUSA_R_16F, 2e-3},
    {MUSA_R_16F, MUSA_R_16F, MUBLAS_COMPUTE_32F, MUSA_R_32F, 2e-3},
    {MUSA_R_16F, MUSA_R_32F, MUBLAS_COMPUTE_32F, MUSA_R_32F, 1e-6},
    {MUSA_R_16BF, MUSA_R_16BF, MUBLAS_COMPUTE_32F, MUSA_R_32F, 1e-2},
    {MUSA_R_16BF, MUSA_R_32F, MUBLAS_COMPUTE_32F_PEDANTIC, MUSA_R_32F, 1e-6},
    {MUSA_R_8I, MUSA_R_32I, MUBLAS_COMPUTE_32I, MUSA_R_32I, 0},
    {MUSA_R_8I, MUSA_R_32F, MUBLAS_COMPUTE_32F, MUSA_R_32F, 1e-6},
    {MUSA_R_32F, MUSA_R_32F, MUBLAS_COMPUTE_32F, MUSA_R_32F, 1e-6},
    {MUSA_R_64F, MUSA_R_64F, MUBLAS_COMPUTE_64F, MUSA_R_64F, 1e-14},
    {MUSA_C_32F, MUSA_C_32F, MUBLAS_COMPUTE_32F, MUSA_C_32F, 1e-6},
    {MUSA_C_64F, MUSA_C_64F, MUBLAS_COMPUTE_64F_PEDANTIC, MUSA_C_64F, 1e-14},
    {MUSA_C_8I, MUSA_C_32F, MUBLAS_COMPUTE_32F, MUSA_C_32F, 1e-6},
};

size_t type_size(musaDataType_t t) {
  switch (t) {
    case MUSA_R_8I:
      return 1;
    case MUSA_R_16F:
    case MUSA_R_16BF:
    case MUSA_C_8I:
      return 2;
    case MUSA_R_32F:
    case MUSA_R_32I:
      return 4;
    case MUSA_R_64F:
    case MUSA_C_32F:
      return 8;
    case MUSA_C_64F:
      return 16;
    default:
      return 0;
  }
}

enum class Form { kSingle, kStrided, kArrays };

TEST_F(Mixed, GemmExEveryTypeCombinationAndForm) {
  NEED_FLOAT16();
  Rng rng(2);
  const int m = 5, n = 4, k = 7, batch = 2;
  for (const Combo& cb : kCombos)
    for (Form form : {Form::kSingle, Form::kStrided, Form::kArrays})
      for (mublasOperation_t ta : {MUBLAS_OP_N, MUBLAS_OP_T}) {
        const mublasOperation_t tb = MUBLAS_OP_N;
        const int ar = ta == MUBLAS_OP_N ? m : k, ac = ta == MUBLAS_OP_N ? k : m;
        const int lda = ar + 1, ldb = k, ldc = m + 1;
        const size_t sa = static_cast<size_t>(lda) * ac, sb = static_cast<size_t>(ldb) * n,
                     sc = static_cast<size_t>(ldc) * n;
        const int entries = form == Form::kSingle ? 1 : batch;
        Data A = make_data(rng, cb.ab, sa * entries), B = make_data(rng, cb.ab, sb * entries);
        Data C = make_data(rng, cb.c == MUSA_R_32I ? MUSA_R_32I : cb.c, sc * entries);
        const bool cpx = cb.c == MUSA_C_32F || cb.c == MUSA_C_64F;
        const cd alpha = cb.scale == MUSA_R_32I ? cd(2) : cpx ? cd(0.5, -0.25) : cd(0.75);
        const cd beta = cb.scale == MUSA_R_32I ? cd(-1) : cpx ? cd(-0.5, 0.5) : cd(-0.5);
        const auto as = scalar(cb.scale, alpha), bs = scalar(cb.scale, beta);
        // The reference, from the stored values.
        std::vector<std::vector<cd>> want(entries, std::vector<cd>(static_cast<size_t>(m) * n));
        double scale = 1;
        for (int e = 0; e < entries; ++e)
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) {
              std::complex<long double> s = 0;
              for (int p = 0; p < k; ++p) {
                const cd a = ta == MUBLAS_OP_N ? A.v[e * sa + i + static_cast<size_t>(p) * lda]
                                               : A.v[e * sa + p + static_cast<size_t>(i) * lda];
                s += std::complex<long double>(a) *
                     std::complex<long double>(B.v[e * sb + p + static_cast<size_t>(j) * ldb]);
              }
              const cd r =
                  cd(std::complex<long double>(alpha) * s +
                     std::complex<long double>(beta) *
                         std::complex<long double>(C.v[e * sc + i + static_cast<size_t>(j) * ldc]));
              want[e][i + static_cast<size_t>(j) * m] = r;
              scale = std::max(scale, std::abs(r));
            }
        const size_t ea = type_size(cb.ab), eb = ea, ec = type_size(cb.c);
        mublasStatus_t st;
        if (form == Form::kSingle) {
          st = mublasGemmEx(h_, ta, tb, m, n, k, as.data(), A.raw.data(), cb.ab, lda, B.raw.data(),
                            cb.ab, ldb, bs.data(), C.raw.data(), cb.c, ldc, cb.compute,
                            MUBLAS_GEMM_DEFAULT);
        } else if (form == Form::kStrided) {
          st = mublasGemmStridedBatchedEx(h_, ta, tb, m, n, k, as.data(), A.raw.data(), cb.ab, lda,
                                          sa, B.raw.data(), cb.ab, ldb, sb, bs.data(), C.raw.data(),
                                          cb.c, ldc, sc, batch, cb.compute,
                                          MUBLAS_GEMM_DEFAULT_TENSOR_OP);
        } else {
          std::vector<const void*> pa, pb;
          std::vector<void*> pc;
          for (int e = 0; e < batch; ++e) {
            pa.push_back(A.raw.data() + e * sa * ea);
            pb.push_back(B.raw.data() + e * sb * eb);
            pc.push_back(C.raw.data() + e * sc * ec);
          }
          st = mublasGemmBatchedEx(h_, ta, tb, m, n, k, as.data(), pa.data(), cb.ab, lda, pb.data(),
                                   cb.ab, ldb, bs.data(), pc.data(), cb.c, ldc, batch, cb.compute,
                                   MUBLAS_GEMM_DEFAULT);
          MU_OK(st);
          sync();
        }
        MU_OK(st);
        sync();
        for (int e = 0; e < entries; ++e)
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) {
              const cd got =
                  value_at(cb.c, C.raw.data(), e * sc + i + static_cast<size_t>(j) * ldc);
              const cd w = want[e][i + static_cast<size_t>(j) * m];
              ASSERT_LE(std::abs(got - w), cb.tol * scale)
                  << "types " << cb.ab << " -> " << cb.c << " compute " << cb.compute << " form "
                  << int(form) << " op " << ta << " entry " << e << " (" << i << ", " << j << ")";
            }
      }
}

TEST_F(Mixed, GemmExDataTypeComputeFormAndRejections) {
  Rng rng(3);
  const int n = 4;
  auto A = rng.vec<float>(n * n), B = rng.vec<float>(n * n);
  std::vector<float> C(n * n, 0), D(n * n, 0);
  const float one = 1, zero = 0;
  // The older form: compute type given as MUSA_R_32F.
  MU_OK(mublasGemmEx(h_, MUBLAS_OP_N, MUBLAS_OP_T, n, n, n, &one, A.data(), MUSA_R_32F, n, B.data(),
                     MUSA_R_32F, n, &zero, C.data(), MUSA_R_32F, n, MUSA_R_32F,
                     MUBLAS_GEMM_DEFAULT));
  MU_OK(mublasSgemm(h_, MUBLAS_OP_N, MUBLAS_OP_T, n, n, n, &one, A.data(), n, B.data(), n, &zero,
                    D.data(), n));
  sync();
  EXPECT_EQ(0, std::memcmp(C.data(), D.data(), sizeof(float) * C.size()));
  auto gemm = [&](musaDataType_t at, musaDataType_t bt, musaDataType_t ct,
                  mublasComputeType_t compute, mublasGemmAlgo_t algo) {
    return mublasGemmEx(h_, MUBLAS_OP_N, MUBLAS_OP_N, n, n, n, &one, A.data(), at, n, B.data(), bt,
                        n, &zero, C.data(), ct, n, compute, algo);
  };
  MU_EXPECT(MUBLAS_STATUS_NOT_IMPLEMENTED,
            gemm(MUSA_R_16F, MUSA_R_16F, MUSA_R_64F, MUBLAS_COMPUTE_32F, MUBLAS_GEMM_DEFAULT));
  MU_EXPECT(MUBLAS_STATUS_NOT_IMPLEMENTED,
            gemm(MUSA_R_16F, MUSA_R_16BF, MUSA_R_32F, MUBLAS_COMPUTE_32F, MUBLAS_GEMM_DEFAULT));
  MU_EXPECT(MUBLAS_STATUS_NOT_IMPLEMENTED,
            gemm(MUSA_R_32F, MUSA_R_32F, MUSA_R_32F, MUBLAS_COMPUTE_64F, MUBLAS_GEMM_DEFAULT));
  MU_EXPECT(MUBLAS_STATUS_NOT_IMPLEMENTED,
            gemm(MUSA_R_8I, MUSA_R_8I, MUSA_R_32I, MUBLAS_COMPUTE_32F, MUBLAS_GEMM_DEFAULT));
  // Values that are not muBLAS's: an unknown compute type, cuBLAS's CUBLAS_GEMM_DEFAULT (-1).
  MU_EXPECT(MUBLAS_STATUS_INVALID_VALUE,
            gemm(MUSA_R_32F, MUSA_R_32F, MUSA_R_32F, static_cast<mublasComputeType_t>(66),
                 MUBLAS_GEMM_DEFAULT));
  MU_EXPECT(MUBLAS_STATUS_INVALID_VALUE,
            gemm(MUSA_R_32F, MUSA_R_32F, MUSA_R_32F, MUBLAS_COMPUTE_32F,
                 static_cast<mublasGemmAlgo_t>(-1)));
  MU_EXPECT(MUBLAS_STATUS_INVALID_VALUE,
            mublasGemmEx(h_, MUBLAS_OP_N, MUBLAS_OP_N, n, n, n, &one, A.data(), MUSA_R_32F, n,
                         B.data(), MUSA_R_32F, n, &zero, C.data(), MUSA_R_32F, n, MUSA_R_16BF,
                         MUBLAS_GEMM_DEFAULT));
  MU_EXPECT(MUBLAS_STATUS_INVALID_HANDLE,
            mublasGemmEx(nullptr, MUBLAS_OP_N, MUBLAS_OP_N, n, n, n, &one, A.data(), MUSA_R_32F, n,
                         B.data(), MUSA_R_32F, n, &zero, C.data(), MUSA_R_32F, n,
                         MUBLAS_COMPUTE_32F, MUBLAS_GEMM_DEFAULT));
  MU_EXPECT(MUBLAS_STATUS_INVALID_SIZE,
            mublasGemmEx(h_, MUBLAS_OP_N, MUBLAS_OP_N, n, n, n, &one, A.data(), MUSA_R_32F, n - 1,
                         B.data(), MUSA_R_32F, n, &zero, C.data(), MUSA_R_32F, n,
                         MUBLAS_COMPUTE_32F, MUBLAS_GEMM_DEFAULT));
}

// float inputs with low mantissa bits, so that TF32 / binary16 / bfloat16 rounding shows.
std::vector<float> low_bit_data(Rng& rng, size_t n) {
  std::vector<float> v(n);
  for (float& x : v) x = 1.0f + static_cast<float>(std::ldexp(rng.next<double>() + 1.0, -12));
  return v;
}

TEST_F(Mixed, FastComputeTypesAndTf32MathRoundInputs) {
  NEED_FLOAT16();
  Rng rng(4);
  const int m = 3, n = 3, k = 8;
  const auto A = low_bit_data(rng, m * k), B = low_bit_data(rng, k * n);
  const float one = 1, zero = 0;
  // The product of the rounded inputs in long double.
  auto reference = [&](float (*round)(float)) {
    std::vector<double> c(m * n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        long double s = 0;
        for (int p = 0; p < k; ++p)
          s += static_cast<long double>(round(A[i + p * m])) * round(B[p + j * k]);
        c[i + j * m] = static_cast<double>(s);
      }
    return c;
  };
  auto close = [&](const std::vector<float>& got, const std::vector<double>& want, double tol) {
    for (size_t i = 0; i < got.size(); ++i)
      if (std::abs(got[i] - want[i]) > tol) return false;
    return true;
  };
  const auto exact = reference([](float f) { return f; });
  const auto tf32 = reference(tf32_ref);
  const auto half = reference([](float f) { return half_value(half_bits(f)); });
  const auto bf16 = reference([](float f) { return bf16_value(bf16_ref(f)); });
  struct Case {
    mublasComputeType_t compute;
    const std::vector<double>* want;
  };
  for (Case c :
       {Case{MUBLAS_COMPUTE_32F_FAST_TF32, &tf32}, Case{MUBLAS_COMPUTE_32F_FAST_16F, &half},
        Case{MUBLAS_COMPUTE_32F_FAST_16BF, &bf16}, Case{MUBLAS_COMPUTE_32F, &exact}}) {
    std::vector<float> C(m * n);
    MU_OK(mublasGemmEx(h_, MUBLAS_OP_N, MUBLAS_OP_N, m, n, k, &one, A.data(), MUSA_R_32F, m,
                       B.data(), MUSA_R_32F, k, &zero, C.data(), MUSA_R_32F, m, c.compute,
                       MUBLAS_GEMM_DEFAULT));
    sync();
    EXPECT_TRUE(close(C, *c.want, 1e-5)) << "compute " << c.compute;
    if (c.want != &exact) {
      EXPECT_FALSE(close(C, exact, 1e-5)) << "no rounding seen " << c.compute;
    }
  }
  // MUBLAS_TF32_TENSOR_OP_MATH: Sgemm and COMPUTE_32F use TF32, COMPUTE_32F_PEDANTIC does not.
  MU_OK(mublasSetMathMode(h_, MUBLAS_TF32_TENSOR_OP_MATH));
  std::vector<float> C(m * n), P(m * n);
  MU_OK(mublasSgemm(h_, MUBLAS_OP_N, MUBLAS_OP_N, m, n, k, &one, A.data(), m, B.data(), k, &zero,
                    C.data(), m));
  MU_OK(mublasGemmEx(h_, MUBLAS_OP_N, MUBLAS_OP_N, m, n, k, &one, A.data(), MUSA_R_32F, m, B.data(),
                     MUSA_R_32F, k, &zero, P.data(), MUSA_R_32F, m, MUBLAS_COMPUTE_32F_PEDANTIC,
                     MUBLAS_GEMM_DEFAULT));
  sync();
  EXPECT_TRUE(close(C, tf32, 1e-5));
  EXPECT_TRUE(close(P, exact, 1e-5));
  MU_OK(mublasSetMathMode(h_, MUBLAS_DEFAULT_MATH));
  MU_OK(mublasSgemm(h_, MUBLAS_OP_N, MUBLAS_OP_N, m, n, k, &one, A.data(), m, B.data(), k, &zero,
                    C.data(), m));
  sync();
  EXPECT_TRUE(close(C, exact, 1e-5));
}

TEST_F(Mixed, HgemmFamilyAndTypedExGemms) {
  NEED_FLOAT16();
  Rng rng(5);
  const int m = 4, n = 3, k = 5, batch = 2;
  Data A = make_data(rng, MUSA_R_16F, m * k * batch), B = make_data(rng, MUSA_R_16F, k * n * batch);
  auto ref = [&](int e, double alpha) {
    std::vector<double> c(m * n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double s = 0;
        for (int p = 0; p < k; ++p)
          s += A.v[e * m * k + i + p * m].real() * B.v[e * k * n + p + j * k].real();
        c[i + j * m] = alpha * s;
      }
    return c;
  };
  const uint16_t alpha = half_bits(0.5f), beta = half_bits(0.0f);
  auto* a = reinterpret_cast<const __half*>(A.raw.data());
  auto* b = reinterpret_cast<const __half*>(B.raw.data());
  std::vector<uint16_t> C(m * n * batch, 0);
  auto* c = reinterpret_cast<__half*>(C.data());
  auto* al = reinterpret_cast<const __half*>(&alpha);
  auto* be = reinterpret_cast<const __half*>(&beta);
  auto check = [&](const char* what, int entries) {
    sync();
    for (int e = 0; e < entries; ++e) {
      const auto want = ref(e, 0.5);
      for (int i = 0; i < m * n; ++i)
        ASSERT_NEAR(want[i], half_value(C[e * m * n + i]), 4e-3 * (1 + std::abs(want[i])))
            << what << " entry " << e;
    }
  };
  MU_OK(mublasHgemm(h_, MUBLAS_OP_N, MUBLAS_OP_N, m, n, k, al, a, m, b, k, be, c, m));
  check("Hgemm", 1);
  std::fill(C.begin(), C.end(), 0);
  MU_OK(mublasHgemmStridedBatched(h_, MUBLAS_OP_N, MUBLAS_OP_N, m, n, k, al, a, m, m * k, b, k,
                                  k * n, be, c, m, m * n, batch));
  check("HgemmStridedBatched", batch);
  std::fill(C.begin(), C.end(), 0);
  // Entry 1 of each operand, by element offset in the raw 16-bit storage.
  auto at = [](const void* p, int off) {
    return reinterpret_cast<const __half*>(static_cast<const uint16_t*>(p) + off);
  };
  const __half* pa[] = {a, at(a, m * k)};
  const __half* pb[] = {b, at(b, k * n)};
  __half* pc[] = {c, reinterpret_cast<__half*>(C.data() + m * n)};
  MU_OK(mublasHgemmBatched(h_, MUBLAS_OP_N, MUBLAS_OP_N, m, n, k, al, pa, m, pb, k, be, pc, m,
                           batch));
  check("HgemmBatched", batch);
  // SgemmEx: half inputs, float output.
  std::vector<float> F(m * n);
  const float fa = 0.5f, fb = 0;
  MU_OK(mublasSgemmEx(h_, MUBLAS_OP_N, MUBLAS_OP_N, m, n, k, &fa, A.raw.data(), MUSA_R_16F, m,
                      B.raw.data(), MUSA_R_16F, k, &fb, F.data(), MUSA_R_32F, m));
  sync();
  const auto want = ref(0, 0.5);
  for (int i = 0; i < m * n; ++i) EXPECT_NEAR(want[i], F[i], 1e-5);
  // CgemmEx: complex int8 inputs.
  Data CA = make_data(rng, MUSA_C_8I, m * k), CB = make_data(rng, MUSA_C_8I, k * n);
  std::vector<cf> CC(m * n);
  const cf ca(1, 0), cz(0, 0);
  MU_OK(mublasCgemmEx(h_, MUBLAS_OP_N, MUBLAS_OP_N, m, n, k, mu(&ca), CA.raw.data(), MUSA_C_8I, m,
                      CB.raw.data(), MUSA_C_8I, k, mu(&cz), CC.data(), MUSA_C_32F, m));
  sync();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      cd s = 0;
      for (int p = 0; p < k; ++p) s += CA.v[i + p * m] * CB.v[p + j * k];
      EXPECT_EQ(cf(s), CC[i + j * m]);  // integers: exact
    }
}

TEST_F(Mixed, SyrkExAndHerkExFromComplexInt8) {
  Rng rng(6);
  const int n = 4, k = 3;
  Data A = make_data(rng, MUSA_C_8I, n * k);
  for (bool herm : {false, true}) {
    std::vector<cf> C(n * n, cf(7, 7));
    const auto before = C;
    const cf ca(1, 0), cz(0, 0);
    const float ra = 1, rz = 0;
    if (herm)
      MU_OK(mublasCherkEx(h_, MUBLAS_FILL_MODE_LOWER, MUBLAS_OP_N, n, k, &ra, A.raw.data(),
                          MUSA_C_8I, n, &rz, mu(C.data()), MUSA_C_32F, n));
    else
      MU_OK(mublasCsyrkEx(h_, MUBLAS_FILL_MODE_LOWER, MUBLAS_OP_N, n, k, mu(&ca), A.raw.data(),
                          MUSA_C_8I, n, mu(&cz), mu(C.data()), MUSA_C_32F, n));
    sync();
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        if (i < j) {
          EXPECT_EQ(before[i + j * n], C[i + j * n]) << "upper triangle changed";
          continue;
        }
        cd s = 0;
        for (int p = 0; p < k; ++p)
          s += A.v[i + p * n] * (herm ? std::conj(A.v[j + p * n]) : A.v[j + p * n]);
        EXPECT_EQ(cf(s), C[i + j * n]) << (herm ? "herk" : "syrk") << " (" << i << ", " << j << ")";
      }
  }
  std::vector<cf> C(n * n);
  const float ra = 1;
  MU_EXPECT(MUBLAS_STATUS_NOT_IMPLEMENTED,
            mublasCherkEx(h_, MUBLAS_FILL_MODE_LOWER, MUBLAS_OP_N, n, k, &ra, A.raw.data(),
                          MUSA_R_8I, n, &ra, mu(C.data()), MUSA_C_32F, n));
}

TEST_F(Mixed, HalfAndBf16BatchedGemv) {
  NEED_FLOAT16();
  Rng rng(7);
  const int m = 5, n = 3, batch = 2;
  for (musaDataType_t t : {MUSA_R_16F, MUSA_R_16BF})
    for (bool float_y : {false, true}) {
      Data A = make_data(rng, t, m * n * batch), x = make_data(rng, t, n * batch);
      std::vector<uint16_t> y16(m * batch, 0);
      std::vector<float> y32(m * batch, 0);
      const float alpha = 0.5f, beta = 0;
      const uint16_t* a = reinterpret_cast<const uint16_t*>(A.raw.data());
      const uint16_t* xv = reinterpret_cast<const uint16_t*>(x.raw.data());
      // Pointer arrays are device memory, read when the work runs: they outlive the sync below.
      const __mt_bfloat16* pa[] = {reinterpret_cast<const __mt_bfloat16*>(a),
                                   reinterpret_cast<const __mt_bfloat16*>(a + m * n)};
      const __mt_bfloat16* px[] = {reinterpret_cast<const __mt_bfloat16*>(xv),
                                   reinterpret_cast<const __mt_bfloat16*>(xv + n)};
      __mt_bfloat16* py[] = {reinterpret_cast<__mt_bfloat16*>(y16.data()),
                             reinterpret_cast<__mt_bfloat16*>(y16.data() + m)};
      mublasStatus_t st;
      if (t == MUSA_R_16F && !float_y)
        st = mublasHSHgemvStridedBatched(h_, MUBLAS_OP_N, m, n, &alpha,
                                         reinterpret_cast<const __half*>(a), m, m * n,
                                         reinterpret_cast<const __half*>(xv), 1, n, &beta,
                                         reinterpret_cast<__half*>(y16.data()), 1, m, batch);
      else if (t == MUSA_R_16F)
        st = mublasHSSgemvStridedBatched(
            h_, MUBLAS_OP_N, m, n, &alpha, reinterpret_cast<const __half*>(a), m, m * n,
            reinterpret_cast<const __half*>(xv), 1, n, &beta, y32.data(), 1, m, batch);
      else if (!float_y) {
        st = mublasTSTgemvBatched(h_, MUBLAS_OP_N, m, n, &alpha, pa, m, px, 1, &beta, py, 1, batch);
      } else
        st = mublasTSSgemvStridedBatched(
            h_, MUBLAS_OP_N, m, n, &alpha, reinterpret_cast<const __mt_bfloat16*>(a), m, m * n,
            reinterpret_cast<const __mt_bfloat16*>(xv), 1, n, &beta, y32.data(), 1, m, batch);
      MU_OK(st);
      sync();
      for (int e = 0; e < batch; ++e)
        for (int i = 0; i < m; ++i) {
          double s = 0;
          for (int j = 0; j < n; ++j)
            s += A.v[e * m * n + i + j * m].real() * x.v[e * n + j].real();
          s *= 0.5;
          const double got = float_y           ? y32[e * m + i]
                             : t == MUSA_R_16F ? half_value(y16[e * m + i])
                                               : bf16_value(y16[e * m + i]);
          EXPECT_NEAR(s, got,
                      (float_y           ? 1e-6
                       : t == MUSA_R_16F ? 2e-3
                                         : 1e-2) *
                          (1 + std::abs(s)))
              << "type " << t << " float y " << float_y;
        }
    }
}

TEST_F(Mixed, Level1ExRoutines) {
  NEED_FLOAT16();
  Rng rng(8);
  const int n = 9;
  // DotEx on binary16 data (execution float), DotcEx on complex float.
  Data x = make_data(rng, MUSA_R_16F, n), y = make_data(rng, MUSA_R_16F, n);
  double want = 0;
  for (int i = 0; i < n; ++i) want += x.v[i].real() * y.v[i].real();
  uint16_t r16 = 0;
  MU_OK(mublasDotEx(h_, n, x.raw.data(), MUSA_R_16F, 1, y.raw.data(), MUSA_R_16F, 1, &r16,
                    MUSA_R_16F, MUSA_R_32F));
  EXPECT_NEAR(want, half_value(r16), 2e-3 * (1 + std::abs(want)));
  auto cx = rng.vec<cf>(n), cy = rng.vec<cf>(n);
  cf rc{};
  MU_OK(mublasDotcEx(h_, n, cx.data(), MUSA_C_32F, 1, cy.data(), MUSA_C_32F, 1, &rc, MUSA_C_32F,
                     MUSA_C_32F));
  cd wc = 0;
  for (int i = 0; i < n; ++i) wc += std::conj(cd(cx[i])) * cd(cy[i]);
  EXPECT_LE(std::abs(cd(rc) - wc), 1e-5);
  // Nrm2Ex / AsumEx on complex float, real float results.
  float nrm = 0, asum = 0;
  MU_OK(mublasNrm2Ex(h_, n, cx.data(), MUSA_C_32F, 1, &nrm, MUSA_R_32F, MUSA_R_32F));
  MU_OK(mublasAsumEx(h_, n, cx.data(), MUSA_C_32F, 1, &asum, MUSA_R_32F, MUSA_R_32F));
  double ss = 0, sa = 0;
  for (cf v : cx) {
    ss += std::norm(cd(v));
    sa += std::abs(v.real()) + std::abs(v.imag());
  }
  EXPECT_NEAR(std::sqrt(ss), nrm, 1e-5);
  EXPECT_NEAR(sa, asum, 1e-5);
  // ScalEx on bfloat16 with a float alpha, then IamaxEx / IaminEx.
  Data b = make_data(rng, MUSA_R_16BF, n);
  const float two = 2;
  MU_OK(mublasScalEx(h_, n, &two, MUSA_R_32F, b.raw.data(), MUSA_R_16BF, 1, MUSA_R_32F));
  sync();
  int imax = 0, imin = 0;
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(2 * b.v[i].real(), value_at(MUSA_R_16BF, b.raw.data(), i).real());
    if (std::abs(b.v[i].real()) > std::abs(b.v[imax].real())) imax = i;
    if (std::abs(b.v[i].real()) < std::abs(b.v[imin].real())) imin = i;
  }
  int r = 0;
  MU_OK(mublasIamaxEx(h_, n, b.raw.data(), MUSA_R_16BF, 1, &r));
  EXPECT_EQ(imax + 1, r);
  MU_OK(mublasIaminEx(h_, n, b.raw.data(), MUSA_R_16BF, 1, &r));
  EXPECT_EQ(imin + 1, r);
  // CopyEx / SwapEx move bytes; RotEx on binary16 data with float c, s.
  std::vector<uint16_t> c16(n, 0);
  MU_OK(mublasCopyEx(h_, n, x.raw.data(), MUSA_R_16F, 1, c16.data(), MUSA_R_16F, 1));
  sync();
  EXPECT_EQ(0, std::memcmp(c16.data(), x.raw.data(), 2 * n));
  MU_OK(mublasSwapEx(h_, n, c16.data(), MUSA_R_16F, 1, y.raw.data(), MUSA_R_16F, 1));
  sync();
  for (int i = 0; i < n; ++i) EXPECT_EQ(y.v[i].real(), half_value(c16[i]));
  EXPECT_EQ(0, std::memcmp(y.raw.data(), x.raw.data(), 2 * n));
  // Now c16 holds the old y: rotate (x, c16).
  const float cs = 0.6f, sn = 0.8f;
  MU_OK(mublasRotEx(h_, n, x.raw.data(), MUSA_R_16F, 1, c16.data(), MUSA_R_16F, 1, &cs, &sn,
                    MUSA_R_32F, MUSA_R_32F));
  sync();
  for (int i = 0; i < n; ++i) {
    const double xo = x.v[i].real(), yo = y.v[i].real();
    EXPECT_NEAR(0.6 * xo + 0.8 * yo, value_at(MUSA_R_16F, x.raw.data(), i).real(), 4e-3);
    EXPECT_NEAR(0.6 * yo - 0.8 * xo, half_value(c16[i]), 4e-3);
  }
  // RotgEx / RotmEx / RotmgEx in float.
  float a = 3, bb = 4, c = 0, s = 0;
  MU_OK(mublasRotgEx(h_, &a, &bb, MUSA_R_32F, &c, &s, MUSA_R_32F, MUSA_R_32F));
  EXPECT_NEAR(5, std::abs(a), 1e-6);
  EXPECT_NEAR(1, c * c + s * s, 1e-6);
  float d1 = 1, d2 = 1, x1 = 1;
  const float y1 = 1;
  float param[5] = {};
  MU_OK(mublasRotmgEx(h_, &d1, MUSA_R_32F, &d2, MUSA_R_32F, &x1, MUSA_R_32F, &y1, MUSA_R_32F, param,
                      MUSA_R_32F, MUSA_R_32F));
  float vx[1] = {1}, vy[1] = {1};
  MU_OK(mublasRotmEx(h_, 1, vx, MUSA_R_32F, 1, vy, MUSA_R_32F, 1, param, MUSA_R_32F, MUSA_R_32F));
  sync();
  EXPECT_NEAR(0, vy[0], 1e-6) << "rotmg's H zeroes y1";
  // Unsupported combinations.
  MU_EXPECT(MUBLAS_STATUS_NOT_IMPLEMENTED,
            mublasDotEx(h_, n, x.raw.data(), MUSA_R_16F, 1, y.raw.data(), MUSA_R_16F, 1, &r16,
                        MUSA_R_16F, MUSA_R_64F));
  MU_EXPECT(MUBLAS_STATUS_NOT_IMPLEMENTED,
            mublasAxpyEx(h_, n, &two, MUSA_R_32F, x.raw.data(), MUSA_R_16F, 1, b.raw.data(),
                         MUSA_R_16BF, 1, MUSA_R_32F));
}

}  // namespace
}  // namespace bt
