// A cuBLASLt application that searches for the fastest matmul algorithm, written from NVIDIA's
// cuBLASLt documentation (the "find the best algorithm" workflow of cublasLtMatmulAlgoGetIds):
// enumerate the algorithm ids for the types, initialise each, read its capabilities (tile and
// stage ids, split-K support, reduction schemes, CTA swizzling, custom options), set every
// combination through cublasLtMatmulAlgoConfigSetAttribute (split-K 0 or from a sequence, each
// supported reduction scheme), read it back, check it with cublasLtMatmulAlgoCheck (workspace
// needed against what the program has, waves), time it with events, keep the fastest, then run the
// fastest and verify D against a host reference (FP32 compute: a componentwise bound). Every
// configuration that runs is also compared with the heuristic's algorithm: on torchada they run
// the same muBLASLt product, so the results are bit for bit equal (on NVIDIA's cuBLASLt split-K
// reorders the sums: there within the bound only). Built against CUDA 13's and CUDA 12's headers
// and libraries.
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

constexpr int kM = 48, kN = 40, kK = 96;
constexpr size_t kWorkspace = 1 << 20;
constexpr int kMaxCombinations = 400;  // as NVIDIA's samples cap their search
constexpr int kSplitK[] = {2, 3, 4, 8};

struct Result {
  cublasLtMatmulAlgo_t algo;
  float ms;
  size_t workspace;
  float waves;
};

}  // namespace

