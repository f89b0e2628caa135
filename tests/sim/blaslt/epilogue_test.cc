// The auxiliary-output and gradient epilogues against a naive reference: RELU_AUX(_BIAS) bit
// masks, GELU_AUX(_BIAS) inputs, DRELU/DGELU (+ BGRAD) reading them, BGRADA/BGRADB; their
// argument checks.
#include "lt_test_util.h"

#include <string>

namespace {

using namespace lt_test;

double ref_gelu_grad(double x) {
  const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
  const double t = std::tanh(k * (x + c * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x);
}

struct ECase {
  std::string name;
  mublasLtEpilogue_t epilogue;
  musaDataType type;  // A, B, C, D
  int32_t aux_type;   // -1: D's
  bool ta, tb;
  int batch;
};

std::ostream& operator<<(std::ostream& os, const ECase& c) { return os << c.name; }

class AuxEpilogueTest : public ::testing::TestWithParam<ECase> {};

// Tolerance of a value stored as `t` (relative + absolute).
double tol(musaDataType t) {
  switch (t) {
    case MUSA_R_16F:
      return 1.0 / 512;
    case MUSA_R_16BF:
      return 1.0 / 64;
    case MUSA_R_64F:
      return 1e-12;
    default:
      return 1e-5;
  }
}

TEST_P(AuxEpilogueTest, MatchesReference) {
  const ECase& e = GetParam();
  const int64_t m = 6, n = 5, k = 4, batch = e.batch;
  const bool f64 = e.type == MUSA_R_64F;
  const musaDataType aux_type = e.aux_type == -1 ? e.type : static_cast<musaDataType>(e.aux_type);
  const musaDataType bias_type = e.type;
  const uint32_t ev = e.epilogue;
  const bool bias_in =
      ev == MUBLASLT_EPILOGUE_RELU_AUX_BIAS || ev == MUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  const bool relu_mask = ev == MUBLASLT_EPILOGUE_RELU_AUX ||
                         ev == MUBLASLT_EPILOGUE_RELU_AUX_BIAS || ev == MUBLASLT_EPILOGUE_DRELU ||
                         ev == MUBLASLT_EPILOGUE_DRELU_BGRAD;
  const bool gelu_aux = ev == MUBLASLT_EPILOGUE_GELU_AUX || ev == MUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  const bool dgelu = ev == MUBLASLT_EPILOGUE_DGELU || ev == MUBLASLT_EPILOGUE_DGELU_BGRAD;
  const bool drelu = ev == MUBLASLT_EPILOGUE_DRELU || ev == MUBLASLT_EPILOGUE_DRELU_BGRAD;
  const bool bgrad = ev == MUBLASLT_EPILOGUE_DRELU_BGRAD || ev == MUBLASLT_EPILOGUE_DGELU_BGRAD;
  const bool bgrada = ev == MUBLASLT_EPILOGUE_BGRADA, bgradb = ev == MUBLASLT_EPILOGUE_BGRADB;

  Matrix A{e.type, false, e.ta ? k : m, e.ta ? m : k, 0, 0, static_cast<int>(batch)};
  A.ld = A.rows + 1;
  A.stride = A.ld * A.cols;
  Matrix B{e.type, false, e.tb ? n : k, e.tb ? k : n, 0, 0, static_cast<int>(batch)};
  B.ld = B.rows;
  B.stride = B.ld * B.cols + 2;
  Matrix C{e.type, false, m, n, m, m * n, static_cast<int>(batch)};
  const auto av = random_values(static_cast<size_t>(m * k * batch), 21);
  const auto bv = random_values(static_cast<size_t>(k * n * batch), 22);
  const auto cv = random_values(static_cast<size_t>(m * n * batch), 23);
  const auto biasv = random_values(static_cast<size_t>(m * batch), 24);
  const auto auxv = random_values(static_cast<size_t>(m * n * batch), 25);  // DGELU input
  DeviceBuffer dA(A.bytes()), dB(B.bytes()), dC(C.bytes()), dD(C.bytes());
  const auto a_bytes = pack(A, av), b_bytes = pack(B, bv), c_bytes = pack(C, cv);
  dA.upload(a_bytes);
  dB.upload(b_bytes);
  dC.upload(c_bytes);

  Handle h;
  Desc desc(f64 ? MUBLAS_COMPUTE_64F : MUBLAS_COMPUTE_32F, f64 ? MUSA_R_64F : MUSA_R_32F);
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{ev}));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_TRANSA, int32_t{e.ta ? MUBLAS_OP_T : MUBLAS_OP_N}));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_TRANSB, int32_t{e.tb ? MUBLAS_OP_T : MUBLAS_OP_N}));

  // Bias: input, or a gradient output (length m, or n for BGRADB), batch stride + 3.
  const int64_t bias_len = bgradb ? n : m, bias_stride = bias_len + 3;
  const size_t bes = type_size(bias_type);
  std::vector<uint8_t> bias_bytes(static_cast<size_t>(bias_stride * batch) * bes, kSentinel);
  if (bias_in) {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < m; ++i)
        encode(biasv[static_cast<size_t>(b * m + i)], bias_type,
               bias_bytes.data() + static_cast<size_t>(b * bias_stride + i) * bes);
  }
  DeviceBuffer dBias(bias_bytes.size());
  dBias.upload(bias_bytes);
  if (bias_in || bgrad || bgrada || bgradb) {
    ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_BIAS_POINTER, dBias.get()));
    ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, bias_stride));
  }

  // Aux: a GELU matrix (ld 8, batch stride 64 elements) or a ReLU mask (ld 128 bits, batch
  // stride 1024 bits).
  const int64_t aux_ld = relu_mask ? 128 : 8, aux_stride = relu_mask ? 1024 : 64;
  const size_t aux_bytes_n = relu_mask
                                 ? static_cast<size_t>(aux_stride * batch / 8)
                                 : static_cast<size_t>(aux_stride * batch) * type_size(aux_type);
  std::vector<uint8_t> aux_in(aux_bytes_n);
  for (size_t i = 0; i < aux_in.size(); ++i) aux_in[i] = static_cast<uint8_t>(i * 37 + 11);
  if (dgelu) {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i)
          encode(auxv[static_cast<size_t>((b * n + j) * m + i)], aux_type,
                 aux_in.data() +
                     static_cast<size_t>(b * aux_stride + j * aux_ld + i) * type_size(aux_type));
  }
  DeviceBuffer dAux(aux_in.size());
  dAux.upload(aux_in);
  if (relu_mask || gelu_aux || dgelu) {
    ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, dAux.get()));
    ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, aux_ld));
    ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, aux_stride));
    if (e.aux_type != -1) {
      ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, e.aux_type));
    }
  }

  const double alpha = 1.25, beta = -0.75;
  std::vector<uint8_t> al(type_size(f64 ? MUSA_R_64F : MUSA_R_32F)), be(al.size());
  encode(alpha, f64 ? MUSA_R_64F : MUSA_R_32F, al.data());
  encode(beta, f64 ? MUSA_R_64F : MUSA_R_32F, be.data());
  Layout la(A), lb(B), lc(C);
  Stream s;
  ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, al.data(), dA.get(), la.l, dB.get(), lb.l, be.data(),
                              dC.get(), lc.l, dD.get(), lc.l, nullptr, nullptr, 0, s.s));
  ASSERT_MU_OK(musaStreamSynchronize(s.s));
  const auto out = dD.download(), bias_out = dBias.download(), aux_out = dAux.download();

  std::vector<uint8_t> aux_touched(aux_out.size() * 8, 0);  // per bit (mask) or byte
  std::vector<uint8_t> bias_touched(bias_out.size(), 0);
  for (int b = 0; b < batch; ++b) {
    std::vector<double> rowsum(static_cast<size_t>(m), 0.0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t l = 0; l < k; ++l) {
          acc += (e.ta ? value_at(A, a_bytes, b, l, i) : value_at(A, a_bytes, b, i, l)) *
                 (e.tb ? value_at(B, b_bytes, b, j, l) : value_at(B, b_bytes, b, l, j));
        }
        double x = alpha * acc + beta * value_at(C, c_bytes, b, i, j);
        if (bias_in) x += biasv[static_cast<size_t>(b * m + i)];
        const int64_t aidx = b * aux_stride + j * aux_ld + i;
        const std::string where =
            "b=" + std::to_string(b) + " i=" + std::to_string(i) + " j=" + std::to_string(j);
        double want = x;
        if (relu_mask) {
          const bool bit = (aux_out[static_cast<size_t>(aidx / 8)] >> (aidx % 8)) & 1;
          const bool bit_in = (aux_in[static_cast<size_t>(aidx / 8)] >> (aidx % 8)) & 1;
          aux_touched[static_cast<size_t>(aidx)] = 1;
          if (drelu) {
            EXPECT_EQ(bit_in, bit) << where << " (the mask is input)";
            want = bit_in ? x : 0.0;
          } else {
            EXPECT_EQ(x > 0, bit) << where;
            want = x > 0 ? x : 0.0;
          }
        }
        const size_t aes = type_size(aux_type);
        if (gelu_aux) {
          const double stored = decode(aux_type, aux_out.data() + aidx * aes);
          EXPECT_NEAR(x, stored, tol(aux_type) * (1 + std::fabs(x))) << where << " aux";
          for (size_t q = 0; q < aes; ++q) aux_touched[aidx * aes + q] = 1;
          want = ref_gelu(x);
        }
        if (dgelu) {
          const double in = auxv[static_cast<size_t>((b * n + j) * m + i)];
          want = x * ref_gelu_grad(in);
        }
        rowsum[static_cast<size_t>(i)] += want;
        const double got = value_at(C, out, b, i, j);
        EXPECT_NEAR(want, got, tol(e.type) * (1 + std::fabs(want))) << where;
      }
    }
    // Bias gradients.
    auto bias_value = [&](int64_t i) {
      const size_t off = static_cast<size_t>(b * bias_stride + i) * bes;
      for (size_t q = 0; q < bes; ++q) bias_touched[off + q] = 1;
      return decode(bias_type, bias_out.data() + off);
    };
    for (int64_t i = 0; i < bias_len && (bgrad || bgrada || bgradb); ++i) {
      double want = 0;
      if (bgrad) want = rowsum[static_cast<size_t>(i)];
      for (int64_t l = 0; l < k && bgrada; ++l) {
        want += e.ta ? value_at(A, a_bytes, b, l, i) : value_at(A, a_bytes, b, i, l);
      }
      for (int64_t l = 0; l < k && bgradb; ++l) {
        want += e.tb ? value_at(B, b_bytes, b, i, l) : value_at(B, b_bytes, b, l, i);
      }
      EXPECT_NEAR(want, bias_value(i), tol(bias_type) * (1 + std::fabs(want)))
          << "bias grad b=" << b << " i=" << i;
    }
  }
  // Nothing outside the outputs changed: aux bits/bytes and bias elements.
  size_t stray_aux = 0, stray_bias = 0;
  for (size_t q = 0; q < aux_out.size(); ++q) {
    for (int bit = 0; bit < 8; ++bit) {
      const bool touched =
          relu_mask ? aux_touched[q * 8 + static_cast<size_t>(bit)] != 0 : aux_touched[q] != 0;
      if (!touched && ((aux_out[q] ^ aux_in[q]) >> bit & 1)) ++stray_aux;
    }
  }
  for (size_t q = 0; q < bias_out.size(); ++q) {
    if (!bias_touched[q] && bias_out[q] != bias_bytes[q]) ++stray_bias;
  }
  EXPECT_EQ(0u, stray_aux);
  EXPECT_EQ(0u, stray_bias);
}

