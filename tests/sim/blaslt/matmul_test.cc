// mublasLtMatmul against a naive double-precision reference: every supported type combination,
// transposes, row/column orders, padded leading dimensions, strided batches, every epilogue,
// alpha/beta pointer modes, in-place C == D. Inputs are small multiples of 1/4, so the exact
// product is representable and results can be compared tightly.
#include "lt_test_util.h"

#include <atomic>
#include <string>
#include <thread>

namespace {

using namespace lt_test;

struct Case {
  std::string name;
  mublasComputeType_t compute = MUBLAS_COMPUTE_32F;
  musaDataType scale = MUSA_R_32F;
  musaDataType ab = MUSA_R_32F;  // A and B
  musaDataType cd = MUSA_R_32F;  // C and D
  int64_t m = 5, n = 7, k = 6;
  mublasOperation_t ta = MUBLAS_OP_N, tb = MUBLAS_OP_N;
  bool a_row = false, b_row = false, cd_row = false;
  int64_t pad = 0;  // extra leading dimension
  int batch = 1;
  bool broadcast_a = false;  // A's batch stride is 0
  double alpha = 1.5, beta = -0.5;
  mublasLtEpilogue_t epilogue = MUBLASLT_EPILOGUE_DEFAULT;
  int32_t bias_type = -1;  // -1: D's type
  mublasLtPointerMode_t mode = MUBLASLT_POINTER_MODE_HOST;
  bool in_place = false;      // C == D
  bool use_heuristic = true;  // pass the heuristic's algo (else NULL)
};

std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.name; }

bool has_bias(mublasLtEpilogue_t e) {
  return e == MUBLASLT_EPILOGUE_BIAS || e == MUBLASLT_EPILOGUE_RELU_BIAS ||
         e == MUBLASLT_EPILOGUE_GELU_BIAS;
}
bool has_relu(mublasLtEpilogue_t e) {
  return e == MUBLASLT_EPILOGUE_RELU || e == MUBLASLT_EPILOGUE_RELU_BIAS;
}
bool has_gelu(mublasLtEpilogue_t e) {
  return e == MUBLASLT_EPILOGUE_GELU || e == MUBLASLT_EPILOGUE_GELU_BIAS;
}

Matrix make_matrix(musaDataType t, int64_t rows, int64_t cols, bool row, int64_t pad, int batch,
                   bool broadcast) {
  Matrix mx;
  mx.type = t;
  mx.row = row;
  mx.rows = rows;
  mx.cols = cols;
  mx.ld = (row ? cols : rows) + pad;
  mx.batch = batch;
  // A gap of 3 elements between batch members, so an ignored stride shows.
  mx.stride = broadcast ? 0 : mx.ld * (row ? rows : cols) + 3;
  return mx;
}

// Expected-value check: for 32F/64F/16F outputs without GELU the reference is exact in float,
// so the result must be its correctly rounded value; otherwise a tolerance of the output type.
void check_value(musaDataType t, double got, double ref, bool gelu, const std::string& where) {
  if (!gelu && t == MUSA_R_16F) {
    const double want = static_cast<float>(static_cast<_Float16>(static_cast<float>(ref)));
    EXPECT_EQ(want, got) << where << " ref " << ref;
    return;
  }
  if (!gelu && (t == MUSA_R_32F || t == MUSA_R_64F)) {
    EXPECT_EQ(ref, got) << where;
    return;
  }
  double rtol = 1e-6, atol = 1e-6;
  if (t == MUSA_R_16F) rtol = atol = 1.0 / 1024;
  if (t == MUSA_R_16BF) rtol = atol = 1.0 / 128;
  if (t == MUSA_R_64F) rtol = atol = 1e-12;
  EXPECT_LE(std::fabs(got - ref), atol + rtol * std::fabs(ref))
      << where << " ref " << ref << " got " << got;
}

class MatmulTest : public ::testing::TestWithParam<Case> {};

