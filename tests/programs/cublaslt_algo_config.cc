// A cuBLASLt application that runs preset algorithm configurations, written from NVIDIA's cuBLASLt
// documentation: an algorithm from cublasLtMatmulAlgoInit (the first id cublasLtMatmulAlgoGetIds
// offers) with a tuned configuration a program would ship (TILE_ID = CUBLASLT_MATMUL_TILE_16x16,
// STAGES_ID, SPLITK_NUM = 4 with the COMPUTE_TYPE reduction, CTA_SWIZZLING, CUSTOM_OPTION,
// INNER_SHAPE_ID, CLUSTER_SHAPE_ID), read back, checked by cublasLtMatmulAlgoCheck and run; the
// heuristic's algorithm reconfigured; a configured algorithm copied by value and handed to the
// heuristic with CUBLASLT_SEARCH_LIMITED_BY_ALGO_ID; values cuBLASLt does not define refused. Then
// CUDA 13's emulated compute (CUBLAS_COMPUTE_32F_EMULATED_16BFX9 on the descriptor, its
// algorithms and an emulation descriptor), graded against a long double host reference. Every D is
// checked against the reference (FP32 compute: a componentwise bound) and, on torchada, bit for bit
// against the heuristic's algorithm. Built against CUDA 13's and CUDA 12's headers and libraries.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "check_cublaslt.h"

namespace {

constexpr int kM = 37, kN = 29, kK = 70;
constexpr size_t kWorkspace = 4 << 20;

struct Problem {
  std::vector<float> A, B, C;
  float *dA = nullptr, *dB = nullptr, *dC = nullptr, *dD = nullptr;
  void* workspace = nullptr;
  const float alpha = -0.5f, beta = 2.0f;
  Problem() {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    A.resize(size_t(kM) * kK);
    B.resize(size_t(kK) * kN);
    C.resize(size_t(kM) * kN);
    for (auto* v : {&A, &B, &C})
      for (float& x : *v) x = dist(rng);
    for (auto [d, h] : {std::pair{&dA, &A}, {&dB, &B}, {&dC, &C}}) {
      CUDA_CHECK(cudaMalloc(d, h->size() * 4));
      CUDA_CHECK(cudaMemcpy(*d, h->data(), h->size() * 4, cudaMemcpyHostToDevice));
    }
    CUDA_CHECK(cudaMalloc(&dD, C.size() * 4));
    CUDA_CHECK(cudaMalloc(&workspace, kWorkspace));
  }
  ~Problem() {
    for (void* p : {static_cast<void*>(dA), static_cast<void*>(dB), static_cast<void*>(dC),
                    static_cast<void*>(dD), workspace})
      cudaFree(p);
  }
  // D's largest error in units of the FP32 componentwise bound.
  double graded(const std::vector<float>& d) const {
    double worst = 0;
    for (int j = 0; j < kN; ++j)
      for (int i = 0; i < kM; ++i) {
        long double exact = 0, mag = 0;
        for (int p = 0; p < kK; ++p) {
          const long double prod =
              static_cast<long double>(A[i + size_t(p) * kM]) * B[p + size_t(j) * kK];
          exact += prod;
          mag += std::fabs(prod);
        }
        const long double c0 = C[i + size_t(j) * kM];
        exact = alpha * exact + beta * c0;
        mag = std::fabs(alpha) * mag + std::fabs(beta * c0);
        const long double err = std::fabs(d[i + size_t(j) * kM] - exact);
        worst =
            std::fmax(worst, static_cast<double>(err / ((kK + 2) * std::ldexp(1.0L, -24) * mag)));
      }
    return worst;
  }
};

struct Lt {
  cublasLtHandle_t h = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  explicit Lt(cublasComputeType_t compute) {
    LT_CHECK(cublasLtCreate(&h));
    LT_CHECK(cublasLtMatmulDescCreate(&op, compute, CUDA_R_32F));
    LT_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, kM, kK, kM));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, kK, kN, kK));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, kM, kN, kM));
  }
  ~Lt() {
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
    cublasLtDestroy(h);
  }
  cublasStatus_t run(const Problem& p, const cublasLtMatmulAlgo_t* algo) const {
    CUDA_CHECK(cudaMemset(p.dD, 0, p.C.size() * 4));
    return cublasLtMatmul(h, op, &p.alpha, p.dA, la, p.dB, lb, &p.beta, p.dC, lc, p.dD, lc, algo,
                          p.workspace, kWorkspace, nullptr);
  }
  std::vector<float> result(const Problem& p) const {
    std::vector<float> d(p.C.size());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(d.data(), p.dD, d.size() * 4, cudaMemcpyDeviceToHost));
    return d;
  }
  cublasLtMatmulHeuristicResult_t heuristic(
      const cublasLtMatmulAlgo_t* limited_to = nullptr) const {
    cublasLtMatmulPreference_t pref;
    LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t ws = kWorkspace;
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &ws, sizeof(ws)));
    cublasLtMatmulHeuristicResult_t r{};
    if (limited_to != nullptr) {
      const uint32_t mode = CUBLASLT_SEARCH_LIMITED_BY_ALGO_ID;
      LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_SEARCH_MODE, &mode,
                                                    sizeof(mode)));
      r.algo = *limited_to;
    }
    int n = 0;
    LT_CHECK(cublasLtMatmulAlgoGetHeuristic(h, op, la, lb, lc, lc, pref, 1, &r, &n));
    EXPECT_TRUE_MSG(n == 1, "the heuristic answers one algorithm");
    LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    return r;
  }
};