std::vector<ECase> ecases() {
  std::vector<ECase> v;
  const struct {
    mublasLtEpilogue_t e;
    const char* name;
  } epilogues[] = {
      {MUBLASLT_EPILOGUE_RELU_AUX, "relu_aux"}, {MUBLASLT_EPILOGUE_RELU_AUX_BIAS, "relu_aux_bias"},
      {MUBLASLT_EPILOGUE_DRELU, "drelu"},       {MUBLASLT_EPILOGUE_DRELU_BGRAD, "drelu_bgrad"},
      {MUBLASLT_EPILOGUE_GELU_AUX, "gelu_aux"}, {MUBLASLT_EPILOGUE_GELU_AUX_BIAS, "gelu_aux_bias"},
      {MUBLASLT_EPILOGUE_DGELU, "dgelu"},       {MUBLASLT_EPILOGUE_DGELU_BGRAD, "dgelu_bgrad"},
      {MUBLASLT_EPILOGUE_BGRADA, "bgrada"},     {MUBLASLT_EPILOGUE_BGRADB, "bgradb"},
  };
  const struct {
    musaDataType t;
    const char* name;
  } types[] = {
      {MUSA_R_32F, "f32"}, {MUSA_R_16F, "f16"}, {MUSA_R_16BF, "bf16"}, {MUSA_R_64F, "f64"}};
  for (const auto& e : epilogues) {
    for (const auto& t : types) {
      v.push_back({std::string(e.name) + "_" + t.name, e.e, t.t, -1, false, false, 1});
      v.push_back({std::string(e.name) + "_" + t.name + "_tt_batch", e.e, t.t, -1, true, true, 2});
    }
  }
  v.push_back({"gelu_aux_f16_aux_f32", MUBLASLT_EPILOGUE_GELU_AUX_BIAS, MUSA_R_16F, MUSA_R_32F,
               false, true, 2});
  v.push_back({"dgelu_bf16_aux_f32", MUBLASLT_EPILOGUE_DGELU_BGRAD, MUSA_R_16BF, MUSA_R_32F, true,
               false, 2});
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, AuxEpilogueTest, ::testing::ValuesIn(ecases()),
                         [](const ::testing::TestParamInfo<ECase>& i) { return i.param.name; });

