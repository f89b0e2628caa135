// A cuBLAS handle used as a cuBLASLt handle, through the preloaded shim: NVIDIA allows
// reinterpret_cast<cublasLtHandle_t>(cublasHandle) and PyTorch relies on it (its
// getCurrentCUDABlasLtHandle never calls cublasLtCreate). The shim gives such a handle a muBLASLt
// handle of its own on first use (shim/cublasLt/handles.cc, core/blas_handles.h).
//
//   CublasHandle.*         the simulator: heuristics and a bias-epilogue matmul through a cuBLAS
//                          handle of either ABI, numbers against a reference; the cuBLAS handle
//                          still works for cuBLAS; cublasLtDestroy on it; unknown handles refused
//   CublasHandleThreads.*  many threads resolving handles while others create and destroy them
//                          (also run under TSan)
//   CublasHandleFake.*     tests/shim/cublasLt/fake_mublasLt.cc (CUBLASLT_TEST_FAKE=1), which
//                          counts its handles: cublasDestroy releases the muBLASLt handle, one is
//                          made per cuBLAS handle, cublasLtDestroy of a cuBLAS handle releases it
//
// Linked with NVIDIA's libcublasLt.so.13, libcublas.so.13 and libcudart.so.13 like a user's
// program; run with LD_PRELOAD=libtorchada.so TORCHADA_BACKEND=sim (see CMakeLists.txt).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

bool under_shim() {
  Dl_info info{};
  void* f = dlsym(RTLD_DEFAULT, "cublasLtCreate");
  return f != nullptr && dladdr(f, &info) != 0 && info.dli_fname != nullptr &&
         std::strstr(info.dli_fname, "libtorchada") != nullptr;
}

bool fake_mode() {
  const char* v = std::getenv("CUBLASLT_TEST_FAKE");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

template <class F>
std::string log_of(F&& f) {
  testing::internal::CaptureStderr();
  f();
  return testing::internal::GetCapturedStderr();
}

cublasLtHandle_t as_lt(cublasHandle_t h) { return reinterpret_cast<cublasLtHandle_t>(h); }

template <class T>
T* device_copy(const std::vector<T>& h) {
  T* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, h.size() * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}

// D (m x n) = op(A) B + bias, fp32, column-major, as PyTorch's addmm through cuBLASLt asks for it:
// A given transposed (k x m, TRANSA = T), the bias one value per row of D, a workspace.
struct BiasProblem {
  int m, n, k;
  std::vector<float> a, b, bias;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  float *dA = nullptr, *dB = nullptr, *dBias = nullptr, *dD = nullptr;
  void* workspace = nullptr;
  static constexpr size_t kWorkspace = 1 << 20;

  BiasProblem(int m_, int n_, int k_) : m(m_), n(n_), k(k_), a(k_ * m_), b(k_ * n_), bias(m_) {
    for (int i = 0; i < k * m; ++i) a[i] = static_cast<float>((i * 7) % 11) - 5.0f;
    for (int i = 0; i < k * n; ++i) b[i] = 0.25f * static_cast<float>((i * 5) % 9) - 1.0f;
    for (int i = 0; i < m; ++i) bias[i] = 0.5f * static_cast<float>(i) - 2.0f;
    dA = device_copy(a);
    dB = device_copy(b);
    dBias = device_copy(bias);
    dD = device_copy(std::vector<float>(m * n, -77.0f));
    EXPECT_EQ(cudaMalloc(&workspace, kWorkspace), cudaSuccess);
    EXPECT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
              CUBLAS_STATUS_SUCCESS);
    const int32_t t = CUBLAS_OP_T;
    EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)),
              CUBLAS_STATUS_SUCCESS);
    const uint32_t e = CUBLASLT_EPILOGUE_BIAS;
    EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e)),
              CUBLAS_STATUS_SUCCESS);
    const void* bp = dBias;
    EXPECT_EQ(
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof(bp)),
        CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, k, m, k), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, n, k), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, m, n, m), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatmulPreferenceCreate(&pref), CUBLAS_STATUS_SUCCESS);
    const uint64_t ws = kWorkspace;
    EXPECT_EQ(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                   &ws, sizeof(ws)),
              CUBLAS_STATUS_SUCCESS);
  }
  ~BiasProblem() {
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatmulDescDestroy(desc);
    cudaFree(workspace);
    cudaFree(dD);
    cudaFree(dBias);
    cudaFree(dB);
    cudaFree(dA);
  }
  BiasProblem(const BiasProblem&) = delete;
  BiasProblem& operator=(const BiasProblem&) = delete;

  // Heuristic, then the product on `stream` with the algorithm it chose.
  void run(cublasLtHandle_t lt, cudaStream_t stream) {
    cublasLtMatmulHeuristicResult_t r[4];
    std::memset(r, 0, sizeof(r));
    int returned = -1;
    ASSERT_EQ(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 4, r, &returned),
              CUBLAS_STATUS_SUCCESS);
    ASSERT_GE(returned, 1);
    ASSERT_EQ(r[0].state, CUBLAS_STATUS_SUCCESS);
    ASSERT_LE(r[0].workspaceSize, kWorkspace);
    cublasLtMatmulHeuristicResult_t check;
    std::memset(&check, 0, sizeof(check));
    EXPECT_EQ(cublasLtMatmulAlgoCheck(lt, desc, la, lb, ld, ld, &r[0].algo, &check),
              CUBLAS_STATUS_SUCCESS);
    const float alpha = 1.0f, beta = 0.0f;
    ASSERT_EQ(cublasLtMatmul(lt, desc, &alpha, dA, la, dB, lb, &beta, dD, ld, dD, ld, &r[0].algo,
                             workspace, kWorkspace, stream),
              CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  }

  void expect_result() {
    std::vector<float> d(m * n);
    ASSERT_EQ(cudaMemcpy(d.data(), dD, d.size() * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < m; ++i) {
        double x = bias[i];
        for (int l = 0; l < k; ++l) x += double(a[l + i * k]) * double(b[l + j * k]);
        EXPECT_NEAR(d[i + j * m], x, 1e-4 * (1.0 + std::fabs(x))) << "D(" << i << ", " << j << ")";
      }
    }
  }
};