template <class T>
void set(cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr, T v) {
  LT_CHECK(cublasLtMatmulAlgoConfigSetAttribute(&algo, attr, &v, sizeof(v)));
}
template <class T>
T get(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  T v{};
  size_t w = 0;
  LT_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof(v), &w));
  return v;
}

void test_preset(const Problem& p, bool nvidia) {
  Lt lt(CUBLAS_COMPUTE_32F);
  const cublasLtMatmulHeuristicResult_t heur = lt.heuristic();
  LT_CHECK(lt.run(p, &heur.algo));
  const std::vector<float> baseline = lt.result(p);
  EXPECT_TRUE_MSG(p.graded(baseline) <= 1.0, "the heuristic's D matches the host reference");

  int id = -1, n = 0;
  LT_CHECK(cublasLtMatmulAlgoGetIds(lt.h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                    CUDA_R_32F, CUDA_R_32F, 1, &id, &n));
  EXPECT_TRUE_MSG(n == 1, "an algorithm id for FP32");
  cublasLtMatmulAlgo_t algo;
  LT_CHECK(cublasLtMatmulAlgoInit(lt.h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                  CUDA_R_32F, CUDA_R_32F, id, &algo));
  EXPECT_TRUE_MSG(get<int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID) == id, "CONFIG_ID reads the id");
  // The preset.
  set<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, CUBLASLT_MATMUL_TILE_16x16);
  set<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, CUBLASLT_MATMUL_STAGES_32x5);
  set<int32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, 4);
  set<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
                CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE);
  set<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, 1);
  set<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, 0);
  set<uint16_t>(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, CUBLASLT_MATMUL_INNER_SHAPE_MMA16816);
  set<uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, CUBLASLT_CLUSTER_SHAPE_2x1x1);
  EXPECT_TRUE_MSG(
      get<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID) == CUBLASLT_MATMUL_TILE_16x16 &&
          get<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID) == CUBLASLT_MATMUL_STAGES_32x5 &&
          get<int32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM) == 4 &&
          get<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME) ==
              CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE &&
          get<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING) == 1 &&
          get<uint16_t>(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID) ==
              CUBLASLT_MATMUL_INNER_SHAPE_MMA16816 &&
          get<uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID) ==
              CUBLASLT_CLUSTER_SHAPE_2x1x1,
      "the preset configuration reads back as set");
  cublasLtMatmulHeuristicResult_t check{};
  const cublasStatus_t cs =
      cublasLtMatmulAlgoCheck(lt.h, lt.op, lt.la, lt.lb, lt.lc, lt.lc, &algo, &check);
  if (nvidia) {
    check::Skip("the preset checks and runs", "NVIDIA's cuBLASLt takes the tiles its GPU has");
  } else {
    EXPECT_TRUE_MSG(cs == CUBLAS_STATUS_SUCCESS && check.state == CUBLAS_STATUS_SUCCESS &&
                        check.workspaceSize <= kWorkspace && check.wavesCount > 0,
                    "cublasLtMatmulAlgoCheck: the preset, its workspace and waves");
    EXPECT_TRUE_MSG(lt.run(p, &algo) == CUBLAS_STATUS_SUCCESS, "the preset runs");
    const std::vector<float> d = lt.result(p);
    EXPECT_TRUE_MSG(p.graded(d) <= 1.0, "the preset's D matches the host reference");
    EXPECT_TRUE_MSG(std::memcmp(d.data(), baseline.data(), d.size() * 4) == 0,
                    "the preset computes the heuristic's result, bit for bit");
    // A copy by value is the same algorithm, and the heuristic limited to it answers it.
    const cublasLtMatmulAlgo_t copy = algo;
    const cublasLtMatmulHeuristicResult_t limited = lt.heuristic(&copy);
    EXPECT_TRUE_MSG(limited.state == CUBLAS_STATUS_SUCCESS,
                    "SEARCH_LIMITED_BY_ALGO_ID takes a configured algorithm");
    LT_CHECK(lt.run(p, &copy));
    EXPECT_TRUE_MSG(lt.result(p) == baseline, "a copied configured algorithm runs the same");
  }
  // The heuristic's algorithm is configurable too.
  cublasLtMatmulAlgo_t h = heur.algo;
  set<int32_t>(h, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, 2);
  set<uint32_t>(h, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, CUBLASLT_REDUCTION_SCHEME_INPLACE);
  EXPECT_TRUE_MSG(get<int32_t>(h, CUBLASLT_ALGO_CONFIG_SPLITK_NUM) == 2,
                  "the heuristic's algorithm takes SPLITK_NUM = 2");
  if (!nvidia) {
    LT_CHECK(lt.run(p, &h));
    EXPECT_TRUE_MSG(lt.result(p) == baseline, "the reconfigured heuristic algorithm runs the same");
  }
  // Values cuBLASLt does not define.
  const uint32_t bad_tile = 100000;
  EXPECT_TRUE_MSG(
      cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &bad_tile,
                                           sizeof(bad_tile)) == CUBLAS_STATUS_INVALID_VALUE,
      "TILE_ID = 100000: INVALID_VALUE");
  EXPECT_TRUE_MSG(get<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID) == CUBLASLT_MATMUL_TILE_16x16,
                  "a refused value changes nothing");
}

