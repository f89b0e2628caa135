// The simulated muBLASLt's integer paths: int8 matmuls with compute 32I (int32 C/D with int32
// scale against a host int64 reference; int8 C/D with float scale against a host float reference,
// with rounding ties and saturation spelled out), their heuristics and algorithms, the refusals,
// and mublasLtMatrixTransform on int8 and int32 matrices.
#include "lt_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace lt_test;

// An integer matrix as stored: element (i, j) of batch b at b * stride + (row ? i*ld+j : i+j*ld).
struct IMat {
  bool row = false;
  int64_t rows = 0, cols = 0, ld = 0, stride = 0;
  int batch = 1;
  int64_t off(int b, int64_t i, int64_t j) const {
    return b * stride + (row ? i * ld + j : i + j * ld);
  }
  size_t elements() const {
    return rows == 0 || cols == 0 ? 1 : static_cast<size_t>(off(batch - 1, rows - 1, cols - 1) + 1);
  }
};

IMat imat(int64_t rows, int64_t cols, bool row, int64_t pad, int batch) {
  IMat m;
  m.row = row;
  m.rows = rows;
  m.cols = cols;
  m.ld = (row ? cols : rows) + pad;
  m.batch = batch;
  m.stride = m.ld * (row ? rows : cols) + 3;
  return m;
}

// A layout for `m` of type `t`.
struct ILayout {
  mublasLtMatrixLayout_t l = nullptr;
  ILayout(musaDataType t, const IMat& m) {
    EXPECT_LT_OK(mublasLtMatrixLayoutCreate(&l, t, m.rows, m.cols, m.ld));
    set(MUBLASLT_MATRIX_LAYOUT_ORDER, int32_t{m.row ? MUBLASLT_ORDER_ROW : MUBLASLT_ORDER_COL});
    set(MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t{m.batch});
    set(MUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, m.stride);
  }
  ~ILayout() { mublasLtMatrixLayoutDestroy(l); }
  ILayout(const ILayout&) = delete;
  ILayout& operator=(const ILayout&) = delete;
  template <typename T>
  void set(mublasLtMatrixLayoutAttribute_t a, T v) {
    EXPECT_LT_OK(mublasLtMatrixLayoutSetAttribute(l, a, &v, sizeof(v)));
  }
};

template <typename T>
std::vector<T> random_ints(size_t n, unsigned seed, int64_t lo, int64_t hi) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(dist(gen));
  return v;
}

template <typename T>
void upload(DeviceBuffer& d, const std::vector<T>& v) {
  d.allocate(v.size() * sizeof(T));
  ASSERT_MU_OK(musaMemcpy(d.get(), v.data(), v.size() * sizeof(T), musaMemcpyHostToDevice));
}

template <typename T>
std::vector<T> download(const DeviceBuffer& d) {
  std::vector<T> v(d.bytes() / sizeof(T));
  EXPECT_EQ(musaSuccess, musaMemcpy(v.data(), d.get(), d.bytes(), musaMemcpyDeviceToHost));
  return v;
}

// x mod 2^32 as int32 (two's complement).
int32_t wrap32(uint64_t x) {
  const uint32_t u = static_cast<uint32_t>(x);
  int32_t i;
  std::memcpy(&i, &u, sizeof(i));
  return i;
}

// cuBLASLt's store to int8: nearest, ties to even, saturated, NaN 0.
int8_t to_int8(float v) {
  if (std::isnan(v)) return 0;
  const float r = std::nearbyint(v);
  if (r <= -128.0f) return -128;
  if (r >= 127.0f) return 127;
  return static_cast<int8_t>(r);
}

void set_desc(Desc& desc, bool ta, bool tb, int32_t mode) {
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_TRANSA, int32_t{ta ? MUBLAS_OP_T : MUBLAS_OP_N}));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_TRANSB, int32_t{tb ? MUBLAS_OP_T : MUBLAS_OP_N}));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_POINTER_MODE, mode));
}

struct ICase {
  std::string name;
  int64_t m, n, k;
  bool ta, tb, a_row, b_row, cd_row;
  int batch;
  int32_t alpha, beta;
  bool device_scalars;
  int64_t lo = -128;  // A's and B's values: [lo, 127]
};

std::ostream& operator<<(std::ostream& os, const ICase& c) { return os << c.name; }

