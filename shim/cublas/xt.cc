// cuBLASXt (cublasXt.h): NVIDIA's multi-GPU, host-memory BLAS 3 layer, which muBLAS lacks. Emulated
// here on top of muBLAS and the MUSA runtime, the way NVIDIA documents its own design:
//
//  - The output is cut into blockDim x blockDim tiles (ragged at the right and bottom edges).
//    Each tile, or for the triangular solves and products each panel of tiles that depend on one
//    another, is a job; jobs go round-robin to the lanes: two per selected device, each a stream,
//    a muBLAS handle and three staging buffers (an A tile, a B tile, the output tile), and each
//    issued by a host thread of its own during the call.
//  - A job copies the tiles it reads to its device (musaMemcpy2DAsync), makes one muBLAS call per
//    block of the reduction dimension on its stream, accumulating into the output tile, and copies
//    the tile back. A matrix already on the lane's device is used in place, without a copy; one on
//    another device or on the host is staged. Jobs on different lanes overlap copies and compute.
//  - Diagonal tiles of symmetric, Hermitian and triangular operands go to the matching muBLAS
//    routine (syrk, herk, symm, trsm...); every other block is a GEMM, with the operand transposed
//    or conjugated where it is the mirror of the stored triangle. The triangle of C that a rank-k
//    update does not own is never changed (diagonal tiles are copied back whole, after being read
//    whole). Packed operands (spmm) are unpacked on the host into a full matrix first.
//  - Like NVIDIA's, every routine is blocking: it returns when the result is in place, wherever
//    it lives. The scalars are host values.
//
// The result is the one NVIDIA's tiled computation gives up to the order of the floating-point
// sums. The hybrid CPU share (cublasXtSetCpuRoutine / SetCpuRatio) is recorded and read by no one:
// every tile runs on the devices, which changes the speed, not the result. Without
// cublasXtDeviceSelect, the device current at the first routine call is used. Pinning mode
// ENABLED registers the caller's host matrices (musaHostRegister) for the call, so that the
// staging copies are asynchronous, and unregisters them before returning.
//
// Compiled once per CUDA ABI; a handle belongs to the ABI that created it.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/backend.h"
#include "cublas/cublas.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublas12_impl.h"
#else
#include "gen/cublas13_impl.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

static_assert(sizeof(cuComplex) == sizeof(muComplex) && alignof(cuComplex) == alignof(muComplex));
static_assert(sizeof(cuDoubleComplex) == sizeof(muDoubleComplex) &&
              alignof(cuDoubleComplex) == alignof(muDoubleComplex));

// NVIDIA does not document its default block dimension; 1024 keeps a lane's three staging buffers
// at 48 MiB for double complex.
constexpr int kDefaultBlockDim = 1024;
constexpr int kLanesPerDevice = 2;
constexpr int kRoutines = CUBLASXT_ROUTINE_MAX;
constexpr int kOpTypes = 4;

// ---- The muBLAS functions of one element type --------------------------------------------------

template <class T>
struct Blas;

