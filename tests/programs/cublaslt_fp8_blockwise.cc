// A cuBLASLt application doing DeepSeek-style block-scaled FP8 matmuls, the recipes PyTorch's
// blockwise torch._scaled_mm uses: A and B in CUDA_R_8F_E4M3 with FP32 scale factors per 128
// K elements of each row of op(A) / column of op(B) (CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F) or
// per 128 x 128 block (CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F), built against the CUDA 13 and
// CUDA 12 headers. VEC128_32F scale tensors are outer-dimension major: the factor of outer index o
// (a row of op(A) or column of op(B)) and K block q at q * ld + o, ld the outer count rounded up to
// a multiple of 4; the padding holds NaN here, so a factor read from the wrong place shows.
// BLK128x128_32F tensors are K-block major: the factor of outer block o / 128 and K block q at
// (o / 128) * kb + q, kb the number of K blocks (PyTorch's blockwise _scaled_mm hands its 128 x 128
// weight scales to cuBLASLt so: (K/128, N/128) with strides (1, K/128)). Checked bit for bit
// against a host reference:
//   D = round(sum_q alpha * sa(i, q) * sb(j, q) * sum_{l in block q} a(i, l) b(l, j))
// with inputs multiples of 1/8 no larger than 2 and factors in {0.5, 0.75, 1, 1.25, 1.5, 2}, so
// every partial sum, block product and sum of blocks is exact in fp32 in any order and the only
// rounding is D's (bf16 to nearest even; FP8 by search, ties to even, saturating). Also: the modes
// read back as set, and beta != 0 (which the shim does not emulate with these modes) is refused as
// unsupported. Under the shim the simulator's muBLASLt runs one FP8 matmul per K block
// (shim/cublasLt/block_scaled.cc).
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "check_cublaslt.h"
#include "lt_blocks.h"

namespace {

using lt_blocks::upload;

std::mt19937 rng(128);
int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAIL %s\n", what);
    ++failures;
  }
}

double e4m3_value(uint8_t code) {
  const int e = (code & 0x7f) >> 3, m = code & 7;
  const double sign = (code & 0x80) != 0 ? -1.0 : 1.0;
  if ((code & 0x7f) == 0x7f) return NAN;
  if (e == 0) return sign * std::ldexp(m, -9);
  return sign * std::ldexp(8 + m, e - 10);
}

uint8_t e4m3_round(double x) {  // nearest by search, ties to the even code, saturating
  if (std::isnan(x)) return 0x7f;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::fabs(x);
  uint8_t best = 0;
  for (int c = 1; c <= 0x7e; ++c) {
    const double err = std::fabs(e4m3_value(static_cast<uint8_t>(c)) - a);
    const double best_err = std::fabs(e4m3_value(best) - a);
    if (err < best_err || (err == best_err && c % 2 == 0)) best = static_cast<uint8_t>(c);
  }
  return static_cast<uint8_t>(sign | best);
}

uint16_t bf16_round(double x) {  // x exact in float here; then to nearest, ties to even
  const float f = static_cast<float>(x);
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof(u));
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

std::vector<uint8_t> random_e4m3(size_t n) {  // multiples of 1/8, |v| <= 2
  std::vector<uint8_t> v(n);
  std::uniform_int_distribution<int> code(0, 255);
  for (auto& x : v) {
    for (;;) {
      const auto c = static_cast<uint8_t>(code(rng));
      const double f = e4m3_value(c);
      if (std::isfinite(f) && std::fabs(f) <= 2.0 && f * 8 == std::floor(f * 8)) {
        x = c;
        break;
      }
    }
  }
  return v;
}

enum Mode { kScalar, kVec128, kBlk128 };