class Int8Int32Matmul : public ::testing::TestWithParam<ICase> {};

// D (int32) = alpha * op(A) op(B) + beta * C, exactly, modulo 2^32.
TEST_P(Int8Int32Matmul, MatchesInt64Reference) {
  const ICase& c = GetParam();
  const IMat A = imat(c.ta ? c.k : c.m, c.ta ? c.m : c.k, c.a_row, 1, c.batch);
  const IMat B = imat(c.tb ? c.n : c.k, c.tb ? c.k : c.n, c.b_row, 2, c.batch);
  const IMat C = imat(c.m, c.n, c.cd_row, 1, c.batch);
  const IMat D = imat(c.m, c.n, c.cd_row, 2, c.batch);
  const auto av = random_ints<int8_t>(A.elements(), 1, c.lo, 127);
  const auto bv = random_ints<int8_t>(B.elements(), 2, c.lo, 127);
  const auto cv = random_ints<int32_t>(C.elements(), 3, INT32_MIN, INT32_MAX);
  const std::vector<int32_t> sentinel(D.elements(), 0x5a5a5a5a);
  DeviceBuffer dA, dB, dC, dD, dAlpha, dBeta;
  upload(dA, av);
  upload(dB, bv);
  upload(dC, cv);
  upload(dD, sentinel);
  upload(dAlpha, std::vector<int32_t>{c.alpha});
  upload(dBeta, std::vector<int32_t>{c.beta});

  Handle h;
  Desc desc(MUBLAS_COMPUTE_32I, MUSA_R_32I);
  set_desc(desc, c.ta, c.tb,
           c.device_scalars ? MUBLASLT_POINTER_MODE_DEVICE : MUBLASLT_POINTER_MODE_HOST);
  ILayout la(MUSA_R_8I, A), lb(MUSA_R_8I, B), lc(MUSA_R_32I, C), ld(MUSA_R_32I, D);
  const void* alpha = c.device_scalars ? dAlpha.get() : static_cast<const void*>(&c.alpha);
  const void* beta = c.device_scalars ? dBeta.get() : static_cast<const void*>(&c.beta);
  // Through the heuristic's algorithm, as a cuBLASLt caller would.
  Pref pref;
  mublasLtMatmulHeuristicResult_t r;
  int count = 0;
  ASSERT_LT_OK(
      mublasLtMatmulAlgoGetHeuristic(h.h, desc.d, la.l, lb.l, lc.l, ld.l, pref.p, 1, &r, &count));
  ASSERT_EQ(1, count);
  ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, alpha, dA.get(), la.l, dB.get(), lb.l, beta, dC.get(),
                              lc.l, dD.get(), ld.l, &r.algo, nullptr, 0, nullptr));
  ASSERT_MU_OK(musaDeviceSynchronize());
  const auto dv = download<int32_t>(dD);

  std::vector<bool> written(D.elements(), false);
  int64_t mismatches = 0;
  for (int b = 0; b < c.batch; ++b) {
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        int64_t s = 0;
        for (int64_t l = 0; l < c.k; ++l) {
          const int64_t x = av[static_cast<size_t>(c.ta ? A.off(b, l, i) : A.off(b, i, l))];
          const int64_t y = bv[static_cast<size_t>(c.tb ? B.off(b, j, l) : B.off(b, l, j))];
          s += x * y;
        }
        const uint64_t want64 =
            static_cast<uint64_t>(static_cast<int64_t>(c.alpha)) * static_cast<uint64_t>(s) +
            static_cast<uint64_t>(static_cast<int64_t>(c.beta)) *
                static_cast<uint64_t>(
                    static_cast<int64_t>(cv[static_cast<size_t>(C.off(b, i, j))]));
        const size_t at = static_cast<size_t>(D.off(b, i, j));
        written[at] = true;
        if (dv[at] != wrap32(want64) && ++mismatches <= 5) {
          ADD_FAILURE() << "b=" << b << " i=" << i << " j=" << j << ": " << dv[at]
                        << " != " << wrap32(want64);
        }
      }
    }
  }
  EXPECT_EQ(0, mismatches);
  for (size_t e = 0; e < dv.size(); ++e) {
    if (!written[e]) {
      ASSERT_EQ(0x5a5a5a5a, dv[e]) << "padding element " << e << " was written";
    }
  }
}

