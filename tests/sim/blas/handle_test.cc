// Handles, modes, status names, transfers, argument errors, and the stream semantics: work runs
// in order on the handle's stream, device-pointer-mode scalars are read when the work runs, host
// results block, graphs replay captured work.
#include "api.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "sim_ext.h"

namespace bt {
namespace {

class Handle : public BlasTest {};

TEST_F(Handle, CreateDestroyAndModes) {
  EXPECT_EQ(MUBLAS_STATUS_INVALID_POINTER, mublasCreate(nullptr));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_HANDLE, mublasDestroy(nullptr));
  mublasPointerMode_t pm;
  MU_OK(mublasGetPointerMode(h_, &pm));
  EXPECT_EQ(MUBLAS_POINTER_MODE_HOST, pm);
  MU_OK(mublasSetPointerMode(h_, MUBLAS_POINTER_MODE_DEVICE));
  MU_OK(mublasGetPointerMode(h_, &pm));
  EXPECT_EQ(MUBLAS_POINTER_MODE_DEVICE, pm);
  mublasAtomicsMode_t am;
  MU_OK(mublasSetAtomicsMode(h_, MUBLAS_ATOMICS_ALLOWED));
  MU_OK(mublasGetAtomicsMode(h_, &am));
  EXPECT_EQ(MUBLAS_ATOMICS_ALLOWED, am);
  mublasMath_t mm;
  MU_OK(mublasGetMathMode(h_, &mm));
  EXPECT_EQ(MUBLAS_DEFAULT_MATH, mm);
  const auto tf32_strict = static_cast<mublasMath_t>(
      MUBLAS_TF32_TENSOR_OP_MATH | MUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  MU_OK(mublasSetMathMode(h_, tf32_strict));
  MU_OK(mublasGetMathMode(h_, &mm));
  EXPECT_EQ(tf32_strict, mm);
  int sm = -1;
  MU_OK(mublasSetSmCountTarget(h_, 7));
  MU_OK(mublasGetSmCountTarget(h_, &sm));
  EXPECT_EQ(7, sm);
  // Values that are not muBLAS's (cuBLAS's own numbering would be 0/1 for the ops) fail.
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasSetPointerMode(h_, static_cast<mublasPointerMode_t>(2)));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasSetAtomicsMode(h_, static_cast<mublasAtomicsMode_t>(5)));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, mublasSetMathMode(h_, static_cast<mublasMath_t>(4)));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE, mublasSetSmCountTarget(h_, -1));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_POINTER, mublasGetMathMode(h_, nullptr));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_HANDLE, mublasGetMathMode(nullptr, &mm));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_HANDLE, mublasSetStream(nullptr, nullptr));
}

TEST_F(Handle, StreamAndWorkspace) {
  musaStream_t s = nullptr, got = reinterpret_cast<musaStream_t>(1);
  ASSERT_EQ(musaSuccess, musaStreamCreate(&s));
  MU_OK(mublasGetStream(h_, &got));
  EXPECT_EQ(nullptr, got);
  MU_OK(mublasSetStream(h_, s));
  MU_OK(mublasGetStream(h_, &got));
  EXPECT_EQ(s, got);
  void* ws = nullptr;
  ASSERT_EQ(musaSuccess, musaMalloc(&ws, 1 << 20));
  MU_OK(mublasSetWorkspace(h_, ws, 1 << 20));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasSetWorkspace(h_, static_cast<char*>(ws) + 8, 1024));  // not 256-byte aligned
  EXPECT_EQ(MUBLAS_STATUS_INVALID_POINTER, mublasSetWorkspace(h_, nullptr, 1024));
  MU_OK(mublasSetWorkspace(h_, nullptr, 0));
  MU_OK(mublasSetStream(h_, nullptr));
  ASSERT_EQ(musaSuccess, musaStreamDestroy(s));
  ASSERT_EQ(musaSuccess, musaFree(ws));
}

