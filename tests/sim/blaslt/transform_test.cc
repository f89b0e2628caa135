// mublasLtMatrixTransform (C = alpha * op(A) + beta * op(B)) against a naive reference: order
// conversions, transposes, sums, batches, NULL operands, in place, device scalars; its
// descriptor's attributes; bad input.
#include "lt_test_util.h"

#include <string>

namespace {

using namespace lt_test;

struct XDesc {
  mublasLtMatrixTransformDesc_t d = nullptr;
  explicit XDesc(musaDataType scale) {
    EXPECT_EQ(MUBLAS_STATUS_SUCCESS, mublasLtMatrixTransformDescCreate(&d, scale));
  }
  ~XDesc() { mublasLtMatrixTransformDescDestroy(d); }
  mublasStatus_t set(mublasLtMatrixTransformDescAttributes_t a, int32_t v) {
    return mublasLtMatrixTransformDescSetAttribute(d, a, &v, sizeof(v));
  }
};

Matrix shaped(musaDataType t, int64_t rows, int64_t cols, bool row, int64_t pad, int batch) {
  Matrix m;
  m.type = t;
  m.row = row;
  m.rows = rows;
  m.cols = cols;
  m.ld = (row ? cols : rows) + pad;
  m.batch = batch;
  m.stride = m.ld * (row ? rows : cols) + 5;
  return m;
}

struct XCase {
  std::string name;
  musaDataType a_type, b_type, c_type, scale;
  bool a_row, b_row, c_row, ta, tb, use_a, use_b;
  int batch;
  bool device_scalars;
};

std::ostream& operator<<(std::ostream& os, const XCase& c) { return os << c.name; }

class TransformTest : public ::testing::TestWithParam<XCase> {};

TEST_P(TransformTest, MatchesReference) {
  const XCase& x = GetParam();
  const int64_t m = 5, n = 3;
  const Matrix A = shaped(x.a_type, x.ta ? n : m, x.ta ? m : n, x.a_row, 1, x.batch);
  const Matrix B = shaped(x.b_type, x.tb ? n : m, x.tb ? m : n, x.b_row, 2, x.batch);
  const Matrix C = shaped(x.c_type, m, n, x.c_row, 0, x.batch);
  const auto av = random_values(static_cast<size_t>(m * n * x.batch), 11);
  const auto bv = random_values(static_cast<size_t>(m * n * x.batch), 12);
  DeviceBuffer dA(A.bytes()), dB(B.bytes()), dC(C.bytes());
  const auto a_bytes = pack(A, av), b_bytes = pack(B, bv);
  dA.upload(a_bytes);
  dB.upload(b_bytes);
  dC.upload(std::vector<uint8_t>(C.bytes(), kSentinel));
  Handle h;
  XDesc desc(x.scale);
  ASSERT_LT_OK(desc.set(MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, x.ta ? MUBLAS_OP_T : MUBLAS_OP_N));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB, x.tb ? MUBLAS_OP_C : MUBLAS_OP_N));
  const double alpha = 0.75, beta = -2.0;
  std::vector<uint8_t> al(type_size(x.scale)), be(type_size(x.scale));
  encode(alpha, x.scale, al.data());
  encode(beta, x.scale, be.data());
  DeviceBuffer dAl(al.size()), dBe(be.size());
  const void* alpha_ptr = al.data();
  const void* beta_ptr = be.data();
  if (x.device_scalars) {
    ASSERT_LT_OK(
        desc.set(MUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE, MUBLASLT_POINTER_MODE_DEVICE));
    dAl.upload(al);
    dBe.upload(be);
    alpha_ptr = dAl.get();
    beta_ptr = dBe.get();
  }
  Layout la(A), lb(B), lc(C);
  Stream s;
  ASSERT_LT_OK(mublasLtMatrixTransform(
      h.h, desc.d, alpha_ptr, x.use_a ? dA.get() : nullptr, x.use_a ? la.l : nullptr, beta_ptr,
      x.use_b ? dB.get() : nullptr, x.use_b ? lb.l : nullptr, dC.get(), lc.l, s.s));
  ASSERT_MU_OK(musaStreamSynchronize(s.s));
  const auto out = dC.download();
  for (int b = 0; b < x.batch; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double v = 0;
        if (x.use_a)
          v += alpha * (x.ta ? value_at(A, a_bytes, b, j, i) : value_at(A, a_bytes, b, i, j));
        if (x.use_b)
          v += beta * (x.tb ? value_at(B, b_bytes, b, j, i) : value_at(B, b_bytes, b, i, j));
        // Exact in every type: multiples of 1/16 below 8.
        EXPECT_EQ(v, value_at(C, out, b, i, j)) << "b=" << b << " i=" << i << " j=" << j;
      }
    }
  }
}

std::vector<XCase> xcases() {
  const auto F = MUSA_R_32F, H = MUSA_R_16F, BF = MUSA_R_16BF, D = MUSA_R_64F;
  return {
      {"col_to_row_f32", F, F, F, F, false, false, true, false, false, true, false, 1, false},
      {"row_to_col_f16", H, H, H, F, true, false, false, false, false, true, false, 1, false},
      {"row_to_col_bf16_batch", BF, BF, BF, F, true, false, false, false, false, true, false, 3,
       false},
      {"transpose_f64", D, D, D, D, false, false, false, true, false, true, false, 1, false},
      {"sum_mixed_orders", F, F, F, F, true, false, true, false, true, true, true, 2, false},
      {"sum_mixed_types", H, BF, F, F, false, true, false, true, false, true, true, 1, false},
      {"only_b", F, F, F, F, false, true, false, false, true, false, true, 1, false},
      {"device_scalars", F, F, H, F, false, false, true, false, false, true, true, 2, true},
      {"scale_f64_to_f16", D, D, H, D, false, true, false, false, false, true, true, 1, false},
  };
}