std::vector<ICase> icases() {
  const bool N = false, T = true, COL = false, ROW = true;
  return {
      {"col_nn", 33, 17, 64, N, N, COL, COL, COL, 1, 1, 0, false},
      {"col_tn", 33, 17, 64, T, N, COL, COL, COL, 1, 1, 0, false},
      {"col_nt", 33, 17, 64, N, T, COL, COL, COL, 1, 1, 0, false},
      {"col_tt", 33, 17, 64, T, T, COL, COL, COL, 1, 1, 0, false},
      {"row_nn", 19, 21, 40, N, N, ROW, ROW, ROW, 1, 1, 0, false},
      {"row_tt", 19, 21, 40, T, T, ROW, ROW, ROW, 1, 1, 0, false},
      {"mixed_tn", 12, 9, 77, T, N, ROW, COL, ROW, 1, -2, 0, false},
      {"batch3_beta", 10, 7, 50, N, T, COL, ROW, COL, 3, 3, -5, false},
      {"device_scalars", 8, 6, 30, T, N, COL, COL, ROW, 2, -7, 2, true},
      // Sums beyond float's 24-bit exactness (values in [97, 127], k = 4096: sums ~ 5e7).
      {"k4096_large_sums", 9, 7, 4096, T, N, COL, COL, COL, 1, 1, 1, false, 97},
      {"k4096_random", 5, 6, 4096, N, T, ROW, COL, COL, 2, 3, -1, false},
      // alpha * sum and beta * C beyond int32: wraps like 32-bit hardware.
      {"wraps", 6, 5, 300, N, N, COL, COL, COL, 1, 123457, 65537, false, 90},
  };
}

INSTANTIATE_TEST_SUITE_P(All, Int8Int32Matmul, ::testing::ValuesIn(icases()),
                         [](const ::testing::TestParamInfo<ICase>& p) { return p.param.name; });

// A single inner product whose int32 sum itself overflows (k * 128 * 128 > 2^31): wraps.
TEST(Int8Matmul, AccumulatorWrapsModulo2To32) {
  const int64_t k = 140000;  // 140000 * 16384 = 2293760000 > INT32_MAX
  std::vector<int8_t> a(k, -128), b(k, -128);
  DeviceBuffer dA, dB, dD;
  upload(dA, a);
  upload(dB, b);
  upload(dD, std::vector<int32_t>{0});
  Handle h;
  Desc desc(MUBLAS_COMPUTE_32I_PEDANTIC, MUSA_R_32I);
  Layout la(MUSA_R_8I, 1, k, 1), lb(MUSA_R_8I, k, 1, k), ld(MUSA_R_32I, 1, 1, 1);
  const int32_t alpha = 1, beta = 0;
  ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, &alpha, dA.get(), la.l, dB.get(), lb.l, &beta, nullptr,
                              ld.l, dD.get(), ld.l, nullptr, nullptr, 0, nullptr));
  ASSERT_MU_OK(musaDeviceSynchronize());
  EXPECT_EQ(wrap32(static_cast<uint64_t>(k) * 16384u), download<int32_t>(dD)[0]);
  EXPECT_LT(download<int32_t>(dD)[0], 0);  // 2293760000 - 2^32
}

