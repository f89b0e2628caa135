// A cuBLASLt application doing NVFP4 matmuls: A and B in CUDA_R_4F_E2M1 (two elements a byte, the
// first in the low nibble), one unsigned E4M3 factor per 16 K elements of each row of op(A) /
// column of op(B) (CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3, in cuBLASLt's 128 x 4 tiles), and the
// FP32 tensor-wide scale as alpha (the product of A's and B's global scales), TN, a bf16, fp16 or
// fp32 D; built against the CUDA 13 and CUDA 12 headers. Checked bit for bit against a host
// reference that decodes E2M1 and UE4M3 by their definitions:
//   D = round(alpha * sum_l (fa * a)(fb * b) + beta * C)
// with factors in 2^-1 .. 2^1 times 1, 1.25, 1.5 or 1.75, so every sum is exact in fp32 in any
// order (products are multiples of 2^-8 below 2^9, at most 96 of them); alpha and beta * C apply
// in fp32 (the scale type), and D rounds that to nearest, ties to even. Also: the layout
// reads its type back as CUDA_R_4F_E2M1, the heuristic offers an algorithm, and an FP4 D (NVFP4
// output) is refused as unsupported. Under the shim, the shim decodes the operands and the
// simulator's muBLASLt multiplies them (shim/cublasLt/block_scaled.cc).
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

using lt_blocks::tiled;
using lt_blocks::upload;

std::mt19937 rng(4);
int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAIL %s\n", what);
    ++failures;
  }
}

// E2M1 by definition: (-1)^s 2^(e - 1) (1 + m / 2), subnormal (e = 0) m / 2.
double e2m1_value(int nibble) {
  const int e = (nibble >> 1) & 3, m = nibble & 1;
  const double v = e == 0 ? m * 0.5 : std::ldexp(1.0 + m * 0.5, e - 1);
  return (nibble & 8) != 0 ? -v : v;
}

// UE4M3 by definition: 2^(e - 7) (1 + m / 8), subnormal 2^-6 m / 8.
double ue4m3_value(uint8_t code) {
  const int e = (code >> 3) & 15, m = code & 7;
  return e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
}

// x exact in float here; then to nearest, ties to even.
uint16_t bf16_round(double x) {
  const float f = static_cast<float>(x);
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof(u));
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// fp16 by search over the finite positive codes (ties to the even code); |x| < 65504 here.
uint16_t fp16_round(double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(x);
  auto value = [](int c) {
    const int e = c >> 10, m = c & 1023;
    return e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  };
  // Binary search for the first code with value >= a, then pick the nearer neighbour.
  int lo = 0, hi = 0x7bff;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (value(mid) < a)
      lo = mid + 1;
    else
      hi = mid;
  }
  int best = lo;
  if (lo > 0) {
    const double up = value(lo) - a, down = a - value(lo - 1);
    if (down < up || (down == up && (lo - 1) % 2 == 0)) best = lo - 1;
  }
  return static_cast<uint16_t>(sign | best);
}

// An FP4 operand stored K x outer (K innermost, ld = k), its nibbles and its tiled factors.
struct Fp4Operand {
  int outer, k, kb;
  std::vector<uint8_t> nibbles, packed, factors;
  Fp4Operand(int outer_, int k_) : outer(outer_), k(k_), kb((k_ + 15) / 16) {
    std::uniform_int_distribution<int> nib(0, 15), e(6, 8), m(0, 3);
    nibbles.resize(size_t(outer) * k);
    for (auto& x : nibbles) x = static_cast<uint8_t>(nib(rng));
    packed.assign(nibbles.size() / 2, 0);
    for (size_t i = 0; i < nibbles.size(); ++i)
      packed[i / 2] |= static_cast<uint8_t>(i % 2 == 0 ? nibbles[i] : nibbles[i] << 4);
    factors.assign(size_t((outer + 127) / 128) * ((kb + 3) / 4) * 512, 0x38);  // 1.0 padding
    for (int o = 0; o < outer; ++o)
      for (int q = 0; q < kb; ++q)
        factors[tiled(o, q, kb)] = static_cast<uint8_t>(e(rng) << 3 | m(rng) * 2);
  }
  double at(int o, int l) const {
    return e2m1_value(nibbles[size_t(o) * k + l]) * ue4m3_value(factors[tiled(o, l / 16, kb)]);
  }
};

struct Case {
  const char* name;
  cudaDataType_t d_type;
  int m, n, k;
  float alpha, beta;
};

size_t d_size(cudaDataType_t t) { return t == CUDA_R_32F ? 4 : 2; }

