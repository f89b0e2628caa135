// The probe's CUDA side: what a CUDA program sees through torchada. Compiled against NVIDIA's
// CUDA 13 headers; every function is found with dlsym(RTLD_DEFAULT), i.e. in the preloaded
// libtorchada.so (the probe links no CUDA library), and each result is compared with a host
// reference or with what MUSA itself reports.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>
#include <time.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "probe.h"
#include "settings/settings.h"

namespace torchada::probe {
namespace {

#define TA_STR2(x) #x
#define TA_STR(x) TA_STR2(x)
// The function `name` (after the header's renaming macros: cublasCreate -> cublasCreate_v2).
#define FN(name) Resolve<decltype(&::name)>(TA_STR(name))
// The same for names the C++ headers overload (templates in cuda_runtime.h, cublas_api.h): the C
// signature picks the overload.
#define FNT(name, type) Resolve<type>(TA_STR(name))
using MallocFn = cudaError_t (*)(void**, size_t);
using MemcpyAsyncFn = cudaError_t (*)(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
using EventCreateFn = cudaError_t (*)(cudaEvent_t*);
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, const void*,
                                    cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);

bool g_missing = false;

template <class F>
F Resolve(const char* name) {
  void* p = dlsym(RTLD_DEFAULT, name);
  if (p == nullptr && !g_missing) {
    g_missing = true;
    Problem(std::string(name) + " is not in the process: libtorchada.so is not preloaded");
    Fix("Run the probe through torchada-doctor (it preloads libtorchada.so).");
  }
  return reinterpret_cast<F>(p);
}

std::string CudaErr(cudaError_t e) {
  auto name = FN(cudaGetErrorName);
  return name ? std::string(name(e)) : Format("cudaError %d", static_cast<int>(e));
}

std::string BlasErr(cublasStatus_t s) {
  auto name = FN(cublasGetStatusName);
  return name ? std::string(name(s)) : Format("cublasStatus %d", static_cast<int>(s));
}

double NowMs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// What TORCHADA_REPORT_CC makes of MUSA's capability (shim/runtime/device.cc; README).
void ExpectedCc(int mm, int mn, int* cm, int* cn, std::string* policy) {
  // Parsed as the shim parses it (settings/settings.h); malformed is the default, equivalent.
  const char* p = std::getenv("TORCHADA_REPORT_CC");
  *policy = p && *p ? p : "equivalent";
  *cm = mm;
  *cn = mn;
  const torchada::settings::Parsed cc =
      torchada::settings::capability(torchada::settings::Id::kReportCc, nullptr);
  if (cc.number == 1) return;  // native
  if (cc.number < 0) {
    *cm = cc.major;
    *cn = cc.minor;
    return;
  }
  static const int kMap[][4] = {{2, 1, 7, 5}, {2, 2, 8, 0}, {3, 1, 9, 0}};
  for (const auto& e : kMap)
    if (e[0] == mm && e[1] == mn) {
      *cm = e[2];
      *cn = e[3];
    }
}

}  // namespace

int CudaDevices(const std::string& musart) {
  auto count = FN(cudaGetDeviceCount);
  auto props = FN(cudaGetDeviceProperties);
  auto attr = FN(cudaDeviceGetAttribute);
  auto set = FN(cudaSetDevice);
  auto meminfo = FN(cudaMemGetInfo);
  if (!count || !props || !attr || !set || !meminfo) return 0;
  int n = 0;
  cudaError_t e = count(&n);
  std::string merr;
  int mn = MusaDeviceCount(musart, &merr);
  Fact("MUSA device count", mn < 0 ? "unknown (" + merr + ")" : std::to_string(mn));
  Fact("CUDA device count", e == cudaSuccess ? std::to_string(n) : CudaErr(e));
  if (e != cudaSuccess || n == 0) {
    Problem(e != cudaSuccess ? "cudaGetDeviceCount failed through torchada: " + CudaErr(e)
                             : "torchada reports no device");
    Fix("See the backend and library checks above; MUSA_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES may "
        "hide every device; on a GPU machine, check the MUSA driver (mthreads-gmi).");
    return 0;
  }
  if (mn >= 0 && mn != n) Problem(Format("CUDA sees %d device(s), MUSA reports %d", n, mn));
  bool bad = false;
  for (int d = 0; d < n && d < 16; ++d) {
    cudaDeviceProp p{};
    if ((e = props(&p, d)) != cudaSuccess) {
      Problem(Format("cudaGetDeviceProperties(%d): ", d) + CudaErr(e));
      bad = true;
      continue;
    }
    int amaj = 0, amin = 0, awarp = 0;
    attr(&amaj, cudaDevAttrComputeCapabilityMajor, d);
    attr(&amin, cudaDevAttrComputeCapabilityMinor, d);
    attr(&awarp, cudaDevAttrWarpSize, d);
    size_t free_b = 0, total_b = 0;
    set(d);
    meminfo(&free_b, &total_b);
    MusaDevice m = MusaDeviceInfo(musart, d);
    std::string line = Format(
        "%s: CUDA sees compute capability %d.%d, warpSize %d, %d SMs, %.1f GiB "
        "(%.1f GiB free)",
        p.name, p.major, p.minor, p.warpSize, p.multiProcessorCount,
        p.totalGlobalMem / 1073741824.0, free_b / 1073741824.0);
    if (m.ok) {
      int cm = 0, cn = 0;
      std::string policy;
      ExpectedCc(m.major, m.minor, &cm, &cn, &policy);
      line += Format(
          "; MUSA reports %d.%d (TORCHADA_REPORT_CC=%s -> %d.%d), warpSize %d, %d SMs, %.1f GiB",
          m.major, m.minor, policy.c_str(), cm, cn, m.warp, m.sms, m.total_mem / 1073741824.0);
      if (p.major != cm || p.minor != cn || amaj != cm || amin != cn) {
        Problem(
            Format("device %d: CUDA sees compute capability %d.%d (attribute %d.%d), torchada's "
                   "policy gives %d.%d",
                   d, p.major, p.minor, amaj, amin, cm, cn));
        bad = true;
      }
      if (p.warpSize != m.warp || awarp != m.warp || m.attr_warp != m.warp) {
        Problem(
            Format("device %d: warpSize differs: CUDA %d (attribute %d), MUSA %d (attribute %d)", d,
                   p.warpSize, awarp, m.warp, m.attr_warp));
        bad = true;
      }
      if (m.attr_major != m.major || m.attr_minor != m.minor)
        Warn(Format("device %d: MUSA's attributes say %d.%d, its properties %d.%d", d, m.attr_major,
                    m.attr_minor, m.major, m.minor));
      if (p.totalGlobalMem != m.total_mem || p.multiProcessorCount != m.sms ||
          std::strncmp(p.name, m.name, sizeof p.name) != 0) {
        Problem(
            Format("device %d: name, memory or SM count differ between CUDA's view and MUSA's", d));
        bad = true;
      }
      if (total_b != m.total_mem)
        Warn(Format("device %d: cudaMemGetInfo total %zu differs from totalGlobalMem %zu", d,
                    total_b, m.total_mem));
    } else {
      line += "; MUSA's own view unavailable: " + m.error;
    }
    Item("devices", Format("device %d: ", d) + line);
  }
  if (!bad)
    Ok(Format("%d device(s); CUDA's view matches MUSA's under torchada's policy", n));
  else
    Fix("Report this with torchada-doctor --json: the properties translation "
        "(shim/runtime/device.cc) "
        "does not match this MUSA runtime.");
  return 0;
}

int CudaGemm() {
  auto create = FN(cublasCreate);
  auto destroy = FN(cublasDestroy);
  auto sgemm = FN(cublasSgemm);
  auto gemmex = FNT(cublasGemmEx, GemmExFn);
  auto malloc_ = FNT(cudaMalloc, MallocFn);
  auto free_ = FN(cudaFree);
  auto copy = FN(cudaMemcpy);
  auto sync = FN(cudaDeviceSynchronize);
  if (!create || !destroy || !sgemm || !gemmex || !malloc_ || !free_ || !copy || !sync) return 0;
  // C (m x n) = A (m x k) * B (k x n), column-major, small integers: exact in fp32.
  const int m = 3, n = 2, k = 4;
  std::vector<float> A(m * k), B(k * n), ref(m * n, 0.0f), C(m * n, -1.0f);
  for (int i = 0; i < m * k; ++i) A[i] = static_cast<float>(i % 5 - 2);
  for (int i = 0; i < k * n; ++i) B[i] = static_cast<float>(i % 3 + 1);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      for (int l = 0; l < k; ++l) ref[i + j * m] += A[i + l * m] * B[l + j * k];
  cublasHandle_t h = nullptr;
  cublasStatus_t s = create(&h);
  if (s != CUBLAS_STATUS_SUCCESS) {
    Problem("cublasCreate failed through torchada: " + BlasErr(s));
    Fix("See the muBLAS check above (library found, not refused).");
    return 0;
  }
  float *dA = nullptr, *dB = nullptr, *dC = nullptr;
  malloc_(reinterpret_cast<void**>(&dA), A.size() * 4);
  malloc_(reinterpret_cast<void**>(&dB), B.size() * 4);
  malloc_(reinterpret_cast<void**>(&dC), C.size() * 4);
  copy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice);
  copy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice);
  const float one = 1.0f, zero = 0.0f;
  bool all_ok = true;
  auto compare = [&](const char* what, cublasStatus_t st) {
    if (st != CUBLAS_STATUS_SUCCESS) {
      Problem(std::string(what) + " failed through torchada: " + BlasErr(st));
      all_ok = false;
      return;
    }
    sync();
    copy(C.data(), dC, C.size() * 4, cudaMemcpyDeviceToHost);
    double err = 0;
    for (int i = 0; i < m * n; ++i) err = std::fmax(err, std::fabs(C[i] - ref[i]));
    Fact(what, err == 0 ? "matches the host reference" : Format("max abs error %g", err));
    if (err != 0) {
      Problem(std::string(what) +
              Format(" result differs from the host reference (max error %g)", err));
      all_ok = false;
    }
    std::fill(C.begin(), C.end(), -1.0f);
    copy(dC, C.data(), C.size() * 4, cudaMemcpyHostToDevice);
  };
  compare("cublasSgemm 3x2x4",
          sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, m, dB, k, &zero, dC, m));
  compare("cublasGemmEx fp32 3x2x4",
          gemmex(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, CUDA_R_32F, m, dB, CUDA_R_32F, k,
                 &zero, dC, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  free_(dA);
  free_(dB);
  free_(dC);
  destroy(h);
  if (all_ok)
    Ok("cublasSgemm and cublasGemmEx match the host reference");
  else
    Fix("See the muBLAS and GemmEx checks; run the failing call with TORCHADA_LOG_LEVEL=debug.");
  return 0;
}

int CudaCopy() {
  auto malloc_ = FNT(cudaMalloc, MallocFn);
  auto free_ = FN(cudaFree);
  auto host_alloc = FNT(cudaMallocHost, MallocFn);
  auto host_free = FN(cudaFreeHost);
  auto copy = FN(cudaMemcpy);
  auto copy_async = FNT(cudaMemcpyAsync, MemcpyAsyncFn);
  auto memset_ = FN(cudaMemset);
  auto stream_create = FN(cudaStreamCreate);
  auto stream_sync = FN(cudaStreamSynchronize);
  auto stream_destroy = FN(cudaStreamDestroy);
  if (!malloc_ || !free_ || !host_alloc || !host_free || !copy || !copy_async || !memset_ ||
      !stream_create || !stream_sync || !stream_destroy)
    return 0;
  const size_t n = 1 << 20;
  std::vector<unsigned char> src(n), back(n);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  void *d1 = nullptr, *d2 = nullptr, *pinned = nullptr;
  cudaError_t e = malloc_(&d1, n);
  if (e == cudaSuccess) e = malloc_(&d2, n);
  if (e == cudaSuccess) e = host_alloc(&pinned, n);
  if (e != cudaSuccess) {
    Problem("allocation failed through torchada: " + CudaErr(e));
    return 0;
  }
  cudaStream_t st = nullptr;
  stream_create(&st);
  std::vector<std::string> failures;
  auto step = [&](const char* what, cudaError_t r) {
    if (r != cudaSuccess) failures.push_back(std::string(what) + ": " + CudaErr(r));
  };
  step("cudaMemcpy host->device", copy(d1, src.data(), n, cudaMemcpyHostToDevice));
  step("cudaMemset", memset_(static_cast<char*>(d1) + 100, 0xab, 50));
  step("cudaMemcpy device->device", copy(d2, d1, n, cudaMemcpyDeviceToDevice));
  step("cudaMemcpyAsync device->pinned host",
       copy_async(pinned, d2, n, cudaMemcpyDeviceToHost, st));
  step("cudaStreamSynchronize", stream_sync(st));
  step("cudaMemcpy device->host", copy(back.data(), d2, n, cudaMemcpyDeviceToHost));
  std::vector<unsigned char> ref = src;
  std::memset(ref.data() + 100, 0xab, 50);
  if (failures.empty()) {
    if (back != ref) failures.push_back("device->host round trip differs from the host reference");
    if (std::memcmp(pinned, ref.data(), n) != 0)
      failures.push_back("async copy into pinned memory differs from the host reference");
  }
  stream_destroy(st);
  free_(d1);
  free_(d2);
  host_free(pinned);
  for (const std::string& f : failures) Problem(f);
  if (failures.empty())
    Ok("1 MiB host->device->device->host round trip (with memset, async, pinned) matches");
  else
    Fix("Run with TORCHADA_LOG_LEVEL=debug and report it with torchada-doctor --json.");
  return 0;
}

int CudaEvent() {
  auto create = FNT(cudaEventCreate, EventCreateFn);
  auto record = FN(cudaEventRecord);
  auto esync = FN(cudaEventSynchronize);
  auto query = FN(cudaEventQuery);
  auto elapsed = FN(cudaEventElapsedTime);
  auto destroy = FN(cudaEventDestroy);
  auto malloc_ = FNT(cudaMalloc, MallocFn);
  auto free_ = FN(cudaFree);
  auto copy = FN(cudaMemcpy);
  if (!create || !record || !esync || !query || !elapsed || !destroy || !malloc_ || !free_ || !copy)
    return 0;
  cudaEvent_t a = nullptr, b = nullptr;
  cudaError_t e = create(&a);
  if (e == cudaSuccess) e = create(&b);
  if (e != cudaSuccess) {
    Problem("cudaEventCreate failed through torchada: " + CudaErr(e));
    return 0;
  }
  const size_t n = 16u << 20;
  std::vector<unsigned char> host(n, 1);
  void* d = nullptr;
  malloc_(&d, n);
  double t0 = NowMs();
  record(a, nullptr);
  for (int i = 0; i < 4; ++i) copy(d, host.data(), n, cudaMemcpyHostToDevice);
  record(b, nullptr);
  e = esync(b);
  double host_ms = NowMs() - t0;
  float ms = -1;
  cudaError_t q = query(b);
  cudaError_t el = elapsed(&ms, a, b);
  free_(d);
  destroy(a);
  destroy(b);
  Fact("event time",
       Format("%.3f ms (host measured %.3f ms around 64 MiB of copies)", ms, host_ms));
  if (e != cudaSuccess || q != cudaSuccess || el != cudaSuccess) {
    Problem("event calls failed through torchada: synchronize " + CudaErr(e) + ", query " +
            CudaErr(q) + ", elapsed " + CudaErr(el));
  } else if (!std::isfinite(ms) || ms < 0 || ms > host_ms + 50) {
    Problem(Format("cudaEventElapsedTime gave %.3f ms for work the host timed at %.3f ms", ms,
                   host_ms));
    Fix("Report it with torchada-doctor --json: MUSA's event timing does not match the host "
        "clock.");
  } else {
    Ok("cudaEventElapsedTime is consistent with the host clock");
  }
  return 0;
}

int CudaAllReduce() {
  auto version = FN(ncclGetVersion);
  auto uid = FN(ncclGetUniqueId);
  auto init = FN(ncclCommInitRank);
  auto allreduce = FN(ncclAllReduce);
  auto destroy = FN(ncclCommDestroy);
  auto errstr = FN(ncclGetErrorString);
  auto malloc_ = FNT(cudaMalloc, MallocFn);
  auto free_ = FN(cudaFree);
  auto copy = FN(cudaMemcpy);
  auto set = FN(cudaSetDevice);
  auto stream_create = FN(cudaStreamCreate);
  auto stream_sync = FN(cudaStreamSynchronize);
  if (!version || !uid || !init || !allreduce || !destroy || !errstr || !malloc_ || !free_ ||
      !copy || !set || !stream_create || !stream_sync)
    return 0;
  int v = 0;
  if (version(&v) == ncclSuccess) Fact("ncclGetVersion", std::to_string(v));
  set(0);
  ncclUniqueId id{};
  ncclResult_t r = uid(&id);
  ncclComm_t comm = nullptr;
  if (r == ncclSuccess) r = init(&comm, 1, id, 0);
  if (r != ncclSuccess) {
    Problem(std::string("creating a one-rank communicator failed through torchada: ") + errstr(r));
    Fix("See the MCCL check above (found, linked against MUSA); NCCL_DEBUG=INFO is passed to MCCL "
        "as MCCL_DEBUG.");
    return 0;
  }
  const size_t n = 1000;
  std::vector<float> in(n), out(n, -1);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<float>(i) * 0.5f;
  float *dIn = nullptr, *dOut = nullptr;
  malloc_(reinterpret_cast<void**>(&dIn), n * 4);
  malloc_(reinterpret_cast<void**>(&dOut), n * 4);
  copy(dIn, in.data(), n * 4, cudaMemcpyHostToDevice);
  cudaStream_t st = nullptr;
  stream_create(&st);
  r = allreduce(dIn, dOut, n, ncclFloat, ncclSum, comm, st);
  cudaError_t e = stream_sync(st);
  copy(out.data(), dOut, n * 4, cudaMemcpyDeviceToHost);
  destroy(comm);
  free_(dIn);
  free_(dOut);
  if (r != ncclSuccess || e != cudaSuccess)
    Problem(std::string("ncclAllReduce failed through torchada: ") + errstr(r) + ", stream " +
            CudaErr(e));
  else if (out != in)
    Problem("one-rank ncclAllReduce(sum) result differs from its input");
  else
    Ok("one-rank ncclAllReduce(sum, float, 1000) matches the host reference");
  return 0;
}

}  // namespace torchada::probe
