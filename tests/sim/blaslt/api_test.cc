// muBLASLt API surface: handles, status names, descriptor attributes (round trips, the size query
// protocol, refused values), caller-storage initialisation, heuristics, the algorithm API, bad
// input and the logger.
#include "lt_test_util.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace {

using namespace lt_test;

TEST(Handle, CreateDestroyAndNull) {
  mublasLtHandle_t h = nullptr;
  ASSERT_LT_OK(mublasLtCreate(&h));
  ASSERT_NE(nullptr, h);
  EXPECT_LT_OK(mublasLtDestroy(h));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, mublasLtCreate(nullptr));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_HANDLE, mublasLtDestroy(nullptr));
}

TEST(Handle, VersionAndStatusNames) {
  EXPECT_EQ(static_cast<size_t>(MUBLASLT_VERSION), mublasLtGetVersion());
  EXPECT_EQ(40300u, mublasLtGetVersion());
  EXPECT_STREQ("MUBLAS_STATUS_SUCCESS", mublasLtGetStatusName(MUBLAS_STATUS_SUCCESS));
  EXPECT_STREQ("MUBLAS_STATUS_NOT_IMPLEMENTED",
               mublasLtGetStatusName(MUBLAS_STATUS_NOT_IMPLEMENTED));
  EXPECT_STREQ("MUBLAS_STATUS_INVALID_VALUE", mublasLtGetStatusName(MUBLAS_STATUS_INVALID_VALUE));
  EXPECT_STREQ("MUBLAS_STATUS_UNKNOWN", mublasLtGetStatusName(static_cast<mublasStatus_t>(999)));
  for (int s = MUBLAS_STATUS_SUCCESS; s <= MUBLAS_STATUS_CHECK_NUMERICS_FAIL; ++s) {
    const std::string name = mublasLtGetStatusName(static_cast<mublasStatus_t>(s));
    EXPECT_EQ(0u, name.rfind("MUBLAS_STATUS_", 0)) << s;
    EXPECT_NE("MUBLAS_STATUS_UNKNOWN", name) << s;
    const std::string text = mublasLtGetStatusString(static_cast<mublasStatus_t>(s));
    EXPECT_FALSE(text.empty());
    EXPECT_NE("unknown status", text) << s;
  }
  EXPECT_STREQ("unknown status", mublasLtGetStatusString(static_cast<mublasStatus_t>(-1)));
}

TEST(Handle, CacheCapacityAndCpuMask) {
  size_t cap = 0;
  ASSERT_LT_OK(mublasLtHeuristicsCacheSetCapacity(123));
  ASSERT_LT_OK(mublasLtHeuristicsCacheGetCapacity(&cap));
  EXPECT_EQ(123u, cap);
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, mublasLtHeuristicsCacheGetCapacity(nullptr));
  const unsigned before = mublasLtDisableCpuInstructionsSetMask(1);
  EXPECT_EQ(1u, mublasLtDisableCpuInstructionsSetMask(before));
}

// The attribute values differ from cuBLASLt's on purpose (see mublasLt.h): a value passed on
// untranslated is refused.
TEST(Enums, DifferFromCublasLt) {
  EXPECT_EQ(100, MUBLASLT_MATMUL_DESC_COMPUTE_TYPE);
  EXPECT_EQ(103, MUBLASLT_MATMUL_DESC_TRANSA);
  EXPECT_EQ(200, MUBLASLT_MATRIX_LAYOUT_TYPE);
  EXPECT_EQ(301, MUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
  EXPECT_EQ(4 << 12, MUBLASLT_EPILOGUE_BIAS);
  EXPECT_EQ(16, MUBLASLT_ORDER_COL);
  Desc d(MUBLAS_COMPUTE_32F, MUSA_R_32F);
  int32_t v = MUBLAS_OP_T;
  for (int raw = 0; raw <= 38; ++raw) {  // cuBLASLt's matmul descriptor attribute values
    EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
              mublasLtMatmulDescSetAttribute(d.d, static_cast<mublasLtMatmulDescAttributes_t>(raw),
                                             &v, sizeof(v)))
        << raw;
  }
  uint32_t cuda_bias_epilogue = 4;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, d.set(MUBLASLT_MATMUL_DESC_EPILOGUE, cuda_bias_epilogue));
  int32_t cuda_op_t = 1;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, d.set(MUBLASLT_MATMUL_DESC_TRANSA, cuda_op_t));
  Layout l(MUSA_R_32F, 2, 2, 2);
  int32_t cuda_row = 1;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, l.set(MUBLASLT_MATRIX_LAYOUT_ORDER, cuda_row));
  uint64_t rows = 3;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatrixLayoutSetAttribute(l.l, static_cast<mublasLtMatrixLayoutAttribute_t>(2),
                                             &rows, sizeof(rows)));
}

// Round trip of one attribute: set `v`, read it back with the exact size, the size query
// (buf NULL, size 0) returns sizeof(T), and a wrong size is refused for both directions.
template <typename T, typename SetFn, typename GetFn>
void round_trip(SetFn set, GetFn get, T v, const char* what) {
  SCOPED_TRACE(what);
  EXPECT_LT_OK(set(&v, sizeof(T)));
  T back{};
  size_t written = 0;
  EXPECT_LT_OK(get(&back, sizeof(T), &written));
  EXPECT_EQ(0, std::memcmp(&v, &back, sizeof(T)));
  EXPECT_EQ(sizeof(T), written);
  written = 0;
  EXPECT_LT_OK(get(nullptr, 0, &written));
  EXPECT_EQ(sizeof(T), written);
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, get(nullptr, 0, nullptr));  // size 0 needs sizeWritten
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, get(nullptr, sizeof(T), &written));
  char big[sizeof(T) + 8] = {};
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, get(big, sizeof(T) + 1, &written));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, set(big, sizeof(T) + 1));
  if (sizeof(T) > 1) {
    EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, set(&v, sizeof(T) - 1));
  }
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, set(nullptr, sizeof(T)));
  EXPECT_LT_OK(get(&back, sizeof(T), nullptr));  // sizeWritten is optional with a buffer
}

