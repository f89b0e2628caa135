// The simulated muBLASLt's complex paths: matmuls with C_16F / C_32F (fp32 compute, C_32F scale)
// and C_64F matrices, op N / T / C (conjugate transpose) against a host reference, device
// scalars, batches, the refusals (epilogues, alpha vectors, a real scale), and
// mublasLtMatrixTransform on complex matrices (conjugate transpose, complex scalars).
#include "lt_test_util.h"

#include <complex>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <vector>

#include "half.h"

namespace {

using namespace lt_test;
using cd = std::complex<double>;
using lt::float_to_half;
using lt::half_to_float;

// A column-major complex matrix of `rows` x `cols` (ld = rows + 1), `batch` of them.
struct CMat {
  int64_t rows, cols, ld, stride;
  int batch;
  CMat(int64_t r, int64_t c, int b)
      : rows(r), cols(c), ld(r + 1), stride((r + 1) * c + 2), batch(b) {}
  size_t elements() const { return static_cast<size_t>(stride * batch); }
  size_t at(int b, int64_t i, int64_t j) const {
    return static_cast<size_t>(b * stride + i + j * ld);
  }
};

struct CLayout {
  mublasLtMatrixLayout_t l = nullptr;
  CLayout(musaDataType t, const CMat& m) {
    EXPECT_LT_OK(mublasLtMatrixLayoutCreate(&l, t, m.rows, m.cols, m.ld));
    const int32_t batch = m.batch;
    EXPECT_LT_OK(mublasLtMatrixLayoutSetAttribute(l, MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                                  sizeof(batch)));
    EXPECT_LT_OK(mublasLtMatrixLayoutSetAttribute(l, MUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                  &m.stride, sizeof(m.stride)));
  }
  ~CLayout() { mublasLtMatrixLayoutDestroy(l); }
  CLayout(const CLayout&) = delete;
  CLayout& operator=(const CLayout&) = delete;
};

// Small integers (and halves): exact in every part type and in the sums below.
std::vector<cd> random_complex(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(-8, 8);
  std::vector<cd> v(n);
  for (cd& x : v) x = cd(d(gen) * 0.5, d(gen) * 0.5);
  return v;
}

// Packs complex values as the type's parts (C_16F: two halves, C_32F: two floats, C_64F: doubles).
std::vector<unsigned char> pack(const std::vector<cd>& v, musaDataType t) {
  const size_t part = t == MUSA_C_16F ? 2 : t == MUSA_C_32F ? 4 : 8;
  std::vector<unsigned char> out(v.size() * 2 * part);
  for (size_t i = 0; i < v.size(); ++i) {
    for (int p = 0; p < 2; ++p) {
      const double x = p == 0 ? v[i].real() : v[i].imag();
      unsigned char* dst = out.data() + (2 * i + p) * part;
      if (t == MUSA_C_16F) {
        const uint16_t h = float_to_half(static_cast<float>(x));
        std::memcpy(dst, &h, 2);
      } else if (t == MUSA_C_32F) {
        const float f = static_cast<float>(x);
        std::memcpy(dst, &f, 4);
      } else {
        std::memcpy(dst, &x, 8);
      }
    }
  }
  return out;
}

std::vector<cd> unpack(const std::vector<unsigned char>& b, musaDataType t) {
  const size_t part = t == MUSA_C_16F ? 2 : t == MUSA_C_32F ? 4 : 8;
  std::vector<cd> v(b.size() / (2 * part));
  for (size_t i = 0; i < v.size(); ++i) {
    double parts[2];
    for (int p = 0; p < 2; ++p) {
      const unsigned char* src = b.data() + (2 * i + p) * part;
      if (t == MUSA_C_16F) {
        uint16_t h;
        std::memcpy(&h, src, 2);
        parts[p] = half_to_float(h);
      } else if (t == MUSA_C_32F) {
        float f;
        std::memcpy(&f, src, 4);
        parts[p] = f;
      } else {
        std::memcpy(&parts[p], src, 8);
      }
    }
    v[i] = cd(parts[0], parts[1]);
  }
  return v;
}

void upload_bytes(DeviceBuffer& d, const std::vector<unsigned char>& h) {
  d.allocate(h.size());
  EXPECT_EQ(musaSuccess, musaMemcpy(d.get(), h.data(), h.size(), musaMemcpyHostToDevice));
}

std::vector<unsigned char> download_bytes(const DeviceBuffer& d) {
  std::vector<unsigned char> h(d.bytes());
  EXPECT_EQ(musaSuccess, musaMemcpy(h.data(), d.get(), d.bytes(), musaMemcpyDeviceToHost));
  return h;
}

cd op_at(const std::vector<cd>& x, const CMat& m, int32_t op, int b, int64_t i, int64_t l) {
  if (op == MUBLAS_OP_N) return x[m.at(b, i, l)];
  return op == MUBLAS_OP_C ? std::conj(x[m.at(b, l, i)]) : x[m.at(b, l, i)];
}

struct Case {
  musaDataType ab, cd_type, scale;
  mublasComputeType_t compute;
  int32_t op_a, op_b;
  bool device_scalars;
};

std::ostream& operator<<(std::ostream& os, const Case& c) {
  return os << "types " << c.ab << "/" << c.cd_type << " ops " << c.op_a << "," << c.op_b
            << (c.device_scalars ? " device scalars" : "");
}

class ComplexMatmul : public ::testing::TestWithParam<Case> {};

TEST_P(ComplexMatmul, MatchesHostReference) {
  const Case& c = GetParam();
  const int64_t m = 7, n = 5, k = 6;
  const int batch = 2;
  const CMat A(c.op_a == MUBLAS_OP_N ? m : k, c.op_a == MUBLAS_OP_N ? k : m, batch);
  const CMat B(c.op_b == MUBLAS_OP_N ? k : n, c.op_b == MUBLAS_OP_N ? n : k, batch);
  const CMat C(m, n, batch);
  const auto av = random_complex(A.elements(), 1), bv = random_complex(B.elements(), 2),
             cv = random_complex(C.elements(), 3);
  const cd alpha(1.5, -1.0), beta(0.5, 2.0);
  DeviceBuffer dA, dB, dC, dD;
  upload_bytes(dA, pack(av, c.ab));
  upload_bytes(dB, pack(bv, c.ab));
  upload_bytes(dC, pack(cv, c.cd_type));
  upload_bytes(dD, pack(std::vector<cd>(C.elements(), cd(-3, -3)), c.cd_type));
  const std::vector<cd> scalars = {alpha, beta};
  DeviceBuffer dS;
  upload_bytes(dS, pack(scalars, c.scale));
  const std::vector<unsigned char> host_scalars = pack(scalars, c.scale);
  const size_t scalar_bytes = host_scalars.size() / 2;

  Handle h;
  Desc desc(c.compute, c.scale);
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_TRANSA, c.op_a));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_TRANSB, c.op_b));
  ASSERT_LT_OK(desc.set(
      MUBLASLT_MATMUL_DESC_POINTER_MODE,
      int32_t{c.device_scalars ? MUBLASLT_POINTER_MODE_DEVICE : MUBLASLT_POINTER_MODE_HOST}));
  CLayout la(c.ab, A), lb(c.ab, B), lc(c.cd_type, C), ld(c.cd_type, C);
  const char* s = c.device_scalars ? static_cast<const char*>(dS.get())
                                   : reinterpret_cast<const char*>(host_scalars.data());
  Pref pref;
  mublasLtMatmulHeuristicResult_t r;
  int count = 0;
  ASSERT_LT_OK(
      mublasLtMatmulAlgoGetHeuristic(h.h, desc.d, la.l, lb.l, lc.l, ld.l, pref.p, 1, &r, &count));
  ASSERT_EQ(1, count);
  ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, s, dA.get(), la.l, dB.get(), lb.l, s + scalar_bytes,
                              dC.get(), lc.l, dD.get(), ld.l, &r.algo, nullptr, 0, nullptr));
  ASSERT_MU_OK(musaDeviceSynchronize());
  const std::vector<cd> got = unpack(download_bytes(dD), c.cd_type);
  int mismatches = 0;
  for (int b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        cd acc(0, 0);
        for (int64_t l = 0; l < k; ++l)
          acc += op_at(av, A, c.op_a, b, i, l) * op_at(bv, B, c.op_b, b, l, j);
        cd want = alpha * acc + beta * cv[C.at(b, i, j)];
        if (c.cd_type == MUSA_C_16F)  // each part rounded to half once
          want = cd(half_to_float(float_to_half(static_cast<float>(want.real()))),
                    half_to_float(float_to_half(static_cast<float>(want.imag()))));
        if (got[C.at(b, i, j)] != want && ++mismatches <= 5)
          ADD_FAILURE() << "b=" << b << " (" << i << ", " << j << "): " << got[C.at(b, i, j)]
                        << " != " << want;
      }
    }
  }
  EXPECT_EQ(0, mismatches);
  EXPECT_EQ(got[C.at(0, m, 0)], cd(-3, -3)) << "the padding row was written";
}