TEST_F(Handle, VersionPropertyAndStatusNames) {
  int v = 0;
  MU_OK(mublasGetVersion(h_, &v));
  EXPECT_EQ(
      MUBLAS_SIM_VERSION_MAJOR * 10000 + MUBLAS_SIM_VERSION_MINOR * 100 + MUBLAS_SIM_VERSION_PATCH,
      v);
  MU_OK(mublasGetVersion(nullptr, &v));  // allowed without a handle
  EXPECT_EQ(MUBLAS_STATUS_INVALID_POINTER, mublasGetVersion(h_, nullptr));
  int major = -1, minor = -1, patch = -1;
  MU_OK(mublasGetProperty(MUBLAS_PROPERTY_MAJOR_VERSION, &major));
  MU_OK(mublasGetProperty(MUBLAS_PROPERTY_MINOR_VERSION, &minor));
  MU_OK(mublasGetProperty(MUBLAS_PROPERTY_PATCH_LEVEL, &patch));
  EXPECT_EQ(v, major * 10000 + minor * 100 + patch);
  EXPECT_EQ(MUBLAS_STATUS_INVALID_VALUE,
            mublasGetProperty(static_cast<mublasLibraryPropertyType_t>(3), &major));
  EXPECT_STREQ("MUBLAS_STATUS_SUCCESS", mublasGetStatusName(MUBLAS_STATUS_SUCCESS));
  EXPECT_STREQ("MUBLAS_STATUS_INVALID_VALUE", mublasGetStatusName(MUBLAS_STATUS_INVALID_VALUE));
  EXPECT_STREQ("MUBLAS_STATUS_CHECK_NUMERICS_FAIL",
               mublasGetStatusName(MUBLAS_STATUS_CHECK_NUMERICS_FAIL));
  EXPECT_STREQ("MUBLAS_STATUS_UNKNOWN", mublasGetStatusName(static_cast<mublasStatus_t>(99)));
  // Every status has its own description.
  std::vector<std::string> seen;
  for (int s = MUBLAS_STATUS_SUCCESS; s <= MUBLAS_STATUS_CHECK_NUMERICS_FAIL; ++s) {
    const std::string d = mublasGetStatusString(static_cast<mublasStatus_t>(s));
    EXPECT_FALSE(d.empty());
    EXPECT_EQ(seen.end(), std::find(seen.begin(), seen.end(), d)) << d;
    seen.push_back(d);
  }
  EXPECT_NE(nullptr, mublasGetStatusString(static_cast<mublasStatus_t>(-5)));
}

TEST_F(Handle, VectorAndMatrixTransfers) {
  const int n = 6, inc = 2;
  std::vector<double> host(n * inc), back(n * 3, -1);
  for (int i = 0; i < n * inc; ++i) host[i] = i;
  double* dev = nullptr;
  ASSERT_EQ(musaSuccess, musaMalloc(reinterpret_cast<void**>(&dev), sizeof(double) * 64));
  MU_OK(mublasSetVector(n, sizeof(double), host.data(), inc, dev, 1));
  MU_OK(mublasGetVector(n, sizeof(double), dev, 1, back.data(), 3));
  for (int i = 0; i < n; ++i) EXPECT_EQ(host[i * inc], back[i * 3]);
  // Matrix 3 x 4 with leading dimensions 5 (host) and 4 (device).
  std::vector<float> hm(5 * 4), hb(3 * 4, 0);
  for (size_t i = 0; i < hm.size(); ++i) hm[i] = static_cast<float>(i);
  float* dm = reinterpret_cast<float*>(dev);
  MU_OK(mublasSetMatrix(3, 4, sizeof(float), hm.data(), 5, dm, 4));
  MU_OK(mublasGetMatrix(3, 4, sizeof(float), dm, 4, hb.data(), 3));
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i) EXPECT_EQ(hm[i + j * 5], hb[i + j * 3]);
  // Asynchronous forms, on a stream.
  musaStream_t s = nullptr;
  ASSERT_EQ(musaSuccess, musaStreamCreate(&s));
  std::fill(back.begin(), back.end(), -1);
  MU_OK(mublasSetVectorAsync(n, sizeof(double), host.data(), inc, dev, 1, s));
  MU_OK(mublasGetVectorAsync(n, sizeof(double), dev, 1, back.data(), 1, s));
  std::fill(hb.begin(), hb.end(), 0);
  MU_OK(mublasSetMatrixAsync(3, 4, sizeof(float), hm.data(), 5, dm + 16, 3, s));
  MU_OK(mublasGetMatrixAsync(3, 4, sizeof(float), dm + 16, 3, hb.data(), 3, s));
  ASSERT_EQ(musaSuccess, musaStreamSynchronize(s));
  for (int i = 0; i < n; ++i) EXPECT_EQ(host[i * inc], back[i]);
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i) EXPECT_EQ(hm[i + j * 5], hb[i + j * 3]);
  // Errors.
  EXPECT_EQ(MUBLAS_STATUS_INVALID_SIZE, mublasSetVector(n, 0, host.data(), 1, dev, 1));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_SIZE, mublasSetVector(n, 8, host.data(), 0, dev, 1));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_SIZE, mublasSetVector(-1, 8, host.data(), 1, dev, 1));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_SIZE, mublasSetMatrix(3, 4, 4, hm.data(), 2, dm, 4));
  EXPECT_EQ(MUBLAS_STATUS_INVALID_POINTER, mublasSetVector(n, 8, nullptr, 1, dev, 1));
  // The destination of SetVector must be device memory.
  EXPECT_EQ(MUBLAS_STATUS_INVALID_POINTER, mublasSetVector(n, 8, host.data(), 1, back.data(), 1));
  musaGetLastError();
  MU_OK(mublasSetVector(0, 8, nullptr, 1, nullptr, 1));
  ASSERT_EQ(musaSuccess, musaStreamDestroy(s));
  ASSERT_EQ(musaSuccess, musaFree(dev));
}