TEST(Attributes, MatmulDescRoundTripsAndDefaults) {
  Desc d(MUBLAS_COMPUTE_64F, MUSA_R_64F);
  auto set = [&](mublasLtMatmulDescAttributes_t a) {
    return [&, a](const void* b, size_t s) { return mublasLtMatmulDescSetAttribute(d.d, a, b, s); };
  };
  auto get = [&](mublasLtMatmulDescAttributes_t a) {
    return [&, a](void* b, size_t s, size_t* w) {
      return mublasLtMatmulDescGetAttribute(d.d, a, b, s, w);
    };
  };
  // Defaults.
  int32_t i = 0;
  uint32_t u = 0;
  ASSERT_LT_OK(
      mublasLtMatmulDescGetAttribute(d.d, MUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &i, 4, nullptr));
  EXPECT_EQ(MUBLAS_COMPUTE_64F, i);
  ASSERT_LT_OK(
      mublasLtMatmulDescGetAttribute(d.d, MUBLASLT_MATMUL_DESC_SCALE_TYPE, &i, 4, nullptr));
  EXPECT_EQ(MUSA_R_64F, i);
  ASSERT_LT_OK(mublasLtMatmulDescGetAttribute(d.d, MUBLASLT_MATMUL_DESC_TRANSA, &i, 4, nullptr));
  EXPECT_EQ(MUBLAS_OP_N, i);
  ASSERT_LT_OK(mublasLtMatmulDescGetAttribute(d.d, MUBLASLT_MATMUL_DESC_FILL_MODE, &i, 4, nullptr));
  EXPECT_EQ(MUBLAS_FILL_MODE_FULL, i);
  ASSERT_LT_OK(mublasLtMatmulDescGetAttribute(d.d, MUBLASLT_MATMUL_DESC_EPILOGUE, &u, 4, nullptr));
  EXPECT_EQ(static_cast<uint32_t>(MUBLASLT_EPILOGUE_DEFAULT), u);
  ASSERT_LT_OK(
      mublasLtMatmulDescGetAttribute(d.d, MUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &i, 4, nullptr));
  EXPECT_EQ(-1, i);
  ASSERT_LT_OK(
      mublasLtMatmulDescGetAttribute(d.d, MUBLASLT_MATMUL_DESC_POINTER_MODE, &i, 4, nullptr));
  EXPECT_EQ(MUBLASLT_POINTER_MODE_HOST, i);
  // Round trips.
  round_trip(set(MUBLASLT_MATMUL_DESC_COMPUTE_TYPE), get(MUBLASLT_MATMUL_DESC_COMPUTE_TYPE),
             int32_t{MUBLAS_COMPUTE_32F_FAST_TF32}, "compute");
  round_trip(set(MUBLASLT_MATMUL_DESC_SCALE_TYPE), get(MUBLASLT_MATMUL_DESC_SCALE_TYPE),
             int32_t{MUSA_R_16F}, "scale");
  round_trip(set(MUBLASLT_MATMUL_DESC_POINTER_MODE), get(MUBLASLT_MATMUL_DESC_POINTER_MODE),
             int32_t{MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST}, "mode");
  round_trip(set(MUBLASLT_MATMUL_DESC_TRANSA), get(MUBLASLT_MATMUL_DESC_TRANSA),
             int32_t{MUBLAS_OP_T}, "transa");
  round_trip(set(MUBLASLT_MATMUL_DESC_TRANSB), get(MUBLASLT_MATMUL_DESC_TRANSB),
             int32_t{MUBLAS_OP_C}, "transb");
  round_trip(set(MUBLASLT_MATMUL_DESC_TRANSC), get(MUBLASLT_MATMUL_DESC_TRANSC),
             int32_t{MUBLAS_OP_T}, "transc");
  round_trip(set(MUBLASLT_MATMUL_DESC_FILL_MODE), get(MUBLASLT_MATMUL_DESC_FILL_MODE),
             int32_t{MUBLAS_FILL_MODE_LOWER}, "fill");
  round_trip(set(MUBLASLT_MATMUL_DESC_EPILOGUE), get(MUBLASLT_MATMUL_DESC_EPILOGUE),
             uint32_t{MUBLASLT_EPILOGUE_GELU_BIAS}, "epilogue");
  round_trip(set(MUBLASLT_MATMUL_DESC_BIAS_POINTER), get(MUBLASLT_MATMUL_DESC_BIAS_POINTER),
             static_cast<const void*>(&i), "bias");
  round_trip(set(MUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE),
             get(MUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE), int64_t{1} << 40, "bias stride");
  round_trip(set(MUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE),
             get(MUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE), int64_t{77}, "alpha stride");
  round_trip(set(MUBLASLT_MATMUL_DESC_SM_COUNT_TARGET), get(MUBLASLT_MATMUL_DESC_SM_COUNT_TARGET),
             int32_t{48}, "sm count");
  round_trip(set(MUBLASLT_MATMUL_DESC_FAST_ACCUM), get(MUBLASLT_MATMUL_DESC_FAST_ACCUM), int8_t{1},
             "fast accum");
  round_trip(set(MUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE), get(MUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE),
             int32_t{MUSA_R_16BF}, "bias type");
  // Refused values leave the attribute unchanged.
  int32_t bad = 12345;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, d.set(MUBLASLT_MATMUL_DESC_COMPUTE_TYPE, bad));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, d.set(MUBLASLT_MATMUL_DESC_SCALE_TYPE, bad));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, d.set(MUBLASLT_MATMUL_DESC_POINTER_MODE, int32_t{5}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, d.set(MUBLASLT_MATMUL_DESC_TRANSB, int32_t{0}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, d.set(MUBLASLT_MATMUL_DESC_FILL_MODE, int32_t{0}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, d.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{0}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, d.set(MUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t{-2}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, d.set(MUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, int32_t{-1}));
  ASSERT_LT_OK(mublasLtMatmulDescGetAttribute(d.d, MUBLASLT_MATMUL_DESC_TRANSB, &i, 4, nullptr));
  EXPECT_EQ(MUBLAS_OP_C, i);
}

TEST(Attributes, LayoutRoundTripsAndDefaults) {
  Layout l(MUSA_R_16BF, 7, 5, 9);
  auto set = [&](mublasLtMatrixLayoutAttribute_t a) {
    return
        [&, a](const void* b, size_t s) { return mublasLtMatrixLayoutSetAttribute(l.l, a, b, s); };
  };
  auto get = [&](mublasLtMatrixLayoutAttribute_t a) {
    return [&, a](void* b, size_t s, size_t* w) {
      return mublasLtMatrixLayoutGetAttribute(l.l, a, b, s, w);
    };
  };
  uint32_t type = 0;
  int32_t order = 0, count = 0;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0, stride = -1;
  ASSERT_LT_OK(
      mublasLtMatrixLayoutGetAttribute(l.l, MUBLASLT_MATRIX_LAYOUT_TYPE, &type, 4, nullptr));
  ASSERT_LT_OK(
      mublasLtMatrixLayoutGetAttribute(l.l, MUBLASLT_MATRIX_LAYOUT_ORDER, &order, 4, nullptr));
  ASSERT_LT_OK(
      mublasLtMatrixLayoutGetAttribute(l.l, MUBLASLT_MATRIX_LAYOUT_ROWS, &rows, 8, nullptr));
  ASSERT_LT_OK(
      mublasLtMatrixLayoutGetAttribute(l.l, MUBLASLT_MATRIX_LAYOUT_COLS, &cols, 8, nullptr));
  ASSERT_LT_OK(mublasLtMatrixLayoutGetAttribute(l.l, MUBLASLT_MATRIX_LAYOUT_LD, &ld, 8, nullptr));
  ASSERT_LT_OK(mublasLtMatrixLayoutGetAttribute(l.l, MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, 4,
                                                nullptr));
  ASSERT_LT_OK(mublasLtMatrixLayoutGetAttribute(l.l, MUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                &stride, 8, nullptr));
  EXPECT_EQ(static_cast<uint32_t>(MUSA_R_16BF), type);
  EXPECT_EQ(MUBLASLT_ORDER_COL, order);
  EXPECT_EQ(7u, rows);
  EXPECT_EQ(5u, cols);
  EXPECT_EQ(9, ld);
  EXPECT_EQ(1, count);
  EXPECT_EQ(0, stride);
  round_trip(set(MUBLASLT_MATRIX_LAYOUT_TYPE), get(MUBLASLT_MATRIX_LAYOUT_TYPE),
             uint32_t{MUSA_R_64F}, "type");
  round_trip(set(MUBLASLT_MATRIX_LAYOUT_ORDER), get(MUBLASLT_MATRIX_LAYOUT_ORDER),
             int32_t{MUBLASLT_ORDER_ROW}, "order");
  round_trip(set(MUBLASLT_MATRIX_LAYOUT_ROWS), get(MUBLASLT_MATRIX_LAYOUT_ROWS), uint64_t{11},
             "rows");
  round_trip(set(MUBLASLT_MATRIX_LAYOUT_COLS), get(MUBLASLT_MATRIX_LAYOUT_COLS), uint64_t{13},
             "cols");
  round_trip(set(MUBLASLT_MATRIX_LAYOUT_LD), get(MUBLASLT_MATRIX_LAYOUT_LD), int64_t{17}, "ld");
  round_trip(set(MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT), get(MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT),
             int32_t{4}, "batch");
  round_trip(set(MUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET),
             get(MUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET), int64_t{1000}, "stride");
  round_trip(set(MUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET), get(MUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET),
             int64_t{0}, "plane");
  round_trip(set(MUBLASLT_MATRIX_LAYOUT_BATCH_MODE), get(MUBLASLT_MATRIX_LAYOUT_BATCH_MODE),
             uint32_t{MUBLASLT_BATCH_MODE_STRIDED}, "batch mode");
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, l.set(MUBLASLT_MATRIX_LAYOUT_TYPE, uint32_t{999}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, l.set(MUBLASLT_MATRIX_LAYOUT_ORDER, int32_t{2}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, l.set(MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t{0}));
  // Planar complex: a valid layout the simulator does not implement.
  EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, l.set(MUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, int64_t{64}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, l.set(MUBLASLT_MATRIX_LAYOUT_BATCH_MODE, uint32_t{1}));
  mublasLtMatrixLayout_t bad = nullptr;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatrixLayoutCreate(&bad, static_cast<musaDataType>(-5), 1, 1, 1));
  EXPECT_EQ(nullptr, bad);
}

TEST(Attributes, PreferenceRoundTripsAndDefaults) {
  Pref p;
  auto set = [&](mublasLtMatmulPreferenceAttributes_t a) {
    return [&, a](const void* b, size_t s) {
      return mublasLtMatmulPreferenceSetAttribute(p.p, a, b, s);
    };
  };
  auto get = [&](mublasLtMatmulPreferenceAttributes_t a) {
    return [&, a](void* b, size_t s, size_t* w) {
      return mublasLtMatmulPreferenceGetAttribute(p.p, a, b, s, w);
    };
  };
  uint64_t ws = 1, impl = 0;
  uint32_t align = 0, mask = 0;
  ASSERT_LT_OK(mublasLtMatmulPreferenceGetAttribute(p.p, MUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &ws, 8, nullptr));
  ASSERT_LT_OK(
      mublasLtMatmulPreferenceGetAttribute(p.p, MUBLASLT_MATMUL_PREF_IMPL_MASK, &impl, 8, nullptr));
  ASSERT_LT_OK(mublasLtMatmulPreferenceGetAttribute(p.p, MUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                                    &align, 4, nullptr));
  ASSERT_LT_OK(mublasLtMatmulPreferenceGetAttribute(p.p, MUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                    &mask, 4, nullptr));
  EXPECT_EQ(0u, ws);
  EXPECT_EQ(~uint64_t{0}, impl);
  EXPECT_EQ(256u, align);
  EXPECT_EQ(static_cast<uint32_t>(MUBLASLT_REDUCTION_SCHEME_MASK), mask);
  round_trip(set(MUBLASLT_MATMUL_PREF_SEARCH_MODE), get(MUBLASLT_MATMUL_PREF_SEARCH_MODE),
             uint32_t{MUBLASLT_SEARCH_LIMITED_BY_ALGO_ID}, "search");
  round_trip(set(MUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES),
             get(MUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES), uint64_t{32} << 20, "workspace");
  round_trip(set(MUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK),
             get(MUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK),
             uint32_t{MUBLASLT_REDUCTION_SCHEME_INPLACE}, "reduction");
  for (auto a :
       {MUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, MUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        MUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, MUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    round_trip(set(a), get(a), uint32_t{16} + static_cast<uint32_t>(a), "alignment");
  }
  round_trip(set(MUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT), get(MUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT),
             2.5f, "waves");
  round_trip(set(MUBLASLT_MATMUL_PREF_IMPL_MASK), get(MUBLASLT_MATMUL_PREF_IMPL_MASK),
             uint64_t{MUBLASLT_NUMERICAL_IMPL_FLAGS_FMA}, "impl");
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, p.set(MUBLASLT_MATMUL_PREF_SEARCH_MODE, uint32_t{2}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            p.set(MUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, uint32_t{8}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, p.set(MUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT, -1.0f));
  uint32_t v = 0;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulPreferenceSetAttribute(
                p.p, static_cast<mublasLtMatmulPreferenceAttributes_t>(1), &v, sizeof(v)));
}

// *Init_internal: the descriptor lives in the caller's storage, which must be at least the
// documented opaque size; Destroy of such a descriptor only invalidates it.
TEST(Descriptors, InitInCallerStorage) {
  mublasLtMatrixLayoutOpaque_t lstore;
  mublasLtMatmulDescOpaque_t dstore;
  mublasLtMatmulPreferenceOpaque_t pstore;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatrixLayoutInit_internal(&lstore, sizeof(lstore) - 1, MUSA_R_32F, 2, 2, 2));
  EXPECT_EQ(
      MUBLAS_STATUS_INVALID_VALUE,
      mublasLtMatmulDescInit_internal(&dstore, sizeof(dstore) - 8, MUBLAS_COMPUTE_32F, MUSA_R_32F));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulPreferenceInit_internal(&pstore, sizeof(pstore) / 2));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatrixLayoutInit_internal(nullptr, sizeof(lstore), MUSA_R_32F, 2, 2, 2));
  ASSERT_LT_OK(mublasLtMatrixLayoutInit(&lstore, MUSA_R_32F, 2, 3, 2));
  ASSERT_LT_OK(mublasLtMatmulDescInit(&dstore, MUBLAS_COMPUTE_32F, MUSA_R_32F));
  ASSERT_LT_OK(mublasLtMatmulPreferenceInit(&pstore));
  uint64_t cols = 0;
  ASSERT_LT_OK(
      mublasLtMatrixLayoutGetAttribute(&lstore, MUBLASLT_MATRIX_LAYOUT_COLS, &cols, 8, nullptr));
  EXPECT_EQ(3u, cols);
  // A matmul with caller-storage descriptors: D(2x3) = A(2x2) * B(2x3).
  mublasLtMatrixLayoutOpaque_t astore, bstore;
  ASSERT_LT_OK(mublasLtMatrixLayoutInit(&astore, MUSA_R_32F, 2, 2, 2));
  ASSERT_LT_OK(mublasLtMatrixLayoutInit(&bstore, MUSA_R_32F, 2, 3, 2));
  const float a[4] = {1, 2, 3, 4};  // [[1 3] [2 4]]
  const float b[6] = {1, 0, 0, 1, 1, 1};
  float d[6] = {};
  const float alpha = 1, beta = 0;
  Handle h;
  ASSERT_LT_OK(mublasLtMatmul(h.h, &dstore, &alpha, a, &astore, b, &bstore, &beta, d, &lstore, d,
                              &lstore, nullptr, nullptr, 0, nullptr));
  ASSERT_MU_OK(musaDeviceSynchronize());
  const float want[6] = {1, 2, 3, 4, 4, 6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(want[i], d[i]) << i;
  // Destroy invalidates without freeing the caller's storage.
  EXPECT_LT_OK(mublasLtMatrixLayoutDestroy(&lstore));
  EXPECT_EQ(
      MUBLAS_STATUS_INVALID_VALUE,
      mublasLtMatrixLayoutGetAttribute(&lstore, MUBLASLT_MATRIX_LAYOUT_COLS, &cols, 8, nullptr));
  EXPECT_LT_OK(mublasLtMatmulDescDestroy(&dstore));
  EXPECT_LT_OK(mublasLtMatmulPreferenceDestroy(&pstore));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, mublasLtMatmulPreferenceDestroy(&pstore));
}