INSTANTIATE_TEST_SUITE_P(
    All, ComplexMatmul,
    ::testing::Values(Case{MUSA_C_32F, MUSA_C_32F, MUSA_C_32F, MUBLAS_COMPUTE_32F, MUBLAS_OP_N,
                           MUBLAS_OP_N, false},
                      Case{MUSA_C_32F, MUSA_C_32F, MUSA_C_32F, MUBLAS_COMPUTE_32F, MUBLAS_OP_T,
                           MUBLAS_OP_C, false},
                      Case{MUSA_C_32F, MUSA_C_32F, MUSA_C_32F, MUBLAS_COMPUTE_32F, MUBLAS_OP_C,
                           MUBLAS_OP_T, true},
                      Case{MUSA_C_16F, MUSA_C_16F, MUSA_C_32F, MUBLAS_COMPUTE_32F, MUBLAS_OP_N,
                           MUBLAS_OP_C, false},
                      Case{MUSA_C_16F, MUSA_C_32F, MUSA_C_32F, MUBLAS_COMPUTE_32F, MUBLAS_OP_C,
                           MUBLAS_OP_N, false},
                      Case{MUSA_C_64F, MUSA_C_64F, MUSA_C_64F, MUBLAS_COMPUTE_64F, MUBLAS_OP_C,
                           MUBLAS_OP_C, true}));

