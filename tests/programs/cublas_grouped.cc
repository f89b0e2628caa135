// A cuBLAS application using grouped GEMM (cublasSgemmGroupedBatched, cublasDgemmGroupedBatched,
// cublasGemmGroupedBatchedEx and a _64 form) and the emulation controls, built twice: against
// NVIDIA's CUDA 13 and CUDA 12 headers and libraries (libcublas.so.13 / .12, libcudart.so.13 /
// .12), so each ABI's exports serve it. Three groups differing in operations, sizes, leading
// dimensions, alpha and beta, in host and device pointer mode, every result checked against a
// host reference; argument errors; the emulation settings' defaults and round trips. Nothing in
// it knows about torchada: under the shim it runs on the simulator's muBLAS.
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "check_cublas.h"

namespace {

std::mt19937 rng(4321);

// The groups: operations, sizes, leading dimensions larger than needed in places, scalars.
struct Group {
  cublasOperation_t ta, tb;
  int m, n, k, lda, ldb, ldc, size;
  double alpha, beta;
};
const Group kGroups[] = {
    {CUBLAS_OP_N, CUBLAS_OP_N, 17, 13, 9, 19, 9, 17, 2, 1.5, -0.5},
    {CUBLAS_OP_T, CUBLAS_OP_N, 8, 21, 16, 16, 20, 11, 3, -1.0, 0.25},
    {CUBLAS_OP_N, CUBLAS_OP_T, 31, 5, 12, 31, 7, 33, 1, 0.5, 2.0},
};
constexpr int kGroupCount = 3;

// One problem's host data (as doubles, the values the device type holds exactly) and device
// buffers.
struct Problem {
  int group;
  std::vector<double> A, B, C;
  void *dA = nullptr, *dB = nullptr, *dC = nullptr;
};

double rounded(double v, bool bf16) {
  return bf16 ? double(__bfloat162float(__float2bfloat16(float(v)))) : double(float(v));
}

// Column-major reference: C = alpha op(A) op(B) + beta C.
std::vector<double> reference(const Group& g, const Problem& p) {
  std::vector<double> C = p.C;
  for (int j = 0; j < g.n; ++j)
    for (int i = 0; i < g.m; ++i) {
      double acc = 0;
      for (int q = 0; q < g.k; ++q) {
        const double a =
            g.ta == CUBLAS_OP_N ? p.A[i + size_t(q) * g.lda] : p.A[q + size_t(i) * g.lda];
        const double b =
            g.tb == CUBLAS_OP_N ? p.B[q + size_t(j) * g.ldb] : p.B[j + size_t(q) * g.ldb];
        acc += a * b;
      }
      C[i + size_t(j) * g.ldc] = g.alpha * acc + g.beta * C[i + size_t(j) * g.ldc];
    }
  return C;
}

template <class T>
void* upload(const std::vector<double>& v) {
  std::vector<T> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = T(v[i]);
  void* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <class T>
std::vector<double> download(const void* d, size_t n) {
  std::vector<T> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return std::vector<double>(h.begin(), h.end());
}

template <class T>
T* device_array(const std::vector<T>& host) {
  T* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, host.size() * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

// Every problem of every group, with random data; the pointer arrays concatenated over groups,
// on the device.
template <class TAB, class TC>
struct Batch {
  std::vector<Problem> problems;
  void** dAptrs = nullptr;
  void** dBptrs = nullptr;
  void** dCptrs = nullptr;

  // bf16: A and B (and C when it is bf16 too) hold values bf16 represents exactly.
  explicit Batch(bool bf16) {
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    std::vector<void*> a, b, c;
    for (int gi = 0; gi < kGroupCount; ++gi) {
      const Group& g = kGroups[gi];
      for (int s = 0; s < g.size; ++s) {
        Problem p;
        p.group = gi;
        p.A.resize(size_t(g.lda) * (g.ta == CUBLAS_OP_N ? g.k : g.m));
        p.B.resize(size_t(g.ldb) * (g.tb == CUBLAS_OP_N ? g.n : g.k));
        p.C.resize(size_t(g.ldc) * g.n);
        for (auto& x : p.A) x = rounded(d(rng), bf16);
        for (auto& x : p.B) x = rounded(d(rng), bf16);
        for (auto& x : p.C) x = rounded(d(rng), bf16 && sizeof(TC) == 2);
        p.dA = upload<TAB>(p.A), p.dB = upload<TAB>(p.B), p.dC = upload<TC>(p.C);
        a.push_back(p.dA), b.push_back(p.dB), c.push_back(p.dC);
        problems.push_back(std::move(p));
      }
    }
    dAptrs = device_array(a), dBptrs = device_array(b), dCptrs = device_array(c);
  }
  ~Batch() {
    for (auto& p : problems) cudaFree(p.dA), cudaFree(p.dB), cudaFree(p.dC);
    cudaFree(dAptrs), cudaFree(dBptrs), cudaFree(dCptrs);
  }
  // The largest difference from the reference over every problem; also reports an untouched C
  // (the C values outside the m x n block, between ldc rows, must stay).
  double error() const {
    double e = 0;
    for (const auto& p : problems) {
      const Group& g = kGroups[p.group];
      const auto want = reference(g, p);
      const auto got = download<TC>(p.dC, p.C.size());
      for (size_t i = 0; i < got.size(); ++i) e = std::fmax(e, std::fabs(got[i] - want[i]));
    }
    return e;
  }
  // True when every C still holds its initial values.
  bool untouched() const {
    for (const auto& p : problems)
      if (download<TC>(p.dC, p.C.size()) != p.C) return false;
    return true;
  }
};

struct Params {
  std::vector<cublasOperation_t> ta, tb;
  std::vector<int> m, n, k, lda, ldb, ldc, size;
  Params() {
    for (const Group& g : kGroups) {
      ta.push_back(g.ta), tb.push_back(g.tb), m.push_back(g.m), n.push_back(g.n);
      k.push_back(g.k), lda.push_back(g.lda), ldb.push_back(g.ldb), ldc.push_back(g.ldc);
      size.push_back(g.size);
    }
  }
};

template <class S>
std::vector<S> alphas() {
  std::vector<S> v;
  for (const Group& g : kGroups) v.push_back(S(g.alpha));
  return v;
}
template <class S>
std::vector<S> betas() {
  std::vector<S> v;
  for (const Group& g : kGroups) v.push_back(S(g.beta));
  return v;
}

// The scalars where the pointer mode wants them: the host vectors, or device copies.
template <class S>
struct Scalars {
  std::vector<S> alpha = alphas<S>(), beta = betas<S>();
  S *dalpha = nullptr, *dbeta = nullptr;
  bool device;
  explicit Scalars(bool on_device) : device(on_device) {
    if (device) dalpha = device_array(alpha), dbeta = device_array(beta);
  }
  ~Scalars() { cudaFree(dalpha), cudaFree(dbeta); }
  const S* a() const { return device ? dalpha : alpha.data(); }
  const S* b() const { return device ? dbeta : beta.data(); }
};

void set_mode(cublasHandle_t h, bool device) {
  CUBLAS_CHECK(
      cublasSetPointerMode(h, device ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
}

// Whether a grouped call ran. With device scalars cuBLAS answers CUBLAS_STATUS_NOT_SUPPORTED (an
// H200's cuBLAS 13.1 does) while the emulation computes the product: either is right, and a
// result that is computed is checked; any other failure stops the program.
bool grouped_ran(cublasStatus_t st, bool device, const char* what) {
  if (device && st == CUBLAS_STATUS_NOT_SUPPORTED) {
    std::printf("  ok   %s: CUBLAS_STATUS_NOT_SUPPORTED, cuBLAS's answer\n", what);
    return false;
  }
  if (st != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "FAIL %s: %s\n", what, cublasGetStatusName(st));
    std::exit(1);
  }
  return true;
}

void test_sgemm(cublasHandle_t h, cudaStream_t stream, bool device) {
  const char* what = device ? "sgemmGroupedBatched, 3 groups, device scalars"
                            : "sgemmGroupedBatched, 3 groups, host scalars";
  Batch<float, float> batch(false);
  Params p;
  Scalars<float> s(device);
  set_mode(h, device);
  const cublasStatus_t st = cublasSgemmGroupedBatched(
      h, p.ta.data(), p.tb.data(), p.m.data(), p.n.data(), p.k.data(), s.a(),
      reinterpret_cast<const float* const*>(batch.dAptrs), p.lda.data(),
      reinterpret_cast<const float* const*>(batch.dBptrs), p.ldb.data(), s.b(),
      reinterpret_cast<float* const*>(batch.dCptrs), p.ldc.data(), kGroupCount, p.size.data());
  CUDA_CHECK(cudaStreamSynchronize(stream));
  set_mode(h, false);
  if (grouped_ran(st, device, what)) EXPECT_TRUE_MSG(batch.error() < 1e-4, what);
}

void test_dgemm(cublasHandle_t h, cudaStream_t stream, bool device) {
  const char* what = device ? "dgemmGroupedBatched, 3 groups, device scalars"
                            : "dgemmGroupedBatched, 3 groups, host scalars";
  Batch<double, double> batch(false);
  Params p;
  Scalars<double> s(device);
  set_mode(h, device);
  const cublasStatus_t st = cublasDgemmGroupedBatched(
      h, p.ta.data(), p.tb.data(), p.m.data(), p.n.data(), p.k.data(), s.a(),
      reinterpret_cast<const double* const*>(batch.dAptrs), p.lda.data(),
      reinterpret_cast<const double* const*>(batch.dBptrs), p.ldb.data(), s.b(),
      reinterpret_cast<double* const*>(batch.dCptrs), p.ldc.data(), kGroupCount, p.size.data());
  CUDA_CHECK(cudaStreamSynchronize(stream));
  set_mode(h, false);
  if (grouped_ran(st, device, what)) EXPECT_TRUE_MSG(batch.error() < 1e-12, what);
}

// C has A and B's type: the combinations cuBLAS documents for the grouped Ex form (an H200's
// cuBLAS 13.1 refuses bf16 inputs with an fp32 C, CUBLAS_STATUS_NOT_SUPPORTED).
template <class TAB>
void test_gemm_ex(cublasHandle_t h, cudaStream_t stream, bool device, cudaDataType_t ab_type,
                  double tolerance, const char* what) {
  const bool bf16 = ab_type == CUDA_R_16BF;
  Batch<TAB, TAB> batch(bf16);
  Params p;
  Scalars<float> s(device);
  set_mode(h, device);
  const cublasStatus_t st = cublasGemmGroupedBatchedEx(
      h, p.ta.data(), p.tb.data(), p.m.data(), p.n.data(), p.k.data(), s.a(),
      const_cast<const void* const*>(batch.dAptrs), ab_type, p.lda.data(),
      const_cast<const void* const*>(batch.dBptrs), ab_type, p.ldb.data(), s.b(), batch.dCptrs,
      ab_type, p.ldc.data(), kGroupCount, p.size.data(), CUBLAS_COMPUTE_32F);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  set_mode(h, false);
  if (grouped_ran(st, device, what)) EXPECT_TRUE_MSG(batch.error() < tolerance, what);
}

void test_64(cublasHandle_t h, cudaStream_t stream) {
  Batch<float, float> batch(false);
  Params p;
  std::vector<int64_t> m(p.m.begin(), p.m.end()), n(p.n.begin(), p.n.end()),
      k(p.k.begin(), p.k.end()), lda(p.lda.begin(), p.lda.end()), ldb(p.ldb.begin(), p.ldb.end()),
      ldc(p.ldc.begin(), p.ldc.end()), size(p.size.begin(), p.size.end());
  const auto a = alphas<float>(), b = betas<float>();
  auto call = [&] {
    return cublasSgemmGroupedBatched_64(
        h, p.ta.data(), p.tb.data(), m.data(), n.data(), k.data(), a.data(),
        reinterpret_cast<const float* const*>(batch.dAptrs), lda.data(),
        reinterpret_cast<const float* const*>(batch.dBptrs), ldb.data(), b.data(),
        reinterpret_cast<float* const*>(batch.dCptrs), ldc.data(), int64_t(kGroupCount),
        size.data());
  };
  // A leading dimension beyond 32 bits cannot reach muBLAS: torchada refuses it and writes
  // nothing. NVIDIA's cuBLAS computes with it, which needs a C of 2^33 x n elements: there this
  // is not a check.
  const char* wide = "sgemmGroupedBatched_64 with ldc = 2^33: CUBLAS_STATUS_NOT_SUPPORTED";
  if (check::NvidiaDevice()) {
    check::Skip(wide, "NVIDIA's cuBLAS takes 64-bit leading dimensions");
  } else {
    ldc[2] = int64_t(1) << 33;
    EXPECT_TRUE_MSG(call() == CUBLAS_STATUS_NOT_SUPPORTED, wide);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    EXPECT_TRUE_MSG(batch.untouched(), "the refused _64 call wrote nothing, not even group 0");
    ldc[2] = p.ldc[2];
  }
  CUBLAS_CHECK(call());
  CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_TRUE_MSG(batch.error() < 1e-4, "sgemmGroupedBatched_64 matches the reference");
}

void test_errors(cublasHandle_t h, cudaStream_t stream) {
  Batch<float, float> batch(false);
  Params p;
  const auto a = alphas<float>(), b = betas<float>();
  auto call = [&](int group_count) {
    return cublasSgemmGroupedBatched(
        h, p.ta.data(), p.tb.data(), p.m.data(), p.n.data(), p.k.data(), a.data(),
        reinterpret_cast<const float* const*>(batch.dAptrs), p.lda.data(),
        reinterpret_cast<const float* const*>(batch.dBptrs), p.ldb.data(), b.data(),
        reinterpret_cast<float* const*>(batch.dCptrs), p.ldc.data(), group_count, p.size.data());
  };
  EXPECT_TRUE_MSG(call(-1) == CUBLAS_STATUS_INVALID_VALUE, "group_count -1: INVALID_VALUE");
  EXPECT_TRUE_MSG(call(0) == CUBLAS_STATUS_SUCCESS, "group_count 0: success");
  p.k[1] = -3;
  EXPECT_TRUE_MSG(call(kGroupCount) == CUBLAS_STATUS_INVALID_VALUE,
                  "k < 0 in group 1: INVALID_VALUE");
  p.k[1] = kGroups[1].k;
  p.size[2] = -1;
  EXPECT_TRUE_MSG(call(kGroupCount) == CUBLAS_STATUS_INVALID_VALUE,
                  "group_size < 0 in group 2: INVALID_VALUE");
  p.size[2] = kGroups[2].size;
  p.lda[1] = kGroups[1].k - 1;  // transposed A: lda must be at least k
  EXPECT_TRUE_MSG(call(kGroupCount) == CUBLAS_STATUS_INVALID_VALUE,
                  "lda below k for a transposed A: INVALID_VALUE");
  p.lda[1] = kGroups[1].lda;
  p.ta[0] = static_cast<cublasOperation_t>(77);
  EXPECT_TRUE_MSG(call(kGroupCount) == CUBLAS_STATUS_INVALID_VALUE,
                  "an unknown operation: INVALID_VALUE");
  p.ta[0] = kGroups[0].ta;
  // A NULL Aarray with groups to compute: torchada answers an invalid value. NVIDIA's cuBLAS
  // does not check it and faults on the device (an illegal address, the context lost).
  if (check::NvidiaDevice()) {
    check::Skip("a NULL Aarray: INVALID_VALUE", "NVIDIA's cuBLAS does not check it");
  } else {
    EXPECT_TRUE_MSG(cublasSgemmGroupedBatched(
                        h, p.ta.data(), p.tb.data(), p.m.data(), p.n.data(), p.k.data(), a.data(),
                        nullptr, p.lda.data(), reinterpret_cast<const float* const*>(batch.dBptrs),
                        p.ldb.data(), b.data(), reinterpret_cast<float* const*>(batch.dCptrs),
                        p.ldc.data(), kGroupCount, p.size.data()) == CUBLAS_STATUS_INVALID_VALUE,
                    "a NULL Aarray: INVALID_VALUE");
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_TRUE_MSG(batch.untouched(), "refused calls wrote nothing");
  EXPECT_TRUE_MSG(cublasSgemmGroupedBatched(nullptr, p.ta.data(), p.tb.data(), p.m.data(),
                                            p.n.data(), p.k.data(), a.data(), nullptr, p.lda.data(),
                                            nullptr, p.ldb.data(), b.data(), nullptr, p.ldc.data(),
                                            0, p.size.data()) == CUBLAS_STATUS_NOT_INITIALIZED,
                  "a NULL handle: NOT_INITIALIZED");
  // An empty group between two others: the offsets into the pointer arrays skip nothing.
  std::vector<int> sizes = {kGroups[0].size, 0, kGroups[1].size + kGroups[2].size};
  Params q;
  CUBLAS_CHECK(cublasSgemmGroupedBatched(
      h, q.ta.data(), q.tb.data(), q.m.data(), q.n.data(), q.k.data(), a.data(),
      reinterpret_cast<const float* const*>(batch.dAptrs), q.lda.data(),
      reinterpret_cast<const float* const*>(batch.dBptrs), q.ldb.data(), b.data(),
      reinterpret_cast<float* const*>(batch.dCptrs), q.ldc.data(), 1, sizes.data()));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  // Only group 0 ran (group_count 1): its problems match, the others are untouched.
  double e = 0;
  bool rest_untouched = true;
  for (const auto& pr : batch.problems) {
    const auto got = download<float>(pr.dC, pr.C.size());
    if (pr.group == 0) {
      const auto want = reference(kGroups[0], pr);
      for (size_t i = 0; i < got.size(); ++i) e = std::fmax(e, std::fabs(got[i] - want[i]));
    } else if (got != pr.C) {
      rest_untouched = false;
    }
  }
  EXPECT_TRUE_MSG(e < 1e-4 && rest_untouched, "group_count 1 runs group 0 only");
}

void test_emulation(cublasHandle_t h) {
  cublasEmulationStrategy_t strategy = CUBLAS_EMULATION_STRATEGY_EAGER;
  CUBLAS_CHECK(cublasGetEmulationStrategy(h, &strategy));
  EXPECT_TRUE_MSG(strategy == CUBLAS_EMULATION_STRATEGY_DEFAULT,
                  "emulation strategy: DEFAULT before any set");
  CUBLAS_CHECK(cublasSetEmulationStrategy(h, CUBLAS_EMULATION_STRATEGY_EAGER));
  CUBLAS_CHECK(cublasGetEmulationStrategy(h, &strategy));
  EXPECT_TRUE_MSG(strategy == CUBLAS_EMULATION_STRATEGY_EAGER,
                  "emulation strategy: EAGER reads back");
  EXPECT_TRUE_MSG(cublasSetEmulationStrategy(h, static_cast<cublasEmulationStrategy_t>(9)) ==
                      CUBLAS_STATUS_INVALID_VALUE,
                  "an unknown emulation strategy: INVALID_VALUE");
  CUBLAS_CHECK(cublasGetEmulationStrategy(h, &strategy));
  EXPECT_TRUE_MSG(strategy == CUBLAS_EMULATION_STRATEGY_EAGER, "a refused set changes nothing");
  EXPECT_TRUE_MSG(cublasGetEmulationStrategy(h, static_cast<cublasEmulationStrategy_t*>(nullptr)) ==
                      CUBLAS_STATUS_INVALID_VALUE,
                  "get emulation strategy into NULL: INVALID_VALUE");
  // Settings belong to their handle: a new one starts from the defaults.
  cublasHandle_t other = nullptr;
  CUBLAS_CHECK(cublasCreate(&other));
  CUBLAS_CHECK(cublasGetEmulationStrategy(other, &strategy));
  EXPECT_TRUE_MSG(strategy == CUBLAS_EMULATION_STRATEGY_DEFAULT,
                  "a second handle has its own strategy");
#if CUBLAS_VER_MAJOR >= 13
  cudaEmulationSpecialValuesSupport mask = CUDA_EMULATION_SPECIAL_VALUES_SUPPORT_NONE;
  CUBLAS_CHECK(cublasGetEmulationSpecialValuesSupport(other, &mask));
  EXPECT_TRUE_MSG(mask == CUDA_EMULATION_SPECIAL_VALUES_SUPPORT_DEFAULT,
                  "special values: DEFAULT (0xFFFF) before any set");
  const auto inf_nan = static_cast<cudaEmulationSpecialValuesSupport>(
      CUDA_EMULATION_SPECIAL_VALUES_SUPPORT_INFINITY | CUDA_EMULATION_SPECIAL_VALUES_SUPPORT_NAN);
  CUBLAS_CHECK(cublasSetEmulationSpecialValuesSupport(other, inf_nan));
  CUBLAS_CHECK(cublasGetEmulationSpecialValuesSupport(other, &mask));
  EXPECT_TRUE_MSG(mask == inf_nan, "special values: INFINITY|NAN reads back");
  EXPECT_TRUE_MSG(
      cublasSetEmulationSpecialValuesSupport(
          other, static_cast<cudaEmulationSpecialValuesSupport>(0x10)) == CUBLAS_STATUS_SUCCESS,
      "special values with a bit beyond INFINITY and NAN: taken, as cuBLAS 13.1 does");

  cudaEmulationMantissaControl control = CUDA_EMULATION_MANTISSA_CONTROL_FIXED;
  CUBLAS_CHECK(cublasGetFixedPointEmulationMantissaControl(other, &control));
  EXPECT_TRUE_MSG(control == CUDA_EMULATION_MANTISSA_CONTROL_DYNAMIC,
                  "mantissa control: DYNAMIC before any set");
  CUBLAS_CHECK(
      cublasSetFixedPointEmulationMantissaControl(other, CUDA_EMULATION_MANTISSA_CONTROL_FIXED));
  CUBLAS_CHECK(cublasGetFixedPointEmulationMantissaControl(other, &control));
  EXPECT_TRUE_MSG(control == CUDA_EMULATION_MANTISSA_CONTROL_FIXED,
                  "mantissa control: FIXED reads back");
  EXPECT_TRUE_MSG(
      cublasSetFixedPointEmulationMantissaControl(
          other, static_cast<cudaEmulationMantissaControl>(5)) == CUBLAS_STATUS_INVALID_VALUE,
      "an unknown mantissa control: INVALID_VALUE");

  int bits = -1;
  CUBLAS_CHECK(cublasGetFixedPointEmulationMaxMantissaBitCount(other, &bits));
  EXPECT_TRUE_MSG(bits == 0, "max mantissa bit count: 0 (the library's choice) before any set");
  CUBLAS_CHECK(cublasSetFixedPointEmulationMaxMantissaBitCount(other, 40));
  CUBLAS_CHECK(cublasGetFixedPointEmulationMaxMantissaBitCount(other, &bits));
  EXPECT_TRUE_MSG(bits == 40, "max mantissa bit count: 40 reads back");
  EXPECT_TRUE_MSG(
      cublasSetFixedPointEmulationMaxMantissaBitCount(other, -1) == CUBLAS_STATUS_INVALID_VALUE,
      "a negative max mantissa bit count: INVALID_VALUE");

  int offset = 7;
  CUBLAS_CHECK(cublasGetFixedPointEmulationMantissaBitOffset(other, &offset));
  EXPECT_TRUE_MSG(offset == 0, "mantissa bit offset: 0 before any set");
  CUBLAS_CHECK(cublasSetFixedPointEmulationMantissaBitOffset(other, -8));
  CUBLAS_CHECK(cublasGetFixedPointEmulationMantissaBitOffset(other, &offset));
  EXPECT_TRUE_MSG(offset == -8, "mantissa bit offset: -8 reads back");

  int* count_ptr = reinterpret_cast<int*>(&offset);
  CUBLAS_CHECK(cublasGetFixedPointEmulationMantissaBitCountPointer(other, &count_ptr));
  EXPECT_TRUE_MSG(count_ptr == nullptr, "mantissa bit count pointer: NULL before any set");
  int* dcount = nullptr;
  CUDA_CHECK(cudaMalloc(&dcount, sizeof(int)));
  CUBLAS_CHECK(cublasSetFixedPointEmulationMantissaBitCountPointer(other, dcount));
  CUBLAS_CHECK(cublasGetFixedPointEmulationMantissaBitCountPointer(other, &count_ptr));
  EXPECT_TRUE_MSG(count_ptr == dcount, "mantissa bit count pointer reads back");
  EXPECT_TRUE_MSG(cublasGetFixedPointEmulationMantissaBitCountPointer(other, nullptr) ==
                      CUBLAS_STATUS_INVALID_VALUE,
                  "get mantissa bit count pointer into NULL: INVALID_VALUE");
  cudaFree(dcount);
#endif
  CUBLAS_CHECK(cublasDestroy(other));
  // A GEMM on a handle whose settings ask for eager emulation is computed natively.
  CUBLAS_CHECK(cublasSetEmulationStrategy(h, CUBLAS_EMULATION_STRATEGY_EAGER));
}

}  // namespace

int main() {
  std::printf("cublas_grouped (cuBLAS %d)\n", CUBLAS_VER_MAJOR);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  cublasHandle_t h = nullptr;
  CUBLAS_CHECK(cublasCreate(&h));
  CUBLAS_CHECK(cublasSetStream(h, stream));

  for (bool device : {false, true}) {
    test_sgemm(h, stream, device);
    test_dgemm(h, stream, device);
    test_gemm_ex<float>(h, stream, device, CUDA_R_32F, 1e-4,
                        device ? "GemmGroupedBatchedEx fp32, device scalars"
                               : "GemmGroupedBatchedEx fp32, host scalars");
    // The result rounded to bf16: within one ulp of values below 16.
    test_gemm_ex<__nv_bfloat16>(h, stream, device, CUDA_R_16BF, 0.0625,
                                device ? "GemmGroupedBatchedEx bf16, device scalars"
                                       : "GemmGroupedBatchedEx bf16, host scalars");
  }
  test_64(h, stream);
  test_errors(h, stream);
  test_emulation(h);
  test_sgemm(h, stream, false);  // eager emulation asked for: still the native result

  CUBLAS_CHECK(cublasDestroy(h));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return check::Report("cublas_grouped");
}