void run(cublasLtHandle_t handle, cudaStream_t stream, const Case& c) {
  std::printf("%s\n", c.name);
  const Fp4Operand a(c.m, c.k), b(c.n, c.k);
  const size_t es = d_size(c.d_type), d_bytes = size_t(c.m) * c.n * es;
  // C: small integers in D's type.
  std::vector<uint8_t> C(d_bytes);
  std::vector<double> c_values(size_t(c.m) * c.n);
  std::uniform_int_distribution<int> cv(-8, 8);
  for (size_t i = 0; i < c_values.size(); ++i) {
    c_values[i] = cv(rng);
    if (c.d_type == CUDA_R_32F) {
      const float f = static_cast<float>(c_values[i]);
      std::memcpy(C.data() + i * 4, &f, 4);
    } else {
      const uint16_t h =
          c.d_type == CUDA_R_16BF ? bf16_round(c_values[i]) : fp16_round(c_values[i]);
      std::memcpy(C.data() + i * 2, &h, 2);
    }
  }
  void* dA = upload(a.packed);
  void* dB = upload(b.packed);
  void* dFa = upload(a.factors);
  void* dFb = upload(b.factors);
  void* dC = upload(C);
  void* dD = upload(std::vector<uint8_t>(d_bytes, 0x5a));

  cublasLtMatmulDesc_t desc = nullptr;
  LT_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t opt = CUBLAS_OP_T, opn = CUBLAS_OP_N;
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opt, sizeof(opt)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opn, sizeof(opn)));
  const int32_t vec16 = CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &vec16,
                                          sizeof(vec16)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &vec16,
                                          sizeof(vec16)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &dFa,
                                          sizeof(dFa)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &dFb,
                                          sizeof(dFb)));
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  LT_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_4F_E2M1, c.k, c.m, c.k));
  LT_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_4F_E2M1, c.k, c.n, c.k));
  LT_CHECK(cublasLtMatrixLayoutCreate(&ld, c.d_type, c.m, c.n, c.m));
  uint32_t type_back = 0;
  LT_CHECK(cublasLtMatrixLayoutGetAttribute(la, CUBLASLT_MATRIX_LAYOUT_TYPE, &type_back,
                                            sizeof(type_back), nullptr));
  expect(type_back == CUDA_R_4F_E2M1, "an FP4 layout reads its type back");
  cublasLtMatmulPreference_t pref = nullptr;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  LT_CHECK(
      cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, ld, ld, pref, 1, &heuristic, &found));
  expect(found == 1, "the heuristic offers an algorithm");
  LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  LT_CHECK(cublasLtMatmul(handle, desc, &c.alpha, dA, la, dB, lb, &c.beta, dC, ld, dD, ld,
                          &heuristic.algo, nullptr, 0, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<uint8_t> D(d_bytes);
  CUDA_CHECK(cudaMemcpy(D.data(), dD, d_bytes, cudaMemcpyDeviceToHost));

  int bad = 0;
  for (int j = 0; j < c.n; ++j) {
    for (int i = 0; i < c.m; ++i) {
      double sum = 0;
      for (int l = 0; l < c.k; ++l) sum += a.at(i, l) * b.at(j, l);
      const size_t at = size_t(j) * c.m + i;
      // The sum is exact in fp32; alpha and beta apply in fp32 (cuBLASLt's scale type).
      const float sumf = static_cast<float>(sum);
      float xf = c.alpha * sumf;
      if (c.beta != 0.0f) xf = xf + c.beta * static_cast<float>(c_values[at]);
      const double x = xf;
      bool ok = true;
      if (c.d_type == CUDA_R_32F) {
        float got = 0;
        std::memcpy(&got, D.data() + at * 4, 4);
        ok = double(got) == x;
      } else {
        uint16_t got = 0;
        std::memcpy(&got, D.data() + at * 2, 2);
        ok = got == (c.d_type == CUDA_R_16BF ? bf16_round(x) : fp16_round(x));
      }
      if (!ok && bad++ < 3) std::printf("  D(%d, %d) differs from the reference %g\n", i, j, x);
    }
  }
  expect(bad == 0, "D matches the reference bit for bit");
  std::printf("  %d x %d x %d checked\n", c.m, c.n, c.k);

  // NVFP4 output (an FP4 D) is not emulated: refused, named.
  cublasLtMatrixLayout_t l4 = nullptr;
  LT_CHECK(cublasLtMatrixLayoutCreate(&l4, CUDA_R_4F_E2M1, c.m, c.n, c.m));
  expect(cublasLtMatmul(handle, desc, &c.alpha, dA, la, dB, lb, &c.beta, dC, ld, dD, l4, nullptr,
                        nullptr, 0, stream) == CUBLAS_STATUS_NOT_SUPPORTED,
         "an FP4 D is refused as unsupported");
  // A transform of FP4 matrices is not emulated either (MUSA has no FP4 type): refused.
  cublasLtMatrixTransformDesc_t tdesc = nullptr;
  LT_CHECK(cublasLtMatrixTransformDescCreate(&tdesc, CUDA_R_32F));
  const float zero = 0.0f;
  expect(cublasLtMatrixTransform(handle, tdesc, &c.alpha, dA, la, &zero, nullptr, nullptr, dA, la,
                                 stream) == CUBLAS_STATUS_NOT_SUPPORTED,
         "a transform of an FP4 matrix is refused as unsupported");
  LT_CHECK(cublasLtMatrixTransformDescDestroy(tdesc));
  for (auto* l : {la, lb, ld, l4}) LT_CHECK(cublasLtMatrixLayoutDestroy(l));
  LT_CHECK(cublasLtMatmulDescDestroy(desc));
  for (void* p : {dA, dB, dFa, dFb, dC, dD}) CUDA_CHECK(cudaFree(p));
}

}  // namespace

int main() {
  cublasLtHandle_t handle = nullptr;
  LT_CHECK(cublasLtCreate(&handle));
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // Fields: name; D's type; m, n, k; alpha (the global scale), beta.
  const Case cases[] = {
      // Two row tiles of A's factors (m > 128), 6 K blocks (a partial tile column).
      {"nvfp4 -> bf16, global scale 0.375", CUDA_R_16BF, 144, 40, 96, 0.375f, 0.0f},
      {"nvfp4 -> fp16, beta 1", CUDA_R_16F, 64, 24, 64, 0.5f, 1.0f},
      {"nvfp4 -> fp32, beta 2", CUDA_R_32F, 32, 136, 32, 1.0f, 2.0f},
  };
  for (const Case& c : cases) run(handle, stream, c);
  LT_CHECK(cublasLtDestroy(handle));
  CUDA_CHECK(cudaStreamDestroy(stream));
  if (failures != 0) {
    std::printf("FAIL cublaslt_nvfp4: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("cublaslt_nvfp4: all checks passed\n");
  return 0;
}