TEST(AuxEpilogue, ArgumentChecks) {
  const int64_t m = 4, n = 3, k = 2;
  std::vector<float> a(m * k, 1), b(k * n, 1), d(m * n, -2), bias(m), aux(64);
  Handle h;
  Desc desc(MUBLAS_COMPUTE_32F, MUSA_R_32F);
  Layout la(MUSA_R_32F, m, k, m), lb(MUSA_R_32F, k, n, k), ld(MUSA_R_32F, m, n, m);
  const float one = 1, zero = 0;
  auto run = [&] {
    return mublasLtMatmul(h.h, desc.d, &one, a.data(), la.l, b.data(), lb.l, &zero, d.data(), ld.l,
                          d.data(), ld.l, nullptr, nullptr, 0, nullptr);
  };
  // GELU aux: pointer required; ld >= m and a multiple of 8.
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{MUBLASLT_EPILOGUE_GELU_AUX}));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t{8}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, run());  // no aux pointer
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, static_cast<void*>(aux.data())));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t{4}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, run());  // not a multiple of 8
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t{8}));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, int32_t{MUSA_R_8I}));
  EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, run());
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, int32_t{-1}));
  // ReLU mask: ld a multiple of 128 bits.
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{MUBLASLT_EPILOGUE_RELU_AUX}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, run());
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t{128}));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, int64_t{64}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, run());  // stride not a multiple of 128
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, int64_t{0}));
  // Bias gradients need the bias pointer (the output).
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{MUBLASLT_EPILOGUE_DRELU_BGRAD}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, run());
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{MUBLASLT_EPILOGUE_BGRADA}));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, run());
  ASSERT_MU_OK(musaDeviceSynchronize());
  for (float x : d) EXPECT_EQ(-2, x);
  // Once given, it runs: bias = row sums of A = k.
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<void*>(bias.data())));
  ASSERT_LT_OK(run());
  ASSERT_MU_OK(musaDeviceSynchronize());
  for (float x : bias) EXPECT_EQ(static_cast<float>(k), x);
  for (float x : d) EXPECT_EQ(static_cast<float>(k), x);
}

// BGRADB with an empty D (m = 0) still writes its n sums.
TEST(AuxEpilogue, BiasGradientOfEmptyOutput) {
  const int64_t m = 0, n = 3, k = 2;
  std::vector<float> b = {1, 2, 3, 4, 5, 6}, bias(n, -1);
  float dummy = 0;
  Handle h;
  Desc desc(MUBLAS_COMPUTE_32F, MUSA_R_32F);
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{MUBLASLT_EPILOGUE_BGRADB}));
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<void*>(bias.data())));
  Layout la(MUSA_R_32F, m, k, 1), lb(MUSA_R_32F, k, n, k), ld(MUSA_R_32F, m, n, 1);
  const float one = 1, zero = 0;
  ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, &one, &dummy, la.l, b.data(), lb.l, &zero, &dummy, ld.l,
                              &dummy, ld.l, nullptr, nullptr, 0, nullptr));
  ASSERT_MU_OK(musaDeviceSynchronize());
  EXPECT_EQ((std::vector<float>{3, 7, 11}), bias);
}

}  // namespace