TEST(Descriptors, NullAndGarbage) {
  mublasLtMatrixLayoutOpaque_t garbage;
  std::memset(&garbage, 0xab, sizeof(garbage));
  int32_t v = 0;
  size_t w = 0;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatrixLayoutGetAttribute(&garbage, MUBLASLT_MATRIX_LAYOUT_ORDER, &v, 4, &w));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatrixLayoutGetAttribute(nullptr, MUBLASLT_MATRIX_LAYOUT_ORDER, &v, 4, &w));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulDescSetAttribute(nullptr, MUBLASLT_MATMUL_DESC_TRANSA, &v, 4));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, mublasLtMatmulPreferenceGetAttribute(
                                             nullptr, MUBLASLT_MATMUL_PREF_SEARCH_MODE, &v, 4, &w));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, mublasLtMatrixLayoutCreate(nullptr, MUSA_R_32F, 1, 1, 1));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulDescCreate(nullptr, MUBLAS_COMPUTE_32F, MUSA_R_32F));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, mublasLtMatmulPreferenceCreate(nullptr));
  mublasLtMatmulDesc_t d = nullptr;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulDescCreate(&d, static_cast<mublasComputeType_t>(0), MUSA_R_32F));
  EXPECT_EQ(nullptr, d);
  // Destroying NULL is a no-op, like free(NULL).
  EXPECT_LT_OK(mublasLtMatrixLayoutDestroy(nullptr));
  EXPECT_LT_OK(mublasLtMatmulDescDestroy(nullptr));
  EXPECT_LT_OK(mublasLtMatmulPreferenceDestroy(nullptr));
}

