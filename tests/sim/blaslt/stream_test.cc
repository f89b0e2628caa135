// mublasLtMatmul on streams: it runs in stream order (after earlier work, before later work),
// asynchronously, across streams through events, inside captured graphs (replayed), and from
// several threads at once.
#include "lt_test_util.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

namespace {

using namespace lt_test;

// A square n x n float problem D = A * B (column-major) with its own buffers.
struct Square {
  int64_t n;
  DeviceBuffer a, b, d;
  Layout l;
  Square(int64_t size)
      : n(size), a(bytes()), b(bytes()), d(bytes()), l(MUSA_R_32F, size, size, size) {}
  size_t bytes() const { return static_cast<size_t>(n * n) * sizeof(float); }
  float* A() const { return static_cast<float*>(a.get()); }
  float* B() const { return static_cast<float*>(b.get()); }
  float* D() const { return static_cast<float*>(d.get()); }
  // Reference of D = alpha * A * B from the current host-visible contents.
  std::vector<double> reference(double alpha) const {
    std::vector<double> r(static_cast<size_t>(n * n));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) {
        double acc = 0;
        for (int64_t k = 0; k < n; ++k) acc += double{A()[i + k * n]} * double{B()[k + j * n]};
        r[static_cast<size_t>(i + j * n)] = alpha * acc;
      }
    return r;
  }
};

void fill(float* p, int64_t count, float base) {
  for (int64_t i = 0; i < count; ++i) p[i] = base + static_cast<float>(i % 7) * 0.25f;
}

struct Gate {
  std::atomic<bool> open{false};
  static void wait(void* p) {
    auto* g = static_cast<Gate*>(p);
    while (!g->open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
};

struct Rewrite {
  float* dst;
  int64_t count;
  float value;
  static void run(void* p) {
    auto* r = static_cast<Rewrite*>(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    for (int64_t i = 0; i < r->count; ++i) r->dst[i] = r->value;
  }
};

struct Snapshot {
  const float* src;
  std::vector<float> copy;
  static void run(void* p) {
    auto* s = static_cast<Snapshot*>(p);
    std::memcpy(s->copy.data(), s->src, s->copy.size() * sizeof(float));
  }
};

TEST(MatmulStream, OrderedWithEarlierAndLaterWork) {
  Square sq(24);
  fill(sq.A(), 24 * 24, 1.0f);
  fill(sq.B(), 24 * 24, -0.5f);
  std::fill(sq.D(), sq.D() + 24 * 24, -1.0f);
  Handle h;
  Desc desc(MUBLAS_COMPUTE_32F, MUSA_R_32F);
  Stream s;
  // Earlier work rewrites A after a delay; the matmul must see the new A.
  Rewrite rw{sq.A(), 24 * 24, 0.5f};
  ASSERT_MU_OK(musaLaunchHostFunc(s.s, Rewrite::run, &rw));
  const float alpha = 2.0f, beta = 0.0f;
  ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, &alpha, sq.A(), sq.l.l, sq.B(), sq.l.l, &beta, sq.D(),
                              sq.l.l, sq.D(), sq.l.l, nullptr, nullptr, 0, s.s));
  // Later work sees the finished D.
  Snapshot snap{sq.D(), std::vector<float>(24 * 24, 0.0f)};
  ASSERT_MU_OK(musaLaunchHostFunc(s.s, Snapshot::run, &snap));
  ASSERT_MU_OK(musaStreamSynchronize(s.s));
  const std::vector<double> ref = sq.reference(2.0);
  for (size_t i = 0; i < ref.size(); ++i) {
    ASSERT_NEAR(ref[i], sq.D()[i], 1e-4 * std::fabs(ref[i]) + 1e-5) << i;
    ASSERT_EQ(sq.D()[i], snap.copy[i]) << i;
  }
}

TEST(MatmulStream, AsynchronousUntilTheStreamRuns) {
  Square sq(8);
  fill(sq.A(), 64, 1.0f);
  fill(sq.B(), 64, 1.0f);
  std::fill(sq.D(), sq.D() + 64, -3.0f);
  Handle h;
  Desc desc(MUBLAS_COMPUTE_32F, MUSA_R_32F);
  Stream s;
  Gate gate;
  ASSERT_MU_OK(musaLaunchHostFunc(s.s, Gate::wait, &gate));
  const float alpha = 1.0f, beta = 0.0f;
  ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, &alpha, sq.A(), sq.l.l, sq.B(), sq.l.l, &beta, sq.D(),
                              sq.l.l, sq.D(), sq.l.l, nullptr, nullptr, 0, s.s));
  EXPECT_EQ(musaErrorNotReady, musaStreamQuery(s.s));
  // Not written while the stream is held. (Device memory is host memory in the simulator; the
  // stream's worker has not passed the gate, so reading here does not race with it.)
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (int i = 0; i < 64; ++i) EXPECT_EQ(-3.0f, sq.D()[i]) << i;
  gate.open = true;
  ASSERT_MU_OK(musaStreamSynchronize(s.s));
  const std::vector<double> ref = sq.reference(1.0);
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(ref[i], sq.D()[i], 1e-4) << i;
}