// int8 C/D, float scale: v = alpha * acc + beta * C in float, rounded to nearest even and
// saturated. A is m x 1 and B is 1 x 1 = [1], so acc(i) = A(i).
TEST(Int8Matmul, Int8OutputRoundsTiesToEvenAndSaturates) {
  Handle h;
  Desc desc(MUBLAS_COMPUTE_32I, MUSA_R_32F);
  const std::vector<int8_t> a = {1, 3, 5, 7, -1, -3, -5, -7, 100, -100, -64, 127, -128, 0};
  const int64_t m = static_cast<int64_t>(a.size());
  Layout la(MUSA_R_8I, m, 1, m), lb(MUSA_R_8I, 1, 1, 1), lc(MUSA_R_8I, m, 1, m);
  DeviceBuffer dA, dB, dC, dD;
  upload(dA, a);
  upload(dB, std::vector<int8_t>{1});
  upload(dD, std::vector<int8_t>(a.size(), 0x5a));
  const auto run = [&](float alpha, float beta, const void* cptr) {
    EXPECT_LT_OK(mublasLtMatmul(h.h, desc.d, &alpha, dA.get(), la.l, dB.get(), lb.l, &beta, cptr,
                                lc.l, dD.get(), lc.l, nullptr, nullptr, 0, nullptr));
    EXPECT_EQ(musaSuccess, musaDeviceSynchronize());
    return download<int8_t>(dD);
  };
  // alpha 0.5: x.5 goes to the even neighbour (0.5 -> 0, 1.5 -> 2, 2.5 -> 2, 3.5 -> 4).
  EXPECT_EQ((std::vector<int8_t>{0, 2, 2, 4, 0, -2, -2, -4, 50, -50, -32, 64, -64, 0}),
            run(0.5f, 0.0f, nullptr));
  // alpha 2: saturation at both ends.
  EXPECT_EQ((std::vector<int8_t>{2, 6, 10, 14, -2, -6, -10, -14, 127, -128, -128, 127, -128, 0}),
            run(2.0f, 0.0f, nullptr));
  // beta * C: 0.5 * 1 + 1 * 2 = 2.5 -> 2; 0.5 * 3 + 1 * (-128) = -126.5 -> -126; saturating C
  // terms: 0.5 * 100 + 1 * 127 = 177 -> 127.
  std::vector<int8_t> cv(a.size(), 0);
  cv[0] = 2;
  cv[1] = -128;
  cv[8] = 127;
  cv[9] = -128;
  upload(dC, cv);
  const auto d = run(0.5f, 1.0f, dC.get());
  EXPECT_EQ(2, d[0]);
  EXPECT_EQ(-126, d[1]);
  EXPECT_EQ(127, d[8]);
  EXPECT_EQ(-128, d[9]);  // -50 - 128
  EXPECT_EQ(2, d[2]);     // C 0: the alpha term alone
  // NaN: 0.
  for (int8_t x : run(std::nanf(""), 0.0f, nullptr)) EXPECT_EQ(0, x);
}

// int8 C/D, float scale, against a host float reference: transposes, orders, batches, beta,
// device scalars.
TEST(Int8Matmul, Int8OutputMatchesFloatReference) {
  struct Shape {
    bool ta, tb, a_row, b_row, cd_row;
    int batch;
    bool device;
  };
  const Shape shapes[] = {{false, false, false, false, false, 1, false},
                          {true, false, true, false, true, 2, false},
                          {false, true, false, true, false, 3, true},
                          {true, true, true, true, true, 1, true}};
  const int64_t m = 13, n = 11, k = 300;
  const float alpha = 0.00123f, beta = 0.75f;
  for (const Shape& s : shapes) {
    SCOPED_TRACE(std::to_string(s.ta) + std::to_string(s.tb) + std::to_string(s.a_row) +
                 std::to_string(s.cd_row) + std::to_string(s.batch));
    const IMat A = imat(s.ta ? k : m, s.ta ? m : k, s.a_row, 1, s.batch);
    const IMat B = imat(s.tb ? n : k, s.tb ? k : n, s.b_row, 0, s.batch);
    const IMat C = imat(m, n, s.cd_row, 2, s.batch);
    const auto av = random_ints<int8_t>(A.elements(), 7, -128, 127);
    const auto bv = random_ints<int8_t>(B.elements(), 8, -128, 127);
    const auto cv = random_ints<int8_t>(C.elements(), 9, -128, 127);
    DeviceBuffer dA, dB, dC, dAlpha, dBeta;
    upload(dA, av);
    upload(dB, bv);
    upload(dC, cv);
    upload(dAlpha, std::vector<float>{alpha});
    upload(dBeta, std::vector<float>{beta});
    Handle h;
    Desc desc(MUBLAS_COMPUTE_32I, MUSA_R_32F);
    set_desc(desc, s.ta, s.tb,
             s.device ? MUBLASLT_POINTER_MODE_DEVICE : MUBLASLT_POINTER_MODE_HOST);
    ILayout la(MUSA_R_8I, A), lb(MUSA_R_8I, B), lc(MUSA_R_8I, C);
    const void* pa = s.device ? dAlpha.get() : static_cast<const void*>(&alpha);
    const void* pb = s.device ? dBeta.get() : static_cast<const void*>(&beta);
    // In place: D is C.
    ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, pa, dA.get(), la.l, dB.get(), lb.l, pb, dC.get(), lc.l,
                                dC.get(), lc.l, nullptr, nullptr, 0, nullptr));
    ASSERT_MU_OK(musaDeviceSynchronize());
    const auto dv = download<int8_t>(dC);
    int saturated = 0;
    for (int b = 0; b < s.batch; ++b) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          int32_t acc = 0;
          for (int64_t l = 0; l < k; ++l) {
            acc += av[static_cast<size_t>(s.ta ? A.off(b, l, i) : A.off(b, i, l))] *
                   bv[static_cast<size_t>(s.tb ? B.off(b, j, l) : B.off(b, l, j))];
          }
          const size_t at = static_cast<size_t>(C.off(b, i, j));
          const float v = alpha * static_cast<float>(acc) + beta * static_cast<float>(cv[at]);
          if (std::fabs(v) > 127.5f) ++saturated;
          ASSERT_EQ(to_int8(v), dv[at]) << b << " " << i << " " << j << " v=" << v;
        }
      }
    }
    // Padding (not part of C) is untouched.
    std::vector<bool> inside(C.elements(), false);
    for (int b = 0; b < s.batch; ++b)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) inside[static_cast<size_t>(C.off(b, i, j))] = true;
    for (size_t e = 0; e < dv.size(); ++e) {
      if (!inside[e]) {
        ASSERT_EQ(cv[e], dv[e]) << e;
      }
    }
    EXPECT_GT(saturated, 0);  // the reference exercised saturation too
  }
}