struct Problem {
  Handle h;
  Desc desc;
  Layout a, b, c, d;
  Pref pref;
  Problem(mublasComputeType_t ct, musaDataType st, musaDataType ab, musaDataType cd, int64_t m = 8,
          int64_t n = 4, int64_t k = 16)
      : desc(ct, st), a(ab, m, k, m), b(ab, k, n, k), c(cd, m, n, m), d(cd, m, n, m) {}
  mublasStatus_t heuristic(int requested, mublasLtMatmulHeuristicResult_t* r, int* count) {
    return mublasLtMatmulAlgoGetHeuristic(h.h, desc.d, a.l, b.l, c.l, d.l, pref.p, requested, r,
                                          count);
  }
};

// A matrix beyond the allocation it starts in is what a GPU makes of it: the call succeeds, the
// device takes the sticky musaErrorIllegalAddress at the next synchronisation (until
// musaDeviceReset), nothing is computed, one line names the operand.
TEST(Matmul, OperandBeyondItsAllocationFaultsTheDevice) {
  Problem p(MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_32F, MUSA_R_32F);  // 8 x 4 = (8 x 16)(16 x 4)
  DeviceBuffer a(8 * 16 * 4), b(4 * 4 * 4), d(8 * 4 * 4);             // B holds 4 x 4 of its 16 x 4
  const float one = 1.0f, zero = 0.0f;
  testing::internal::CaptureStderr();
  ASSERT_LT_OK(mublasLtMatmul(p.h.h, p.desc.d, &one, a.get(), p.a.l, b.get(), p.b.l, &zero, d.get(),
                              p.c.l, d.get(), p.d.l, nullptr, nullptr, 0, nullptr));
  EXPECT_EQ(musaErrorIllegalAddress, musaDeviceSynchronize());
  EXPECT_EQ(musaErrorIllegalAddress, musaDeviceSynchronize());
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("mublasLtMatmul: operand B spans 256 bytes"), std::string::npos) << log;
  ASSERT_EQ(musaSuccess, musaDeviceReset());
  EXPECT_EQ(musaSuccess, musaDeviceSynchronize());
}