// What the complex GEMMs do not take: NOT_IMPLEMENTED (cuBLAS's NOT_SUPPORTED), nothing run.
TEST(ComplexMatmulRefusals, EpilogueAlphaVectorRealScaleAndMixedTypes) {
  Handle h;
  const CMat M(4, 4, 1);
  CLayout l32(MUSA_C_32F, M), l64(MUSA_C_64F, M);
  Pref pref;
  mublasLtMatmulHeuristicResult_t r;
  int count = 0;
  {
    Desc desc(MUBLAS_COMPUTE_32F, MUSA_C_32F);
    ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{MUBLASLT_EPILOGUE_RELU}));
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED,
              mublasLtMatmulAlgoGetHeuristic(h.h, desc.d, l32.l, l32.l, l32.l, l32.l, pref.p, 1, &r,
                                             &count));
  }
  {
    Desc desc(MUBLAS_COMPUTE_32F, MUSA_C_32F);
    ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_POINTER_MODE,
                          int32_t{MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST}));
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED,
              mublasLtMatmulAlgoGetHeuristic(h.h, desc.d, l32.l, l32.l, l32.l, l32.l, pref.p, 1, &r,
                                             &count));
  }
  {
    Desc desc(MUBLAS_COMPUTE_32F, MUSA_R_32F);  // a real scale with complex matrices
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED,
              mublasLtMatmulAlgoGetHeuristic(h.h, desc.d, l32.l, l32.l, l32.l, l32.l, pref.p, 1, &r,
                                             &count));
  }
  {
    Desc desc(MUBLAS_COMPUTE_64F, MUSA_C_64F);  // C_64F D from C_32F inputs
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED,
              mublasLtMatmulAlgoGetHeuristic(h.h, desc.d, l32.l, l32.l, l64.l, l64.l, pref.p, 1, &r,
                                             &count));
  }
}

// C = alpha * op(A) + beta * B on complex matrices: a conjugate transpose with a complex alpha.
TEST(ComplexTransform, ConjugateTransposeWithComplexScalars) {
  const CMat A(5, 3, 1), Cm(3, 5, 1);
  const auto av = random_complex(A.elements(), 4), bv = random_complex(Cm.elements(), 5);
  DeviceBuffer dA, dB, dC;
  upload_bytes(dA, pack(av, MUSA_C_32F));
  upload_bytes(dB, pack(bv, MUSA_C_64F));
  upload_bytes(dC, pack(std::vector<cd>(Cm.elements()), MUSA_C_32F));
  Handle h;
  mublasLtMatrixTransformDesc_t x = nullptr;
  ASSERT_LT_OK(mublasLtMatrixTransformDescCreate(&x, MUSA_C_64F));
  const int32_t opC = MUBLAS_OP_C;
  ASSERT_LT_OK(mublasLtMatrixTransformDescSetAttribute(x, MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA,
                                                       &opC, sizeof(opC)));
  CLayout la(MUSA_C_32F, A), lb(MUSA_C_64F, Cm), lc(MUSA_C_32F, Cm);
  const cd alpha(0.0, 1.0), beta(2.0, 0.0);
  ASSERT_LT_OK(mublasLtMatrixTransform(h.h, x, &alpha, dA.get(), la.l, &beta, dB.get(), lb.l,
                                       dC.get(), lc.l, nullptr));
  ASSERT_MU_OK(musaDeviceSynchronize());
  const std::vector<cd> got = unpack(download_bytes(dC), MUSA_C_32F);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 5; ++j)
      EXPECT_EQ(got[Cm.at(0, i, j)],
                alpha * std::conj(av[A.at(0, j, i)]) + beta * bv[Cm.at(0, i, j)])
          << i << ", " << j;
  // A complex operand into a real C: refused.
  CLayout lr(MUSA_R_32F, Cm);
  EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED,
            mublasLtMatrixTransform(h.h, x, &alpha, dA.get(), la.l, &beta, nullptr, nullptr,
                                    dC.get(), lr.l, nullptr));
  mublasLtMatrixTransformDescDestroy(x);
}

}  // namespace