TEST(MatmulStream, AcrossStreamsThroughEvents) {
  // D1 = A * B on stream 1, then D2 = D1 * B on stream 2 after an event.
  Square first(16), second(16);
  fill(first.A(), 256, 0.25f);
  fill(first.B(), 256, 0.5f);
  std::memcpy(second.B(), first.B(), first.bytes());
  Handle h;
  Desc desc(MUBLAS_COMPUTE_32F, MUSA_R_32F);
  Stream s1, s2;
  Gate gate;
  ASSERT_MU_OK(musaLaunchHostFunc(s1.s, Gate::wait, &gate));  // stream 1 is slow
  const float alpha = 1.0f, beta = 0.0f;
  ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, &alpha, first.A(), first.l.l, first.B(), first.l.l,
                              &beta, first.D(), first.l.l, first.D(), first.l.l, nullptr, nullptr,
                              0, s1.s));
  musaEvent_t ev = nullptr;
  ASSERT_MU_OK(musaEventCreate(&ev));
  ASSERT_MU_OK(musaEventRecord(ev, s1.s));
  ASSERT_MU_OK(musaStreamWaitEvent(s2.s, ev, 0));
  ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, &alpha, first.D(), first.l.l, second.B(), second.l.l,
                              &beta, second.D(), second.l.l, second.D(), second.l.l, nullptr,
                              nullptr, 0, s2.s));
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  gate.open = true;
  ASSERT_MU_OK(musaStreamSynchronize(s2.s));
  std::memcpy(second.A(), first.D(), first.bytes());
  const std::vector<double> ref = second.reference(1.0);
  for (size_t i = 0; i < ref.size(); ++i) {
    EXPECT_NEAR(ref[i], second.D()[i], 1e-4 * std::fabs(ref[i]) + 1e-5) << i;
  }
  ASSERT_MU_OK(musaEventDestroy(ev));
}

TEST(MatmulStream, CapturedIntoAGraphAndReplayed) {
  Square sq(12);
  fill(sq.A(), 144, 1.0f);
  fill(sq.B(), 144, 2.0f);
  DeviceBuffer alpha_dev(sizeof(float)), beta_dev(sizeof(float));
  float* alpha = static_cast<float*>(alpha_dev.get());
  float* beta = static_cast<float*>(beta_dev.get());
  *alpha = 1.0f;
  *beta = 0.0f;
  Handle h;
  Desc desc(MUBLAS_COMPUTE_32F, MUSA_R_32F);
  ASSERT_LT_OK(desc.set(MUBLASLT_MATMUL_DESC_POINTER_MODE, int32_t{MUBLASLT_POINTER_MODE_DEVICE}));
  Stream s;
  ASSERT_MU_OK(musaStreamBeginCapture(s.s, musaStreamCaptureModeGlobal));
  ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, alpha, sq.A(), sq.l.l, sq.B(), sq.l.l, beta, sq.D(),
                              sq.l.l, sq.D(), sq.l.l, nullptr, nullptr, 0, s.s));
  musaGraph_t graph = nullptr;
  ASSERT_MU_OK(musaStreamEndCapture(s.s, &graph));
  // Nothing ran during capture.
  std::fill(sq.D(), sq.D() + 144, -9.0f);
  musaGraphExec_t exec = nullptr;
  ASSERT_MU_OK(musaGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
  ASSERT_MU_OK(musaGraphDestroy(graph));  // the executable graph keeps the work alive
  for (int replay = 0; replay < 3; ++replay) {
    *alpha = static_cast<float>(replay + 1);  // device scalars are read at each run
    fill(sq.A(), 144, static_cast<float>(replay));
    ASSERT_MU_OK(musaGraphLaunch(exec, s.s));
    ASSERT_MU_OK(musaStreamSynchronize(s.s));
    const std::vector<double> ref = sq.reference(replay + 1.0);
    for (size_t i = 0; i < ref.size(); ++i) {
      ASSERT_NEAR(ref[i], sq.D()[i], 1e-4 * std::fabs(ref[i]) + 1e-5) << "replay " << replay;
    }
  }
  ASSERT_MU_OK(musaGraphExecDestroy(exec));
}