// Argument errors: handle, enumerators (including cuBLAS's own values, which muBLAS does not
// use), sizes, leading dimensions, increments, pointers.
TEST_F(Handle, ArgumentErrors) {
  std::vector<float> A(64, 1), B(64, 1), C(64, 1), x(16, 1), y(16, 1);
  const float one = 1;
  float r = 0;
  int ir = 0;
  const auto N = MUBLAS_OP_N;
  const auto cublas_op_t = static_cast<mublasOperation_t>(1);  // CUBLAS_OP_T's value
  const auto cublas_lower = static_cast<mublasFillMode_t>(0);  // CUBLAS_FILL_MODE_LOWER
  const auto U = MUBLAS_FILL_MODE_UPPER;
  const auto L = MUBLAS_SIDE_LEFT;
  const auto ND = MUBLAS_DIAG_NON_UNIT;
  auto* a = A.data();
  auto* c = C.data();
  struct Case {
    const char* what;
    mublasStatus_t want, got;
  };
  const Case cases[] = {
      {"sgemm null handle", MUBLAS_STATUS_INVALID_HANDLE,
       mublasSgemm(nullptr, N, N, 2, 2, 2, &one, a, 2, a, 2, &one, c, 2)},
      {"sgemm cuBLAS op value", MUBLAS_STATUS_INVALID_VALUE,
       mublasSgemm(h_, cublas_op_t, N, 2, 2, 2, &one, a, 2, a, 2, &one, c, 2)},
      {"sgemm m < 0", MUBLAS_STATUS_INVALID_SIZE,
       mublasSgemm(h_, N, N, -1, 2, 2, &one, a, 2, a, 2, &one, c, 2)},
      {"sgemm lda < m", MUBLAS_STATUS_INVALID_SIZE,
       mublasSgemm(h_, N, N, 4, 2, 2, &one, a, 3, a, 2, &one, c, 4)},
      {"sgemm ldb < k (op T)", MUBLAS_STATUS_INVALID_SIZE,
       mublasSgemm(h_, N, MUBLAS_OP_T, 2, 4, 3, &one, a, 2, a, 3, &one, c, 2)},
      {"sgemm ldc < m", MUBLAS_STATUS_INVALID_SIZE,
       mublasSgemm(h_, N, N, 4, 2, 2, &one, a, 4, a, 2, &one, c, 3)},
      {"sgemm null C", MUBLAS_STATUS_INVALID_POINTER,
       mublasSgemm(h_, N, N, 2, 2, 2, &one, a, 2, a, 2, &one, nullptr, 2)},
      {"sgemm null alpha", MUBLAS_STATUS_INVALID_POINTER,
       mublasSgemm(h_, N, N, 2, 2, 2, nullptr, a, 2, a, 2, &one, c, 2)},
      {"sgemm null A, k > 0", MUBLAS_STATUS_INVALID_POINTER,
       mublasSgemm(h_, N, N, 2, 2, 2, &one, nullptr, 2, a, 2, &one, c, 2)},
      {"sgemm m == 0 is a no-op", MUBLAS_STATUS_SUCCESS,
       mublasSgemm(h_, N, N, 0, 2, 2, nullptr, nullptr, 1, nullptr, 2, nullptr, nullptr, 1)},
      {"ssymm cuBLAS fill value", MUBLAS_STATUS_INVALID_VALUE,
       mublasSsymm(h_, L, cublas_lower, 2, 2, &one, a, 2, a, 2, &one, c, 2)},
      {"ssymm side both", MUBLAS_STATUS_INVALID_VALUE,
       mublasSsymm(h_, MUBLAS_SIDE_BOTH, U, 2, 2, &one, a, 2, a, 2, &one, c, 2)},
      {"ssyrk fill full", MUBLAS_STATUS_INVALID_VALUE,
       mublasSsyrk(h_, MUBLAS_FILL_MODE_FULL, N, 2, 2, &one, a, 2, &one, c, 2)},
      {"strsm diag 0", MUBLAS_STATUS_INVALID_VALUE,
       mublasStrsm(h_, L, U, N, static_cast<mublasDiagType_t>(0), 2, 2, &one, a, 2, c, 2)},
      {"strsm lda < m", MUBLAS_STATUS_INVALID_SIZE,
       mublasStrsm(h_, L, U, N, ND, 4, 2, &one, a, 3, c, 4)},
      {"sgemv incx 0", MUBLAS_STATUS_INVALID_SIZE,
       mublasSgemv(h_, N, 2, 2, &one, a, 2, x.data(), 0, &one, y.data(), 1)},
      {"sgemv lda < m", MUBLAS_STATUS_INVALID_SIZE,
       mublasSgemv(h_, N, 3, 2, &one, a, 2, x.data(), 1, &one, y.data(), 1)},
      {"sgemv null x", MUBLAS_STATUS_INVALID_POINTER,
       mublasSgemv(h_, N, 2, 2, &one, a, 2, nullptr, 1, &one, y.data(), 1)},
      {"sgbmv lda < kl + ku + 1", MUBLAS_STATUS_INVALID_SIZE,
       mublasSgbmv(h_, N, 4, 4, 1, 1, &one, a, 2, x.data(), 1, &one, y.data(), 1)},
      {"stbmv k < 0", MUBLAS_STATUS_INVALID_SIZE,
       mublasStbmv(h_, U, N, ND, 4, -1, a, 2, x.data(), 1)},
      {"ssyr null handle", MUBLAS_STATUS_INVALID_HANDLE,
       mublasSsyr(nullptr, U, 2, &one, x.data(), 1, a, 2)},
      {"sger lda < m", MUBLAS_STATUS_INVALID_SIZE,
       mublasSger(h_, 3, 2, &one, x.data(), 1, y.data(), 1, a, 2)},
      {"saxpy null alpha", MUBLAS_STATUS_INVALID_POINTER,
       mublasSaxpy(h_, 4, nullptr, x.data(), 1, y.data(), 1)},
      {"sdot null result", MUBLAS_STATUS_INVALID_POINTER,
       mublasSdot(h_, 4, x.data(), 1, y.data(), 1, nullptr)},
      {"snrm2 null x", MUBLAS_STATUS_INVALID_POINTER, mublasSnrm2(h_, 4, nullptr, 1, &r)},
      {"isamax null handle", MUBLAS_STATUS_INVALID_HANDLE,
       mublasIsamax(nullptr, 4, x.data(), 1, &ir)},
      {"sgeam cuBLAS op value", MUBLAS_STATUS_INVALID_VALUE,
       mublasSgeam(h_, cublas_op_t, N, 2, 2, &one, a, 2, &one, a, 2, c, 2)},
      {"sdgmm ldc < m", MUBLAS_STATUS_INVALID_SIZE,
       mublasSdgmm(h_, L, 3, 2, a, 3, x.data(), 1, c, 2)},
      {"sgemmStridedBatched batch < 0", MUBLAS_STATUS_INVALID_SIZE,
       mublasSgemmStridedBatched(h_, N, N, 2, 2, 2, &one, a, 2, 4, a, 2, 4, &one, c, 2, 4, -1)},
      {"sgemmBatched null arrays", MUBLAS_STATUS_INVALID_POINTER,
       mublasSgemmBatched(h_, N, N, 2, 2, 2, &one, nullptr, 2, nullptr, 2, &one, nullptr, 2, 1)},
      {"sgetrfBatched lda < n", MUBLAS_STATUS_INVALID_SIZE,
       mublasSgetrfBatched(h_, 3, &c, 2, nullptr, &ir, 1)},
      {"sgetrfBatched null info", MUBLAS_STATUS_INVALID_POINTER,
       mublasSgetrfBatched(h_, 2, &c, 2, nullptr, nullptr, 1)},
      {"strmm cuBLAS side value", MUBLAS_STATUS_INVALID_VALUE,
       mublasStrmm(h_, static_cast<mublasSideMode_t>(0), U, N, ND, 2, 2, &one, a, 2, a, 2, c, 2)},
  };
  for (const Case& cs : cases) EXPECT_EQ(cs.want, cs.got) << cs.what;
  sync();
}