TEST(Heuristic, OneAlgoHonouringRequestedCount) {
  Problem p(MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_16F, MUSA_R_16F);
  mublasLtMatmulHeuristicResult_t r[4];
  std::memset(r, 0x77, sizeof(r));
  int count = -1;
  ASSERT_LT_OK(p.heuristic(4, r, &count));
  EXPECT_EQ(1, count);
  EXPECT_EQ(MUBLAS_STATUS_SUCCESS, r[0].state);
  EXPECT_EQ(0u, r[0].workspaceSize);
  EXPECT_EQ(1.0f, r[0].wavesCount);
  // Entries past the returned count are not written.
  const unsigned char* tail = reinterpret_cast<const unsigned char*>(&r[1]);
  for (size_t i = 0; i < 3 * sizeof(r[0]); ++i) ASSERT_EQ(0x77, tail[i]);
  std::memset(r, 0x77, sizeof(r));
  ASSERT_LT_OK(p.heuristic(1, r, &count));
  EXPECT_EQ(1, count);
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, p.heuristic(0, r, &count));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, p.heuristic(-3, r, &count));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, p.heuristic(1, nullptr, &count));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, p.heuristic(1, r, nullptr));
  // The algo reports its configuration.
  int32_t id = -1;
  size_t w = 0;
  ASSERT_LT_OK(mublasLtMatmulAlgoConfigGetAttribute(&r[0].algo, MUBLASLT_ALGO_CONFIG_ID, &id,
                                                    sizeof(id), &w));
  EXPECT_EQ(0, id);
  // The heuristic result is accepted by AlgoCheck for the same problem.
  mublasLtMatmulHeuristicResult_t check;
  ASSERT_LT_OK(
      mublasLtMatmulAlgoCheck(p.h.h, p.desc.d, p.a.l, p.b.l, p.c.l, p.d.l, &r[0].algo, &check));
  EXPECT_EQ(MUBLAS_STATUS_SUCCESS, check.state);
  EXPECT_EQ(0u, check.workspaceSize);
}

TEST(Heuristic, UnsupportedProblemsAndPreferences) {
  mublasLtMatmulHeuristicResult_t r[2];
  int count = -1;
  {  // int8 A/B under 32I compute with fp32 C/D is not a cuBLASLt combination
    Problem p(MUBLAS_COMPUTE_32I, MUSA_R_32I, MUSA_R_8I, MUSA_R_32F);
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, p.heuristic(2, r, &count));
    EXPECT_EQ(0, count);
  }
  {  // A and B types differ
    Problem p(MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_16F, MUSA_R_16F);
    ASSERT_LT_OK(p.b.set(MUBLASLT_MATRIX_LAYOUT_TYPE, uint32_t{MUSA_R_16BF}));
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, p.heuristic(2, r, &count));
  }
  {  // scale type must match the compute type
    Problem p(MUBLAS_COMPUTE_32F, MUSA_R_16F, MUSA_R_16F, MUSA_R_16F);
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, p.heuristic(2, r, &count));
  }
  {  // bf16 D with f16 inputs
    Problem p(MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_16F, MUSA_R_16BF);
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, p.heuristic(2, r, &count));
  }
  {  // TRANSC and triangular fill are not implemented
    Problem p(MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_32F, MUSA_R_32F, 4, 4, 4);
    ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_TRANSC, int32_t{MUBLAS_OP_T}));
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, p.heuristic(2, r, &count));
    ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_TRANSC, int32_t{MUBLAS_OP_N}));
    ASSERT_LT_OK(p.desc.set(MUBLASLT_MATMUL_DESC_FILL_MODE, int32_t{MUBLAS_FILL_MODE_UPPER}));
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, p.heuristic(2, r, &count));
  }
  {  // preferences that exclude the one algorithm
    Problem p(MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_32F, MUSA_R_32F);
    ASSERT_LT_OK(p.heuristic(2, r, &count));
    ASSERT_LT_OK(p.pref.set(MUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, uint32_t{2}));
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, p.heuristic(2, r, &count));
    EXPECT_EQ(0, count);
    ASSERT_LT_OK(p.pref.set(MUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, uint32_t{4}));
    ASSERT_LT_OK(p.heuristic(2, r, &count));
    ASSERT_LT_OK(
        p.pref.set(MUBLASLT_MATMUL_PREF_IMPL_MASK, uint64_t{MUBLASLT_NUMERICAL_IMPL_FLAGS_HMMA}));
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, p.heuristic(2, r, &count));
    ASSERT_LT_OK(p.pref.set(MUBLASLT_MATMUL_PREF_IMPL_MASK, ~uint64_t{0}));
    ASSERT_LT_OK(p.pref.set(MUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT, 0.5f));
    EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, p.heuristic(2, r, &count));
    ASSERT_LT_OK(p.pref.set(MUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT, 1.0f));
    ASSERT_LT_OK(p.heuristic(2, r, &count));
    // LIMITED_BY_ALGO_ID needs an initialised algo in the first result.
    ASSERT_LT_OK(
        p.pref.set(MUBLASLT_MATMUL_PREF_SEARCH_MODE, uint32_t{MUBLASLT_SEARCH_LIMITED_BY_ALGO_ID}));
    std::memset(r, 0, sizeof(r));
    EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, p.heuristic(2, r, &count));
    ASSERT_LT_OK(mublasLtMatmulAlgoInit(p.h.h, MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_32F,
                                        MUSA_R_32F, MUSA_R_32F, MUSA_R_32F, 0, &r[0].algo));
    ASSERT_LT_OK(p.heuristic(2, r, &count));
    EXPECT_EQ(1, count);
  }
  {  // bad handle / descriptors
    Problem p(MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_32F, MUSA_R_32F);
    EXPECT_EQ(MUBLAS_STATUS_INVALID_HANDLE,
              mublasLtMatmulAlgoGetHeuristic(nullptr, p.desc.d, p.a.l, p.b.l, p.c.l, p.d.l,
                                             p.pref.p, 1, r, &count));
    EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
              mublasLtMatmulAlgoGetHeuristic(p.h.h, nullptr, p.a.l, p.b.l, p.c.l, p.d.l, p.pref.p,
                                             1, r, &count));
    EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
              mublasLtMatmulAlgoGetHeuristic(p.h.h, p.desc.d, p.a.l, p.b.l, p.c.l, nullptr,
                                             p.pref.p, 1, r, &count));
    EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
              mublasLtMatmulAlgoGetHeuristic(p.h.h, p.desc.d, p.a.l, p.b.l, p.c.l, p.d.l, nullptr,
                                             1, r, &count));
  }
}