// CUDA 13's emulated FP32 compute through cuBLASLt: native FP32 accuracy or better.
void test_emulated(const Problem& p, bool nvidia) {
  Lt lt(CUBLAS_COMPUTE_32F_EMULATED_16BFX9);
  int32_t compute = -1;
  size_t w = 0;
  LT_CHECK(cublasLtMatmulDescGetAttribute(lt.op, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute,
                                          sizeof(compute), &w));
  EXPECT_TRUE_MSG(compute == CUBLAS_COMPUTE_32F_EMULATED_16BFX9,
                  "the descriptor's compute type reads back as CUBLAS_COMPUTE_32F_EMULATED_16BFX9");
#if CUBLAS_VER_MAJOR >= 13
  cublasLtEmulationDesc_t e = nullptr;
  LT_CHECK(cublasLtEmulationDescCreate(&e));
  const int32_t eager = CUBLAS_EMULATION_STRATEGY_EAGER;
  LT_CHECK(cublasLtEmulationDescSetAttribute(e, CUBLASLT_EMULATION_DESC_STRATEGY, &eager,
                                             sizeof(eager)));
  int32_t back = -1;
  LT_CHECK(cublasLtEmulationDescGetAttribute(e, CUBLASLT_EMULATION_DESC_STRATEGY, &back,
                                             sizeof(back), &w));
  EXPECT_TRUE_MSG(back == eager, "the emulation descriptor's strategy reads back");
  LT_CHECK(cublasLtMatmulDescSetAttribute(lt.op, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, &e,
                                          sizeof(e)));
#endif
  int ids[8], n = 0;
  LT_CHECK(cublasLtMatmulAlgoGetIds(lt.h, CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUDA_R_32F,
                                    CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 8, ids, &n));
  if (n >= 1) {
    cublasLtMatmulAlgo_t algo;
    LT_CHECK(cublasLtMatmulAlgoInit(lt.h, CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUDA_R_32F,
                                    CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, ids[0], &algo));
    LT_CHECK(lt.run(p, &algo));
    const double e1 = p.graded(lt.result(p));
    std::printf("  emulated FP32 (initialised algorithm): %.3g of the FP32 bound\n", e1);
    EXPECT_TRUE_MSG(e1 <= 1.0, "emulated FP32 through an initialised algorithm: native accuracy");
  } else if (nvidia) {
    check::Skip("an algorithm id for emulated FP32", "this GPU has no BF16x9 kernels");
  } else {
    EXPECT_TRUE_MSG(n >= 1, "an algorithm id for emulated FP32");
  }
  const cublasLtMatmulHeuristicResult_t heur = lt.heuristic();
  LT_CHECK(lt.run(p, &heur.algo));
  const double e2 = p.graded(lt.result(p));
  std::printf("  emulated FP32 (heuristic): %.3g of the FP32 bound\n", e2);
  EXPECT_TRUE_MSG(e2 <= 1.0, "emulated FP32 through the heuristic: native accuracy");
#if CUBLAS_VER_MAJOR >= 13
  LT_CHECK(cublasLtEmulationDescDestroy(e));
#endif
}

}  // namespace

int main() {
  const bool nvidia = check::NvidiaDevice();
  Problem p;
  test_preset(p, nvidia);
  test_emulated(p, nvidia);
  return check::Report("cublaslt_algo_config");
}