// Work queued on a stream waits for the work before it (a host function holding the stream).
TEST_F(Handle, WorkRunsInStreamOrder) {
  musaStream_t s = nullptr;
  ASSERT_EQ(musaSuccess, musaStreamCreate(&s));
  MU_OK(mublasSetStream(h_, s));
  std::vector<float> x(8, 1), y(8, 0);
  const float two = 2;
  Gate gate;
  gate.hold(s);
  gate.wait_entered();
  MU_OK(mublasSaxpy(h_, 8, &two, x.data(), 1, y.data(), 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(musaErrorNotReady, musaStreamQuery(s));
  for (float v : y) EXPECT_EQ(0, v) << "ran before the work ahead of it";
  gate.open();
  ASSERT_EQ(musaSuccess, musaStreamSynchronize(s));
  for (float v : y) EXPECT_EQ(2, v);
  MU_OK(mublasSetStream(h_, nullptr));
  ASSERT_EQ(musaSuccess, musaStreamDestroy(s));
}

// Device pointer mode: scalars are read when the work runs; host pointer mode: at the call.
TEST_F(Handle, PointerModesReadScalarsAtTheRightTime) {
  musaStream_t s = nullptr;
  ASSERT_EQ(musaSuccess, musaStreamCreate(&s));
  MU_OK(mublasSetStream(h_, s));
  const int n = 4;
  std::vector<double> A(n * n, 1), x(n, 1);
  for (mublasPointerMode_t mode : {MUBLAS_POINTER_MODE_DEVICE, MUBLAS_POINTER_MODE_HOST}) {
    MU_OK(mublasSetPointerMode(h_, mode));
    std::vector<double> y(n, 1), z(n, 0);
    double alpha = 1, beta = 0;
    Gate gate;
    gate.hold(s);
    gate.wait_entered();
    MU_OK(mublasDgemv(h_, MUBLAS_OP_N, n, n, &alpha, A.data(), n, x.data(), 1, &beta, y.data(), 1));
    MU_OK(mublasDaxpy(h_, n, &alpha, x.data(), 1, z.data(), 1));
    alpha = 10;  // after the calls, before the work runs
    beta = 100;
    gate.open();
    ASSERT_EQ(musaSuccess, musaStreamSynchronize(s));
    const bool device = mode == MUBLAS_POINTER_MODE_DEVICE;
    for (double v : y) EXPECT_EQ(device ? 10 * n + 100 : n, v) << "mode " << mode;
    for (double v : z) EXPECT_EQ(device ? 10 : 1, v) << "mode " << mode;
  }
  MU_OK(mublasSetPointerMode(h_, MUBLAS_POINTER_MODE_HOST));
  MU_OK(mublasSetStream(h_, nullptr));
  ASSERT_EQ(musaSuccess, musaStreamDestroy(s));
}

// A reduction into host memory returns only once written (host mode); in device mode the call
// returns at once and the result appears in stream order.
TEST_F(Handle, ReductionResultsBlockOnlyInHostMode) {
  musaStream_t s = nullptr;
  ASSERT_EQ(musaSuccess, musaStreamCreate(&s));
  MU_OK(mublasSetStream(h_, s));
  std::vector<float> x(16, 1);
  {
    Gate gate;
    gate.hold(s);
    gate.wait_entered();
    std::atomic<bool> returned{false};
    float result = -1;
    std::thread t([&] {
      EXPECT_EQ(MUBLAS_STATUS_SUCCESS, mublasSdot(h_, 16, x.data(), 1, x.data(), 1, &result));
      returned = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(returned.load()) << "host-mode dot returned before its work ran";
    gate.open();
    t.join();
    EXPECT_EQ(16, result);
  }
  {
    MU_OK(mublasSetPointerMode(h_, MUBLAS_POINTER_MODE_DEVICE));
    Gate gate;
    gate.hold(s);
    gate.wait_entered();
    float result = -1;
    MU_OK(mublasSdot(h_, 16, x.data(), 1, x.data(), 1, &result));  // returns while held
    EXPECT_EQ(-1, result);
    gate.open();
    ASSERT_EQ(musaSuccess, musaStreamSynchronize(s));
    EXPECT_EQ(16, result);
    MU_OK(mublasSetPointerMode(h_, MUBLAS_POINTER_MODE_HOST));
  }
  MU_OK(mublasSetStream(h_, nullptr));
  ASSERT_EQ(musaSuccess, musaStreamDestroy(s));
}

// Work captured into a graph runs at each launch; host-mode reductions cannot be captured.
TEST_F(Handle, GraphCaptureReplaysWork) {
  musaStream_t s = nullptr;
  ASSERT_EQ(musaSuccess, musaStreamCreate(&s));
  MU_OK(mublasSetStream(h_, s));
  std::vector<float> x(8, 1), y(8, 0);
  const float three = 3;
  ASSERT_EQ(musaSuccess, musaStreamBeginCapture(s, musaStreamCaptureModeRelaxed));
  MU_OK(mublasSaxpy(h_, 8, &three, x.data(), 1, y.data(), 1));
  float r = 0;
  EXPECT_EQ(MUBLAS_STATUS_NOT_IMPLEMENTED, mublasSdot(h_, 8, x.data(), 1, x.data(), 1, &r));
  musaGraph_t g = nullptr;
  ASSERT_EQ(musaSuccess, musaStreamEndCapture(s, &g));
  for (float v : y) EXPECT_EQ(0, v) << "captured work ran at capture";
  musaGraphExec_t exec = nullptr;
  ASSERT_EQ(musaSuccess, musaGraphInstantiate(&exec, g, nullptr, nullptr, 0));
  ASSERT_EQ(musaSuccess, musaGraphLaunch(exec, s));
  ASSERT_EQ(musaSuccess, musaGraphLaunch(exec, s));
  ASSERT_EQ(musaSuccess, musaStreamSynchronize(s));
  for (float v : y) EXPECT_EQ(6, v);
  ASSERT_EQ(musaSuccess, musaGraphExecDestroy(exec));
  ASSERT_EQ(musaSuccess, musaGraphDestroy(g));
  MU_OK(mublasSetStream(h_, nullptr));
  ASSERT_EQ(musaSuccess, musaStreamDestroy(s));
}

// Handles used from several threads at once, each on its own stream.
TEST_F(Handle, ConcurrentHandlesOnTheirOwnStreams) {
  constexpr int kThreads = 4, kN = 48;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t, &failures] {
      mublasHandle_t h = nullptr;
      musaStream_t s = nullptr;
      if (mublasCreate(&h) != MUBLAS_STATUS_SUCCESS || musaStreamCreate(&s) != musaSuccess) {
        ++failures;
        return;
      }
      mublasSetStream(h, s);
      std::vector<double> A(kN * kN, 1.0 / kN), B(kN * kN, t + 1), C(kN * kN, 0);
      const double one = 1, zero = 0;
      for (int rep = 0; rep < 5; ++rep)
        if (mublasDgemm(h, MUBLAS_OP_N, MUBLAS_OP_N, kN, kN, kN, &one, A.data(), kN, B.data(), kN,
                        &zero, C.data(), kN) != MUBLAS_STATUS_SUCCESS)
          ++failures;
      musaStreamSynchronize(s);
      for (double v : C)
        if (std::abs(v - (t + 1)) > 1e-12) ++failures;
      mublasDestroy(h);
      musaStreamDestroy(s);
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(0, failures.load());
}

// Work submitted to an idle stream runs on the caller's thread (musaSimLaunchHostFuncOrRun); the
// stream order must hold either way: work behind a busy stream waits, and what is queued after
// work that ran at once sees its result.
void wait_for_flag(void* p) {
  auto* flag = static_cast<std::atomic<bool>*>(p);
  while (!flag->load()) std::this_thread::yield();
}
void copy_first(void* p) {
  auto* v = static_cast<float*>(p);
  v[1] = v[0];
}

TEST_F(Handle, StreamOrderHoldsWhetherWorkRunsAtOnceOrQueued) {
  musaStream_t s = nullptr;
  ASSERT_EQ(musaSuccess, musaStreamCreate(&s));
  MU_OK(mublasSetStream(h_, s));
  float* x = nullptr;
  ASSERT_EQ(musaSuccess, musaMallocManaged(reinterpret_cast<void**>(&x), 4 * sizeof(float),
                                           musaMemAttachGlobal));
  x[0] = 1.0f;
  const float two = 2.0f;

  // Idle stream: the scaling has happened when the call returns, and a host function queued
  // after it sees the result.
  MU_OK(mublasSscal(h_, 1, &two, x, 1));
  EXPECT_EQ(2.0f, x[0]);
  ASSERT_EQ(musaSuccess, musaLaunchHostFunc(s, copy_first, x));
  ASSERT_EQ(musaSuccess, musaStreamSynchronize(s));
  EXPECT_EQ(2.0f, x[1]);

  // Busy stream: the scaling waits behind the held host function, then runs in order.
  std::atomic<bool> release{false};
  ASSERT_EQ(musaSuccess, musaLaunchHostFunc(s, wait_for_flag, &release));
  MU_OK(mublasSscal(h_, 1, &two, x, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(2.0f, x[0]) << "the scaling ran before the work queued ahead of it";
  EXPECT_EQ(musaErrorNotReady, musaStreamQuery(s));
  release = true;
  ASSERT_EQ(musaSuccess, musaStreamSynchronize(s));
  EXPECT_EQ(4.0f, x[0]);

  // A blocking stream implicitly waits for the legacy stream: held work there keeps the scaling
  // on `s` queued too.
  release = false;
  ASSERT_EQ(musaSuccess, musaLaunchHostFunc(nullptr, wait_for_flag, &release));
  MU_OK(mublasSscal(h_, 1, &two, x, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(4.0f, x[0]) << "the scaling ignored the legacy stream's pending work";
  release = true;
  ASSERT_EQ(musaSuccess, musaDeviceSynchronize());
  EXPECT_EQ(8.0f, x[0]);

  MU_OK(mublasSetStream(h_, nullptr));
  ASSERT_EQ(musaSuccess, musaFree(x));
  ASSERT_EQ(musaSuccess, musaStreamDestroy(s));
}

// Operands beyond their allocations are what a GPU makes of them: the call succeeds, the work
// does not run, and the device takes the sticky musaErrorIllegalAddress, reported by the next
// synchronisation; the allocations around are untouched and the process lives. musaDeviceReset
// clears the fault, as it clears a GPU context's.
TEST_F(Handle, OperandsBeyondTheirAllocationsFaultTheDevice) {
  float *a = nullptr, *c = nullptr, *next = nullptr;
  ASSERT_EQ(musaSuccess, musaMalloc(reinterpret_cast<void**>(&a), 4 * 4 * sizeof(float)));
  ASSERT_EQ(musaSuccess, musaMalloc(reinterpret_cast<void**>(&c), 4 * 4 * sizeof(float)));
  ASSERT_EQ(musaSuccess, musaMalloc(reinterpret_cast<void**>(&next), 4096));
  ASSERT_EQ(musaSuccess, musaMemset(next, 0x5a, 4096));
  ASSERT_EQ(musaSuccess, musaMemset(c, 0, 4 * 4 * sizeof(float)));
  const float one = 1.0f, zero = 0.0f;
  // A 4 x 4 product over 4 x 4 buffers is fine; k = 64 reads A and B far beyond theirs.
  MU_OK(mublasSgemm(h_, MUBLAS_OP_N, MUBLAS_OP_N, 4, 4, 4, &one, a, 4, a, 4, &zero, c, 4));
  sync();
  testing::internal::CaptureStderr();
  MU_OK(mublasSgemm(h_, MUBLAS_OP_N, MUBLAS_OP_N, 4, 4, 64, &one, a, 4, a, 64, &zero, c, 4));
  EXPECT_EQ(musaErrorIllegalAddress, musaDeviceSynchronize());
  EXPECT_EQ(musaErrorIllegalAddress, musaDeviceSynchronize());  // sticky
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("gemm: operand A spans"), std::string::npos) << log;
  EXPECT_NE(log.find("musaErrorIllegalAddress"), std::string::npos) << log;
  ASSERT_EQ(musaSuccess, musaDeviceReset());
  EXPECT_EQ(musaSuccess, musaDeviceSynchronize());
  // The strided and GemmEx forms check each batch entry.
  ASSERT_EQ(musaSuccess, musaMalloc(reinterpret_cast<void**>(&a), 4 * 4 * sizeof(float)));
  ASSERT_EQ(musaSuccess, musaMalloc(reinterpret_cast<void**>(&c), 4 * 4 * sizeof(float)));
  std::vector<unsigned char> host(4096);
  ASSERT_EQ(musaSuccess, musaMalloc(reinterpret_cast<void**>(&next), 4096));
  ASSERT_EQ(musaSuccess, musaMemset(next, 0x5a, 4096));
  testing::internal::CaptureStderr();
  MU_OK(mublasSgemmStridedBatched(h_, MUBLAS_OP_N, MUBLAS_OP_N, 4, 4, 4, &one, a, 4, 16, a, 4, 16,
                                  &zero, c, 4, 16, 3));
  EXPECT_EQ(musaErrorIllegalAddress, musaDeviceSynchronize());
  ASSERT_EQ(musaSuccess, musaMemcpy(host.data(), next, 4096, musaMemcpyDeviceToHost));
  for (unsigned char v : host) ASSERT_EQ(0x5a, v);  // the neighbour was not written
  ASSERT_EQ(musaSuccess, musaDeviceReset());
  ASSERT_EQ(musaSuccess, musaMalloc(reinterpret_cast<void**>(&a), 4 * 4 * sizeof(float)));
  MU_OK(mublasGemmEx(h_, MUBLAS_OP_T, MUBLAS_OP_N, 4, 4, 4, &one, a, MUSA_R_32F, 4, a, MUSA_R_32F,
                     4, &zero, a + 8, MUSA_R_32F, 4, MUBLAS_COMPUTE_32F, MUBLAS_GEMM_DEFAULT));
  EXPECT_EQ(musaErrorIllegalAddress, musaDeviceSynchronize());
  const std::string log2 = testing::internal::GetCapturedStderr();
  EXPECT_NE(log2.find("gemm (batched): operand"), std::string::npos) << log2;
  EXPECT_NE(log2.find("gemm (GemmEx): operand C"), std::string::npos) << log2;
  ASSERT_EQ(musaSuccess, musaDeviceReset());
}

// Memory outside every allocation is host memory, which the simulated devices address (as GPUs
// with HMM do); but a span from there that runs into device memory, or wraps the address space,
// is an overrun (host and device memory lie apart on a GPU): the device faults, nothing is
// written, whatever host memory precedes the allocation.
TEST_F(Handle, HostSpansRunningIntoDeviceMemoryFaultTheDevice) {
  float* d = nullptr;
  ASSERT_EQ(musaSuccess, musaMalloc(reinterpret_cast<void**>(&d), 4096));
  ASSERT_EQ(musaSuccess, musaMemset(d, 0x5a, 4096));
  const auto before = reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(d) - 64);
  EXPECT_EQ(musaErrorIllegalAddress, musaSimCheckRange(before, 128));
  EXPECT_EQ(musaSuccess, musaSimCheckRange(before, 64));  // ends where the allocation starts
  EXPECT_EQ(musaErrorIllegalAddress, musaSimCheckRange(before, SIZE_MAX));
  std::vector<float> host(64, 1.0f);
  EXPECT_EQ(musaSuccess, musaSimCheckRange(host.data(), host.size() * sizeof(float)));
  // A GEMM whose C starts in host memory 64 bytes before the allocation and runs into it.
  const float one = 1.0f, zero = 0.0f;
  auto* c = reinterpret_cast<float*>(reinterpret_cast<uintptr_t>(d) - 64);
  testing::internal::CaptureStderr();
  MU_OK(mublasSgemm(h_, MUBLAS_OP_N, MUBLAS_OP_N, 8, 8, 8, &one, d, 8, d, 8, &zero, c, 8));
  EXPECT_EQ(musaErrorIllegalAddress, musaDeviceSynchronize());
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("gemm: operand C spans 256 bytes"), std::string::npos) << log;
  ASSERT_EQ(musaSuccess, musaDeviceReset());
}

}  // namespace
}  // namespace bt