INSTANTIATE_TEST_SUITE_P(All, TransformTest, ::testing::ValuesIn(xcases()),
                         [](const ::testing::TestParamInfo<XCase>& i) { return i.param.name; });

TEST(Transform, InPlaceScaleAndDescriptorAttributes) {
  // C = 2 * C (C aliases A).
  std::vector<float> c = {1, 2, 3, 4, 5, 6};
  Handle h;
  XDesc desc(MUSA_R_32F);
  Layout l(MUSA_R_32F, 2, 3, 2);
  const float two = 2, zero = 0;
  ASSERT_LT_OK(mublasLtMatrixTransform(h.h, desc.d, &two, c.data(), l.l, &zero, nullptr, nullptr,
                                       c.data(), l.l, nullptr));
  ASSERT_MU_OK(musaDeviceSynchronize());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(2.0f * (i + 1), c[i]);
  // In-place transpose of a square matrix reads everything before writing.
  std::vector<float> sq = {1, 2, 3, 4};  // [[1 3] [2 4]]
  Layout l2(MUSA_R_32F, 2, 2, 2);
  const float one = 1;
  ASSERT_LT_OK(desc.set(MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, MUBLAS_OP_T));
  ASSERT_LT_OK(mublasLtMatrixTransform(h.h, desc.d, &one, sq.data(), l2.l, &zero, nullptr, nullptr,
                                       sq.data(), l2.l, nullptr));
  ASSERT_MU_OK(musaDeviceSynchronize());
  EXPECT_EQ((std::vector<float>{1, 3, 2, 4}), sq);

  // Attributes: round trip, size query, refused values.
  int32_t v = 0;
  size_t w = 0;
  ASSERT_LT_OK(mublasLtMatrixTransformDescGetAttribute(
      desc.d, MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &v, sizeof(v), &w));
  EXPECT_EQ(MUBLAS_OP_T, v);
  EXPECT_EQ(sizeof(v), w);
  ASSERT_LT_OK(mublasLtMatrixTransformDescGetAttribute(
      desc.d, MUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE, nullptr, 0, &w));
  EXPECT_EQ(sizeof(int32_t), w);
  ASSERT_LT_OK(desc.set(MUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE, MUSA_R_64F));
  ASSERT_LT_OK(mublasLtMatrixTransformDescGetAttribute(
      desc.d, MUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE, &v, sizeof(v), nullptr));
  EXPECT_EQ(MUSA_R_64F, v);
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, desc.set(MUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE,
                                                  MUBLASLT_POINTER_MODE_DEVICE_VECTOR));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, desc.set(MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB, 0));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            desc.set(static_cast<mublasLtMatrixTransformDescAttributes_t>(2), MUBLAS_OP_N));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, mublasLtMatrixTransformDescSetAttribute(
                                             desc.d, MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &v, 8));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatrixTransformDescGetAttribute(desc.d, MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA,
                                                    nullptr, 0, nullptr));
  // Caller storage.
  mublasLtMatrixTransformDescOpaque_t store;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatrixTransformDescInit_internal(&store, sizeof(store) - 1, MUSA_R_32F));
  ASSERT_LT_OK(mublasLtMatrixTransformDescInit(&store, MUSA_R_32F));
  EXPECT_LT_OK(mublasLtMatrixTransformDescDestroy(&store));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, mublasLtMatrixTransformDescDestroy(&store));
  mublasLtMatrixTransformDesc_t bad = nullptr;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatrixTransformDescCreate(&bad, static_cast<musaDataType>(4242)));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, mublasLtMatrixTransformDescCreate(nullptr, MUSA_R_32F));
}

TEST(Transform, BadInputIsRefused) {
  std::vector<float> a(6, 1), c(6, -1);
  Handle h;
  XDesc desc(MUSA_R_32F);
  Layout la(MUSA_R_32F, 2, 3, 2), lc(MUSA_R_32F, 2, 3, 2), wrong(MUSA_R_32F, 3, 2, 3);
  const float one = 1;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_HANDLE,
            mublasLtMatrixTransform(nullptr, desc.d, &one, a.data(), la.l, &one, nullptr, nullptr,
                                    c.data(), lc.l, nullptr));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatrixTransform(h.h, nullptr, &one, a.data(), la.l, &one, nullptr, nullptr,
                                    c.data(), lc.l, nullptr));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatrixTransform(h.h, desc.d, &one, a.data(), la.l, &one, nullptr, nullptr,
                                    nullptr, lc.l, nullptr));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatrixTransform(h.h, desc.d, &one, a.data(), nullptr, &one, nullptr, nullptr,
                                    c.data(), lc.l, nullptr));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatrixTransform(h.h, desc.d, nullptr, a.data(), la.l, &one, nullptr, nullptr,
                                    c.data(), lc.l, nullptr));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatrixTransform(h.h, desc.d, &one, a.data(), wrong.l, &one, nullptr, nullptr,
                                    c.data(), lc.l, nullptr));
  Layout u8(MUSA_R_8U, 2, 3, 2);  // a type the simulator cannot compute with
  EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED,
            mublasLtMatrixTransform(h.h, desc.d, &one, a.data(), u8.l, &one, nullptr, nullptr,
                                    c.data(), lc.l, nullptr));
  ASSERT_MU_OK(musaDeviceSynchronize());
  for (float x : c) EXPECT_EQ(-1, x);
}

}  // namespace