TEST(Algo, IdsInitCheckCapsConfig) {
  Handle h;
  int ids[4] = {-1, -1, -1, -1};
  int count = -1;
  ASSERT_LT_OK(mublasLtMatmulAlgoGetIds(h.h, MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_16BF,
                                        MUSA_R_16BF, MUSA_R_16BF, MUSA_R_16BF, 4, ids, &count));
  EXPECT_EQ(1, count);
  EXPECT_EQ(0, ids[0]);
  EXPECT_EQ(-1, ids[1]);
  ASSERT_LT_OK(mublasLtMatmulAlgoGetIds(h.h, MUBLAS_COMPUTE_32I, MUSA_R_32I, MUSA_R_8I, MUSA_R_8I,
                                        MUSA_R_32F, MUSA_R_32F, 4, ids, &count));
  EXPECT_EQ(0, count);
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulAlgoGetIds(h.h, MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_32F, MUSA_R_32F,
                                     MUSA_R_32F, MUSA_R_32F, 0, ids, &count));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_HANDLE,
            mublasLtMatmulAlgoGetIds(nullptr, MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_32F,
                                     MUSA_R_32F, MUSA_R_32F, MUSA_R_32F, 1, ids, &count));

  mublasLtMatmulAlgo_t algo;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulAlgoInit(h.h, MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_32F, MUSA_R_32F,
                                   MUSA_R_32F, MUSA_R_32F, 1, &algo));
  EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED,
            mublasLtMatmulAlgoInit(h.h, MUBLAS_COMPUTE_32I, MUSA_R_32F, MUSA_R_8I, MUSA_R_8I,
                                   MUSA_R_32I, MUSA_R_32I, 0, &algo));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulAlgoInit(h.h, MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_32F, MUSA_R_32F,
                                   MUSA_R_32F, MUSA_R_32F, 0, nullptr));
  ASSERT_LT_OK(mublasLtMatmulAlgoInit(h.h, MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_16F, MUSA_R_16F,
                                      MUSA_R_32F, MUSA_R_32F, 0, &algo));

  // Capabilities.
  size_t w = 0;
  int32_t i32 = -1;
  uint32_t u32 = 0;
  uint64_t u64 = 0;
  ASSERT_LT_OK(mublasLtMatmulAlgoCapGetAttribute(&algo, MUBLASLT_ALGO_CAP_STRIDED_BATCH_SUPPORT,
                                                 &i32, 4, &w));
  EXPECT_EQ(1, i32);
  ASSERT_LT_OK(
      mublasLtMatmulAlgoCapGetAttribute(&algo, MUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &i32, 4, &w));
  EXPECT_EQ(0, i32);
  ASSERT_LT_OK(
      mublasLtMatmulAlgoCapGetAttribute(&algo, MUBLASLT_ALGO_CAP_EPILOGUE_MASK, &u32, 4, &w));
  EXPECT_NE(0u, u32 & MUBLASLT_EPILOGUE_GELU_BIAS);
  EXPECT_NE(0u, u32 & MUBLASLT_EPILOGUE_RELU);
  ASSERT_LT_OK(
      mublasLtMatmulAlgoCapGetAttribute(&algo, MUBLASLT_ALGO_CAP_POINTER_MODE_MASK, &u32, 4, &w));
  EXPECT_EQ(31u, u32);
  ASSERT_LT_OK(mublasLtMatmulAlgoCapGetAttribute(&algo, MUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES,
                                                 &u32, 4, &w));
  EXPECT_EQ(2u, u32);
  ASSERT_LT_OK(mublasLtMatmulAlgoCapGetAttribute(&algo, MUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES,
                                                 &u32, 4, &w));
  EXPECT_EQ(4u, u32);
  ASSERT_LT_OK(mublasLtMatmulAlgoCapGetAttribute(&algo, MUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS,
                                                 &u64, 8, &w));
  EXPECT_EQ(MUBLASLT_NUMERICAL_IMPL_FLAGS_FMA | MUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32F |
                MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16F,
            u64);
  // Array attribute: size query, then a larger buffer gets one element.
  ASSERT_LT_OK(
      mublasLtMatmulAlgoCapGetAttribute(&algo, MUBLASLT_ALGO_CAP_TILE_IDS, nullptr, 0, &w));
  EXPECT_EQ(sizeof(uint32_t), w);
  uint32_t tiles[8];
  std::memset(tiles, 0xff, sizeof(tiles));
  ASSERT_LT_OK(mublasLtMatmulAlgoCapGetAttribute(&algo, MUBLASLT_ALGO_CAP_TILE_IDS, tiles,
                                                 sizeof(tiles), &w));
  EXPECT_EQ(sizeof(uint32_t), w);
  EXPECT_EQ(static_cast<uint32_t>(MUBLASLT_MATMUL_TILE_UNDEFINED), tiles[0]);
  EXPECT_EQ(0xffffffffu, tiles[1]);
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulAlgoCapGetAttribute(&algo, MUBLASLT_ALGO_CAP_TILE_IDS, tiles, 2, &w));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, mublasLtMatmulAlgoCapGetAttribute(
                                             &algo, MUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &u64, 8, &w));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulAlgoCapGetAttribute(
                &algo, static_cast<mublasLtMatmulAlgoCapAttributes_t>(3), &i32, 4, &w));

  // Configuration: only the defaults are accepted; the ID is read-only.
  int32_t splitk = 1;
  EXPECT_LT_OK(mublasLtMatmulAlgoConfigSetAttribute(&algo, MUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                                    sizeof(splitk)));
  splitk = 4;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulAlgoConfigSetAttribute(&algo, MUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                                 sizeof(splitk)));
  int32_t id = 0;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulAlgoConfigSetAttribute(&algo, MUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id)));
  uint32_t tile = 20;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulAlgoConfigSetAttribute(&algo, MUBLASLT_ALGO_CONFIG_TILE_ID, &tile, 4));
  uint16_t cluster = 0;
  EXPECT_LT_OK(mublasLtMatmulAlgoConfigSetAttribute(&algo, MUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID,
                                                    &cluster, sizeof(cluster)));
  EXPECT_EQ(
      MUBLAS_STATUS_INVALID_VALUE,
      mublasLtMatmulAlgoConfigSetAttribute(&algo, MUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &tile, 4));
  splitk = 0;
  ASSERT_LT_OK(
      mublasLtMatmulAlgoConfigGetAttribute(&algo, MUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, 4, &w));
  EXPECT_EQ(1, splitk);
  ASSERT_LT_OK(mublasLtMatmulAlgoConfigGetAttribute(&algo, MUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID,
                                                    nullptr, 0, &w));
  EXPECT_EQ(sizeof(uint16_t), w);

  // An algorithm the library did not make is refused everywhere.
  mublasLtMatmulAlgo_t junk;
  std::memset(&junk, 0, sizeof(junk));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, mublasLtMatmulAlgoCapGetAttribute(
                                             &junk, MUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &i32, 4, &w));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulAlgoConfigGetAttribute(&junk, MUBLASLT_ALGO_CONFIG_ID, &i32, 4, &w));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulAlgoConfigGetAttribute(nullptr, MUBLASLT_ALGO_CONFIG_ID, &i32, 4, &w));

  // AlgoCheck: the algo's types must match the problem.
  Problem p(MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_16F, MUSA_R_32F);
  mublasLtMatmulHeuristicResult_t res;
  ASSERT_LT_OK(mublasLtMatmulAlgoCheck(p.h.h, p.desc.d, p.a.l, p.b.l, p.c.l, p.d.l, &algo, &res));
  Problem q(MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_16F, MUSA_R_16F);
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulAlgoCheck(q.h.h, q.desc.d, q.a.l, q.b.l, q.c.l, q.d.l, &algo, &res));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulAlgoCheck(p.h.h, p.desc.d, p.a.l, p.b.l, p.c.l, p.d.l, &junk, &res));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmulAlgoCheck(p.h.h, p.desc.d, p.a.l, p.b.l, p.c.l, p.d.l, &algo, nullptr));
}