// An operand's scale tensor: `outer` rows of op(A) (columns of op(B)), k elements each.
struct Scales {
  Mode mode;
  int outer, kb, ld;
  std::vector<float> v;
  Scales(Mode m, int outer_, int k) : mode(m), outer(outer_), kb((k + 127) / 128) {
    const int count = m == kBlk128 ? (outer + 127) / 128 : outer;
    ld = m == kBlk128 ? kb : (count + 3) / 4 * 4;  // K-block major / outer major
    static const float kValues[] = {0.5f, 0.75f, 1.0f, 1.25f, 1.5f, 2.0f};
    std::uniform_int_distribution<int> pick(0, 5);
    if (m == kScalar) {
      v = {kValues[pick(rng)]};
      return;
    }
    v.assign(m == kBlk128 ? size_t(count) * kb : size_t(ld) * kb, NAN);
    for (int q = 0; q < kb; ++q)
      for (int o = 0; o < count; ++o) v[index(o, q)] = kValues[pick(rng)];
  }
  // Where the factor of outer index (or block) o and K block q lies.
  size_t index(int o, int q) const {
    return mode == kBlk128 ? size_t(o) * ld + q : size_t(q) * ld + o;
  }
  double at(int o, int l) const {
    if (mode == kScalar) return v[0];
    return v[index(mode == kBlk128 ? o / 128 : o, l / 128)];
  }
  int32_t cublas_mode() const {
    return mode == kScalar   ? CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F
           : mode == kVec128 ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F
                             : CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
  }
};

struct Case {
  const char* name;
  Mode a_mode, b_mode;
  cudaDataType_t d_type;
  int m, n, k;
  float alpha, scale_d;  // scale_d 0: unset
};

size_t d_size(cudaDataType_t t) { return t == CUDA_R_32F ? 4 : t == CUDA_R_16BF ? 2 : 1; }

void run(cublasLtHandle_t handle, cudaStream_t stream, const Case& c) {
  std::printf("%s\n", c.name);
  // TN: A stored k x m, B stored k x n.
  const std::vector<uint8_t> A = random_e4m3(size_t(c.k) * c.m), B = random_e4m3(size_t(c.k) * c.n);
  const Scales sa(c.a_mode, c.m, c.k), sb(c.b_mode, c.n, c.k);
  const size_t es = d_size(c.d_type), d_bytes = size_t(c.m) * c.n * es;
  void* dA = upload(A);
  void* dB = upload(B);
  void* dSa = upload(sa.v);
  void* dSb = upload(sb.v);
  void* dD = upload(std::vector<uint8_t>(d_bytes, 0x5a));
  void* dScaleD = upload(std::vector<float>{c.scale_d});
  void* dAmax = upload(std::vector<float>{-1.0f});

  cublasLtMatmulDesc_t desc = nullptr;
  LT_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t opt = CUBLAS_OP_T, opn = CUBLAS_OP_N;
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opt, sizeof(opt)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opn, sizeof(opn)));
  const int32_t am = sa.cublas_mode(), bm = sb.cublas_mode();
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &dSa,
                                          sizeof(dSa)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &dSb,
                                          sizeof(dSb)));
  LT_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &am, sizeof(am)));
  LT_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &bm, sizeof(bm)));
  const bool fp8_d = c.d_type == CUDA_R_8F_E4M3;
  if (fp8_d) {
    if (c.scale_d != 0.0f)
      LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &dScaleD,
                                              sizeof(dScaleD)));
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, &dAmax,
                                            sizeof(dAmax)));
  }
  int32_t back[2] = {-1, -1};
  LT_CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &back[0],
                                          sizeof(back[0]), nullptr));
  LT_CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &back[1],
                                          sizeof(back[1]), nullptr));
  expect(back[0] == am && back[1] == bm, "the scale modes read back as set");

  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  LT_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, c.k, c.m, c.k));
  LT_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, c.k, c.n, c.k));
  LT_CHECK(cublasLtMatrixLayoutCreate(&ld, c.d_type, c.m, c.n, c.m));
  // C (unread: beta is 0) of D's type, bf16 for an FP8 D (cuBLASLt has no FP8 C).
  cublasLtMatrixLayout_t lc = nullptr;
  LT_CHECK(cublasLtMatrixLayoutCreate(&lc, c.d_type == CUDA_R_8F_E4M3 ? CUDA_R_16BF : c.d_type, c.m,
                                      c.n, c.m));
  const float beta = 0.0f;
  // As PyTorch does: the heuristic's first algorithm, then the matmul with it.
  cublasLtMatmulPreference_t pref = nullptr;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  LT_CHECK(
      cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, lc, ld, pref, 1, &heuristic, &found));
  expect(found == 1, "the heuristic offers an algorithm");
  LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  LT_CHECK(cublasLtMatmul(handle, desc, &c.alpha, dA, la, dB, lb, &beta, dD, lc, dD, ld,
                          &heuristic.algo, nullptr, 0, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<uint8_t> D(d_bytes);
  float amax_back = 0;
  CUDA_CHECK(cudaMemcpy(D.data(), dD, d_bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&amax_back, dAmax, sizeof(float), cudaMemcpyDeviceToHost));

  int bad = 0;
  double amax = 0;
  for (int j = 0; j < c.n; ++j) {
    for (int i = 0; i < c.m; ++i) {
      double x = 0;
      for (int q = 0; q * 128 < c.k; ++q) {
        double t = 0;
        for (int l = q * 128; l < c.k && l < q * 128 + 128; ++l)
          t += e4m3_value(A[size_t(i) * c.k + l]) * e4m3_value(B[size_t(j) * c.k + l]);
        x += double(c.alpha) * sa.at(i, q * 128) * sb.at(j, q * 128) * t;
      }
      amax = std::fmax(amax, std::fabs(x));
      const size_t at = size_t(j) * c.m + i;
      bool ok = true;
      if (c.d_type == CUDA_R_32F) {
        float got = 0;
        std::memcpy(&got, D.data() + at * 4, 4);
        ok = got == static_cast<float>(x) && double(static_cast<float>(x)) == x;
      } else if (c.d_type == CUDA_R_16BF) {
        uint16_t got = 0;
        std::memcpy(&got, D.data() + at * 2, 2);
        ok = got == bf16_round(x);
      } else {
        const double sd = c.scale_d != 0.0f ? c.scale_d : 1.0;
        ok = D[at] == e4m3_round(sd * x);
      }
      if (!ok && bad++ < 3) std::printf("  D(%d, %d) differs from the reference %g\n", i, j, x);
    }
  }
  expect(bad == 0, "D matches the reference bit for bit");
  if (fp8_d) expect(double(amax_back) == amax, "AMAX_D is the largest |x| over the whole sum");
  std::printf("  %d x %d x %d (%d K blocks) checked\n", c.m, c.n, c.k, (c.k + 127) / 128);

  // beta != 0 is not emulated with these modes: refused, named.
  const float one = 1.0f;
  expect(cublasLtMatmul(handle, desc, &c.alpha, dA, la, dB, lb, &one, dD, lc, dD, ld, nullptr,
                        nullptr, 0, stream) == CUBLAS_STATUS_NOT_SUPPORTED,
         "beta != 0 with block scaling is refused as unsupported");

  for (auto* l : {la, lb, lc, ld}) LT_CHECK(cublasLtMatrixLayoutDestroy(l));
  LT_CHECK(cublasLtMatmulDescDestroy(desc));
  for (void* p : {dA, dB, dSa, dSb, dD, dScaleD, dAmax}) CUDA_CHECK(cudaFree(p));
}

}  // namespace