TEST_P(MatmulTest, MatchesReference) {
  const Case& c = GetParam();
  const bool ta = c.ta != MUBLAS_OP_N, tb = c.tb != MUBLAS_OP_N;
  const Matrix A =
      make_matrix(c.ab, ta ? c.k : c.m, ta ? c.m : c.k, c.a_row, c.pad, c.batch, c.broadcast_a);
  const Matrix B =
      make_matrix(c.ab, tb ? c.n : c.k, tb ? c.k : c.n, c.b_row, c.pad, c.batch, false);
  const Matrix C = make_matrix(c.cd, c.m, c.n, c.cd_row, c.pad, c.batch, false);
  const Matrix D =
      make_matrix(c.cd, c.m, c.n, c.cd_row, c.pad + (c.in_place ? 0 : 1), c.batch, false);

  // Host values (batch-major, then column-major within a matrix, as pack() consumes them).
  std::vector<double> av = random_values(static_cast<size_t>(A.rows * A.cols * c.batch), 1);
  if (c.broadcast_a) {  // every batch member is the same matrix
    for (size_t i = static_cast<size_t>(A.rows * A.cols); i < av.size(); ++i) {
      av[i] = av[i % static_cast<size_t>(A.rows * A.cols)];
    }
  }
  const std::vector<double> bv = random_values(static_cast<size_t>(B.rows * B.cols * c.batch), 2);
  const std::vector<double> cv = random_values(static_cast<size_t>(C.rows * C.cols * c.batch), 3);
  const std::vector<double> biasv = random_values(static_cast<size_t>(c.m * c.batch), 4);
  std::vector<double> alphav = random_values(static_cast<size_t>(c.m * c.batch), 5);
  std::vector<double> betav = random_values(static_cast<size_t>(c.m), 6);

  DeviceBuffer dA(A.bytes()), dB(B.bytes()), dC(C.bytes()), dD(D.bytes());
  dA.upload(pack(A, av));
  dB.upload(pack(B, bv));
  dC.upload(pack(C, cv));
  if (!c.in_place) dD.upload(std::vector<uint8_t>(D.bytes(), kSentinel));

  Handle h;
  Desc desc(c.compute, c.scale);
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_TRANSA, int32_t{c.ta}));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_TRANSB, int32_t{c.tb}));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{c.epilogue}));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_POINTER_MODE, int32_t{c.mode}));
  const musaDataType bias_type = c.bias_type == -1 ? c.cd : static_cast<musaDataType>(c.bias_type);
  DeviceBuffer dBias(static_cast<size_t>(c.m * c.batch) * type_size(bias_type));
  if (has_bias(c.epilogue)) {
    std::vector<uint8_t> bytes(dBias.bytes());
    for (size_t i = 0; i < biasv.size(); ++i) {
      encode(biasv[i], bias_type, bytes.data() + i * type_size(bias_type));
    }
    dBias.upload(bytes);
    ASSERT_LT_OK(
        desc.set(MUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(dBias.get())));
    if (c.bias_type != -1) {
      ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, c.bias_type));
    }
    if (c.batch > 1) {
      ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, int64_t{c.m}));
    }
  }

  // alpha / beta in the scale type, on the host or the device as the pointer mode says.
  const size_t ss = type_size(c.scale);
  std::vector<uint8_t> alpha_bytes(ss), beta_bytes(ss);
  encode(c.alpha, c.scale, alpha_bytes.data());
  encode(c.beta, c.scale, beta_bytes.data());
  DeviceBuffer dAlpha, dBeta;
  const void* alpha = alpha_bytes.data();
  const void* beta = beta_bytes.data();
  const bool alpha_vec = c.mode == MUBLASLT_POINTER_MODE_DEVICE_VECTOR ||
                         c.mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO ||
                         c.mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST;
  if (c.mode == MUBLASLT_POINTER_MODE_DEVICE) {
    dAlpha.allocate(ss);
    dAlpha.upload(alpha_bytes);
    dBeta.allocate(ss);
    dBeta.upload(beta_bytes);
    alpha = dAlpha.get();
    beta = dBeta.get();
  }
  if (alpha_vec) {
    std::vector<uint8_t> bytes(alphav.size() * ss);
    for (size_t i = 0; i < alphav.size(); ++i) encode(alphav[i], c.scale, bytes.data() + i * ss);
    dAlpha.allocate(bytes.size());
    dAlpha.upload(bytes);
    alpha = dAlpha.get();
    if (c.batch > 1 && c.mode != MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO) {
      ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE, int64_t{c.m}));
    }
  }
  if (c.mode == MUBLASLT_POINTER_MODE_DEVICE_VECTOR) {
    std::vector<uint8_t> bytes(betav.size() * ss);
    for (size_t i = 0; i < betav.size(); ++i) encode(betav[i], c.scale, bytes.data() + i * ss);
    dBeta.allocate(bytes.size());
    dBeta.upload(bytes);
    beta = dBeta.get();
  }
  if (c.mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO) beta = nullptr;

  Layout la(A), lb(B), lc(C), ld(c.in_place ? C : D);
  const mublasLtMatmulAlgo_t* algo = nullptr;
  mublasLtMatmulHeuristicResult_t result[3] = {};
  if (c.use_heuristic) {
    Pref pref;
    int count = -1;
    ASSERT_LT_OK(mublasLtMatmulAlgoGetHeuristic(h.h, desc.d, la.l, lb.l, lc.l, ld.l, pref.p, 3,
                                                result, &count));
    ASSERT_EQ(1, count);
    ASSERT_EQ(MUBLAS_STATUS_SUCCESS, result[0].state);
    algo = &result[0].algo;
  }
  Stream s;
  void* dptr = c.in_place ? dC.get() : dD.get();
  ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, alpha, dA.get(), la.l, dB.get(), lb.l, beta, dC.get(),
                              lc.l, dptr, ld.l, algo, nullptr, 0, s.s));
  ASSERT_MU_OK(musaStreamSynchronize(s.s));

  const Matrix& Dm = c.in_place ? C : D;
  const std::vector<uint8_t> out = c.in_place ? dC.download() : dD.download();
  const std::vector<uint8_t> a_bytes = pack(A, av), b_bytes = pack(B, bv), c_bytes = pack(C, cv);
  std::vector<bool> touched(out.size(), false);
  const size_t es = type_size(c.cd);
  for (int b = 0; b < c.batch; ++b) {
    for (int64_t i = 0; i < c.m; ++i) {
      // The alpha vector has a batch stride except in BETA_ZERO mode (where it must be 0).
      const int64_t alpha_stride =
          c.mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO ? 0 : c.m;
      const double al = alpha_vec ? alphav[static_cast<size_t>(b * alpha_stride + i)] : c.alpha;
      double be = c.beta;
      if (c.mode == MUBLASLT_POINTER_MODE_DEVICE_VECTOR) be = betav[static_cast<size_t>(i)];
      if (c.mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO) be = 0;
      for (int64_t j = 0; j < c.n; ++j) {
        double acc = 0;
        for (int64_t l = 0; l < c.k; ++l) {
          const double x = ta ? value_at(A, a_bytes, b, l, i) : value_at(A, a_bytes, b, i, l);
          const double y = tb ? value_at(B, b_bytes, b, j, l) : value_at(B, b_bytes, b, l, j);
          acc += x * y;
        }
        double v = al * acc;
        if (be != 0) v += be * value_at(C, c_bytes, b, i, j);
        if (has_bias(c.epilogue)) v += biasv[static_cast<size_t>(b * c.m + i)];
        if (has_relu(c.epilogue)) v = v > 0 ? v : 0;
        if (has_gelu(c.epilogue)) v = ref_gelu(v);
        const int64_t off = Dm.offset(b, i, j);
        for (size_t x = 0; x < es; ++x) touched[static_cast<size_t>(off) * es + x] = true;
        check_value(
            c.cd, value_at(Dm, out, b, i, j), v, has_gelu(c.epilogue),
            "b=" + std::to_string(b) + " i=" + std::to_string(i) + " j=" + std::to_string(j));
      }
    }
  }
  // Bytes outside D's elements (padding, batch gaps) are never written.
  size_t stray = 0;
  for (size_t x = 0; x < out.size(); ++x) {
    if (!touched[x] && out[x] != kSentinel) ++stray;
  }
  EXPECT_EQ(0u, stray) << "bytes written outside D";
}