// Bad matmul input is refused before anything is enqueued; D is never written.
TEST(MatmulInvalid, RefusedWithoutWriting) {
  const int64_t m = 4, n = 3, k = 5;
  std::vector<float> a(m * k, 1), b(k * n, 1), d(m * n, -7);
  Handle h;
  Desc desc(MUBLAS_COMPUTE_32F, MUSA_R_32F);
  Layout la(MUSA_R_32F, m, k, m), lb(MUSA_R_32F, k, n, k), ld(MUSA_R_32F, m, n, m);
  const float alpha = 1, beta = 0;
  auto run = [&](mublasLtHandle_t hh, mublasLtMatmulDesc_t dd, const void* al, const void* A,
                 mublasLtMatrixLayout_t lA, const void* B, mublasLtMatrixLayout_t lB,
                 const void* be, void* D, mublasLtMatrixLayout_t lD,
                 const mublasLtMatmulAlgo_t* algo = nullptr, musaStream_t s = nullptr) {
    return mublasLtMatmul(hh, dd, al, A, lA, B, lB, be, D, lD, D, lD, algo, nullptr, 0, s);
  };
  EXPECT_EQ(MUBLAS_STATUS_INVALID_HANDLE,
            run(nullptr, desc.d, &alpha, a.data(), la.l, b.data(), lb.l, &beta, d.data(), ld.l));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            run(h.h, nullptr, &alpha, a.data(), la.l, b.data(), lb.l, &beta, d.data(), ld.l));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            run(h.h, desc.d, &alpha, a.data(), nullptr, b.data(), lb.l, &beta, d.data(), ld.l));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            run(h.h, desc.d, nullptr, a.data(), la.l, b.data(), lb.l, &beta, d.data(), ld.l));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            run(h.h, desc.d, &alpha, a.data(), la.l, b.data(), lb.l, nullptr, d.data(), ld.l));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            run(h.h, desc.d, &alpha, nullptr, la.l, b.data(), lb.l, &beta, d.data(), ld.l));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            run(h.h, desc.d, &alpha, a.data(), la.l, b.data(), lb.l, &beta, nullptr, ld.l));
  // Incompatible dimensions: B's rows are not A's columns; D the wrong shape; op(A) mismatched.
  Layout wrong_b(MUSA_R_32F, k + 1, n, k + 1), wrong_d(MUSA_R_32F, m, n + 1, m);
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            run(h.h, desc.d, &alpha, a.data(), la.l, b.data(), wrong_b.l, &beta, d.data(), ld.l));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            run(h.h, desc.d, &alpha, a.data(), la.l, b.data(), lb.l, &beta, d.data(), wrong_d.l));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_TRANSA, int32_t{MUBLAS_OP_T}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            run(h.h, desc.d, &alpha, a.data(), la.l, b.data(), lb.l, &beta, d.data(), ld.l));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_TRANSA, int32_t{MUBLAS_OP_N}));
  // Leading dimension below the rows (column-major) or the columns (row-major).
  Layout short_ld(MUSA_R_32F, m, k, m - 1);
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            run(h.h, desc.d, &alpha, a.data(), short_ld.l, b.data(), lb.l, &beta, d.data(), ld.l));
  Layout row_a(MUSA_R_32F, m, k, m);  // row-major needs ld >= k = 5
  ASSERT_LT_OK(row_a.set(MUBLASLT_MATRIX_LAYOUT_ORDER, int32_t{MUBLASLT_ORDER_ROW}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            run(h.h, desc.d, &alpha, a.data(), row_a.l, b.data(), lb.l, &beta, d.data(), ld.l));
  Layout neg_ld(MUSA_R_32F, m, k, -1);
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            run(h.h, desc.d, &alpha, a.data(), neg_ld.l, b.data(), lb.l, &beta, d.data(), ld.l));
  // Batch counts differ.
  Layout batched_a(MUSA_R_32F, m, k, m);
  ASSERT_LT_OK(batched_a.set(MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t{2}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            run(h.h, desc.d, &alpha, a.data(), batched_a.l, b.data(), lb.l, &beta, d.data(), ld.l));
  // Sizes beyond int32.
  Layout huge(MUSA_R_32F, uint64_t{1} << 31, k, int64_t{1} << 31);
  Layout huge_d(MUSA_R_32F, uint64_t{1} << 31, n, int64_t{1} << 31);
  EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED,
            run(h.h, desc.d, &alpha, a.data(), huge.l, b.data(), lb.l, &beta, d.data(), huge_d.l));
  // Unsupported types.
  Layout i8a(MUSA_R_8I, m, k, m), i8b(MUSA_R_8I, k, n, k);
  EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED,
            run(h.h, desc.d, &alpha, a.data(), i8a.l, b.data(), i8b.l, &beta, d.data(), ld.l));
  // A bias epilogue without a bias pointer.
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{MUBLASLT_EPILOGUE_RELU_BIAS}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            run(h.h, desc.d, &alpha, a.data(), la.l, b.data(), lb.l, &beta, d.data(), ld.l));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{MUBLASLT_EPILOGUE_DEFAULT}));
  // An unsupported bias type.
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{MUBLASLT_EPILOGUE_BIAS}));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t{MUSA_R_8I}));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(a.data())));
  EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED,
            run(h.h, desc.d, &alpha, a.data(), la.l, b.data(), lb.l, &beta, d.data(), ld.l));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{MUBLASLT_EPILOGUE_DEFAULT}));
  // A junk algo, or one for other types.
  mublasLtMatmulAlgo_t junk;
  std::memset(&junk, 0x3c, sizeof(junk));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            run(h.h, desc.d, &alpha, a.data(), la.l, b.data(), lb.l, &beta, d.data(), ld.l, &junk));
  mublasLtMatmulAlgo_t f64;
  ASSERT_LT_OK(mublasLtMatmulAlgoInit(h.h, MUBLAS_COMPUTE_64F, MUSA_R_64F, MUSA_R_64F, MUSA_R_64F,
                                      MUSA_R_64F, MUSA_R_64F, 0, &f64));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            run(h.h, desc.d, &alpha, a.data(), la.l, b.data(), lb.l, &beta, d.data(), ld.l, &f64));
  // In place with C and D layouts that differ.
  Layout ld_padded(MUSA_R_32F, m, n, m + 1);
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmul(h.h, desc.d, &alpha, a.data(), la.l, b.data(), lb.l, &beta, d.data(),
                           ld.l, d.data(), ld_padded.l, nullptr, nullptr, 0, nullptr));
  // A destroyed stream.
  musaStream_t dead = nullptr;
  ASSERT_MU_OK(musaStreamCreate(&dead));
  ASSERT_MU_OK(musaStreamDestroy(dead));
  const mublasStatus_t st = run(h.h, desc.d, &alpha, a.data(), la.l, b.data(), lb.l, &beta,
                                d.data(), ld.l, nullptr, dead);
  EXPECT_NE(MUBLAS_STATUS_SUCCESS, st);
  ASSERT_MU_OK(musaDeviceSynchronize());
  for (float x : d) EXPECT_EQ(-7, x);
  // The same call with valid arguments does write D (the checks above were the reason).
  ASSERT_LT_OK(run(h.h, desc.d, &alpha, a.data(), la.l, b.data(), lb.l, &beta, d.data(), ld.l));
  ASSERT_MU_OK(musaDeviceSynchronize());
  for (float x : d) EXPECT_EQ(5, x);
}