TEST(Int8Matmul, AlgorithmsAndCapabilities) {
  Handle h;
  int ids[2] = {-1, -1};
  int count = -1;
  for (const auto& t :
       {std::make_pair(MUSA_R_32I, MUSA_R_32I), std::make_pair(MUSA_R_32F, MUSA_R_8I)}) {
    ASSERT_LT_OK(mublasLtMatmulAlgoGetIds(h.h, MUBLAS_COMPUTE_32I, t.first, MUSA_R_8I, MUSA_R_8I,
                                          t.second, t.second, 2, ids, &count));
    EXPECT_EQ(1, count);
    EXPECT_EQ(0, ids[0]);
    mublasLtMatmulAlgo_t algo;
    ASSERT_LT_OK(mublasLtMatmulAlgoInit(h.h, MUBLAS_COMPUTE_32I, t.first, MUSA_R_8I, MUSA_R_8I,
                                        t.second, t.second, 0, &algo));
    uint64_t flags = 0;
    size_t w = 0;
    ASSERT_LT_OK(mublasLtMatmulAlgoCapGetAttribute(&algo, MUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS,
                                                   &flags, sizeof(flags), &w));
    EXPECT_EQ(MUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32I,
              flags & MUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_TYPE_MASK);
    EXPECT_EQ(MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8I,
              flags & MUBLASLT_NUMERICAL_IMPL_FLAGS_OP_INPUT_TYPE_MASK);
    uint32_t epilogues = 0;
    ASSERT_LT_OK(mublasLtMatmulAlgoCapGetAttribute(&algo, MUBLASLT_ALGO_CAP_EPILOGUE_MASK,
                                                   &epilogues, sizeof(epilogues), &w));
    EXPECT_EQ(uint32_t{MUBLASLT_EPILOGUE_DEFAULT}, epilogues);
    // AlgoCheck accepts it for the problem it was made for.
    Desc desc(MUBLAS_COMPUTE_32I, t.first);
    Layout la(MUSA_R_8I, 4, 8, 4), lb(MUSA_R_8I, 8, 2, 8), lc(t.second, 4, 2, 4);
    mublasLtMatmulHeuristicResult_t r;
    ASSERT_LT_OK(mublasLtMatmulAlgoCheck(h.h, desc.d, la.l, lb.l, lc.l, lc.l, &algo, &r));
    EXPECT_EQ(MUBLAS_STATUS_SUCCESS, r.state);
  }
  // Not cuBLASLt combinations.
  EXPECT_LT_OK(mublasLtMatmulAlgoGetIds(h.h, MUBLAS_COMPUTE_32I, MUSA_R_32F, MUSA_R_8I, MUSA_R_8I,
                                        MUSA_R_32I, MUSA_R_32I, 2, ids, &count));
  EXPECT_EQ(0, count);
  EXPECT_LT_OK(mublasLtMatmulAlgoGetIds(h.h, MUBLAS_COMPUTE_32I, MUSA_R_32I, MUSA_R_8I, MUSA_R_8I,
                                        MUSA_R_8I, MUSA_R_8I, 2, ids, &count));
  EXPECT_EQ(0, count);
  EXPECT_LT_OK(mublasLtMatmulAlgoGetIds(h.h, MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_8I, MUSA_R_8I,
                                        MUSA_R_32I, MUSA_R_32I, 2, ids, &count));
  EXPECT_EQ(0, count);
}