std::vector<Case> cases() {
  std::vector<Case> v;
  auto add = [&](Case c) { v.push_back(c); };
  // Types.
  add({"f32"});
  add({"f64", MUBLAS_COMPUTE_64F, MUSA_R_64F, MUSA_R_64F, MUSA_R_64F});
  add({"f64_pedantic", MUBLAS_COMPUTE_64F_PEDANTIC, MUSA_R_64F, MUSA_R_64F, MUSA_R_64F});
  add({"f16", MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_16F, MUSA_R_16F});
  add({"f16_out_f32", MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_16F, MUSA_R_32F});
  add({"bf16", MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_16BF, MUSA_R_16BF});
  add({"bf16_out_f32", MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_16BF, MUSA_R_32F});
  add({"f16_compute16", MUBLAS_COMPUTE_16F, MUSA_R_16F, MUSA_R_16F, MUSA_R_16F});
  add({"f32_fast_tf32", MUBLAS_COMPUTE_32F_FAST_TF32});
  add({"f16_fast_16f", MUBLAS_COMPUTE_32F_FAST_16F, MUSA_R_32F, MUSA_R_16F, MUSA_R_16F});
  // Transposes (OP_C is OP_T for real types), each type family.
  for (auto t : {MUSA_R_32F, MUSA_R_16F, MUSA_R_16BF, MUSA_R_64F}) {
    const auto ct = t == MUSA_R_64F ? MUBLAS_COMPUTE_64F : MUBLAS_COMPUTE_32F;
    const auto st = t == MUSA_R_64F ? MUSA_R_64F : MUSA_R_32F;
    const std::string tn = std::to_string(static_cast<int>(t));
    Case c{"tn_t" + tn, ct, st, t, t};
    c.ta = MUBLAS_OP_T;
    add(c);
    c.name = "nt_t" + tn;
    c.ta = MUBLAS_OP_N;
    c.tb = MUBLAS_OP_T;
    add(c);
    c.name = "tt_t" + tn;
    c.ta = MUBLAS_OP_T;
    add(c);
    c.name = "cc_t" + tn;
    c.ta = MUBLAS_OP_C;
    c.tb = MUBLAS_OP_C;
    add(c);
    // Row-major operands, alone and with transposes.
    c.name = "row_all_t" + tn;
    c.ta = c.tb = MUBLAS_OP_N;
    c.a_row = c.b_row = c.cd_row = true;
    add(c);
    c.name = "row_a_t_t" + tn;
    c.ta = MUBLAS_OP_T;
    c.b_row = c.cd_row = false;
    add(c);
    c.name = "row_b_t_t" + tn;
    c.ta = MUBLAS_OP_N;
    c.tb = MUBLAS_OP_T;
    c.a_row = false;
    c.b_row = true;
    c.cd_row = true;
    add(c);
    // Padded leading dimensions and strided batches.
    Case p{"pad_batch_t" + tn, ct, st, t, t};
    p.pad = 3;
    p.batch = 3;
    p.ta = MUBLAS_OP_T;
    add(p);
    p.name = "batch_broadcast_a_t" + tn;
    p.broadcast_a = true;
    p.cd_row = true;
    add(p);
  }
  // Shapes.
  Case s{"k1"};
  s.k = 1;
  add(s);
  s.name = "k0_is_beta_c";
  s.k = 0;
  add(s);
  s.name = "vector_n1";
  s.k = 9;
  s.n = 1;
  add(s);
  s.name = "larger_64x48x40";
  s.m = 64;
  s.n = 48;
  s.k = 40;
  s.ta = MUBLAS_OP_T;
  add(s);
  // Epilogues, each type family, with and without batches.
  for (auto e : {MUBLASLT_EPILOGUE_RELU, MUBLASLT_EPILOGUE_BIAS, MUBLASLT_EPILOGUE_RELU_BIAS,
                 MUBLASLT_EPILOGUE_GELU, MUBLASLT_EPILOGUE_GELU_BIAS}) {
    const std::string en = std::to_string(static_cast<unsigned>(e) >> 12);
    for (auto t : {MUSA_R_32F, MUSA_R_16F, MUSA_R_16BF, MUSA_R_64F}) {
      const auto ct = t == MUSA_R_64F ? MUBLAS_COMPUTE_64F : MUBLAS_COMPUTE_32F;
      const auto st = t == MUSA_R_64F ? MUSA_R_64F : MUSA_R_32F;
      Case c{"epilogue" + en + "_t" + std::to_string(static_cast<int>(t)), ct, st, t, t};
      c.epilogue = e;
      add(c);
      c.name += "_batch";
      c.batch = 2;
      c.tb = MUBLAS_OP_T;
      add(c);
    }
  }
  Case eb{"bias_f32_on_f16_output", MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_16F, MUSA_R_16F};
  eb.epilogue = MUBLASLT_EPILOGUE_RELU_BIAS;
  eb.bias_type = MUSA_R_32F;
  add(eb);
  Case ebf{"bias_bf16_on_f32_output", MUBLAS_COMPUTE_32F, MUSA_R_32F, MUSA_R_16BF, MUSA_R_32F};
  ebf.epilogue = MUBLASLT_EPILOGUE_GELU_BIAS;
  ebf.bias_type = MUSA_R_16BF;
  add(ebf);
  // Pointer modes.
  for (auto mode : {MUBLASLT_POINTER_MODE_DEVICE, MUBLASLT_POINTER_MODE_DEVICE_VECTOR,
                    MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO,
                    MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST}) {
    const std::string mn = std::to_string(static_cast<int>(mode));
    Case c{"pointer_mode" + mn};
    c.mode = mode;
    add(c);
    c.name += "_f64_batch";
    c.compute = MUBLAS_COMPUTE_64F;
    c.scale = c.ab = c.cd = MUSA_R_64F;
    c.batch = 2;
    add(c);
    c.name = "pointer_mode" + mn + "_f16_compute16";
    c.compute = MUBLAS_COMPUTE_16F;
    c.scale = c.ab = c.cd = MUSA_R_16F;
    c.batch = 1;
    add(c);
  }
  // Scalars.
  Case z{"beta_zero"};
  z.beta = 0;
  add(z);
  z.name = "alpha_zero";
  z.alpha = 0;
  z.beta = 2;
  add(z);
  // In place (C == D), with and without the heuristic's algo.
  Case ip{"in_place"};
  ip.in_place = true;
  add(ip);
  ip.name = "in_place_row_batch_no_algo";
  ip.cd_row = true;
  ip.batch = 2;
  ip.use_heuristic = false;
  add(ip);
  ip.name = "in_place_bf16_gelu_bias";
  ip.ab = ip.cd = MUSA_R_16BF;
  ip.epilogue = MUBLASLT_EPILOGUE_GELU_BIAS;
  add(ip);
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, MatmulTest, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

// beta == 0 never reads C: NaNs there do not reach D, and C may be NULL.
TEST(MatmulScalars, BetaZeroIgnoresC) {
  const int64_t m = 4, n = 3, k = 2;
  std::vector<float> a(m * k, 1.0f), b(k * n, 2.0f), c(m * n, std::nanf("")), d(m * n, -1.0f);
  DeviceBuffer dA(a.size() * 4), dB(b.size() * 4), dC(c.size() * 4), dD(d.size() * 4);
  ASSERT_MU_OK(musaMemcpy(dA.get(), a.data(), dA.bytes(), musaMemcpyHostToDevice));
  ASSERT_MU_OK(musaMemcpy(dB.get(), b.data(), dB.bytes(), musaMemcpyHostToDevice));
  ASSERT_MU_OK(musaMemcpy(dC.get(), c.data(), dC.bytes(), musaMemcpyHostToDevice));
  Handle h;
  Desc desc(MUBLAS_COMPUTE_32F, MUSA_R_32F);
  Layout la(MUSA_R_32F, m, k, m), lb(MUSA_R_32F, k, n, k), lc(MUSA_R_32F, m, n, m);
  const float alpha = 1.0f, beta = 0.0f;
  for (const void* cptr : {static_cast<const void*>(dC.get()), static_cast<const void*>(nullptr)}) {
    ASSERT_MU_OK(musaMemset(dD.get(), 0, dD.bytes()));
    ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, &alpha, dA.get(), la.l, dB.get(), lb.l, &beta, cptr,
                                lc.l, dD.get(), lc.l, nullptr, nullptr, 0, nullptr));
    ASSERT_MU_OK(musaMemcpy(d.data(), dD.get(), dD.bytes(), musaMemcpyDeviceToHost));
    for (float x : d) EXPECT_EQ(4.0f, x);
  }
  // With a non-zero beta, C must be given.
  const float one = 1.0f;
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasLtMatmul(h.h, desc.d, &alpha, dA.get(), la.l, dB.get(), lb.l, &one, nullptr, lc.l,
                           dD.get(), lc.l, nullptr, nullptr, 0, nullptr));
}