int main() {
  cublasLtHandle_t handle = nullptr;
  LT_CHECK(cublasLtCreate(&handle));
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // Fields: name; A's mode, B's mode; D's type; m, n, k; alpha, D scale (0: unset).
  const Case cases[] = {
      // PyTorch's DeepSeek recipe: activations 1 x 128, weights 128 x 128; two row blocks of B's
      // scales, a short last K block, m not a multiple of 4 (padded scale rows).
      {"e4m3: A VEC128_32F, B BLK128x128_32F -> bf16", kVec128, kBlk128, CUDA_R_16BF, 202, 136, 320,
       1.0f, 0.0f},
      {"e4m3: A and B VEC128_32F -> fp32, alpha 0.5", kVec128, kVec128, CUDA_R_32F, 64, 48, 256,
       0.5f, 0.0f},
      {"e4m3: A BLK128x128_32F, B scalar -> e4m3 with a D scale and AMAX_D", kBlk128, kScalar,
       CUDA_R_8F_E4M3, 144, 32, 384, 1.0f, 0.25f},
  };
  for (const Case& c : cases) run(handle, stream, c);
  LT_CHECK(cublasLtDestroy(handle));
  CUDA_CHECK(cudaStreamDestroy(stream));
  if (failures != 0) {
    std::printf("FAIL cublaslt_fp8_blockwise: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("cublaslt_fp8_blockwise: all checks passed\n");
  return 0;
}