// The logger reports errors to a callback and to a file, per level/mask.
std::mutex g_log_mu;
std::vector<std::string> g_log;
void log_callback(int level, const char* fn, const char* msg) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_log.push_back(std::to_string(level) + "|" + fn + "|" + msg);
}

TEST(Logger, CallbackFileLevelsMask) {
  ASSERT_LT_OK(mublasLtLoggerSetCallback(log_callback));
  ASSERT_LT_OK(mublasLtLoggerSetLevel(1));
  Handle h;
  Desc desc(MUBLAS_COMPUTE_32F, MUSA_R_32F);
  Layout l(MUSA_R_32F, 2, 2, 2);
  float x[4] = {};
  const float one = 1;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmul(h.h, desc.d, nullptr, x, l.l, x, l.l, &one, x, l.l, x, l.l, nullptr,
                           nullptr, 0, nullptr));
  {
    std::lock_guard<std::mutex> lock(g_log_mu);
    ASSERT_EQ(1u, g_log.size());
    EXPECT_EQ(0u, g_log[0].rfind("1|mublasLtMatmul|MUBLAS_STATUS_INVALID_VALUE", 0)) << g_log[0];
    g_log.clear();
  }
  // API trace (level 5) of a successful matmul.
  ASSERT_LT_OK(mublasLtLoggerSetLevel(5));
  ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, &one, x, l.l, x, l.l, &one, x, l.l, x, l.l, nullptr,
                              nullptr, 0, nullptr));
  ASSERT_MU_OK(musaDeviceSynchronize());
  {
    std::lock_guard<std::mutex> lock(g_log_mu);
    ASSERT_EQ(1u, g_log.size());
    EXPECT_EQ("5|mublasLtMatmul|m=2 n=2 k=2 batch=1", g_log[0]);
    g_log.clear();
  }
  // Mask without the error bit: errors are not reported.
  ASSERT_LT_OK(mublasLtLoggerSetMask(16));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmul(h.h, desc.d, nullptr, x, l.l, x, l.l, &one, x, l.l, x, l.l, nullptr,
                           nullptr, 0, nullptr));
  {
    std::lock_guard<std::mutex> lock(g_log_mu);
    EXPECT_TRUE(g_log.empty());
  }
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, mublasLtLoggerSetLevel(6));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, mublasLtLoggerSetMask(-1));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, mublasLtLoggerOpenFile(nullptr));
  // A file.
  FILE* f = std::tmpfile();
  ASSERT_NE(nullptr, f);
  ASSERT_LT_OK(mublasLtLoggerSetCallback(nullptr));
  ASSERT_LT_OK(mublasLtLoggerSetFile(f));
  ASSERT_LT_OK(mublasLtLoggerSetLevel(1));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_HANDLE,
            mublasLtMatmul(nullptr, desc.d, &one, x, l.l, x, l.l, &one, x, l.l, x, l.l, nullptr,
                           nullptr, 0, nullptr));
  ASSERT_LT_OK(mublasLtLoggerSetFile(nullptr));
  std::rewind(f);
  char line[256] = {};
  ASSERT_NE(nullptr, std::fgets(line, sizeof(line), f));
  EXPECT_NE(nullptr, std::strstr(line, "MUBLAS_STATUS_INVALID_HANDLE")) << line;
  std::fclose(f);
  ASSERT_LT_OK(mublasLtLoggerSetLevel(0));
}

}  // namespace