std::mutex g_log_mu;
std::vector<std::string> g_log;
void log_callback(int, const char* fn, const char* msg) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_log.push_back(std::string(fn) + "|" + msg);
}

// Epilogues with compute 32I and type combinations cuBLASLt lacks: NOT_IMPLEMENTED (cuBLASLt's
// NOT_SUPPORTED), logged, D untouched.
TEST(Int8Matmul, RefusalsAreNotSupported) {
  ASSERT_LT_OK(mublasLtLoggerSetCallback(log_callback));
  ASSERT_LT_OK(mublasLtLoggerSetLevel(1));
  Handle h;
  const int64_t m = 4, n = 2, k = 8;
  std::vector<int8_t> a(m * k, 1), b(k * n, 1);
  std::vector<int32_t> d(m * n, -9);
  const int32_t one = 1, zero = 0;
  Layout la(MUSA_R_8I, m, k, m), lb(MUSA_R_8I, k, n, k), ld(MUSA_R_32I, m, n, m);
  Pref pref;
  mublasLtMatmulHeuristicResult_t r;
  int count = -1;
  for (uint32_t epi : {uint32_t{MUBLASLT_EPILOGUE_RELU}, uint32_t{MUBLASLT_EPILOGUE_BIAS}}) {
    Desc desc(MUBLAS_COMPUTE_32I, MUSA_R_32I);
    ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, epi));
    ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(d.data())));
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED,
              mublasLtMatmul(h.h, desc.d, &one, a.data(), la.l, b.data(), lb.l, &zero, d.data(),
                             ld.l, d.data(), ld.l, nullptr, nullptr, 0, nullptr));
    EXPECT_EQ(
        MUBLAS_STATUS_NOT_IMPLEMENTED,
        mublasLtMatmulAlgoGetHeuristic(h.h, desc.d, la.l, lb.l, ld.l, ld.l, pref.p, 1, &r, &count));
    EXPECT_EQ(0, count);
  }
  {
    std::lock_guard<std::mutex> lock(g_log_mu);
    ASSERT_FALSE(g_log.empty());
    EXPECT_EQ(0u, g_log[0].rfind("mublasLtMatmul|MUBLAS_STATUS_NOT_IMPLEMENTED", 0)) << g_log[0];
  }
  // int8 A/B with fp32 C/D under 32I compute; int32 D with float scale; fp32 compute with int8.
  const float fone = 1, fzero = 0;
  std::vector<float> fd(m * n, -9);
  Layout lf(MUSA_R_32F, m, n, m);
  {
    Desc desc(MUBLAS_COMPUTE_32I, MUSA_R_32I);
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED,
              mublasLtMatmul(h.h, desc.d, &one, a.data(), la.l, b.data(), lb.l, &zero, fd.data(),
                             lf.l, fd.data(), lf.l, nullptr, nullptr, 0, nullptr));
  }
  {
    Desc desc(MUBLAS_COMPUTE_32I, MUSA_R_32F);
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED,
              mublasLtMatmul(h.h, desc.d, &fone, a.data(), la.l, b.data(), lb.l, &fzero, d.data(),
                             ld.l, d.data(), ld.l, nullptr, nullptr, 0, nullptr));
  }
  {
    Desc desc(MUBLAS_COMPUTE_32F, MUSA_R_32F);
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED,
              mublasLtMatmul(h.h, desc.d, &fone, a.data(), la.l, b.data(), lb.l, &fzero, fd.data(),
                             lf.l, fd.data(), lf.l, nullptr, nullptr, 0, nullptr));
  }
  ASSERT_MU_OK(musaDeviceSynchronize());
  for (int32_t x : d) EXPECT_EQ(-9, x);
  for (float x : fd) EXPECT_EQ(-9.0f, x);
  // The same problem, supported, does write D (the types were the reason above).
  {
    Desc desc(MUBLAS_COMPUTE_32I, MUSA_R_32I);
    ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, &one, a.data(), la.l, b.data(), lb.l, &zero, d.data(),
                                ld.l, d.data(), ld.l, nullptr, nullptr, 0, nullptr));
    ASSERT_MU_OK(musaDeviceSynchronize());
    for (int32_t x : d) EXPECT_EQ(8, x);
  }
  ASSERT_LT_OK(mublasLtLoggerSetCallback(nullptr));
  ASSERT_LT_OK(mublasLtLoggerSetLevel(0));
}