class CublasHandle : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!under_shim()) GTEST_SKIP() << "needs LD_PRELOAD=libtorchada.so (ctest sets it)";
    if (fake_mode()) GTEST_SKIP() << "CUBLASLT_TEST_FAKE=1: only the fake-library tests run";
  }
};

TEST_F(CublasHandle, HeuristicAndBiasMatmulThroughACublasHandle) {
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  {
    BiasProblem p(5, 4, 3);
    p.run(as_lt(h), stream);
    p.expect_result();
    // Again: the same muBLASLt handle serves (and the lookup's fast path).
    ASSERT_EQ(cudaMemset(p.dD, 0, p.m * p.n * sizeof(float)), cudaSuccess);
    p.run(as_lt(h), stream);
    p.expect_result();
    // The cuBLASLt handle's other calls take it too.
    int ids[4] = {};
    int count = -1;
    EXPECT_EQ(cublasLtMatmulAlgoGetIds(as_lt(h), CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F,
                                       CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 4, ids, &count),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_GE(count, 1);
    cublasLtMatmulAlgo_t algo;
    EXPECT_EQ(cublasLtMatmulAlgoInit(as_lt(h), CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F,
                                     CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, ids[0], &algo),
              CUBLAS_STATUS_SUCCESS);
  }
  // The cuBLAS handle is still cuBLAS's: a product through it, on its stream.
  ASSERT_EQ(cublasSetStream(h, stream), CUBLAS_STATUS_SUCCESS);
  const std::vector<float> x = {1, 2, 3, 4};
  float* dx = device_copy(x);
  float* dy = device_copy(std::vector<float>(4, 0.0f));
  const float two = 2.0f, zero = 0.0f;
  ASSERT_EQ(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &two, dx, 2, dx, 2, &zero, dy, 2),
            CUBLAS_STATUS_SUCCESS);
  std::vector<float> y(4);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(y.data(), dy, sizeof(float) * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(y, (std::vector<float>{14, 20, 30, 44}));
  EXPECT_EQ(cudaFree(dy), cudaSuccess);
  EXPECT_EQ(cudaFree(dx), cudaSuccess);
  EXPECT_EQ(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// libcublas.so.12's cublasCreate_v2 makes a handle libcublasLt.so.13's calls accept (one table
// for both ABIs), and its cublasDestroy_v2 releases it.
TEST_F(CublasHandle, Abi12CublasHandle) {
  using CreateFn = cublasStatus_t (*)(cublasHandle_t*);
  using DestroyFn = cublasStatus_t (*)(cublasHandle_t);
  auto create12 =
      reinterpret_cast<CreateFn>(dlvsym(RTLD_DEFAULT, "cublasCreate_v2", "libcublas.so.12"));
  auto destroy12 =
      reinterpret_cast<DestroyFn>(dlvsym(RTLD_DEFAULT, "cublasDestroy_v2", "libcublas.so.12"));
  ASSERT_NE(create12, nullptr);
  ASSERT_NE(destroy12, nullptr);
  EXPECT_NE(reinterpret_cast<void*>(create12), reinterpret_cast<void*>(&cublasCreate_v2));
  cublasHandle_t h = nullptr;
  ASSERT_EQ(create12(&h), CUBLAS_STATUS_SUCCESS);
  {
    BiasProblem p(3, 6, 7);
    p.run(as_lt(h), nullptr);
    p.expect_result();
  }
  EXPECT_EQ(destroy12(h), CUBLAS_STATUS_SUCCESS);
  const std::string log = log_of([&] {
    int ids[1];
    int count = -1;
    EXPECT_EQ(cublasLtMatmulAlgoGetIds(as_lt(h), CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F,
                                       CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 1, ids, &count),
              CUBLAS_STATUS_NOT_INITIALIZED);
  });
  EXPECT_NE(log.find("was not made by cublasLtCreate nor by cublasCreate"), std::string::npos)
      << log;
}

// NVIDIA's cublasLtDestroy on a cuBLAS handle shuts down the cuBLASLt context the handle embeds
// and keeps the handle: success, and the cuBLAS handle stays usable, for cuBLASLt too.
TEST_F(CublasHandle, CublasLtDestroyKeepsTheCublasHandle) {
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtDestroy(as_lt(h)), CUBLAS_STATUS_SUCCESS);  // none made yet
  BiasProblem p(4, 4, 4);
  p.run(as_lt(h), nullptr);
  EXPECT_EQ(cublasLtDestroy(as_lt(h)), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cudaMemset(p.dD, 0, p.m * p.n * sizeof(float)), cudaSuccess);
  p.run(as_lt(h), nullptr);  // a new muBLASLt handle
  p.expect_result();
  int v = 0;
  EXPECT_EQ(cublasGetVersion(h, &v), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
}

// cublasLtCreate's handles are unchanged: used as they are, destroyed once.
TEST_F(CublasHandle, CublasLtCreateHandles) {
  cublasLtHandle_t lt = nullptr;
  ASSERT_EQ(cublasLtCreate(&lt), CUBLAS_STATUS_SUCCESS);
  {
    BiasProblem p(2, 3, 4);
    p.run(lt, nullptr);
    p.expect_result();
  }
  EXPECT_EQ(cublasLtDestroy(lt), CUBLAS_STATUS_SUCCESS);
  std::string log = log_of([&] { EXPECT_EQ(cublasLtDestroy(lt), CUBLAS_STATUS_NOT_INITIALIZED); });
  EXPECT_NE(log.find("cublasLtDestroy: handle"), std::string::npos) << log;
  EXPECT_EQ(cublasLtCreate(nullptr), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasLtDestroy(nullptr), CUBLAS_STATUS_INVALID_VALUE);
}

// A pointer that is neither handle never reaches muBLASLt: every call taking a cublasLtHandle_t
// refuses it with CUBLAS_STATUS_NOT_INITIALIZED and says why.
TEST_F(CublasHandle, UnknownHandlesAreRefused) {
  uint64_t words[64] = {};
  const cublasLtHandle_t bogus = reinterpret_cast<cublasLtHandle_t>(&words[8]);
  BiasProblem p(2, 2, 2);
  cublasLtMatmulHeuristicResult_t r[1];
  std::memset(r, 0, sizeof(r));
  int returned = -1;
  const float alpha = 1.0f, beta = 0.0f;
  int ids[2];
  cublasLtMatmulAlgo_t algo;
  std::memset(&algo, 0, sizeof(algo));
  for (cublasLtHandle_t h : {bogus, cublasLtHandle_t{}}) {
    const std::string log = log_of([&] {
      EXPECT_EQ(cublasLtMatmulAlgoGetHeuristic(h, p.desc, p.la, p.lb, p.ld, p.ld, p.pref, 1, r,
                                               &returned),
                CUBLAS_STATUS_NOT_INITIALIZED);
      EXPECT_EQ(cublasLtMatmul(h, p.desc, &alpha, p.dA, p.la, p.dB, p.lb, &beta, p.dD, p.ld, p.dD,
                               p.ld, nullptr, nullptr, 0, nullptr),
                CUBLAS_STATUS_NOT_INITIALIZED);
      EXPECT_EQ(cublasLtMatmulAlgoCheck(h, p.desc, p.la, p.lb, p.ld, p.ld, &algo, r),
                CUBLAS_STATUS_NOT_INITIALIZED);
      EXPECT_EQ(cublasLtMatmulAlgoGetIds(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                         CUDA_R_32F, CUDA_R_32F, 2, ids, &returned),
                CUBLAS_STATUS_NOT_INITIALIZED);
      EXPECT_EQ(cublasLtMatmulAlgoInit(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                       CUDA_R_32F, CUDA_R_32F, 0, &algo),
                CUBLAS_STATUS_NOT_INITIALIZED);
      EXPECT_EQ(cublasLtMatrixTransform(h, nullptr, &alpha, p.dA, p.la, &beta, nullptr, nullptr,
                                        p.dD, p.ld, nullptr),
                CUBLAS_STATUS_NOT_INITIALIZED);
    });
    for (const char* fn :
         {"cublasLtMatmulAlgoGetHeuristic", "cublasLtMatmul", "cublasLtMatmulAlgoCheck",
          "cublasLtMatmulAlgoGetIds", "cublasLtMatmulAlgoInit", "cublasLtMatrixTransform"})
      EXPECT_NE(log.find(std::string(fn) + ": handle "), std::string::npos) << fn << "\n" << log;
    EXPECT_NE(log.find("was not made by cublasLtCreate nor by cublasCreate"), std::string::npos);
  }
  // Nothing was written into what the bogus handle points at.
  for (uint64_t w : words) EXPECT_EQ(w, 0u);
  EXPECT_EQ(cublasLtDestroy(bogus), CUBLAS_STATUS_NOT_INITIALIZED);
}

// cuBLAS calls given a destroyed handle, a pointer that was never a handle or null answer
// CUBLAS_STATUS_NOT_INITIALIZED and never reach muBLAS (which would dereference them): generated
// forwarders (cublasSetStream, cublasSgemm), hand-written ones (cublasGemmEx, cublasGetVersion),
// and cublasDestroy itself, twice. A live handle keeps working beside them.
TEST_F(CublasHandle, DestroyedAndForeignCublasHandlesAreRefused) {
  uint64_t words[64] = {};
  const cublasHandle_t bogus = reinterpret_cast<cublasHandle_t>(&words[8]);
  cublasHandle_t live = nullptr, dead = nullptr;
  ASSERT_EQ(cublasCreate(&live), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasCreate(&dead), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasDestroy(dead), CUBLAS_STATUS_SUCCESS);
  const float alpha = 1.0f, beta = 0.0f;
  float* d = device_copy(std::vector<float>(4, 1.0f));
  int version = 0;
  for (cublasHandle_t h : {dead, bogus, cublasHandle_t{}}) {
    const std::string log = log_of([&] {
      EXPECT_EQ(cublasSetStream(h, nullptr), CUBLAS_STATUS_NOT_INITIALIZED);
      EXPECT_EQ(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &alpha, d, 2, d, 2, &beta, d, 2),
                CUBLAS_STATUS_NOT_INITIALIZED);
      EXPECT_EQ(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &alpha, d, CUDA_R_32F, 2, d,
                             CUDA_R_32F, 2, &beta, d, CUDA_R_32F, 2, CUBLAS_COMPUTE_32F,
                             CUBLAS_GEMM_DEFAULT),
                CUBLAS_STATUS_NOT_INITIALIZED);
      EXPECT_EQ(cublasGetVersion(h, &version), CUBLAS_STATUS_NOT_INITIALIZED);
      EXPECT_EQ(cublasDestroy(h), CUBLAS_STATUS_NOT_INITIALIZED);
    });
    for (const char* fn : {"cublasSetStream_v2", "cublasSgemm_v2", "cublasGemmEx",
                           "cublasGetVersion_v2", "cublasDestroy_v2"})
      EXPECT_NE(log.find(std::string(fn) + ": the cuBLAS handle is not one cublasCreate returned"),
                std::string::npos)
          << fn << "\n"
          << log;
  }
  for (uint64_t w : words) EXPECT_EQ(w, 0u);
  float* c = device_copy(std::vector<float>(4, 0.0f));
  EXPECT_EQ(cublasSgemm(live, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &alpha, d, 2, d, 2, &beta, c, 2),
            CUBLAS_STATUS_SUCCESS);
  float out[4] = {};
  ASSERT_EQ(cudaMemcpy(out, c, sizeof(out), cudaMemcpyDeviceToHost), cudaSuccess);
  for (float v : out) EXPECT_EQ(v, 2.0f);
  EXPECT_EQ(cublasDestroy(live), CUBLAS_STATUS_SUCCESS);
  cudaFree(c);
  cudaFree(d);
}

// muBLAS's own refusal (NOT_IMPLEMENTED, cuBLAS's NOT_SUPPORTED) of a forwarded cuBLAS call names
// the call once in the log: a norm whose result type is not the data's.
TEST_F(CublasHandle, MublasRefusalsAreNamedOnce) {
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  float* dx = nullptr;
  ASSERT_EQ(cudaMalloc(&dx, 4 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(dx, 0, 4 * sizeof(float)), cudaSuccess);
  double result = -1;
  const auto nrm2 = [&] {
    EXPECT_EQ(cublasNrm2Ex(h, 4, dx, CUDA_R_32F, 1, &result, CUDA_R_64F, CUDA_R_32F),
              CUBLAS_STATUS_NOT_SUPPORTED);
  };
  std::string log = log_of(nrm2);
  EXPECT_NE(log.find("cublasNrm2Ex: muBLAS does not support this call"), std::string::npos) << log;
  log = log_of(nrm2);
  EXPECT_EQ(log.find("does not support"), std::string::npos) << log;
  EXPECT_EQ(cudaFree(dx), cudaSuccess);
  EXPECT_EQ(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
}

// ---- Concurrency: readers on the fast path while writers grow and shrink the table.

TEST(CublasHandleThreads, ResolutionWhileHandlesComeAndGo) {
  if (!under_shim()) GTEST_SKIP() << "needs LD_PRELOAD=libtorchada.so (ctest sets it)";
  if (fake_mode()) GTEST_SKIP() << "CUBLASLT_TEST_FAKE=1: only the fake-library tests run";
  constexpr int kReaders = 4, kWriters = 2, kRounds = 150, kBatch = 24;
  std::vector<cublasHandle_t> shared(kReaders);
  for (auto& h : shared) ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  cublasLtHandle_t lt = nullptr;
  ASSERT_EQ(cublasLtCreate(&lt), CUBLAS_STATUS_SUCCESS);
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::atomic<long> calls{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kReaders; ++t) {
    threads.emplace_back([&, t] {
      int ids[1];
      int n = 0;
      // The first use of each cuBLAS handle races with the other readers' (one muBLASLt handle
      // must come out of it), then every call resolves on the fast path or falls back.
      while (!stop.load(std::memory_order_relaxed)) {
        for (cublasLtHandle_t h : {as_lt(shared[t]), as_lt(shared[(t + 1) % kReaders]), lt}) {
          if (cublasLtMatmulAlgoGetIds(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                       CUDA_R_32F, CUDA_R_32F, 1, ids, &n) != CUBLAS_STATUS_SUCCESS)
            failures.fetch_add(1);
          calls.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        // Enough live handles at once to grow the table, then all gone again.
        std::vector<cublasHandle_t> hs(kBatch / 2);
        std::vector<cublasLtHandle_t> lts(kBatch / 2);
        for (auto& h : hs)
          if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) failures.fetch_add(1);
        for (auto& h : lts)
          if (cublasLtCreate(&h) != CUBLAS_STATUS_SUCCESS) failures.fetch_add(1);
        int ids[1];
        int n = 0;
        if ((round + t) % 3 == 0 &&
            cublasLtMatmulAlgoGetIds(as_lt(hs[round % hs.size()]), CUBLAS_COMPUTE_32F, CUDA_R_32F,
                                     CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 1, ids,
                                     &n) != CUBLAS_STATUS_SUCCESS)
          failures.fetch_add(1);
        for (auto h : lts)
          if (cublasLtDestroy(h) != CUBLAS_STATUS_SUCCESS) failures.fetch_add(1);
        for (auto h : hs)
          if (cublasDestroy(h) != CUBLAS_STATUS_SUCCESS) failures.fetch_add(1);
      }
    });
  }
  for (auto& w : writers) w.join();
  stop = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(calls.load(), 0);
  EXPECT_EQ(cublasLtDestroy(lt), CUBLAS_STATUS_SUCCESS);
  for (auto h : shared) EXPECT_EQ(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
}

// ---- Against the counting fake muBLASLt.

class CublasHandleFake : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!under_shim()) GTEST_SKIP() << "needs LD_PRELOAD=libtorchada.so (ctest sets it)";
    if (!fake_mode()) GTEST_SKIP() << "needs CUBLASLT_TEST_FAKE=1 and the fake muBLASLt";
    // The first cuBLASLt call loads muBLASLt.
    size_t capacity = 0;
    (void)cublasLtHeuristicsCacheGetCapacity(&capacity);
    lib_ = dlopen("libmublasLt.so.1", RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(lib_, nullptr);
    live_ = reinterpret_cast<int (*)()>(dlsym(lib_, "fake_mublasLt_live_handles"));
    created_ = reinterpret_cast<int (*)()>(dlsym(lib_, "fake_mublasLt_created_handles"));
    seen_ = reinterpret_cast<const void* (*)()>(dlsym(lib_, "fake_mublasLt_seen_handle"));
    ASSERT_TRUE(live_ && created_ && seen_) << "not the fake muBLASLt";
  }
  // A heuristic call (the fake answers six results whatever the descriptors).
  cublasStatus_t heuristic(cublasLtHandle_t h) {
    cublasLtMatmulHeuristicResult_t r[8];
    std::memset(r, 0, sizeof(r));
    int returned = 0;
    return cublasLtMatmulAlgoGetHeuristic(h, desc_, layout_, layout_, layout_, layout_, pref_, 8, r,
                                          &returned);
  }
  void* lib_ = nullptr;
  int (*live_)() = nullptr;
  int (*created_)() = nullptr;
  const void* (*seen_)() = nullptr;
  uint64_t dummy_[32] = {};
  cublasLtMatmulDesc_t desc_ = reinterpret_cast<cublasLtMatmulDesc_t>(&dummy_[0]);
  cublasLtMatrixLayout_t layout_ = reinterpret_cast<cublasLtMatrixLayout_t>(&dummy_[8]);
  cublasLtMatmulPreference_t pref_ = reinterpret_cast<cublasLtMatmulPreference_t>(&dummy_[16]);
};

TEST_F(CublasHandleFake, CublasDestroyReleasesTheMublasLtHandle) {
  const int live0 = live_(), created0 = created_();
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(created_(), created0);  // lazily: nothing until the first cuBLASLt use
  ASSERT_EQ(heuristic(as_lt(h)), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(live_(), live0 + 1);
  const void* made = seen_();
  EXPECT_NE(made, static_cast<const void*>(h));  // muBLASLt never sees the muBLAS handle
  ASSERT_EQ(heuristic(as_lt(h)), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(seen_(), made);  // one per cuBLAS handle
  EXPECT_EQ(created_(), created0 + 1);
  EXPECT_EQ(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(live_(), live0);
  // A cuBLAS handle never used with cuBLASLt has nothing to release.
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(live_(), live0);
  EXPECT_EQ(created_(), created0 + 1);
}

TEST_F(CublasHandleFake, CublasLtDestroyOfACublasHandleReleasesOnlyItsMublasLtHandle) {
  const int live0 = live_();
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(heuristic(as_lt(h)), CUBLAS_STATUS_SUCCESS);
  const void* first = seen_();
  EXPECT_EQ(live_(), live0 + 1);
  EXPECT_EQ(cublasLtDestroy(as_lt(h)), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(live_(), live0);
  // The cuBLAS handle is intact: cuBLAS takes it, and cuBLASLt makes it a new muBLASLt handle.
  EXPECT_EQ(cublasSetStream(h, nullptr), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(heuristic(as_lt(h)), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(live_(), live0 + 1);
  (void)first;
  EXPECT_EQ(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(live_(), live0);
}

TEST_F(CublasHandleFake, CublasLtCreateHandlesPassAsTheyAre) {
  const int live0 = live_();
  cublasLtHandle_t lt = nullptr;
  ASSERT_EQ(cublasLtCreate(&lt), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(heuristic(lt), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(seen_(), static_cast<const void*>(lt));
  EXPECT_EQ(live_(), live0 + 1);
  EXPECT_EQ(cublasLtDestroy(lt), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(live_(), live0);
}

}  // namespace