TEST(MatmulStream, ManyThreadsEachWithAHandleAndStream) {
  constexpr int kThreads = 4, kIters = 10;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      Square sq(16 + t);
      const int64_t n = sq.n;
      fill(sq.A(), n * n, 0.5f * static_cast<float>(t));
      fill(sq.B(), n * n, 1.0f);
      Handle h;
      Desc desc(MUBLAS_COMPUTE_32F, MUSA_R_32F);
      Stream s;
      for (int it = 0; it < kIters; ++it) {
        const float alpha = static_cast<float>(it + 1), beta = 0.0f;
        if (mublasLtMatmul(h.h, desc.d, &alpha, sq.A(), sq.l.l, sq.B(), sq.l.l, &beta, sq.D(),
                           sq.l.l, sq.D(), sq.l.l, nullptr, nullptr, 0,
                           s.s) != MUBLAS_STATUS_SUCCESS ||
            musaStreamSynchronize(s.s) != musaSuccess) {
          ++failures;
          return;
        }
        const std::vector<double> ref = sq.reference(it + 1.0);
        for (size_t i = 0; i < ref.size(); ++i) {
          if (std::fabs(ref[i] - sq.D()[i]) > 1e-4 * std::fabs(ref[i]) + 1e-5) {
            ++failures;
            return;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(0, failures.load());
}

// Many matmuls queued back to back on one stream, each reading the previous result.
TEST(MatmulStream, ChainOfDependentMatmuls) {
  constexpr int64_t n = 6;
  constexpr int kSteps = 20;
  std::vector<std::unique_ptr<DeviceBuffer>> bufs;
  for (int i = 0; i <= kSteps; ++i) {
    bufs.push_back(std::make_unique<DeviceBuffer>(n * n * sizeof(double)));
  }
  DeviceBuffer eye(n * n * sizeof(double));
  double* I = static_cast<double*>(eye.get());
  for (int64_t i = 0; i < n * n; ++i) I[i] = (i % (n + 1) == 0) ? 1.0 : 0.0;
  double* x0 = static_cast<double*>(bufs[0]->get());
  for (int64_t i = 0; i < n * n; ++i) x0[i] = static_cast<double>(i);
  Handle h;
  Desc desc(MUBLAS_COMPUTE_64F, MUSA_R_64F);
  Layout l(MUSA_R_64F, n, n, n);
  Stream s;
  // x_{i+1} = 2 * I * x_i + 1 * x_i = 3 x_i (C = x_i, D = x_{i+1}).
  const double alpha = 2.0, beta = 1.0;
  for (int i = 0; i < kSteps; ++i) {
    ASSERT_LT_OK(mublasLtMatmul(h.h, desc.d, &alpha, I, l.l, bufs[i]->get(), l.l, &beta,
                                bufs[i]->get(), l.l, bufs[i + 1]->get(), l.l, nullptr, nullptr, 0,
                                s.s));
  }
  ASSERT_MU_OK(musaStreamSynchronize(s.s));
  const double* last = static_cast<const double*>(bufs[kSteps]->get());
  for (int64_t i = 0; i < n * n; ++i)
    EXPECT_EQ(static_cast<double>(i) * std::pow(3.0, kSteps), last[i]);
}

}  // namespace