int main() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> A(size_t(kM) * kK), B(size_t(kK) * kN), C(size_t(kM) * kN);
  for (auto* v : {&A, &B, &C})
    for (float& x : *v) x = dist(rng);
  const float alpha = 1.5f, beta = 0.25f;
  float *dA, *dB, *dC, *dD;
  void* workspace;
  CUDA_CHECK(cudaMalloc(&dA, A.size() * 4));
  CUDA_CHECK(cudaMalloc(&dB, B.size() * 4));
  CUDA_CHECK(cudaMalloc(&dC, C.size() * 4));
  CUDA_CHECK(cudaMalloc(&dD, C.size() * 4));
  CUDA_CHECK(cudaMalloc(&workspace, kWorkspace));
  CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dC, C.data(), C.size() * 4, cudaMemcpyHostToDevice));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));

  cublasLtHandle_t lt;
  LT_CHECK(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t op;
  LT_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtMatrixLayout_t la, lb, lc;
  LT_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, kM, kK, kM));
  LT_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, kK, kN, kK));
  LT_CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, kM, kN, kM));

  auto run = [&](const cublasLtMatmulAlgo_t* algo) {
    return cublasLtMatmul(lt, op, &alpha, dA, la, dB, lb, &beta, dC, lc, dD, lc, algo, workspace,
                          kWorkspace, stream);
  };
  auto result = [&] {
    std::vector<float> d(C.size());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(d.data(), dD, d.size() * 4, cudaMemcpyDeviceToHost));
    return d;
  };

  // The heuristic's algorithm: the baseline every configuration is compared with.
  cublasLtMatmulPreference_t pref;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t ws = kWorkspace;
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                                sizeof(ws)));
  cublasLtMatmulHeuristicResult_t heur{};
  int nheur = 0;
  LT_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heur, &nheur));
  EXPECT_TRUE_MSG(nheur == 1, "the heuristic offers an algorithm");
  LT_CHECK(run(&heur.algo));
  const std::vector<float> baseline = result();

  // Enumerate.
  int ids[64];
  int nids = 0;
  LT_CHECK(cublasLtMatmulAlgoGetIds(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                    CUDA_R_32F, CUDA_R_32F, 64, ids, &nids));
  std::printf("  %d algorithm id(s)\n", nids);
  EXPECT_TRUE_MSG(nids >= 1, "cublasLtMatmulAlgoGetIds offers at least one algorithm");
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<Result> found;
  int tried = 0, checked_ok = 0, readback_ok = 0, same_result = 0, ran = 0;
  bool every_init_ok = true;
  const bool nvidia = check::NvidiaDevice();
  for (int i = 0; i < nids && tried < kMaxCombinations; ++i) {
    cublasLtMatmulAlgo_t algo;
    if (cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                               CUDA_R_32F, CUDA_R_32F, ids[i], &algo) != CUBLAS_STATUS_SUCCESS) {
      every_init_ok = false;
      continue;
    }
    size_t w = 0;
    LT_CHECK(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, nullptr, 0, &w));
    std::vector<uint32_t> tiles(w / 4 == 0 ? 1 : w / 4, CUBLASLT_MATMUL_TILE_UNDEFINED);
    if (w > 0)
      LT_CHECK(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, tiles.data(),
                                                 tiles.size() * 4, &w));
    LT_CHECK(
        cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_STAGES_IDS, nullptr, 0, &w));
    std::vector<uint32_t> stages(w / 4 == 0 ? 1 : w / 4, CUBLASLT_MATMUL_STAGES_UNDEFINED);
    if (w > 0)
      LT_CHECK(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_STAGES_IDS, stages.data(),
                                                 stages.size() * 4, &w));
    int32_t splitk_support = 0, custom_max = 0;
    uint32_t reductions = 0, swizzle_max = 0;
    LT_CHECK(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT,
                                               &splitk_support, sizeof(splitk_support), &w));
    LT_CHECK(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK,
                                               &reductions, sizeof(reductions), &w));
    LT_CHECK(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT,
                                               &swizzle_max, sizeof(swizzle_max), &w));
    LT_CHECK(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX,
                                               &custom_max, sizeof(custom_max), &w));
    std::printf(
        "  id %d: %zu tile(s), %zu stage(s), split-K %d, reductions 0x%x, swizzle %u, "
        "custom 0..%d\n",
        ids[i], tiles.size(), stages.size(), splitk_support, reductions, swizzle_max, custom_max);
    for (uint32_t tile : tiles)
      for (uint32_t stage : stages)
        for (int32_t custom = 0; custom <= custom_max; ++custom)
          for (uint32_t swizzle = 0; swizzle <= swizzle_max; ++swizzle) {
            // Split-K: none (0), then each value of the sequence with each supported scheme.
            std::vector<std::pair<int32_t, uint32_t>> splits = {
                {0, CUBLASLT_REDUCTION_SCHEME_NONE}};
            if (splitk_support)
              for (int32_t s : kSplitK)
                for (uint32_t r = 1; r < CUBLASLT_REDUCTION_SCHEME_MASK; r <<= 1)
                  if (reductions & r) splits.push_back({s, r});
            for (const auto& [splitk, scheme] : splits) {
              if (tried >= kMaxCombinations) break;
              ++tried;
              LT_CHECK(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID,
                                                            &tile, sizeof(tile)));
              LT_CHECK(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID,
                                                            &stage, sizeof(stage)));
              LT_CHECK(cublasLtMatmulAlgoConfigSetAttribute(
                  &algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom, sizeof(custom)));
              LT_CHECK(cublasLtMatmulAlgoConfigSetAttribute(
                  &algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle, sizeof(swizzle)));
              LT_CHECK(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM,
                                                            &splitk, sizeof(splitk)));
              LT_CHECK(cublasLtMatmulAlgoConfigSetAttribute(
                  &algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme, sizeof(scheme)));
              // The configuration reads back as set.
              uint32_t t = 0, st = 0, sw = 0, rs = 0;
              int32_t sk = -1, cu = -1;
              LT_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &t,
                                                            sizeof(t), &w));
              LT_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID,
                                                            &st, sizeof(st), &w));
              LT_CHECK(cublasLtMatmulAlgoConfigGetAttribute(
                  &algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &sw, sizeof(sw), &w));
              LT_CHECK(cublasLtMatmulAlgoConfigGetAttribute(
                  &algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &rs, sizeof(rs), &w));
              LT_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM,
                                                            &sk, sizeof(sk), &w));
              LT_CHECK(cublasLtMatmulAlgoConfigGetAttribute(
                  &algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &cu, sizeof(cu), &w));
              if (t == tile && st == stage && sw == swizzle && rs == scheme && sk == splitk &&
                  cu == custom)
                ++readback_ok;
              cublasLtMatmulHeuristicResult_t check{};
              if (cublasLtMatmulAlgoCheck(lt, op, la, lb, lc, lc, &algo, &check) !=
                      CUBLAS_STATUS_SUCCESS ||
                  check.state != CUBLAS_STATUS_SUCCESS || check.workspaceSize > kWorkspace)
                continue;
              ++checked_ok;
              // Time it (a warm-up, then three runs).
              if (run(&algo) != CUBLAS_STATUS_SUCCESS) continue;
              CUDA_CHECK(cudaEventRecord(start, stream));
              for (int r = 0; r < 3; ++r) LT_CHECK(run(&algo));
              CUDA_CHECK(cudaEventRecord(stop, stream));
              CUDA_CHECK(cudaEventSynchronize(stop));
              float ms = 0;
              CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
              ++ran;
              const std::vector<float> d = result();
              if (std::memcmp(d.data(), baseline.data(), d.size() * 4) == 0) ++same_result;
              found.push_back({algo, ms / 3, check.workspaceSize, check.wavesCount});
            }
          }
  }
  std::printf(
      "  %d configuration(s) tried, %d read back, %d checked, %d ran, %d bit-equal to "
      "the heuristic's\n",
      tried, readback_ok, checked_ok, ran, same_result);
  EXPECT_TRUE_MSG(every_init_ok, "cublasLtMatmulAlgoInit accepts every id GetIds returned");
  EXPECT_TRUE_MSG(tried > 1, "the capabilities offer more than one configuration");
  EXPECT_TRUE_MSG(readback_ok == tried, "every configuration reads back as set");
  // NVIDIA's cuBLASLt refuses the tiles that do not fit the problem; torchada runs every
  // configuration on muBLASLt's nearest algorithm.
  if (nvidia)
    EXPECT_TRUE_MSG(checked_ok >= 1, "cublasLtMatmulAlgoCheck accepts a configuration");
  else
    EXPECT_TRUE_MSG(checked_ok == tried, "cublasLtMatmulAlgoCheck accepts every configuration");
  EXPECT_TRUE_MSG(ran == checked_ok, "every checked configuration runs");
  if (nvidia)
    check::Skip("bit-equal to the heuristic's", "NVIDIA's split-K reorders the sums");
  else
    EXPECT_TRUE_MSG(same_result == ran,
                    "every configuration computes the heuristic's result, bit for bit");

  // The fastest, run again and verified against the host reference.
  if (!found.empty()) {
    size_t best = 0;
    for (size_t i = 1; i < found.size(); ++i)
      if (found[i].ms < found[best].ms) best = i;
    std::printf("  fastest: %.4f ms (workspace %zu, waves %.2f)\n", found[best].ms,
                found[best].workspace, found[best].waves);
    CUDA_CHECK(cudaMemset(dD, 0, C.size() * 4));
    LT_CHECK(run(&found[best].algo));
    const std::vector<float> d = result();
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
        mag = alpha * mag + std::fabs(beta * c0);
        const long double err = std::fabs(d[i + size_t(j) * kM] - exact);
        worst =
            std::fmax(worst, static_cast<double>(err / ((kK + 2) * std::ldexp(1.0L, -24) * mag)));
      }
    std::printf("  fastest's largest error: %.3g of the FP32 bound\n", worst);
    EXPECT_TRUE_MSG(worst <= 1.0, "the fastest configuration's D matches the host reference");
  }

  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  LT_CHECK(cublasLtMatrixLayoutDestroy(la));
  LT_CHECK(cublasLtMatrixLayoutDestroy(lb));
  LT_CHECK(cublasLtMatrixLayoutDestroy(lc));
  LT_CHECK(cublasLtMatmulDescDestroy(op));
  LT_CHECK(cublasLtDestroy(lt));
  for (void* p : {static_cast<void*>(dA), static_cast<void*>(dB), static_cast<void*>(dC),
                  static_cast<void*>(dD), workspace})
    CUDA_CHECK(cudaFree(p));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return check::Report("cublaslt_algo_search");
}