// Host-mode scalars are read when mublasLtMatmul is called, device-mode ones when it runs.
TEST(MatmulScalars, HostScalarsReadAtCallDeviceScalarsAtRun) {
  const int64_t n = 2;
  std::vector<float> ones(n * n, 1.0f);
  DeviceBuffer dA(16), dD(16), dAlpha(4), dBeta(4);
  ASSERT_MU_OK(musaMemcpy(dA.get(), ones.data(), 16, musaMemcpyHostToDevice));
  Handle h;
  Desc desc(MUBLAS_COMPUTE_32F, MUSA_R_32F);
  Layout l(MUSA_R_32F, n, n, n);
  Stream s;
  // Hold the stream so the matmul runs after the host values change.
  std::atomic<bool> go{false};
  auto wait = [](void* p) {
    while (!static_cast<std::atomic<bool>*>(p)->load()) std::this_thread::yield();
  };
  ASSERT_MU_OK(musaLaunchHostFunc(s.s, wait, &go));
  float alpha = 3.0f, beta = 0.0f;
  ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, &alpha, dA.get(), l.l, dA.get(), l.l, &beta, dD.get(),
                              l.l, dD.get(), l.l, nullptr, nullptr, 0, s.s));
  alpha = 100.0f;  // too late: the call copied 3
  go = true;
  ASSERT_MU_OK(musaStreamSynchronize(s.s));
  std::vector<float> d(n * n);
  ASSERT_MU_OK(musaMemcpy(d.data(), dD.get(), 16, musaMemcpyDeviceToHost));
  for (float x : d) EXPECT_EQ(6.0f, x);  // 3 * (1 * 1 + 1 * 1)

  int32_t mode = MUBLASLT_POINTER_MODE_DEVICE;
  ASSERT_LT_OK(mublasLtMatmulDescSetAttribute(desc.d, MUBLASLT_MATMUL_DESC_POINTER_MODE, &mode,
                                              sizeof(mode)));
  go = false;
  ASSERT_MU_OK(musaLaunchHostFunc(s.s, wait, &go));
  float* da = static_cast<float*>(dAlpha.get());
  float* db = static_cast<float*>(dBeta.get());
  *da = 1.0f;
  *db = 0.0f;
  ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, da, dA.get(), l.l, dA.get(), l.l, db, dD.get(), l.l,
                              dD.get(), l.l, nullptr, nullptr, 0, s.s));
  *da = 5.0f;  // the device value at run time counts
  go = true;
  ASSERT_MU_OK(musaStreamSynchronize(s.s));
  ASSERT_MU_OK(musaMemcpy(d.data(), dD.get(), 16, musaMemcpyDeviceToHost));
  for (float x : d) EXPECT_EQ(10.0f, x);
}

// m or n zero: nothing to do, success, nothing written.
TEST(MatmulShapes, EmptyOutputIsNoOp) {
  Handle h;
  Desc desc(MUBLAS_COMPUTE_32F, MUSA_R_32F);
  Layout la(MUSA_R_32F, 0, 4, 1), lb(MUSA_R_32F, 4, 3, 4), lc(MUSA_R_32F, 0, 3, 1);
  const float alpha = 1, beta = 0;
  float sentinel = 7;
  EXPECT_LT_OK(mublasLtMatmul(h.h, desc.d, &alpha, &sentinel, la.l, &sentinel, lb.l, &beta,
                              &sentinel, lc.l, &sentinel, lc.l, nullptr, nullptr, 0, nullptr));
  ASSERT_MU_OK(musaDeviceSynchronize());
  EXPECT_EQ(7, sentinel);
}

}  // namespace