struct XDesc {
  mublasLtMatrixTransformDesc_t d = nullptr;
  explicit XDesc(musaDataType scale) { EXPECT_LT_OK(mublasLtMatrixTransformDescCreate(&d, scale)); }
  ~XDesc() { mublasLtMatrixTransformDescDestroy(d); }
  mublasStatus_t set(mublasLtMatrixTransformDescAttributes_t a, int32_t v) {
    return mublasLtMatrixTransformDescSetAttribute(d, a, &v, sizeof(v));
  }
};

// int8 COL -> ROW -> COL (batched, padded) gives back the original; the ROW copy holds the same
// elements.
TEST(Int8Transform, ColRowRoundTrip) {
  const int64_t m = 37, n = 29;
  const int batch = 2;
  const IMat col = imat(m, n, false, 3, batch), row = imat(m, n, true, 5, batch);
  const auto av = random_ints<int8_t>(col.elements(), 21, -128, 127);
  DeviceBuffer dA, dR, dBack;
  upload(dA, av);
  upload(dR, std::vector<int8_t>(row.elements(), 0x5a));
  upload(dBack, std::vector<int8_t>(col.elements(), 0x5a));
  Handle h;
  XDesc x(MUSA_R_32F);
  ILayout lcol(MUSA_R_8I, col), lrow(MUSA_R_8I, row);
  const float one = 1;
  ASSERT_LT_OK(mublasLtMatrixTransform(h.h, x.d, &one, dA.get(), lcol.l, nullptr, nullptr, nullptr,
                                       dR.get(), lrow.l, nullptr));
  ASSERT_LT_OK(mublasLtMatrixTransform(h.h, x.d, &one, dR.get(), lrow.l, nullptr, nullptr, nullptr,
                                       dBack.get(), lcol.l, nullptr));
  ASSERT_MU_OK(musaDeviceSynchronize());
  const auto rv = download<int8_t>(dR), back = download<int8_t>(dBack);
  for (int b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const int8_t want = av[static_cast<size_t>(col.off(b, i, j))];
        ASSERT_EQ(want, rv[static_cast<size_t>(row.off(b, i, j))]) << b << " " << i << " " << j;
        ASSERT_EQ(want, back[static_cast<size_t>(col.off(b, i, j))]) << b << " " << i << " " << j;
      }
    }
  }
  EXPECT_EQ(0x5a, rv[static_cast<size_t>(row.off(0, 0, n))]);  // ROW padding untouched
}

