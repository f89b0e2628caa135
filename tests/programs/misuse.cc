// Misuse of the runtime, driver, cuBLAS, cuBLASLt and NCCL APIs, the way a wrong program misuses
// them: sizes that wrap, operands beyond their buffers, destroyed, stale and garbage handles,
// graphs and events used wrongly, IPC handles from another process, CUDA after fork. Each case
// runs in a forked child (nothing CUDA happens in this parent before), watched for three
// outcomes that must never happen:
//
//   crash          the child died of a signal (or a sanitizer's report)
//   hang           it did not finish within its alarm
//   false success  a call that cannot have done what was asked answered success, or a wrong
//                  answer came back (the child says which)
//
// What a case expects is what NVIDIA's libraries answer where they define it. Where NVIDIA
// defines nothing (an operand beyond its allocation may or may not fault on a GPU, whose
// allocations are page-granular), the case accepts success on NVIDIA's hardware and checks the
// simulator's defined answer (sticky cudaErrorIllegalAddress at the next synchronisation)
// elsewhere: check::NvidiaDevice().
//
// Usage: misuse [case-name-substring]   prints one line per case and "misuse: all checks passed"
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.h"

namespace {

// ---- Inside a child: a failed expectation prints and ends the case ----------------------------

constexpr int kWrongAnswer = 3;  // the child's exit code for a false success or wrong answer

[[noreturn]] void wrong(const char* file, int line, const char* what) {
  std::printf("    wrong answer at %s:%d: %s\n", file, line, what);
  std::fflush(stdout);
  _exit(kWrongAnswer);
}
#define MUST(cond) ((cond) ? (void)0 : wrong(__FILE__, __LINE__, #cond))

// A runtime call that must fail: any error is acceptable, success is a false success.
#define MUST_FAIL(expr) MUST((expr) != cudaSuccess)

bool on_nvidia() {
  static const bool nvidia = check::NvidiaDevice();
  return nvidia;
}

// The next synchronisation after work that reads or writes beyond its allocation: the simulator
// reports cudaErrorIllegalAddress (sticky); NVIDIA's hardware may not notice at all.
void expect_device_fault(cudaStream_t s) {
  const cudaError_t e = cudaStreamSynchronize(s);
  if (on_nvidia())
    MUST(e == cudaSuccess || e == cudaErrorIllegalAddress);
  else
    MUST(e == cudaErrorIllegalAddress);
  if (e != cudaSuccess) MUST(cudaDeviceSynchronize() == e);  // sticky
}

// A neighbour allocation, filled with a pattern, to show that refused work wrote nothing there.
struct Neighbour {
  static constexpr size_t kBytes = 4096;
  unsigned char* p = nullptr;
  Neighbour() {
    MUST(cudaMalloc(&p, kBytes) == cudaSuccess);
    MUST(cudaMemset(p, 0x5a, kBytes) == cudaSuccess);
  }
  void expect_intact() const {
    std::vector<unsigned char> h(kBytes);
    MUST(cudaMemcpy(h.data(), p, kBytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    for (unsigned char b : h) MUST(b == 0x5a);
  }
};

// ---- Runtime: sizes ------------------------------------------------------------------------

void copy_size_near_max() {
  void* d = nullptr;
  MUST(cudaMalloc(&d, 256) == cudaSuccess);
  std::vector<char> h(256);
  MUST_FAIL(cudaMemcpy(d, h.data(), SIZE_MAX, cudaMemcpyHostToDevice));
  MUST_FAIL(cudaMemcpy(h.data(), d, SIZE_MAX - 8, cudaMemcpyDeviceToHost));
  MUST(cudaGetLastError() != cudaSuccess);  // reported once, not sticky
  MUST(cudaGetLastError() == cudaSuccess);
  MUST(cudaMemcpy(d, h.data(), 256, cudaMemcpyHostToDevice) == cudaSuccess);
}

void copy_span_wraps_address_space() {
  Neighbour n;
  char* d = nullptr;
  MUST(cudaMalloc(&d, 256) == cudaSuccess);
  // Starts inside the allocation; start + size wraps past zero.
  const size_t wraps = SIZE_MAX - reinterpret_cast<uintptr_t>(d) + 64;
  MUST_FAIL(cudaMemcpy(d + 16, d, wraps, cudaMemcpyDeviceToDevice));
  MUST_FAIL(cudaMemset(d + 16, 0, wraps));
  MUST_FAIL(cudaMemsetAsync(d + 16, 0, wraps, nullptr));
  MUST(cudaDeviceSynchronize() == cudaSuccess);
  n.expect_intact();
}

void memset_beyond_allocation() {
  Neighbour before;
  char* d = nullptr;
  MUST(cudaMalloc(&d, 1000) == cudaSuccess);
  Neighbour after;
  MUST_FAIL(cudaMemset(d, 1, 1001));
  MUST_FAIL(cudaMemset(d + 999, 1, 2));
  MUST(cudaDeviceSynchronize() == cudaSuccess);
  before.expect_intact();
  after.expect_intact();
}

void copy_2d_pitch_overflow() {
  char* d = nullptr;
  size_t pitch = 0;
  MUST(cudaMallocPitch(reinterpret_cast<void**>(&d), &pitch, 64, 4) == cudaSuccess);
  std::vector<char> h(64 * 4);
  // height * pitch wraps; width beyond pitch.
  MUST_FAIL(cudaMemcpy2D(d, SIZE_MAX / 2, h.data(), 64, 64, 4, cudaMemcpyHostToDevice));
  MUST_FAIL(cudaMemcpy2D(d, pitch, h.data(), 64, pitch + 1, 4, cudaMemcpyHostToDevice));
  MUST_FAIL(cudaMemset2D(d, pitch, 0, 64, SIZE_MAX / pitch + 2));
  MUST(cudaMemcpy2D(d, pitch, h.data(), 64, 64, 4, cudaMemcpyHostToDevice) == cudaSuccess);
}

void peer_3d_and_managed_spans() {
  int n = 0;
  MUST(cudaGetDeviceCount(&n) == cudaSuccess);
  char* d0 = nullptr;
  MUST(cudaMalloc(&d0, 4096) == cudaSuccess);
  if (n >= 2) {
    MUST(cudaSetDevice(1) == cudaSuccess);
    char* d1 = nullptr;
    MUST(cudaMalloc(&d1, 1024) == cudaSuccess);
    MUST_FAIL(cudaMemcpyPeer(d1, 1, d0, 0, 4096));         // beyond the destination
    MUST_FAIL(cudaMemcpyPeer(d1, 1, d0 + 4000, 0, 1024));  // beyond the source
    MUST_FAIL(cudaMemcpyPeer(d1, 5, d0, 0, 16));           // no device 5
    MUST(cudaMemcpyPeer(d1, 1, d0, 0, 1024) == cudaSuccess);
    MUST(cudaSetDevice(0) == cudaSuccess);
  }
  // A 3D copy whose extent wraps.
  cudaMemcpy3DParms p{};
  p.srcPtr = make_cudaPitchedPtr(d0, 64, 64, 64);
  p.dstPtr = make_cudaPitchedPtr(d0, 64, 64, 64);
  p.extent = make_cudaExtent(64, 64, SIZE_MAX / 64);
  p.kind = cudaMemcpyDeviceToDevice;
  MUST_FAIL(cudaMemcpy3D(&p));
  // Managed memory: prefetching or advising beyond the range.
  char* m = nullptr;
  MUST(cudaMallocManaged(&m, 4096) == cudaSuccess);
  cudaMemLocation loc{};
  loc.type = cudaMemLocationTypeDevice;
  loc.id = 0;
  MUST_FAIL(cudaMemPrefetchAsync(m, 8192, loc, 0, nullptr));
  MUST_FAIL(cudaMemAdvise(m + 4000, 4096, cudaMemAdviseSetReadMostly, loc));
  MUST(cudaMemPrefetchAsync(m, 4096, loc, 0, nullptr) == cudaSuccess);
  MUST_FAIL(cudaLaunchHostFunc(nullptr, nullptr, nullptr));
  MUST(cudaDeviceSynchronize() == cudaSuccess);
}

// A malformed TORCHADA_* value: the simulator still starts, with a warning naming the variable,
// the value and what it used instead. The simulator's own setting: not run on other backends.
void malformed_setting_is_named() {
  const char* backend = std::getenv("TORCHADA_BACKEND");
  if (backend == nullptr || std::strcmp(backend, "sim") != 0) {
    std::printf("    (not on the simulator: nothing to check)\n");
    return;
  }
  setenv("TORCHADA_SIM_DEVICES", "two", 1);
  char path[] = "/tmp/torchada-misuse-XXXXXX";
  const int fd = mkstemp(path);
  MUST(fd >= 0);
  unlink(path);
  std::fflush(stderr);
  MUST(dup2(fd, 2) == 2);
  int n = 0;
  MUST(cudaGetDeviceCount(&n) == cudaSuccess);
  MUST(n >= 1);
  std::fflush(stderr);
  std::vector<char> text(1 << 16);
  const ssize_t got = pread(fd, text.data(), text.size() - 1, 0);
  MUST(got > 0);
  text[static_cast<size_t>(got)] = '\0';
  MUST(std::strstr(text.data(), "TORCHADA_SIM_DEVICES") != nullptr);
  MUST(std::strstr(text.data(), "two") != nullptr);
}

void malloc_impossible_size() {
  void* d = reinterpret_cast<void*>(0x1);
  MUST(cudaMalloc(&d, SIZE_MAX) == cudaErrorMemoryAllocation);
  MUST(cudaGetLastError() == cudaErrorMemoryAllocation);
  MUST(cudaGetLastError() == cudaSuccess);  // not sticky: the device still works
  MUST(cudaMalloc(&d, 64) == cudaSuccess);
  MUST(cudaFree(d) == cudaSuccess);
}

// ---- Runtime: handles and pointers ------------------------------------------------------------

void free_twice_and_host_pointer() {
  void* d = nullptr;
  MUST(cudaMalloc(&d, 64) == cudaSuccess);
  MUST(cudaFree(d) == cudaSuccess);
  MUST_FAIL(cudaFree(d));
  int local = 0;
  MUST_FAIL(cudaFree(&local));
  MUST_FAIL(cudaFreeHost(&local));
  MUST(cudaGetLastError() != cudaSuccess);
  void* e = nullptr;
  MUST(cudaMalloc(&e, 64) == cudaSuccess);  // the device is still usable
}

void destroyed_stream_and_event() {
  cudaStream_t s = nullptr;
  cudaEvent_t ev = nullptr;
  MUST(cudaStreamCreate(&s) == cudaSuccess);
  MUST(cudaEventCreate(&ev) == cudaSuccess);
  MUST(cudaStreamDestroy(s) == cudaSuccess);
  MUST(cudaEventDestroy(ev) == cudaSuccess);
  MUST_FAIL(cudaStreamSynchronize(s));
  MUST_FAIL(cudaStreamQuery(s));
  MUST_FAIL(cudaEventRecord(ev, nullptr));
  MUST_FAIL(cudaEventSynchronize(ev));
  MUST_FAIL(cudaEventQuery(ev));
  MUST_FAIL(cudaStreamDestroy(s));
  MUST_FAIL(cudaEventDestroy(ev));
}

void stale_handles_after_reset() {
  cudaStream_t s = nullptr;
  cudaEvent_t ev = nullptr;
  MUST(cudaStreamCreate(&s) == cudaSuccess);
  MUST(cudaEventCreate(&ev) == cudaSuccess);
  MUST(cudaDeviceReset() == cudaSuccess);
  MUST_FAIL(cudaStreamSynchronize(s));
  MUST_FAIL(cudaEventRecord(ev, nullptr));
  MUST_FAIL(cudaEventQuery(ev));
  void* d = nullptr;
  MUST(cudaMalloc(&d, 64) == cudaSuccess);  // a fresh context after the reset
}

void events_across_devices() {
  int n = 0;
  MUST(cudaGetDeviceCount(&n) == cudaSuccess);
  if (n < 2) {
    std::printf("    (one device: the two-device half is not run)\n");
  }
  cudaEvent_t a = nullptr, b = nullptr;
  MUST(cudaSetDevice(0) == cudaSuccess);
  MUST(cudaEventCreate(&a) == cudaSuccess);
  MUST(cudaEventRecord(a, nullptr) == cudaSuccess);
  if (n >= 2) {
    MUST(cudaSetDevice(1) == cudaSuccess);
    MUST(cudaEventCreate(&b) == cudaSuccess);
    MUST(cudaEventRecord(b, nullptr) == cudaSuccess);
    MUST(cudaDeviceSynchronize() == cudaSuccess);
    float ms = -1;
    // Events of different devices have no common clock.
    MUST_FAIL(cudaEventElapsedTime(&ms, a, b));
    // An event of device 0 recorded on a stream of device 1 (current device 1).
    MUST_FAIL(cudaEventRecord(a, nullptr));
    // What CUDA allows across devices: waiting for, querying and synchronising another
    // device's event.
    MUST(cudaStreamWaitEvent(nullptr, a, 0) == cudaSuccess);
    MUST(cudaEventQuery(a) == cudaSuccess);
    MUST(cudaEventSynchronize(a) == cudaSuccess);
    MUST(cudaDeviceSynchronize() == cudaSuccess);
  }
  // Timing disabled: no elapsed time.
  cudaEvent_t untimed = nullptr;
  MUST(cudaSetDevice(0) == cudaSuccess);
  MUST(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming) == cudaSuccess);
  MUST(cudaEventRecord(untimed, nullptr) == cudaSuccess);
  MUST(cudaEventSynchronize(untimed) == cudaSuccess);
  float ms = -1;
  MUST(cudaEventElapsedTime(&ms, a, untimed) == cudaErrorInvalidResourceHandle);
  MUST_FAIL(cudaEventElapsedTime(nullptr, a, a));
}

void invalid_device_and_kernel() {
  MUST(cudaSetDevice(999) == cudaErrorInvalidDevice);
  MUST(cudaSetDevice(-1) == cudaErrorInvalidDevice);
  MUST_FAIL(cudaGetDeviceProperties(nullptr, 0));
  int v = 0;
  MUST_FAIL(cudaDeviceGetAttribute(&v, static_cast<cudaDeviceAttr>(0x7fff), 0));
  // A function pointer that is no kernel.
  int not_a_kernel = 0;
  void* args[1] = {nullptr};
  MUST_FAIL(cudaLaunchKernel(&not_a_kernel, dim3(1), dim3(1), args, 0, nullptr));
  MUST_FAIL(cudaFuncGetAttributes(nullptr, &not_a_kernel));
  int symbol = 0;
  MUST_FAIL(cudaMemcpyToSymbol(&symbol, &v, sizeof v));
  MUST_FAIL(cudaHostUnregister(&symbol));
  MUST(cudaDeviceSynchronize() == cudaSuccess);
}

// ---- Runtime: graphs and capture --------------------------------------------------------------

void graph_misuse() {
  cudaStream_t s = nullptr;
  MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  cudaGraph_t g = nullptr;
  MUST(cudaStreamEndCapture(s, &g) == cudaErrorIllegalState);  // not capturing
  void* d = nullptr;
  MUST(cudaMalloc(&d, 256) == cudaSuccess);

  // Synchronising a capturing stream invalidates the capture; the stream is usable after.
  MUST(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  MUST(cudaMemsetAsync(d, 1, 256, s) == cudaSuccess);
  MUST_FAIL(cudaStreamSynchronize(s));
  g = nullptr;
  MUST_FAIL(cudaStreamEndCapture(s, &g));
  MUST(g == nullptr);
  MUST(cudaMemsetAsync(d, 2, 256, s) == cudaSuccess);
  MUST(cudaStreamSynchronize(s) == cudaSuccess);

  // A captured graph, instantiated, destroyed, then launched and destroyed again.
  MUST(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  MUST(cudaMemsetAsync(d, 3, 256, s) == cudaSuccess);
  MUST(cudaStreamEndCapture(s, &g) == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  MUST(cudaGraphInstantiate(&exec, g, 0) == cudaSuccess);
  MUST(cudaGraphLaunch(exec, s) == cudaSuccess);
  MUST(cudaStreamSynchronize(s) == cudaSuccess);
  MUST(cudaGraphExecDestroy(exec) == cudaSuccess);
  MUST(cudaGraphDestroy(g) == cudaSuccess);
  MUST_FAIL(cudaGraphLaunch(exec, s));
  MUST_FAIL(cudaGraphExecDestroy(exec));
  MUST_FAIL(cudaGraphDestroy(g));
  MUST_FAIL(cudaGraphInstantiate(&exec, nullptr, 0));
  MUST(cudaStreamSynchronize(s) == cudaSuccess);
}

// ---- Runtime: IPC and fork ---------------------------------------------------------------------

void ipc_handles_garbage_and_foreign() {
  void* d = nullptr;
  MUST(cudaMalloc(&d, 256) == cudaSuccess);
  cudaIpcMemHandle_t garbage;
  std::memset(&garbage, 0xab, sizeof garbage);
  void* opened = nullptr;
  MUST_FAIL(cudaIpcOpenMemHandle(&opened, garbage, cudaIpcMemLazyEnablePeerAccess));
  MUST_FAIL(cudaIpcGetMemHandle(nullptr, d));
  int host = 0;
  cudaIpcMemHandle_t h;
  MUST_FAIL(cudaIpcGetMemHandle(&h, &host));
  MUST_FAIL(cudaIpcCloseMemHandle(&host));

  // A handle made by another process whose allocation is gone by the time it is opened here.
  int fds[2];
  MUST(pipe(fds) == 0);
  const pid_t pid = fork();
  MUST(pid >= 0);
  if (pid == 0) {
    void* theirs = nullptr;
    cudaIpcMemHandle_t out;
    std::memset(&out, 0, sizeof out);
    if (cudaMalloc(&theirs, 4096) == cudaSuccess) {
      cudaIpcGetMemHandle(&out, theirs);  // may be refused: a zero handle then
      cudaFree(theirs);
    }
    const ssize_t w = write(fds[1], &out, sizeof out);
    _exit(w == static_cast<ssize_t>(sizeof out) ? 0 : 1);
  }
  cudaIpcMemHandle_t foreign;
  MUST(read(fds[0], &foreign, sizeof foreign) == static_cast<ssize_t>(sizeof foreign));
  int status = 0;
  MUST(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
  MUST_FAIL(cudaIpcOpenMemHandle(&opened, foreign, cudaIpcMemLazyEnablePeerAccess));
}

void cuda_in_a_forked_child() {
  // The parent initialises CUDA, then forks: the child's calls must answer (NVIDIA: an
  // initialisation error), never crash or hang; if they succeed, the work must be right.
  void* d = nullptr;
  MUST(cudaMalloc(&d, 64) == cudaSuccess);
  const pid_t pid = fork();
  MUST(pid >= 0);
  if (pid == 0) {
    void* mine = nullptr;
    if (cudaMalloc(&mine, 64) != cudaSuccess) _exit(0);
    int in = 1234, out = 0;
    if (cudaMemcpy(mine, &in, sizeof in, cudaMemcpyHostToDevice) != cudaSuccess) _exit(0);
    if (cudaMemcpy(&out, mine, sizeof out, cudaMemcpyDeviceToHost) != cudaSuccess) _exit(0);
    _exit(out == in ? 0 : kWrongAnswer);
  }
  int status = 0;
  MUST(waitpid(pid, &status, 0) == pid);
  MUST(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  MUST(cudaMemset(d, 0, 64) == cudaSuccess);  // the parent is unaffected
  MUST(cudaDeviceSynchronize() == cudaSuccess);
}

// ---- Driver API --------------------------------------------------------------------------------

template <class F>
F driver(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      fn == nullptr) {
    std::printf("    no driver entry point %s\n", name);
    std::fflush(stdout);
    _exit(kWrongAnswer);
  }
  return reinterpret_cast<F>(fn);
}

void driver_copies_and_frees() {
  MUST(cudaFree(nullptr) == cudaSuccess);  // the primary context, current
  auto alloc = driver<decltype(&::cuMemAlloc)>("cuMemAlloc");
  auto free_ = driver<decltype(&::cuMemFree)>("cuMemFree");
  auto htod = driver<decltype(&::cuMemcpyHtoD)>("cuMemcpyHtoD");
  auto memset32 = driver<decltype(&::cuMemsetD32)>("cuMemsetD32");
  auto stream_create = driver<decltype(&::cuStreamCreate)>("cuStreamCreate");
  auto stream_destroy = driver<decltype(&::cuStreamDestroy)>("cuStreamDestroy");
  auto address_range = driver<decltype(&::cuMemGetAddressRange)>("cuMemGetAddressRange");
  CUdeviceptr d = 0;
  MUST(alloc(&d, 256) == CUDA_SUCCESS);
  std::vector<char> h(512);
  MUST(htod(d, h.data(), 257) != CUDA_SUCCESS);
  MUST(htod(d + 128, h.data(), SIZE_MAX - 64) != CUDA_SUCCESS);
  MUST(memset32(d, 7, 65) != CUDA_SUCCESS);
  MUST(memset32(d + 4, 7, SIZE_MAX / 4) != CUDA_SUCCESS);
  MUST(htod(d, h.data(), 256) == CUDA_SUCCESS);
  MUST(free_(d) == CUDA_SUCCESS);
  MUST(free_(d) != CUDA_SUCCESS);
  CUdeviceptr base = 0;
  size_t size = 0;
  MUST(address_range(&base, &size, d) != CUDA_SUCCESS);  // freed
  CUstream s = nullptr;
  MUST(stream_create(&s, 0) == CUDA_SUCCESS);
  MUST(stream_destroy(s) == CUDA_SUCCESS);
}

// ---- cuBLAS ------------------------------------------------------------------------------------

void cublas_destroyed_and_garbage_handles() {
  cublasHandle_t h = nullptr;
  MUST(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  MUST(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS);
  MUST(cublasSetStream(h, nullptr) == CUBLAS_STATUS_NOT_INITIALIZED);
  MUST(cublasDestroy(h) == CUBLAS_STATUS_NOT_INITIALIZED);
  // Never a handle: bytes of the program's own, left untouched.
  unsigned char fake[256];
  std::memset(fake, 0x77, sizeof fake);
  auto garbage = reinterpret_cast<cublasHandle_t>(fake);
  MUST(cublasSetStream(garbage, nullptr) == CUBLAS_STATUS_NOT_INITIALIZED);
  const float one = 1, zero = 0;
  MUST(cublasSgemm(garbage, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, nullptr, 1, nullptr, 1, &zero,
                   nullptr, 1) == CUBLAS_STATUS_NOT_INITIALIZED);
  MUST(cublasDestroy(garbage) == CUBLAS_STATUS_NOT_INITIALIZED);
  MUST(cublasDestroy(nullptr) == CUBLAS_STATUS_NOT_INITIALIZED);
  for (unsigned char b : fake) MUST(b == 0x77);
}

void cublas_arguments() {
  cublasHandle_t h = nullptr;
  MUST(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  float* a = nullptr;
  MUST(cudaMalloc(&a, 64 * sizeof(float)) == cudaSuccess);
  const float one = 1, zero = 0;
  // lda < m, negative sizes: cuBLAS's own checks.
  MUST(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, a, 4, a, 8, &zero, a, 8) ==
       CUBLAS_STATUS_INVALID_VALUE);
  MUST(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 8, 8, &one, a, 8, a, 8, &zero, a, 8) ==
       CUBLAS_STATUS_INVALID_VALUE);
  MUST(cublasSgemm(h, static_cast<cublasOperation_t>(77), CUBLAS_OP_N, 8, 8, 8, &one, a, 8, a, 8,
                   &zero, a, 8) == CUBLAS_STATUS_INVALID_VALUE);
  MUST(cublasSetPointerMode(h, static_cast<cublasPointerMode_t>(9)) == CUBLAS_STATUS_INVALID_VALUE);
  MUST(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS);
}

void cublas_operands_beyond_buffers() {
  cublasHandle_t h = nullptr;
  MUST(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  cudaStream_t s = nullptr;
  MUST(cudaStreamCreate(&s) == cudaSuccess);
  MUST(cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS);
  constexpr int n = 64;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  MUST(cudaMalloc(&a, n * n * sizeof(float) / 4) == cudaSuccess);  // a quarter of what is read
  MUST(cudaMalloc(&b, n * n * sizeof(float)) == cudaSuccess);
  MUST(cudaMalloc(&c, n * n * sizeof(float)) == cudaSuccess);
  const float one = 1, zero = 0;
  // The call is accepted (cuBLAS cannot see allocations); the device faults.
  MUST(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n) ==
       CUBLAS_STATUS_SUCCESS);
  expect_device_fault(s);
}

// ---- cuBLASLt ----------------------------------------------------------------------------------

void cublaslt_handles_and_layouts() {
  cublasLtHandle_t lt = nullptr;
  MUST(cublasLtCreate(&lt) == CUBLAS_STATUS_SUCCESS);
  MUST(cublasLtDestroy(lt) == CUBLAS_STATUS_SUCCESS);
  cublasLtMatmulDesc_t desc = nullptr;
  MUST(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS);
  cublasLtMatrixLayout_t la = nullptr;
  MUST(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, 8, 8, 8) == CUBLAS_STATUS_SUCCESS);
  float* d = nullptr;
  MUST(cudaMalloc(&d, 64 * sizeof(float)) == cudaSuccess);
  const float one = 1, zero = 0;
  MUST(cublasLtMatmul(lt, desc, &one, d, la, d, la, &zero, d, la, d, la, nullptr, nullptr, 0,
                      nullptr) == CUBLAS_STATUS_NOT_INITIALIZED);
  unsigned char fake[256];
  std::memset(fake, 0x33, sizeof fake);
  MUST(cublasLtMatmul(reinterpret_cast<cublasLtHandle_t>(fake), desc, &one, d, la, d, la, &zero, d,
                      la, d, la, nullptr, nullptr, 0, nullptr) == CUBLAS_STATUS_NOT_INITIALIZED);
  for (unsigned char b : fake) MUST(b == 0x33);
  // A layout whose leading dimension is below its rows.
  cublasLtMatrixLayout_t bad = nullptr;
  MUST(cublasLtMatrixLayoutCreate(&bad, CUDA_R_32F, 8, 8, 4) == CUBLAS_STATUS_SUCCESS);
  MUST(cublasLtCreate(&lt) == CUBLAS_STATUS_SUCCESS);
  MUST(cublasLtMatmul(lt, desc, &one, d, bad, d, la, &zero, d, la, d, la, nullptr, nullptr, 0,
                      nullptr) != CUBLAS_STATUS_SUCCESS);
  MUST(cublasLtMatmulDescSetAttribute(desc, static_cast<cublasLtMatmulDescAttributes_t>(9999), &one,
                                      sizeof one) != CUBLAS_STATUS_SUCCESS);
  MUST(cublasLtDestroy(lt) == CUBLAS_STATUS_SUCCESS);
}

void cublaslt_operand_beyond_buffer() {
  cublasLtHandle_t lt = nullptr;
  MUST(cublasLtCreate(&lt) == CUBLAS_STATUS_SUCCESS);
  cudaStream_t s = nullptr;
  MUST(cudaStreamCreate(&s) == cudaSuccess);
  constexpr int n = 64;
  cublasLtMatmulDesc_t desc = nullptr;
  MUST(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS);
  cublasLtMatrixLayout_t la = nullptr;
  MUST(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, n, n, n) == CUBLAS_STATUS_SUCCESS);
  float *a = nullptr, *b = nullptr, *c = nullptr;
  MUST(cudaMalloc(&a, n * sizeof(float)) == cudaSuccess);  // one column of 64
  MUST(cudaMalloc(&b, n * n * sizeof(float)) == cudaSuccess);
  MUST(cudaMalloc(&c, n * n * sizeof(float)) == cudaSuccess);
  const float one = 1, zero = 0;
  MUST(cublasLtMatmul(lt, desc, &one, a, la, b, la, &zero, c, la, c, la, nullptr, nullptr, 0, s) ==
       CUBLAS_STATUS_SUCCESS);
  expect_device_fault(s);
}

// ---- NCCL --------------------------------------------------------------------------------------

void nccl_communicators() {
  ncclComm_t c = nullptr;
  const int dev = 0;
  MUST(ncclCommInitAll(&c, 1, &dev) == ncclSuccess);
  float* d = nullptr;
  MUST(cudaMalloc(&d, 256 * sizeof(float)) == cudaSuccess);
  MUST(ncclCommDestroy(c) == ncclSuccess);
  int n = 0;
  MUST(ncclCommCount(c, &n) == ncclInvalidArgument);
  MUST(ncclAllReduce(d, d, 256, ncclFloat, ncclSum, c, nullptr) == ncclInvalidArgument);
  MUST(ncclCommDestroy(c) == ncclInvalidArgument);
  unsigned char fake[512];
  std::memset(fake, 0x11, sizeof fake);
  auto garbage = reinterpret_cast<ncclComm_t>(fake);
  MUST(ncclAllReduce(d, d, 256, ncclFloat, ncclSum, garbage, nullptr) == ncclInvalidArgument);
  MUST(ncclCommAbort(garbage) == ncclInvalidArgument);
  for (unsigned char b : fake) MUST(b == 0x11);
  MUST(ncclCommDestroy(nullptr) == ncclSuccess);  // NCCL's no-op
}

void nccl_count_beyond_buffer() {
  ncclComm_t c = nullptr;
  const int dev = 0;
  MUST(ncclCommInitAll(&c, 1, &dev) == ncclSuccess);
  cudaStream_t s = nullptr;
  MUST(cudaStreamCreate(&s) == cudaSuccess);
  float *send = nullptr, *recv = nullptr;
  MUST(cudaMalloc(&send, 256 * sizeof(float)) == cudaSuccess);
  MUST(cudaMalloc(&recv, 4096 * sizeof(float)) == cudaSuccess);
  const ncclResult_t r = ncclAllReduce(send, recv, 4096, ncclFloat, ncclSum, c, s);
  // NCCL cannot see allocations either: accepted, and the device faults.
  if (r != ncclSuccess) std::printf("    %s: %s\n", ncclGetErrorString(r), ncclGetLastError(c));
  MUST(r == ncclSuccess);
  expect_device_fault(s);
}

// ---- The harness -------------------------------------------------------------------------------

struct Case {
  const char* name;
  void (*run)();
};

const Case kCases[] = {
    {"runtime.copy_size_near_max", copy_size_near_max},
    {"runtime.copy_span_wraps_address_space", copy_span_wraps_address_space},
    {"runtime.memset_beyond_allocation", memset_beyond_allocation},
    {"runtime.copy_2d_pitch_overflow", copy_2d_pitch_overflow},
    {"runtime.malloc_impossible_size", malloc_impossible_size},
    {"runtime.peer_3d_and_managed_spans", peer_3d_and_managed_spans},
    {"settings.malformed_setting_is_named", malformed_setting_is_named},
    {"runtime.free_twice_and_host_pointer", free_twice_and_host_pointer},
    {"runtime.destroyed_stream_and_event", destroyed_stream_and_event},
    {"runtime.stale_handles_after_reset", stale_handles_after_reset},
    {"runtime.events_across_devices", events_across_devices},
    {"runtime.invalid_device_and_kernel", invalid_device_and_kernel},
    {"runtime.graph_misuse", graph_misuse},
    {"runtime.ipc_handles_garbage_and_foreign", ipc_handles_garbage_and_foreign},
    {"runtime.cuda_in_a_forked_child", cuda_in_a_forked_child},
    {"driver.copies_and_frees", driver_copies_and_frees},
    {"cublas.destroyed_and_garbage_handles", cublas_destroyed_and_garbage_handles},
    {"cublas.arguments", cublas_arguments},
    {"cublas.operands_beyond_buffers", cublas_operands_beyond_buffers},
    {"cublaslt.handles_and_layouts", cublaslt_handles_and_layouts},
    {"cublaslt.operand_beyond_buffer", cublaslt_operand_beyond_buffer},
    {"nccl.communicators", nccl_communicators},
    {"nccl.count_beyond_buffer", nccl_count_beyond_buffer},
};

constexpr unsigned kAlarmSeconds = 120;  // sanitized builds run several times slower

enum class Outcome { kBehaved, kWrongAnswer, kCrash, kHang };

Outcome run_case(const Case& c) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(2);
  }
  if (pid == 0) {
    alarm(kAlarmSeconds);
    c.run();
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGALRM ? Outcome::kHang : Outcome::kCrash;
  if (WEXITSTATUS(status) == 0) return Outcome::kBehaved;
  if (WEXITSTATUS(status) == kWrongAnswer) return Outcome::kWrongAnswer;
  return Outcome::kCrash;  // a sanitizer's report exits with its own code
}

}  // namespace

int main(int argc, char** argv) {
  const char* only = argc > 1 ? argv[1] : nullptr;
  int ran = 0, crashes = 0, hangs = 0, wrong_answers = 0;
  for (const Case& c : kCases) {
    if (only != nullptr && std::strstr(c.name, only) == nullptr) continue;
    ++ran;
    switch (run_case(c)) {
      case Outcome::kBehaved:
        std::printf("  ok   %s\n", c.name);
        break;
      case Outcome::kWrongAnswer:
        std::printf("  FAIL %s: false success or wrong answer\n", c.name);
        ++wrong_answers;
        break;
      case Outcome::kCrash:
        std::printf("  FAIL %s: crashed\n", c.name);
        ++crashes;
        break;
      case Outcome::kHang:
        std::printf("  FAIL %s: hung (no end within %u s)\n", c.name, kAlarmSeconds);
        ++hangs;
        break;
    }
  }
  std::printf("misuse: %d case(s), %d crash(es), %d hang(s), %d false success(es)\n", ran, crashes,
              hangs, wrong_answers);
  check::Failures() = crashes + hangs + wrong_answers;
  return check::Report("misuse");
}
