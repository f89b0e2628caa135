// libFuzzer entry point for the simulator's copy, memset and BLAS entry points: any bytes, read
// as a program of calls against a few device allocations with sizes, offsets, pitches, leading
// dimensions and transpositions drawn towards the edges (0, the allocation's end, one past it,
// near SIZE_MAX, spans that wrap the address space). Whatever the call, the simulator must answer
// (an error, or success and a sticky fault at the next synchronisation) and never crash, read or
// write outside its allocations (the sanitizers watch), or hang.
//
// Host-side spans stay within the host buffer: a host overrun is the program's own bug, which no
// runtime can see (CUDA's neither). Device-side spans are unconstrained, and every copy names its
// direction: with musaMemcpyDefault a pointer outside every allocation is host memory by
// definition (unified addressing), so a wild one would be the same host overrun.
#include <mublas.h>
#include <musa_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  bool empty() const { return n_ == 0; }
  uint8_t u8() {
    if (n_ == 0) return 0;
    --n_;
    return *p_++;
  }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = v << 8 | u8();
    return v;
  }
  // A size relative to `extent` (an allocation's size): mostly near its edges.
  size_t size_near(size_t extent) {
    switch (u8() % 10) {
      case 0:
        return 0;
      case 1:
        return 1;
      case 2:
        return extent == 0 ? 0 : extent - 1;
      case 3:
        return extent;
      case 4:
        return extent + 1;
      case 5:
        return SIZE_MAX;
      case 6:
        return SIZE_MAX - u8();
      case 7:
        return SIZE_MAX / 2 + 1;
      case 8:
        return extent / 2;
      default:
        return u32() % (2 * extent + 2);
    }
  }
  // A small integer for GEMM dimensions and leading dimensions, sometimes negative or huge.
  int dim() {
    switch (u8() % 8) {
      case 0:
        return 0;
      case 1:
        return -1 - static_cast<int>(u8());
      case 2:
        return 0x7fffffff - static_cast<int>(u8());
      default:
        return static_cast<int>(u8() % 40);
    }
  }

 private:
  const uint8_t* p_;
  size_t n_;
};

constexpr size_t kSizes[] = {256, 4096, 65536};
constexpr size_t kHostBytes = 65536;

struct Device {
  char* buf[3] = {};
  musaStream_t stream = nullptr;
  mublasHandle_t blas = nullptr;
  bool ok = false;

  Device() { make(); }
  ~Device() { release(); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  void make() {
    ok = musaStreamCreate(&stream) == musaSuccess && mublasCreate(&blas) == MUBLAS_STATUS_SUCCESS &&
         mublasSetStream(blas, stream) == MUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < 3 && ok; ++i)
      ok = musaMalloc(reinterpret_cast<void**>(&buf[i]), kSizes[i]) == musaSuccess;
  }
  void release() {
    if (blas != nullptr) mublasDestroy(blas);
    blas = nullptr;
    for (char*& b : buf) {
      if (b != nullptr) musaFree(b);
      b = nullptr;
    }
    if (stream != nullptr) musaStreamDestroy(stream);
    stream = nullptr;
  }
  // After a call: a sticky fault (an operand beyond its allocation) ends this device's life, as
  // on a GPU; a reset gives a fresh one.
  void settle() {
    musaGetLastError();
    if (musaDeviceSynchronize() != musaSuccess) {
      // The muBLAS handle is the library's host state: destroyed as a program would. What the
      // reset ends (streams, allocations) is forgotten, not freed again.
      if (blas != nullptr) mublasDestroy(blas);
      musaDeviceReset();
      blas = nullptr;
      stream = nullptr;
      for (char*& b : buf) b = nullptr;
      make();
    }
  }
  // A device pointer: one of the allocations at an offset near its edges. Never one outside
  // every allocation: that is host memory by definition (unified addressing, the simulator's
  // devices address the host's memory as GPUs with HMM do), so a wild span from it would be the
  // program's own host overrun (tests/sim: a host span running into device memory faults).
  char* pointer(Reader& in, size_t* extent) {
    const int i = in.u8() % 3;
    *extent = kSizes[i];
    switch (in.u8() % 4) {
      case 0:
        return buf[i];
      case 1:
        return buf[i] + kSizes[i] - 1;
      case 2:
        return buf[i] + in.u32() % kSizes[i];
      default:
        return buf[i] + kSizes[i] / 2;
    }
  }
};

void gemm(Device& d, Reader& in) {
  size_t extent = 0;
  float* a = reinterpret_cast<float*>(d.pointer(in, &extent));
  float* b = reinterpret_cast<float*>(d.pointer(in, &extent));
  float* c = reinterpret_cast<float*>(d.pointer(in, &extent));
  const mublasOperation_t ops[] = {MUBLAS_OP_N, MUBLAS_OP_T, MUBLAS_OP_C,
                                   static_cast<mublasOperation_t>(77)};
  const mublasOperation_t ta = ops[in.u8() % 4], tb = ops[in.u8() % 4];
  const int m = in.dim(), n = in.dim(), k = in.dim();
  const int lda = in.dim(), ldb = in.dim(), ldc = in.dim();
  const float alpha = 1.0f, beta = static_cast<float>(in.u8() % 2);
  if (in.u8() % 4 == 0) {
    const long long sa = in.u32(), sb = in.u32(), sc = in.u32();
    mublasSgemmStridedBatched(d.blas, ta, tb, m, n, k, &alpha, a, lda, sa, b, ldb, sb, &beta, c,
                              ldc, sc, static_cast<int>(in.u8() % 10) - 1);  // -1..8 instances
  } else {
    mublasSgemm(d.blas, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
  }
}

void step(Device& d, Reader& in, std::vector<char>& host) {
  size_t de = 0, se = 0;
  switch (in.u8() % 7) {
    case 0: {  // device to device, any span
      char* dst = d.pointer(in, &de);
      char* src = d.pointer(in, &se);
      musaMemcpy(dst, src, in.size_near(de), musaMemcpyDeviceToDevice);
      break;
    }
    case 1: {  // host to device: the host span stays in the host buffer
      char* dst = d.pointer(in, &de);
      musaMemcpy(dst, host.data(), in.size_near(de) % (kHostBytes + 1), musaMemcpyHostToDevice);
      break;
    }
    case 2: {  // device to host, asynchronously
      char* src = d.pointer(in, &se);
      musaMemcpyAsync(host.data(), src, in.size_near(se) % (kHostBytes + 1), musaMemcpyDeviceToHost,
                      d.stream);
      break;
    }
    case 3: {
      char* dst = d.pointer(in, &de);
      musaMemset(dst, in.u8(), in.size_near(de));
      break;
    }
    case 4: {
      char* dst = d.pointer(in, &de);
      musaMemsetAsync(dst, in.u8(), in.size_near(de), d.stream);
      break;
    }
    case 5: {  // 2D, device to device
      char* dst = d.pointer(in, &de);
      char* src = d.pointer(in, &se);
      const size_t dpitch = in.size_near(256), spitch = in.size_near(256);
      const size_t width = in.size_near(256), height = in.size_near(64);
      musaMemcpy2D(dst, dpitch, src, spitch, width, height, musaMemcpyDeviceToDevice);
      break;
    }
    default:
      gemm(d, in);
      break;
  }
  d.settle();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Device* device = new Device;  // one per process, like a program's context
  static std::vector<char>* host = new std::vector<char>(kHostBytes);
  if (!device->ok) {
    device->settle();
    if (!device->ok) return 0;
  }
  Reader in(data, size);
  for (int calls = 0; !in.empty() && calls < 64; ++calls) step(*device, in, *host);
  return 0;
}