// C = alpha * A + beta * op(B) on int8 with float scale: computed in floating point, rounded to
// nearest even and saturated; NaN gives 0.
TEST(Int8Transform, ScaleRoundsAndSaturates) {
  const std::vector<int8_t> a = {1, 3, 5, -1, -3, -5, 100, -100, 84, -86, 0, 7};
  const int64_t m = 3, n = 4;  // column-major 3 x 4
  DeviceBuffer dA, dB, dC;
  upload(dA, a);
  upload(dC, std::vector<int8_t>(a.size(), 0x5a));
  Handle h;
  XDesc x(MUSA_R_32F);
  Layout l(MUSA_R_8I, m, n, m);
  const auto run = [&](float alpha, float beta, const void* B, mublasLtMatrixLayout_t lb) {
    EXPECT_LT_OK(mublasLtMatrixTransform(h.h, x.d, &alpha, dA.get(), l.l, &beta, B, lb, dC.get(),
                                         l.l, nullptr));
    EXPECT_EQ(musaSuccess, musaDeviceSynchronize());
    return download<int8_t>(dC);
  };
  // 1.5 * a: 1.5 -> 2, 4.5 -> 4, 7.5 -> 8, -1.5 -> -2, -4.5 -> -4, -7.5 -> -8, 150 -> 127,
  // -150 -> -128, 126 -> 126, -129 -> -128, 0, 10.5 -> 10.
  EXPECT_EQ((std::vector<int8_t>{2, 4, 8, -2, -4, -8, 127, -128, 126, -128, 0, 10}),
            run(1.5f, 0.0f, nullptr, nullptr));
  // alpha * A + beta * B^T with B 4 x 3: 0.5 * a + 1 * b.
  std::vector<int8_t> b(12, 0);
  b[0] = 127;       // B(0, 0) -> C(0, 0): 0.5 + 127 = 127.5 -> 127 (saturates, tie)
  b[1 * 4] = -128;  // B(0, 1) -> C(1, 0): 1.5 - 128 = -126.5 -> -126
  upload(dB, b);
  Layout lbt(MUSA_R_8I, n, m, n);
  ASSERT_LT_OK(x.set(MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB, MUBLAS_OP_T));
  const auto c = run(0.5f, 1.0f, dB.get(), lbt.l);
  EXPECT_EQ(127, c[0]);
  EXPECT_EQ(-126, c[1]);
  EXPECT_EQ(2, c[2]);   // 2.5 -> 2
  EXPECT_EQ(50, c[6]);  // 0.5 * 100
  ASSERT_LT_OK(x.set(MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB, MUBLAS_OP_N));
  for (int8_t v : run(std::nanf(""), 0.0f, nullptr, nullptr)) EXPECT_EQ(0, v);
}

// int32 matrices: transpose, batches, device-mode scalars; saturation at int32's range.
TEST(Int32Transform, TransposeBatchesAndSaturation) {
  const int64_t m = 5, n = 4;
  const int batch = 3;
  const IMat A = imat(n, m, true, 1, batch);  // op(A) = A^T, row-major
  const IMat B = imat(m, n, false, 2, batch);
  const IMat C = imat(m, n, false, 0, batch);
  auto av = random_ints<int32_t>(A.elements(), 31, -1000000, 1000000);
  const auto bv = random_ints<int32_t>(B.elements(), 32, -1000000, 1000000);
  av[static_cast<size_t>(A.off(0, 0, 0))] = 2000000000;   // * 2 saturates to INT32_MAX
  av[static_cast<size_t>(A.off(1, 1, 2))] = -2000000000;  // * 2 saturates to INT32_MIN
  DeviceBuffer dA, dB, dC, dAlpha, dBeta;
  upload(dA, av);
  upload(dB, bv);
  upload(dC, std::vector<int32_t>(C.elements(), 0x5a5a5a5a));
  upload(dAlpha, std::vector<float>{2.0f});
  upload(dBeta, std::vector<float>{-0.5f});
  Handle h;
  XDesc x(MUSA_R_32F);
  ASSERT_LT_OK(x.set(MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, MUBLAS_OP_T));
  ASSERT_LT_OK(x.set(MUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE, MUBLASLT_POINTER_MODE_DEVICE));
  ILayout la(MUSA_R_32I, A), lb(MUSA_R_32I, B), lc(MUSA_R_32I, C);
  ASSERT_LT_OK(mublasLtMatrixTransform(h.h, x.d, dAlpha.get(), dA.get(), la.l, dBeta.get(),
                                       dB.get(), lb.l, dC.get(), lc.l, nullptr));
  ASSERT_MU_OK(musaDeviceSynchronize());
  const auto cv = download<int32_t>(dC);
  for (int b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const double v = 2.0 * av[static_cast<size_t>(A.off(b, j, i))] -
                         0.5 * bv[static_cast<size_t>(B.off(b, i, j))];
        double want = std::nearbyint(v);
        want = std::min<double>(std::max<double>(want, INT32_MIN), INT32_MAX);
        ASSERT_EQ(static_cast<int32_t>(want), cv[static_cast<size_t>(C.off(b, i, j))])
            << b << " " << i << " " << j;
      }
    }
  }
  EXPECT_EQ(INT32_MAX, cv[static_cast<size_t>(C.off(0, 0, 0))]);
  EXPECT_EQ(INT32_MIN, cv[static_cast<size_t>(C.off(1, 2, 1))]);
}

}  // namespace