#define TORCHADA_XT_COMMON(P)          \
  decltype(&::mublas##P##gemm) gemm;   \
  decltype(&::mublas##P##symm) symm;   \
  decltype(&::mublas##P##syrk) syrk;   \
  decltype(&::mublas##P##syr2k) syr2k; \
  decltype(&::mublas##P##syrkx) syrkx; \
  decltype(&::mublas##P##trmm) trmm;   \
  decltype(&::mublas##P##trsm) trsm;   \
  bool common_ok() const { return gemm && symm && syrk && syr2k && syrkx && trmm && trsm; }
#define TORCHADA_XT_COMMON_INIT(P)                                                   \
  gemm(t.mublas##P##gemm), symm(t.mublas##P##symm), syrk(t.mublas##P##syrk),         \
      syr2k(t.mublas##P##syr2k), syrkx(t.mublas##P##syrkx), trmm(t.mublas##P##trmm), \
      trsm(t.mublas##P##trsm)

#define TORCHADA_XT_REAL(T, P, OPTYPE)                                  \
  template <>                                                           \
  struct Blas<T> {                                                      \
    using Mu = T;                                                       \
    using Real = T;                                                     \
    static constexpr bool kComplex = false;                             \
    static constexpr int kOpType = OPTYPE;                              \
    explicit Blas(const MublasTable& t) : TORCHADA_XT_COMMON_INIT(P) {} \
    TORCHADA_XT_COMMON(P)                                               \
    bool ok() const { return common_ok(); }                             \
  };
#define TORCHADA_XT_COMPLEX(T, MU, R, P, OPTYPE)                              \
  template <>                                                                 \
  struct Blas<T> {                                                            \
    using Mu = MU;                                                            \
    using Real = R;                                                           \
    static constexpr bool kComplex = true;                                    \
    static constexpr int kOpType = OPTYPE;                                    \
    explicit Blas(const MublasTable& t)                                       \
        : TORCHADA_XT_COMMON_INIT(P),                                         \
          hemm(t.mublas##P##hemm),                                            \
          herk(t.mublas##P##herk),                                            \
          her2k(t.mublas##P##her2k),                                          \
          herkx(t.mublas##P##herkx) {}                                        \
    TORCHADA_XT_COMMON(P)                                                     \
    decltype(&::mublas##P##hemm) hemm;                                        \
    decltype(&::mublas##P##herk) herk;                                        \
    decltype(&::mublas##P##her2k) her2k;                                      \
    decltype(&::mublas##P##herkx) herkx;                                      \
    bool ok() const { return common_ok() && hemm && herk && her2k && herkx; } \
  };
TORCHADA_XT_REAL(float, S, CUBLASXT_FLOAT)
TORCHADA_XT_REAL(double, D, CUBLASXT_DOUBLE)
TORCHADA_XT_COMPLEX(cuComplex, muComplex, float, C, CUBLASXT_COMPLEX)
TORCHADA_XT_COMPLEX(cuDoubleComplex, muDoubleComplex, double, Z, CUBLASXT_DOUBLECOMPLEX)
#undef TORCHADA_XT_COMMON
#undef TORCHADA_XT_COMMON_INIT
#undef TORCHADA_XT_REAL
#undef TORCHADA_XT_COMPLEX

template <class T>
T scalar(double re) {
  if constexpr (Blas<T>::kComplex)
    return T{static_cast<typename Blas<T>::Real>(re), 0};
  else
    return static_cast<T>(re);
}
template <class T>
bool is_zero(const T& v) {
  if constexpr (Blas<T>::kComplex)
    return v.x == 0 && v.y == 0;
  else
    return v == 0;
}
template <class T>
T conjugate(const T& v) {
  if constexpr (Blas<T>::kComplex)
    return T{v.x, -v.y};
  else
    return v;
}
template <class T>
const typename Blas<T>::Mu* mu(const T* p) {
  return reinterpret_cast<const typename Blas<T>::Mu*>(p);
}

// ---- Handles ------------------------------------------------------------------------------------

// One stream of one device, with what its jobs need there.
struct Lane {
  int device = 0;
  musaStream_t stream = nullptr;
  mublasHandle_t blas = nullptr;
  void* buffer[3] = {};      // staging: 0 an A tile, 1 a B tile, 2 the output tile
  std::size_t capacity = 0;  // bytes of each buffer
};

struct XtHandle {
  std::mutex mu;             // one routine (or setting) at a time per handle
  std::vector<int> devices;  // empty until DeviceSelect or the first routine
  int block_dim = kDefaultBlockDim;
  cublasXtPinnedMemMode_t pinning = CUBLASXT_PINNING_DISABLED;
  float cpu_ratio[kRoutines][kOpTypes] = {};
  void* cpu_routine[kRoutines][kOpTypes] = {};
  std::vector<Lane> lanes;  // kLanesPerDevice per device, made at the first routine
};

// The handles cublasXtCreate made and cublasXtDestroy has not destroyed: anything else is refused.
struct Registry {
  std::mutex mu;
  std::set<XtHandle*> live;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: handles may outlive static destructors
  return *r;
}

cublasStatus_t refuse(Fn id, cublasStatus_t s, const char* why) {
  TORCHADA_LOG(kWarn, "%s: %s: %s", kFnNames[static_cast<int>(id)], why,
               s == CUBLAS_STATUS_INVALID_VALUE     ? "CUBLAS_STATUS_INVALID_VALUE"
               : s == CUBLAS_STATUS_NOT_INITIALIZED ? "CUBLAS_STATUS_NOT_INITIALIZED"
               : s == CUBLAS_STATUS_ALLOC_FAILED    ? "CUBLAS_STATUS_ALLOC_FAILED"
                                                    : "CUBLAS_STATUS_EXECUTION_FAILED");
  note_error(id);
  return s;
}
cublasStatus_t invalid(Fn id, const char* why) {
  return refuse(id, CUBLAS_STATUS_INVALID_VALUE, why);
}

// What a NULL handle answers, as NVIDIA's cublasXt answers it (seen on an H100, cuBLAS 13.1): a
// BLAS routine CUBLAS_STATUS_NOT_INITIALIZED, a call on the handle's settings (device selection,
// block size, pinning, CPU ratio (and, taken to be alike, CPU routine), destruction)
// CUBLAS_STATUS_INVALID_VALUE.
enum class NullHandle : int {
  kRoutine = CUBLAS_STATUS_NOT_INITIALIZED,
  kSetting = CUBLAS_STATUS_INVALID_VALUE,
};

// The handle, locked, or the reason it cannot be used.
class Locked {
 public:
  Locked(Fn id, cublasXtHandle_t handle, NullHandle if_null = NullHandle::kRoutine) {
    if (handle == nullptr) {
      status_ = refuse(id, static_cast<cublasStatus_t>(if_null), "NULL handle");
      return;
    }
    auto* h = reinterpret_cast<XtHandle*>(handle);
    {
      Registry& r = registry();
      std::lock_guard<std::mutex> g(r.mu);
      if (r.live.count(h) == 0) {
        status_ = refuse(id, CUBLAS_STATUS_NOT_INITIALIZED, "not a handle cublasXtCreate returned");
        return;
      }
    }
    lock_ = std::unique_lock<std::mutex>(h->mu);
    h_ = h;
  }
  cublasStatus_t status() const { return status_; }
  XtHandle* operator->() const { return h_; }
  XtHandle& operator*() const { return *h_; }

 private:
  XtHandle* h_ = nullptr;
  std::unique_lock<std::mutex> lock_;
  cublasStatus_t status_ = CUBLAS_STATUS_SUCCESS;
};

// Restores the caller's current device when a call has moved between devices.
class DeviceGuard {
 public:
  DeviceGuard() {
    const MusartTable& rt = musart();
    if (rt.musaGetDevice == nullptr || rt.musaGetDevice(&saved_) != musaSuccess) saved_ = -1;
  }
  ~DeviceGuard() {
    if (saved_ >= 0 && musart().musaSetDevice) musart().musaSetDevice(saved_);
  }
  int saved() const { return saved_; }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int saved_ = -1;
};

void release_lanes(XtHandle& h) {
  const MusartTable& rt = musart();
  const MublasTable& t = mublas_backend().table;
  for (Lane& l : h.lanes) {
    if (rt.musaSetDevice) rt.musaSetDevice(l.device);
    if (l.stream && rt.musaStreamSynchronize) rt.musaStreamSynchronize(l.stream);
    for (void*& b : l.buffer)
      if (b && rt.musaFree) rt.musaFree(b);
    if (l.blas && t.mublasDestroy) t.mublasDestroy(l.blas);
    if (l.stream && rt.musaStreamDestroy) rt.musaStreamDestroy(l.stream);
  }
  h.lanes.clear();
}

int device_count() {
  int n = 0;
  const MusartTable& rt = musart();
  if (rt.musaGetDeviceCount == nullptr || rt.musaGetDeviceCount(&n) != musaSuccess) return 0;
  return n;
}

// The lanes, each with buffers of at least `bytes`, made on first use (the caller's device is
// restored by the caller's DeviceGuard).
cublasStatus_t prepare_lanes(Fn id, XtHandle& h, int current_device, std::size_t bytes) {
  const MusartTable& rt = musart();
  const MublasTable& t = mublas_backend().table;
  if (rt.musaSetDevice == nullptr || rt.musaStreamCreateWithFlags == nullptr ||
      rt.musaMalloc == nullptr || rt.musaFree == nullptr || rt.musaMemcpy2DAsync == nullptr ||
      rt.musaStreamSynchronize == nullptr || rt.musaPointerGetAttributes == nullptr ||
      t.mublasCreate == nullptr || t.mublasSetStream == nullptr ||
      t.mublasSetPointerMode == nullptr)
    return CublasLib::missing(id);
  if (h.devices.empty()) {
    if (current_device < 0) return refuse(id, CUBLAS_STATUS_NOT_INITIALIZED, "no current device");
    h.devices.push_back(current_device);
  }
  if (h.lanes.empty()) {
    for (int d : h.devices)
      for (int k = 0; k < kLanesPerDevice; ++k) {
        Lane l;
        l.device = d;
        h.lanes.push_back(l);
      }
    for (Lane& l : h.lanes) {
      if (rt.musaSetDevice(l.device) != musaSuccess ||
          rt.musaStreamCreateWithFlags(&l.stream, musaStreamNonBlocking) != musaSuccess) {
        l.stream = nullptr;
        release_lanes(h);
        return refuse(id, CUBLAS_STATUS_NOT_INITIALIZED, "a stream of a selected device failed");
      }
      if (t.mublasCreate(&l.blas) != MUBLAS_STATUS_SUCCESS ||
          t.mublasSetStream(l.blas, l.stream) != MUBLAS_STATUS_SUCCESS ||
          t.mublasSetPointerMode(l.blas, MUBLAS_POINTER_MODE_HOST) != MUBLAS_STATUS_SUCCESS) {
        release_lanes(h);
        return refuse(id, CUBLAS_STATUS_NOT_INITIALIZED, "muBLAS could not make a handle");
      }
    }
  }
  for (Lane& l : h.lanes) {
    if (l.capacity >= bytes) continue;
    rt.musaSetDevice(l.device);
    rt.musaStreamSynchronize(l.stream);
    for (void*& b : l.buffer) {
      if (b) rt.musaFree(b);
      b = nullptr;
    }
    l.capacity = 0;
    for (void*& b : l.buffer)
      if (rt.musaMalloc(&b, bytes) != musaSuccess) {
        b = nullptr;
        if (rt.musaGetLastError) rt.musaGetLastError();  // reported here, not left for later
        return refuse(id, CUBLAS_STATUS_ALLOC_FAILED, "the staging buffers do not fit the device");
      }
    l.capacity = bytes;
  }
  return CUBLAS_STATUS_SUCCESS;
}

// ---- One routine call
// ----------------------------------------------------------------------------

// A column-major matrix argument: where it lives decides whether a tile is used in place.
struct Operand {
  const char* base = nullptr;
  std::size_t ld = 0;
  int device = -1;  // the device holding it, -1 when it is host memory
};

// A tile on a lane's device, as muBLAS is given it.
struct Tile {
  void* p = nullptr;
  int ld = 1;
  bool staged = false;
};

class Run {
 public:
  Run(Fn id, XtHandle& h, std::size_t elem) : id_(id), h_(h), elem_(elem) {}
  ~Run() {
    for (const void* p : pinned_) musart().musaHostUnregister(const_cast<void*>(p));
  }
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  std::size_t block() const { return static_cast<std::size_t>(h_.block_dim); }
  std::size_t blocks(std::size_t n) const { return (n + block() - 1) / block(); }
  std::size_t extent(std::size_t n, std::size_t b) const {
    return std::min(block(), n - b * block());
  }

  // `largest`: the problem's largest dimension; no tile is wider or taller.
  cublasStatus_t start(std::size_t largest) {
    const std::size_t side = std::min(block(), std::max<std::size_t>(largest, 1));
    return prepare_lanes(id_, h_, guard_.saved(), side * side * elem_);
  }

  // A rows x cols matrix of leading dimension ld at `p`.
  Operand operand(const void* p, std::size_t ld, std::size_t rows, std::size_t cols) {
    Operand o;
    o.base = static_cast<const char*>(p);
    o.ld = ld;
    musaPointerAttributes a{};
    if (p != nullptr && musart().musaPointerGetAttributes(&a, p) == musaSuccess &&
        a.type == musaMemoryTypeDevice && ld <= static_cast<std::size_t>(INT_MAX))
      o.device = a.device;
    if (p != nullptr && o.device < 0 && h_.pinning == CUBLASXT_PINNING_ENABLED && cols > 0 &&
        rows > 0 && a.type == musaMemoryTypeUnregistered && musart().musaHostRegister != nullptr) {
      // Registered for the call, up to the last element (not past it: the matrix may end there);
      // a failure (already registered, overlap) only costs speed.
      if (musart().musaHostRegister(const_cast<void*>(p), (ld * (cols - 1) + rows) * elem_,
                                    musaHostRegisterDefault) == musaSuccess)
        pinned_.push_back(p);
      else if (musart().musaGetLastError)
        musart().musaGetLastError();
    }
    return o;
  }

  // Runs job(lane, index) for index in [0, jobs), round-robin over the lanes, then waits for all.
  // Runs job(lane, index) for index in [0, jobs), dealt round-robin to the lanes (job j to lane
  // j mod lanes, as NVIDIA's static schedule does), each lane's jobs in order on a host thread of
  // its own (the caller's for the first lane), then waits for every lane's stream. A thread per
  // lane, like NVIDIA's thread per GPU: a copy into pageable memory blocks its issuing thread until
  // the lane's stream has reached it, which must not hold back the other lanes.
  template <class Job>
  cublasStatus_t run(std::size_t jobs, Job&& job) {
    const std::size_t lanes = h_.lanes.size();
    const auto work = [&](std::size_t k) {
      Lane& l = h_.lanes[k];
      if (musart().musaSetDevice(l.device) != musaSuccess) {
        fail("a selected device could not be made current");
        return;
      }
      for (std::size_t j = k; j < jobs && ok(); j += lanes) job(l, j);
      if (musart().musaStreamSynchronize(l.stream) != musaSuccess)
        fail("a device failed while it computed its tiles");
    };
    std::vector<std::thread> threads;
    std::size_t inline_from = lanes;  // lanes whose thread could not be started run here
    for (std::size_t k = 1; k < lanes && k < jobs; ++k) {
      try {
        threads.emplace_back(work, k);
      } catch (...) {  // std::system_error: no thread; nothing may cross the C ABI
        inline_from = k;
        break;
      }
    }
    work(0);
    for (std::size_t k = inline_from; k < lanes && k < jobs; ++k) work(k);
    for (std::thread& t : threads) t.join();
    return status_.load(std::memory_order_acquire);
  }

  bool ok() const { return status_.load(std::memory_order_relaxed) == CUBLAS_STATUS_SUCCESS; }

  // The rows x cols tile of `o` at (r, c) on the lane's device, in buffer `slot` when staged.
  // `copy`: false for an output tile the call overwrites without reading it.
  Tile tile(Lane& l, int slot, const Operand& o, std::size_t r, std::size_t c, std::size_t rows,
            std::size_t cols, bool copy = true) {
    Tile t;
    const char* at = o.base + (r + c * o.ld) * elem_;
    if (o.device == l.device) {
      t.p = const_cast<char*>(at);
      t.ld = static_cast<int>(std::max<std::size_t>(o.ld, 1));
      return t;
    }
    t.p = l.buffer[slot];
    t.ld = static_cast<int>(std::max<std::size_t>(rows, 1));
    t.staged = true;
    if (copy && rows > 0 && cols > 0 && ok() &&
        musart().musaMemcpy2DAsync(t.p, rows * elem_, at, o.ld * elem_, rows * elem_, cols,
                                   musaMemcpyDefault, l.stream) != musaSuccess)
      fail("a tile could not be copied to its device");
    return t;
  }
  // The output tile back into `o`, when it was staged.
  void store(Lane& l, const Tile& t, const Operand& o, std::size_t r, std::size_t c,
             std::size_t rows, std::size_t cols) {
    if (!t.staged || rows == 0 || cols == 0 || !ok()) return;
    char* at = const_cast<char*>(o.base) + (r + c * o.ld) * elem_;
    if (musart().musaMemcpy2DAsync(at, o.ld * elem_, t.p, rows * elem_, rows * elem_, cols,
                                   musaMemcpyDefault, l.stream) != musaSuccess)
      fail("a result tile could not be copied back");
  }
  // The stored block of op(X) rows [r, r + rows) and columns [c, c + cols), X being rows x cols
  // as op(X) and stored transposed unless trans is N.
  Tile op_tile(Lane& l, int slot, const Operand& o, cublasOperation_t trans, std::size_t r,
               std::size_t c, std::size_t rows, std::size_t cols) {
    return trans == CUBLAS_OP_N ? tile(l, slot, o, r, c, rows, cols)
                                : tile(l, slot, o, c, r, cols, rows);
  }

  void blas(mublasStatus_t s) {
    if (s != MUBLAS_STATUS_SUCCESS && first_failure(CublasLib::status(s))) {
      TORCHADA_LOG(kWarn, "%s: muBLAS failed on a tile: %s", kFnNames[static_cast<int>(id_)],
                   mublas_status_text(s));
      note_error(id_);
    }
  }
  void fail(const char* why) {
    if (first_failure(CUBLAS_STATUS_EXECUTION_FAILED))
      refuse(id_, CUBLAS_STATUS_EXECUTION_FAILED, why);
  }

 private:
  Fn id_;
  XtHandle& h_;
  std::size_t elem_;
  DeviceGuard guard_;
  std::vector<const void*> pinned_;
  // The call's status: the first failure of any lane (the later ones are not logged).
  bool first_failure(cublasStatus_t s) {
    cublasStatus_t expected = CUBLAS_STATUS_SUCCESS;
    return status_.compare_exchange_strong(expected, s, std::memory_order_acq_rel);
  }
  std::atomic<cublasStatus_t> status_{CUBLAS_STATUS_SUCCESS};
};

int idx(std::size_t i) { return static_cast<int>(i); }
mublasOperation_t mu_op(cublasOperation_t op) { return convert<mublasOperation_t>(op); }
mublasFillMode_t mu_fill(cublasFillMode_t f) { return convert<mublasFillMode_t>(f); }
mublasSideMode_t mu_side(cublasSideMode_t s) { return convert<mublasSideMode_t>(s); }
mublasDiagType_t mu_diag(cublasDiagType_t d) { return convert<mublasDiagType_t>(d); }

// Reads an enum argument from its bytes: a value outside the enum is refused, never loaded as one
// (undefined behaviour). So the routines take their enum arguments by reference until checked.
template <class E>
int raw(const E& v) {
  std::underlying_type_t<E> r;
  std::memcpy(&r, &v, sizeof r);
  return static_cast<int>(r);
}
template <class E>
bool one_of(const E& v, std::initializer_list<E> allowed) {
  for (E a : allowed)
    if (std::memcmp(&v, &a, sizeof v) == 0) return true;
  return false;
}

// Checks common to every routine; success when it may go ahead.
cublasStatus_t check_ld(Fn id, std::size_t ld, std::size_t rows, const char* what) {
  if (ld < std::max<std::size_t>(rows, 1)) {
    TORCHADA_LOG(kWarn, "%s: %s = %zu is smaller than the %zu rows: CUBLAS_STATUS_INVALID_VALUE",
                 kFnNames[static_cast<int>(id)], what, ld, rows);
    note_error(id);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}

template <class T>
cublasStatus_t backend_ready(Fn id, const Blas<T>& f) {
  if (mublas_backend().failed) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!f.ok()) return CublasLib::missing(id);
  return CUBLAS_STATUS_SUCCESS;
}

// Real types take CUBLAS_OP_C as CUBLAS_OP_T, as cuBLAS does.
template <class T>
cublasOperation_t plain(cublasOperation_t op) {
  return !Blas<T>::kComplex && op == CUBLAS_OP_C ? CUBLAS_OP_T : op;
}

#define TORCHADA_XT_CHECK(expr)                 \
  do {                                          \
    const cublasStatus_t s_ = (expr);           \
    if (s_ != CUBLAS_STATUS_SUCCESS) return s_; \
  } while (0)

// ---- GEMM --------------------------------------------------------------------------------------

template <class T>
cublasStatus_t gemm(Fn id, cublasXtHandle_t handle, const cublasOperation_t& transa,
                    const cublasOperation_t& transb, std::size_t m, std::size_t n, std::size_t k,
                    const T* alpha, const T* A, std::size_t lda, const T* B, std::size_t ldb,
                    const T* beta, T* C, std::size_t ldc) {
  Locked h(id, handle);
  TORCHADA_XT_CHECK(h.status());
  if (!one_of(transa, {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C}) ||
      !one_of(transb, {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C}))
    return CublasLib::invalid_enum(id);
  const cublasOperation_t ta = plain<T>(transa), tb = plain<T>(transb);
  TORCHADA_XT_CHECK(check_ld(id, lda, ta == CUBLAS_OP_N ? m : k, "lda"));
  TORCHADA_XT_CHECK(check_ld(id, ldb, tb == CUBLAS_OP_N ? k : n, "ldb"));
  TORCHADA_XT_CHECK(check_ld(id, ldc, m, "ldc"));
  if (alpha == nullptr || beta == nullptr) return invalid(id, "alpha or beta is NULL");
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  if (C == nullptr || (k > 0 && (A == nullptr || B == nullptr)))
    return invalid(id, "a matrix is NULL");
  const Blas<T> f(mublas_backend().table);
  TORCHADA_XT_CHECK(backend_ready(id, f));

  Run run(id, *h, sizeof(T));
  TORCHADA_XT_CHECK(run.start(std::max({m, n, k})));
  const bool an = ta == CUBLAS_OP_N, bn = tb == CUBLAS_OP_N;
  const Operand a = run.operand(A, lda, an ? m : k, an ? k : m);
  const Operand b = run.operand(B, ldb, bn ? k : n, bn ? n : k);
  const Operand c = run.operand(C, ldc, m, n);
  const T one = scalar<T>(1);
  const std::size_t mb = run.blocks(m), nb = run.blocks(n),
                    kb = std::max<std::size_t>(run.blocks(k), 1);
  const bool read_c = !is_zero(*beta);
  return run.run(mb * nb, [&](Lane& l, std::size_t job) {
    const std::size_t i = job % mb, j = job / mb;
    const std::size_t r = i * run.block(), cc = j * run.block();
    const std::size_t rows = run.extent(m, i), cols = run.extent(n, j);
    const Tile ct = run.tile(l, 2, c, r, cc, rows, cols, read_c);
    for (std::size_t q = 0; q < kb && run.ok(); ++q) {
      const std::size_t kq = q * run.block(), depth = k == 0 ? 0 : run.extent(k, q);
      const Tile at = run.op_tile(l, 0, a, ta, r, kq, rows, depth);
      const Tile bt = run.op_tile(l, 1, b, tb, kq, cc, depth, cols);
      using Mu = typename Blas<T>::Mu;
      run.blas(f.gemm(l.blas, mu_op(ta), mu_op(tb), idx(rows), idx(cols), idx(depth), mu(alpha),
                      static_cast<const Mu*>(at.p), at.ld, static_cast<const Mu*>(bt.p), bt.ld,
                      mu(q == 0 ? beta : &one), static_cast<Mu*>(ct.p), ct.ld));
    }
    run.store(l, ct, c, r, cc, rows, cols);
  });
}

// ---- Rank-k updates: syrk, herk, syrkx, herkx, syr2k, her2k -----------------------------------

enum class Rank { kK, kKx, k2k };

// C = alpha op(A) op(B)^T/H (+ alpha' op(B) op(A)^T/H for 2k) + beta C on the `uplo` triangle.
// `alpha` and `beta` are the routine's (Real for herk's alpha, her*'s beta); B is A for kK.
template <class T, class AlphaT, class BetaT>
cublasStatus_t rank(Fn id, Rank kind, bool herm, cublasXtHandle_t handle,
                    const cublasFillMode_t& uplo, const cublasOperation_t& trans_arg, std::size_t n,
                    std::size_t k, const AlphaT* alpha, const T* A, std::size_t lda, const T* B,
                    std::size_t ldb, const BetaT* beta, T* C, std::size_t ldc) {
  Locked h(id, handle);
  TORCHADA_XT_CHECK(h.status());
  const bool trans_ok = herm ? one_of(trans_arg, {CUBLAS_OP_N, CUBLAS_OP_C})
                        : Blas<T>::kComplex
                            ? one_of(trans_arg, {CUBLAS_OP_N, CUBLAS_OP_T})
                            : one_of(trans_arg, {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C});
  if (!one_of(uplo, {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER}))
    return CublasLib::invalid_enum(id);
  if (!trans_ok)
    return invalid(id, herm                ? "trans must be CUBLAS_OP_N or CUBLAS_OP_C"
                       : Blas<T>::kComplex ? "trans must be CUBLAS_OP_N or CUBLAS_OP_T"
                                           : "trans is not an operation");
  const cublasOperation_t trans = plain<T>(trans_arg);
  const std::size_t a_rows = trans == CUBLAS_OP_N ? n : k;
  TORCHADA_XT_CHECK(check_ld(id, lda, a_rows, "lda"));
  if (kind != Rank::kK) TORCHADA_XT_CHECK(check_ld(id, ldb, a_rows, "ldb"));
  TORCHADA_XT_CHECK(check_ld(id, ldc, n, "ldc"));
  if (alpha == nullptr || beta == nullptr) return invalid(id, "alpha or beta is NULL");
  if (n == 0) return CUBLAS_STATUS_SUCCESS;
  if (kind == Rank::kK) B = A, ldb = lda;
  if (C == nullptr || (k > 0 && (A == nullptr || B == nullptr)))
    return invalid(id, "a matrix is NULL");
  const Blas<T> f(mublas_backend().table);
  TORCHADA_XT_CHECK(backend_ready(id, f));

  Run run(id, *h, sizeof(T));
  TORCHADA_XT_CHECK(run.start(std::max(n, k)));
  const std::size_t a_cols = trans == CUBLAS_OP_N ? k : n;
  const Operand a = run.operand(A, lda, a_rows, a_cols);
  const Operand b = kind == Rank::kK ? a : run.operand(B, ldb, a_rows, a_cols);
  const Operand c = run.operand(C, ldc, n, n);
  using Mu = typename Blas<T>::Mu;
  using Real = typename Blas<T>::Real;
  const T one = scalar<T>(1);
  const Real real_one = 1;
  // The GEMMs' scalars: alpha as T (herk's is real), the second product's alpha (conjugated for
  // her2k), beta as T (her*'s is real).
  T alpha_t, beta_t;
  if constexpr (std::is_same_v<AlphaT, T>)
    alpha_t = *alpha;
  else
    alpha_t = scalar<T>(*alpha);
  if constexpr (std::is_same_v<BetaT, T>)
    beta_t = *beta;
  else
    beta_t = scalar<T>(*beta);
  const T alpha2 = herm ? conjugate(alpha_t) : alpha_t;
  const cublasOperation_t second =
      trans == CUBLAS_OP_N ? (herm ? CUBLAS_OP_C : CUBLAS_OP_T) : CUBLAS_OP_N;
  const bool upper = uplo == CUBLAS_FILL_MODE_UPPER;
  // The tiles of the triangle, column by column.
  const std::size_t nb = run.blocks(n), kb = std::max<std::size_t>(run.blocks(k), 1);
  std::vector<std::pair<std::size_t, std::size_t>> tiles;
  for (std::size_t j = 0; j < nb; ++j)
    for (std::size_t i = upper ? 0 : j; upper ? i <= j : i < nb; ++i) tiles.emplace_back(i, j);
  const bool read_c = !is_zero(beta_t);
  return run.run(tiles.size(), [&](Lane& l, std::size_t job) {
    const auto [i, j] = tiles[job];
    const std::size_t r = i * run.block(), cc = j * run.block();
    const std::size_t rows = run.extent(n, i), cols = run.extent(n, j);
    // A diagonal tile goes back whole, so it is read whole, whatever beta.
    const Tile ct = run.tile(l, 2, c, r, cc, rows, cols, read_c || i == j);
    for (std::size_t q = 0; q < kb && run.ok(); ++q) {
      const std::size_t kq = q * run.block(), depth = k == 0 ? 0 : run.extent(k, q);
      const T* beta_q = q == 0 ? &beta_t : &one;
      Mu* cp = static_cast<Mu*>(ct.p);
      if (i == j) {
        const Tile at = run.op_tile(l, 0, a, trans, r, kq, rows, depth);
        const auto* ap = static_cast<const Mu*>(at.p);
        const mublasFillMode_t fill = mu_fill(uplo);
        const mublasOperation_t op = mu_op(trans);
        if (kind == Rank::kK) {
          if constexpr (Blas<T>::kComplex) {
            if (herm) {
              const Real* beta_r = q == 0 ? reinterpret_cast<const Real*>(beta) : &real_one;
              run.blas(f.herk(l.blas, fill, op, idx(rows), idx(depth),
                              reinterpret_cast<const Real*>(alpha), ap, at.ld, beta_r, cp, ct.ld));
              continue;
            }
          }
          run.blas(f.syrk(l.blas, fill, op, idx(rows), idx(depth), mu(&alpha_t), ap, at.ld,
                          mu(beta_q), cp, ct.ld));
          continue;
        }
        const Tile bt = run.op_tile(l, 1, b, trans, r, kq, rows, depth);
        const auto* bp = static_cast<const Mu*>(bt.p);
        if constexpr (Blas<T>::kComplex) {
          if (herm) {
            const Real* beta_r = q == 0 ? reinterpret_cast<const Real*>(beta) : &real_one;
            run.blas(kind == Rank::kKx
                         ? f.herkx(l.blas, fill, op, idx(rows), idx(depth), mu(&alpha_t), ap, at.ld,
                                   bp, bt.ld, beta_r, cp, ct.ld)
                         : f.her2k(l.blas, fill, op, idx(rows), idx(depth), mu(&alpha_t), ap, at.ld,
                                   bp, bt.ld, beta_r, cp, ct.ld));
            continue;
          }
        }
        run.blas(kind == Rank::kKx ? f.syrkx(l.blas, fill, op, idx(rows), idx(depth), mu(&alpha_t),
                                             ap, at.ld, bp, bt.ld, mu(beta_q), cp, ct.ld)
                                   : f.syr2k(l.blas, fill, op, idx(rows), idx(depth), mu(&alpha_t),
                                             ap, at.ld, bp, bt.ld, mu(beta_q), cp, ct.ld));
        continue;
      }
      // Off the diagonal: op(A)_i op(B)_j^T/H [+ op(B)_i op(A)_j^T/H] as GEMMs.
      const Tile at = run.op_tile(l, 0, a, trans, r, kq, rows, depth);
      const Tile bt = run.op_tile(l, 1, b, trans, cc, kq, cols, depth);
      run.blas(f.gemm(l.blas, mu_op(trans), mu_op(second), idx(rows), idx(cols), idx(depth),
                      mu(&alpha_t), static_cast<const Mu*>(at.p), at.ld,
                      static_cast<const Mu*>(bt.p), bt.ld, mu(beta_q), cp, ct.ld));
      if (kind == Rank::k2k) {
        const Tile bi = run.op_tile(l, 0, b, trans, r, kq, rows, depth);
        const Tile aj = run.op_tile(l, 1, a, trans, cc, kq, cols, depth);
        run.blas(f.gemm(l.blas, mu_op(trans), mu_op(second), idx(rows), idx(cols), idx(depth),
                        mu(&alpha2), static_cast<const Mu*>(bi.p), bi.ld,
                        static_cast<const Mu*>(aj.p), aj.ld, mu(&one), cp, ct.ld));
      }
    }
    run.store(l, ct, c, r, cc, rows, cols);
  });
}

// ---- symm, hemm, spmm ---------------------------------------------------------------------------

template <class T>
cublasStatus_t symm_checked(Fn id, XtHandle& h, bool herm, cublasSideMode_t side,
                            cublasFillMode_t uplo, std::size_t m, std::size_t n, const T* alpha,
                            const T* A, std::size_t lda, const T* B, std::size_t ldb, const T* beta,
                            T* C, std::size_t ldc) {
  const Blas<T> f(mublas_backend().table);
  TORCHADA_XT_CHECK(backend_ready(id, f));
  Run run(id, h, sizeof(T));
  TORCHADA_XT_CHECK(run.start(std::max(m, n)));
  const bool left = side == CUBLAS_SIDE_LEFT, upper = uplo == CUBLAS_FILL_MODE_UPPER;
  const std::size_t na = left ? m : n;
  const Operand a = run.operand(A, lda, na, na);
  const Operand b = run.operand(B, ldb, m, n);
  const Operand c = run.operand(C, ldc, m, n);
  using Mu = typename Blas<T>::Mu;
  const T one = scalar<T>(1);
  const cublasOperation_t mirror = herm ? CUBLAS_OP_C : CUBLAS_OP_T;
  const std::size_t mb = run.blocks(m), nb = run.blocks(n), qb = run.blocks(na);
  const bool read_c = !is_zero(*beta);
  return run.run(mb * nb, [&](Lane& l, std::size_t job) {
    const std::size_t i = job % mb, j = job / mb;
    const std::size_t r = i * run.block(), cc = j * run.block();
    const std::size_t rows = run.extent(m, i), cols = run.extent(n, j);
    const Tile ct = run.tile(l, 2, c, r, cc, rows, cols, read_c);
    Mu* cp = static_cast<Mu*>(ct.p);
    for (std::size_t q = 0; q < qb && run.ok(); ++q) {
      const std::size_t kq = q * run.block(), depth = run.extent(na, q);
      const T* beta_q = q == 0 ? beta : &one;
      // The block of A this product needs: (i, q) on the left, (q, j) on the right.
      const std::size_t ar = left ? i : q, ac = left ? q : j;
      if (ar == ac) {
        const std::size_t d = left ? rows : cols;
        const Tile at = run.tile(l, 0, a, ar * run.block(), ar * run.block(), d, d);
        const Tile bt = run.tile(l, 1, b, r, cc, rows, cols);
        const auto s = mu_side(side);
        const auto fill = mu_fill(uplo);
        const auto* ap = static_cast<const Mu*>(at.p);
        const auto* bp = static_cast<const Mu*>(bt.p);
        if constexpr (Blas<T>::kComplex) {
          if (herm) {
            run.blas(f.hemm(l.blas, s, fill, idx(rows), idx(cols), mu(alpha), ap, at.ld, bp, bt.ld,
                            mu(beta_q), cp, ct.ld));
            continue;
          }
        }
        run.blas(f.symm(l.blas, s, fill, idx(rows), idx(cols), mu(alpha), ap, at.ld, bp, bt.ld,
                        mu(beta_q), cp, ct.ld));
        continue;
      }
      // Stored blocks are used as they are, the others are the mirror of a stored one.
      const bool stored = upper ? ar < ac : ar > ac;
      const std::size_t arows = left ? rows : depth, acols = left ? depth : cols;
      const Tile at = stored ? run.tile(l, 0, a, ar * run.block(), ac * run.block(), arows, acols)
                             : run.tile(l, 0, a, ac * run.block(), ar * run.block(), acols, arows);
      const cublasOperation_t aop = stored ? CUBLAS_OP_N : mirror;
      const auto* ap = static_cast<const Mu*>(at.p);
      if (left) {
        const Tile bt = run.tile(l, 1, b, kq, cc, depth, cols);
        run.blas(f.gemm(l.blas, mu_op(aop), MUBLAS_OP_N, idx(rows), idx(cols), idx(depth),
                        mu(alpha), ap, at.ld, static_cast<const Mu*>(bt.p), bt.ld, mu(beta_q), cp,
                        ct.ld));
      } else {
        const Tile bt = run.tile(l, 1, b, r, kq, rows, depth);
        run.blas(f.gemm(l.blas, MUBLAS_OP_N, mu_op(aop), idx(rows), idx(cols), idx(depth),
                        mu(alpha), static_cast<const Mu*>(bt.p), bt.ld, ap, at.ld, mu(beta_q), cp,
                        ct.ld));
      }
    }
    run.store(l, ct, c, r, cc, rows, cols);
  });
}

template <class T>
cublasStatus_t check_symm(Fn id, const cublasSideMode_t& side, const cublasFillMode_t& uplo,
                          std::size_t m, std::size_t ldb, const T* alpha, const T* beta,
                          std::size_t ldc) {
  if (!one_of(side, {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT}) ||
      !one_of(uplo, {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER}))
    return CublasLib::invalid_enum(id);
  TORCHADA_XT_CHECK(check_ld(id, ldb, m, "ldb"));
  TORCHADA_XT_CHECK(check_ld(id, ldc, m, "ldc"));
  if (alpha == nullptr || beta == nullptr) return invalid(id, "alpha or beta is NULL");
  return CUBLAS_STATUS_SUCCESS;
}

template <class T>
cublasStatus_t symm(Fn id, bool herm, cublasXtHandle_t handle, const cublasSideMode_t& side,
                    const cublasFillMode_t& uplo, std::size_t m, std::size_t n, const T* alpha,
                    const T* A, std::size_t lda, const T* B, std::size_t ldb, const T* beta, T* C,
                    std::size_t ldc) {
  Locked h(id, handle);
  TORCHADA_XT_CHECK(h.status());
  TORCHADA_XT_CHECK(check_symm(id, side, uplo, m, ldb, alpha, beta, ldc));
  TORCHADA_XT_CHECK(check_ld(id, lda, side == CUBLAS_SIDE_LEFT ? m : n, "lda"));
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  if (A == nullptr || B == nullptr || C == nullptr) return invalid(id, "a matrix is NULL");
  return symm_checked(id, *h, herm, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
}

// spmm: the packed triangle unpacked on the host into a full matrix (its stored triangle), then
// symm's tiling.
template <class T>
cublasStatus_t spmm(Fn id, cublasXtHandle_t handle, const cublasSideMode_t& side,
                    const cublasFillMode_t& uplo, std::size_t m, std::size_t n, const T* alpha,
                    const T* AP, const T* B, std::size_t ldb, const T* beta, T* C,
                    std::size_t ldc) {
  Locked h(id, handle);
  TORCHADA_XT_CHECK(h.status());
  TORCHADA_XT_CHECK(check_symm(id, side, uplo, m, ldb, alpha, beta, ldc));
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  if (AP == nullptr || B == nullptr || C == nullptr) return invalid(id, "a matrix is NULL");
  const std::size_t na = side == CUBLAS_SIDE_LEFT ? m : n;
  const std::size_t packed = na * (na + 1) / 2;
  std::unique_ptr<T[]> host_packed;
  const T* src = AP;
  musaPointerAttributes attr{};
  const MusartTable& rt = musart();
  if (rt.musaPointerGetAttributes == nullptr || rt.musaMemcpy == nullptr)
    return CublasLib::missing(id);
  if (rt.musaPointerGetAttributes(&attr, AP) == musaSuccess && attr.type == musaMemoryTypeDevice) {
    host_packed.reset(new (std::nothrow) T[packed]);
    if (!host_packed) return refuse(id, CUBLAS_STATUS_ALLOC_FAILED, "no host memory for AP");
    if (rt.musaMemcpy(host_packed.get(), AP, packed * sizeof(T), musaMemcpyDeviceToHost) !=
        musaSuccess)
      return refuse(id, CUBLAS_STATUS_EXECUTION_FAILED, "AP could not be read from its device");
    src = host_packed.get();
  }
  std::unique_ptr<T[]> full(new (std::nothrow) T[na * na]);
  if (!full) return refuse(id, CUBLAS_STATUS_ALLOC_FAILED, "no host memory to unpack AP");
  const bool upper = uplo == CUBLAS_FILL_MODE_UPPER;
  for (std::size_t j = 0; j < na; ++j) {
    // Upper: column j holds rows 0..j; lower: rows j..na-1 (BLAS packed storage).
    const std::size_t first = upper ? 0 : j, last = upper ? j : na - 1;
    const T* col = upper ? src + j * (j + 1) / 2 : src + j * (2 * na - j + 1) / 2 - j;
    for (std::size_t i = first; i <= last; ++i) full[i + j * na] = col[i];
  }
  return symm_checked(id, *h, false, side, uplo, m, n, alpha, full.get(), na, B, ldb, beta, C, ldc);
}

// ---- trmm (out of place) and trsm
// -----------------------------------------------------------------

// Each panel (a block column of the output on the left, a block row on the right) is one job:
// its tiles are computed in an order in which a tile is written only after every tile that reads
// it as input, so trsm's in-place solve, and trmm with C == B, are right.
template <class T>
cublasStatus_t triangular(Fn id, bool solve, cublasXtHandle_t handle, const cublasSideMode_t& side,
                          const cublasFillMode_t& uplo, const cublasOperation_t& trans_arg,
                          const cublasDiagType_t& diag, std::size_t m, std::size_t n,
                          const T* alpha, const T* A, std::size_t lda, const T* B, std::size_t ldb,
                          T* C, std::size_t ldc) {
  Locked h(id, handle);
  TORCHADA_XT_CHECK(h.status());
  if (!one_of(side, {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT}) ||
      !one_of(uplo, {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER}) ||
      !one_of(trans_arg, {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C}) ||
      !one_of(diag, {CUBLAS_DIAG_NON_UNIT, CUBLAS_DIAG_UNIT}))
    return CublasLib::invalid_enum(id);
  const cublasOperation_t trans = plain<T>(trans_arg);
  const bool left = side == CUBLAS_SIDE_LEFT;
  const std::size_t na = left ? m : n;
  TORCHADA_XT_CHECK(check_ld(id, lda, na, "lda"));
  TORCHADA_XT_CHECK(check_ld(id, ldb, m, "ldb"));
  if (!solve) TORCHADA_XT_CHECK(check_ld(id, ldc, m, "ldc"));
  if (alpha == nullptr) return invalid(id, "alpha is NULL");
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  if (A == nullptr || B == nullptr || C == nullptr) return invalid(id, "a matrix is NULL");
  const Blas<T> f(mublas_backend().table);
  TORCHADA_XT_CHECK(backend_ready(id, f));

  Run run(id, *h, sizeof(T));
  TORCHADA_XT_CHECK(run.start(std::max(m, n)));
  const Operand a = run.operand(A, lda, na, na);
  const Operand b = run.operand(B, ldb, m, n);
  const Operand c = solve ? b : run.operand(C, ldc, m, n);
  using Mu = typename Blas<T>::Mu;
  const T one = scalar<T>(1), minus_one = scalar<T>(-1);
  // op(A) is upper triangular when A is upper and not transposed, or lower and transposed.
  const bool op_upper = (uplo == CUBLAS_FILL_MODE_UPPER) == (trans == CUBLAS_OP_N);
  const std::size_t mb = run.blocks(m), nb = run.blocks(n), qb = run.blocks(na);
  // On the left, row block i of the result needs blocks q of op(A)'s row i: q >= i when op(A)
  // is upper, q <= i when lower; on the right, column block j needs q <= j (upper), q >= j.
  // A product (trmm) reads B's blocks on the far side of the diagonal, so it goes towards them;
  // a solve reads the solved blocks on the near side, so it goes away from them.
  const bool ascending = left ? (op_upper != solve) : (op_upper == solve);
  return run.run(left ? nb : mb, [&](Lane& l, std::size_t panel) {
    const std::size_t count = left ? mb : nb;
    for (std::size_t step = 0; step < count && run.ok(); ++step) {
      const std::size_t t = ascending ? step : count - 1 - step;
      const std::size_t i = left ? t : panel, j = left ? panel : t;
      const std::size_t r = i * run.block(), cc = j * run.block();
      const std::size_t rows = run.extent(m, i), cols = run.extent(n, j);
      const std::size_t d = left ? rows : cols, dq = t * run.block();
      // The other blocks of op(A)'s row (left) or column (right) that take part.
      const auto contributes = [&](std::size_t q) {
        if (q == t) return false;
        const bool beyond = q > t;  // right of the diagonal block on the left, below on the right
        return left ? beyond == op_upper : beyond != op_upper;
      };
      Tile ct;
      // ct = scale * (op(A) block q of this row, times B's block q of this column) + *beta * ct,
      // on the left; B's block times op(A)'s on the right.
      const auto accumulate = [&](std::size_t q, const T* scale, const T* beta) {
        const std::size_t kq = q * run.block(), depth = run.extent(na, q);
        Mu* cp = static_cast<Mu*>(ct.p);
        if (left) {
          const Tile at = run.op_tile(l, 0, a, trans, r, kq, rows, depth);
          const Tile bt = run.tile(l, 1, b, kq, cc, depth, cols);
          run.blas(f.gemm(l.blas, mu_op(trans), MUBLAS_OP_N, idx(rows), idx(cols), idx(depth),
                          mu(scale), static_cast<const Mu*>(at.p), at.ld,
                          static_cast<const Mu*>(bt.p), bt.ld, mu(beta), cp, ct.ld));
        } else {
          const Tile bt = run.tile(l, 1, b, r, kq, rows, depth);
          const Tile at = run.op_tile(l, 0, a, trans, kq, cc, depth, cols);
          run.blas(f.gemm(l.blas, MUBLAS_OP_N, mu_op(trans), idx(rows), idx(cols), idx(depth),
                          mu(scale), static_cast<const Mu*>(bt.p), bt.ld,
                          static_cast<const Mu*>(at.p), at.ld, mu(beta), cp, ct.ld));
        }
      };
      if (solve) {
        // B_t = alpha B_t - sum of op(A) blocks times the solved X blocks, then the diagonal solve.
        ct = run.tile(l, 2, c, r, cc, rows, cols);
        bool first = true;
        for (std::size_t q = 0; q < qb && run.ok(); ++q) {
          if (!contributes(q)) continue;
          accumulate(q, &minus_one, first ? alpha : &one);
          first = false;
        }
        const Tile dt = run.tile(l, 0, a, dq, dq, d, d);
        run.blas(f.trsm(l.blas, mu_side(side), mu_fill(uplo), mu_op(trans), mu_diag(diag),
                        idx(rows), idx(cols), mu(first ? alpha : &one),
                        static_cast<const Mu*>(dt.p), dt.ld, static_cast<Mu*>(ct.p), ct.ld));
      } else {
        // C_t = alpha op(A)_tt B_t (written whole), then + alpha op(A) blocks times B blocks.
        ct = run.tile(l, 2, c, r, cc, rows, cols, false);
        const Tile dt = run.tile(l, 0, a, dq, dq, d, d);
        const Tile bt = run.tile(l, 1, b, r, cc, rows, cols);
        run.blas(f.trmm(l.blas, mu_side(side), mu_fill(uplo), mu_op(trans), mu_diag(diag),
                        idx(rows), idx(cols), mu(alpha), static_cast<const Mu*>(dt.p), dt.ld,
                        static_cast<const Mu*>(bt.p), bt.ld, static_cast<Mu*>(ct.p), ct.ld));
        for (std::size_t q = 0; q < qb && run.ok(); ++q)
          if (contributes(q)) accumulate(q, alpha, &one);
      }
      run.store(l, ct, c, r, cc, rows, cols);
    }
  });
}

// ---- Settings
// --------------------------------------------------------------------------------------

cublasStatus_t check_devices(Fn id, int count, const int* ids) {
  if (count <= 0 || ids == nullptr) return invalid(id, "no devices given");
  const int available = device_count();
  for (int k = 0; k < count; ++k) {
    if (ids[k] < 0 || ids[k] >= available) {
      TORCHADA_LOG(kWarn, "%s: device %d does not exist (%d devices): CUBLAS_STATUS_INVALID_VALUE",
                   kFnNames[static_cast<int>(id)], ids[k], available);
      note_error(id);
      return CUBLAS_STATUS_INVALID_VALUE;
    }
    for (int p = 0; p < k; ++p)
      if (ids[p] == ids[k]) return invalid(id, "a device is given twice");
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

namespace impl {

cublasStatus_t cublasXtCreate(cublasXtHandle_t* handle) {
  constexpr Fn id = Fn::k_cublasXtCreate;
  if (handle == nullptr) return invalid(id, "NULL output");
  *handle = nullptr;
  if (mublas_backend().failed) return CUBLAS_STATUS_NOT_INITIALIZED;
  auto* h = new (std::nothrow) XtHandle;
  if (h == nullptr) return refuse(id, CUBLAS_STATUS_ALLOC_FAILED, "no memory for the handle");
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  r.live.insert(h);
  *handle = reinterpret_cast<cublasXtHandle_t>(h);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtDestroy(cublasXtHandle_t handle) {
  constexpr Fn id = Fn::k_cublasXtDestroy;
  XtHandle* h = nullptr;
  {
    Locked l(id, handle, NullHandle::kSetting);
    TORCHADA_XT_CHECK(l.status());
    h = &*l;
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mu);
    r.live.erase(h);
    DeviceGuard guard;
    release_lanes(*h);
  }
  delete h;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtGetNumBoards(int nbDevices, int deviceId[], int* nbBoards) {
  constexpr Fn id = Fn::k_cublasXtGetNumBoards;
  if (nbBoards == nullptr) return invalid(id, "NULL output");
  TORCHADA_XT_CHECK(check_devices(id, nbDevices, deviceId));
  *nbBoards = nbDevices;  // every MUSA device is a board of its own
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtMaxBoards(int* nbGpuBoards) {
  constexpr Fn id = Fn::k_cublasXtMaxBoards;
  if (nbGpuBoards == nullptr) return invalid(id, "NULL output");
  const int n = device_count();
  if (n <= 0) return refuse(id, CUBLAS_STATUS_NOT_INITIALIZED, "no device");
  *nbGpuBoards = n;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtDeviceSelect(cublasXtHandle_t handle, int nbDevices, int deviceId[]) {
  constexpr Fn id = Fn::k_cublasXtDeviceSelect;
  Locked h(id, handle, NullHandle::kSetting);
  TORCHADA_XT_CHECK(h.status());
  TORCHADA_XT_CHECK(check_devices(id, nbDevices, deviceId));
  DeviceGuard guard;
  release_lanes(*h);
  h->devices.assign(deviceId, deviceId + nbDevices);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtSetBlockDim(cublasXtHandle_t handle, int blockDim) {
  constexpr Fn id = Fn::k_cublasXtSetBlockDim;
  Locked h(id, handle, NullHandle::kSetting);
  TORCHADA_XT_CHECK(h.status());
  if (blockDim <= 0) return invalid(id, "blockDim is not positive");
  h->block_dim = blockDim;  // the buffers grow at the next routine that needs more
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtGetBlockDim(cublasXtHandle_t handle, int* blockDim) {
  constexpr Fn id = Fn::k_cublasXtGetBlockDim;
  Locked h(id, handle, NullHandle::kSetting);
  TORCHADA_XT_CHECK(h.status());
  if (blockDim == nullptr) return invalid(id, "NULL output");
  *blockDim = h->block_dim;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtGetPinningMemMode(cublasXtHandle_t handle, cublasXtPinnedMemMode_t* mode) {
  constexpr Fn id = Fn::k_cublasXtGetPinningMemMode;
  Locked h(id, handle, NullHandle::kSetting);
  TORCHADA_XT_CHECK(h.status());
  if (mode == nullptr) return invalid(id, "NULL output");
  *mode = h->pinning;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtSetPinningMemMode(cublasXtHandle_t handle, cublasXtPinnedMemMode_t mode) {
  constexpr Fn id = Fn::k_cublasXtSetPinningMemMode;
  Locked h(id, handle, NullHandle::kSetting);
  TORCHADA_XT_CHECK(h.status());
  if (!one_of(mode, {CUBLASXT_PINNING_DISABLED, CUBLASXT_PINNING_ENABLED}))
    return CublasLib::invalid_enum(id);
  h->pinning = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtSetCpuRoutine(cublasXtHandle_t handle, cublasXtBlasOp_t blasOp,
                                     cublasXtOpType_t type, void* blasFunctor) {
  constexpr Fn id = Fn::k_cublasXtSetCpuRoutine;
  Locked h(id, handle, NullHandle::kSetting);
  TORCHADA_XT_CHECK(h.status());
  const int op = raw(blasOp), ty = raw(type);
  if (op < 0 || op >= kRoutines || ty < 0 || ty >= kOpTypes) return CublasLib::invalid_enum(id);
  h->cpu_routine[op][ty] = blasFunctor;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtSetCpuRatio(cublasXtHandle_t handle, cublasXtBlasOp_t blasOp,
                                   cublasXtOpType_t type, float ratio) {
  constexpr Fn id = Fn::k_cublasXtSetCpuRatio;
  Locked h(id, handle, NullHandle::kSetting);
  TORCHADA_XT_CHECK(h.status());
  const int op = raw(blasOp), ty = raw(type);
  if (op < 0 || op >= kRoutines || ty < 0 || ty >= kOpTypes) return CublasLib::invalid_enum(id);
  if (!(ratio >= 0.0f && ratio <= 1.0f)) return invalid(id, "ratio is outside [0, 1]");
  h->cpu_ratio[op][ty] = ratio;
  return CUBLAS_STATUS_SUCCESS;
}

// The BLAS 3 routines, one line per type.
#define TORCHADA_XT_GEMM(P, T)                                                                     \
  cublasStatus_t cublasXt##P##gemm(cublasXtHandle_t handle, cublasOperation_t transa,              \
                                   cublasOperation_t transb, size_t m, size_t n, size_t k,         \
                                   const T* alpha, const T* A, size_t lda, const T* B, size_t ldb, \
                                   const T* beta, T* C, size_t ldc) {                              \
    return gemm<T>(Fn::k_cublasXt##P##gemm, handle, transa, transb, m, n, k, alpha, A, lda, B,     \
                   ldb, beta, C, ldc);                                                             \
  }
#define TORCHADA_XT_SYRK(P, NAME, T, AT, BT, HERM)                                               \
  cublasStatus_t cublasXt##P##NAME(cublasXtHandle_t handle, cublasFillMode_t uplo,               \
                                   cublasOperation_t trans, size_t n, size_t k, const AT* alpha, \
                                   const T* A, size_t lda, const BT* beta, T* C, size_t ldc) {   \
    return rank<T, AT, BT>(Fn::k_cublasXt##P##NAME, Rank::kK, HERM, handle, uplo, trans, n, k,   \
                           alpha, A, lda, nullptr, 0, beta, C, ldc);                             \
  }
#define TORCHADA_XT_RANK2(P, NAME, KIND, T, BT, HERM)                                              \
  cublasStatus_t cublasXt##P##NAME(cublasXtHandle_t handle, cublasFillMode_t uplo,                 \
                                   cublasOperation_t trans, size_t n, size_t k, const T* alpha,    \
                                   const T* A, size_t lda, const T* B, size_t ldb, const BT* beta, \
                                   T* C, size_t ldc) {                                             \
    return rank<T, T, BT>(Fn::k_cublasXt##P##NAME, KIND, HERM, handle, uplo, trans, n, k, alpha,   \
                          A, lda, B, ldb, beta, C, ldc);                                           \
  }
#define TORCHADA_XT_SYMM(P, NAME, T, HERM)                                                         \
  cublasStatus_t cublasXt##P##NAME(cublasXtHandle_t handle, cublasSideMode_t side,                 \
                                   cublasFillMode_t uplo, size_t m, size_t n, const T* alpha,      \
                                   const T* A, size_t lda, const T* B, size_t ldb, const T* beta,  \
                                   T* C, size_t ldc) {                                             \
    return symm<T>(Fn::k_cublasXt##P##NAME, HERM, handle, side, uplo, m, n, alpha, A, lda, B, ldb, \
                   beta, C, ldc);                                                                  \
  }
#define TORCHADA_XT_SPMM(P, T)                                                                    \
  cublasStatus_t cublasXt##P##spmm(                                                               \
      cublasXtHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, size_t m, size_t n,  \
      const T* alpha, const T* AP, const T* B, size_t ldb, const T* beta, T* C, size_t ldc) {     \
    return spmm<T>(Fn::k_cublasXt##P##spmm, handle, side, uplo, m, n, alpha, AP, B, ldb, beta, C, \
                   ldc);                                                                          \
  }
#define TORCHADA_XT_TRSM(P, T)                                                                 \
  cublasStatus_t cublasXt##P##trsm(cublasXtHandle_t handle, cublasSideMode_t side,             \
                                   cublasFillMode_t uplo, cublasOperation_t trans,             \
                                   cublasDiagType_t diag, size_t m, size_t n, const T* alpha,  \
                                   const T* A, size_t lda, T* B, size_t ldb) {                 \
    return triangular<T>(Fn::k_cublasXt##P##trsm, true, handle, side, uplo, trans, diag, m, n, \
                         alpha, A, lda, B, ldb, B, ldb);                                       \
  }
#define TORCHADA_XT_TRMM(P, T)                                                                  \
  cublasStatus_t cublasXt##P##trmm(                                                             \
      cublasXtHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,                    \
      cublasOperation_t trans, cublasDiagType_t diag, size_t m, size_t n, const T* alpha,       \
      const T* A, size_t lda, const T* B, size_t ldb, T* C, size_t ldc) {                       \
    return triangular<T>(Fn::k_cublasXt##P##trmm, false, handle, side, uplo, trans, diag, m, n, \
                         alpha, A, lda, B, ldb, C, ldc);                                        \
  }
#define TORCHADA_XT_ALL(P, T)                         \
  TORCHADA_XT_GEMM(P, T)                              \
  TORCHADA_XT_SYRK(P, syrk, T, T, T, false)           \
  TORCHADA_XT_RANK2(P, syrkx, Rank::kKx, T, T, false) \
  TORCHADA_XT_RANK2(P, syr2k, Rank::k2k, T, T, false) \
  TORCHADA_XT_SYMM(P, symm, T, false)                 \
  TORCHADA_XT_SPMM(P, T)                              \
  TORCHADA_XT_TRSM(P, T)                              \
  TORCHADA_XT_TRMM(P, T)
#define TORCHADA_XT_HERMITIAN(P, T, R)               \
  TORCHADA_XT_SYRK(P, herk, T, R, R, true)           \
  TORCHADA_XT_RANK2(P, herkx, Rank::kKx, T, R, true) \
  TORCHADA_XT_RANK2(P, her2k, Rank::k2k, T, R, true) \
  TORCHADA_XT_SYMM(P, hemm, T, true)

TORCHADA_XT_ALL(S, float)
TORCHADA_XT_ALL(D, double)
TORCHADA_XT_ALL(C, cuComplex)
TORCHADA_XT_ALL(Z, cuDoubleComplex)
TORCHADA_XT_HERMITIAN(C, cuComplex, float)
TORCHADA_XT_HERMITIAN(Z, cuDoubleComplex, double)

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
