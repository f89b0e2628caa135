// bandwidthTest-style program: copies in every direction from pageable and pinned memory, timed
// with events, and verified byte for byte; then the pitched (2D/3D) copies, memset, copies with
// cudaMemcpyDefault, and pointer attributes for each kind of memory.
#include "check.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

// Deterministic, size-dependent pattern so that a copy of the wrong length or offset shows.
void Fill(unsigned char* p, size_t n, unsigned seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    p[i] = static_cast<unsigned char>(x >> 24);
  }
}

bool Same(const unsigned char* a, const unsigned char* b, size_t n, const char* what) {
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) {
      std::printf("  %s: first mismatch at byte %zu of %zu (%u != %u)\n", what, i, n, a[i], b[i]);
      return false;
    }
  }
  return true;
}

bool AllBytes(const unsigned char* p, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != v) return false;
  return true;
}

enum class HostKind { kPageable, kMallocHost, kHostAlloc };
const char* Name(HostKind k) {
  switch (k) {
    case HostKind::kPageable:
      return "pageable";
    case HostKind::kMallocHost:
      return "cudaMallocHost";
    default:
      return "cudaHostAlloc";
  }
}

unsigned char* HostAlloc(HostKind kind, size_t n) {
  void* p = nullptr;
  if (kind == HostKind::kPageable) return static_cast<unsigned char*>(std::malloc(n));
  if (kind == HostKind::kMallocHost) CUDA_CHECK(cudaMallocHost(&p, n));
  if (kind == HostKind::kHostAlloc) CUDA_CHECK(cudaHostAlloc(&p, n, cudaHostAllocPortable));
  return static_cast<unsigned char*>(p);
}

void HostFree(HostKind kind, unsigned char* p) {
  if (kind == HostKind::kPageable)
    std::free(p);
  else
    CUDA_CHECK(cudaFreeHost(p));
}

// H2D -> D2D -> D2H, each timed with its own event pair. Pinned buffers use the async copies on
// a stream the way real programs overlap transfers; pageable ones use the synchronous copies.
void RoundTrip(HostKind kind, size_t n, cudaStream_t stream) {
  unsigned char* src = HostAlloc(kind, n);
  unsigned char* dst = HostAlloc(kind, n);
  Fill(src, n, static_cast<unsigned>(n));
  std::memset(dst, 0, n);
  void *d1 = nullptr, *d2 = nullptr;
  CUDA_CHECK(cudaMalloc(&d1, n));
  CUDA_CHECK(cudaMalloc(&d2, n));
  cudaEvent_t ev[4];
  for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
  const bool pinned = kind != HostKind::kPageable;
  cudaStream_t s = pinned ? stream : 0;

  CUDA_CHECK(cudaEventRecord(ev[0], s));
  if (pinned) {
    CUDA_CHECK(cudaMemcpyAsync(d1, src, n, cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaEventRecord(ev[1], s));
    CUDA_CHECK(cudaMemcpyAsync(d2, d1, n, cudaMemcpyDeviceToDevice, s));
    CUDA_CHECK(cudaEventRecord(ev[2], s));
    CUDA_CHECK(cudaMemcpyAsync(dst, d2, n, cudaMemcpyDeviceToHost, s));
  } else {
    CUDA_CHECK(cudaMemcpy(d1, src, n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaEventRecord(ev[1], s));
    CUDA_CHECK(cudaMemcpy(d2, d1, n, cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaEventRecord(ev[2], s));
    CUDA_CHECK(cudaMemcpy(dst, d2, n, cudaMemcpyDeviceToHost));
  }
  CUDA_CHECK(cudaEventRecord(ev[3], s));
  CUDA_CHECK(cudaEventSynchronize(ev[3]));

  float ms[3] = {-1, -1, -1};
  for (int i = 0; i < 3; ++i) CUDA_CHECK(cudaEventElapsedTime(&ms[i], ev[i], ev[i + 1]));
  auto mbps = [n](float t) { return t > 0 ? n / (t * 1e3) : 0.0; };
  std::printf("  %-14s %9zu B: H2D %.3f ms (%.0f MB/s), D2D %.3f ms, D2H %.3f ms (%.0f MB/s)\n",
              Name(kind), n, ms[0], mbps(ms[0]), ms[1], ms[2], mbps(ms[2]));
  EXPECT(ms[0] >= 0 && ms[1] >= 0 && ms[2] >= 0);
  EXPECT(Same(src, dst, n, Name(kind)));

  for (auto& e : ev) CUDA_CHECK(cudaEventDestroy(e));
  CUDA_CHECK(cudaFree(d1));
  CUDA_CHECK(cudaFree(d2));
  HostFree(kind, src);
  HostFree(kind, dst);
}

void CheckMemset() {
  std::printf("cudaMemset\n");
  const size_t n = 100000, off = 777, len = 4321;
  unsigned char* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, n));
  CUDA_CHECK(cudaMemset(d, 0xAB, n));
  CUDA_CHECK(cudaMemset(d + off, 0x5C, len));  // unaligned start and length
  std::vector<unsigned char> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), d, n, cudaMemcpyDeviceToHost));
  EXPECT(AllBytes(h.data(), off, 0xAB));
  EXPECT(AllBytes(h.data() + off, len, 0x5C));
  EXPECT(AllBytes(h.data() + off + len, n - off - len, 0xAB));
  CUDA_CHECK(cudaFree(d));
}

// Host rows are packed (pitch == width); a second host buffer has a wider pitch whose padding
// must stay untouched.
void CheckPitch2D() {
  std::printf("cudaMallocPitch / cudaMemcpy2D\n");
  const size_t width = 1000, height = 37, wide_pitch = width + 24;
  void *d = nullptr, *d2 = nullptr;
  size_t pitch = 0, pitch2 = 0;
  CUDA_CHECK(cudaMallocPitch(&d, &pitch, width, height));
  CUDA_CHECK(cudaMallocPitch(&d2, &pitch2, width, height));
  std::printf("  width %zu -> pitch %zu\n", width, pitch);
  EXPECT(pitch >= width && pitch2 >= width);
  std::vector<unsigned char> src(width * height), out(wide_pitch * height, 0xEE);
  Fill(src.data(), src.size(), 2);
  CUDA_CHECK(cudaMemcpy2D(d, pitch, src.data(), width, width, height, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy2D(d2, pitch2, d, pitch, width, height, cudaMemcpyDeviceToDevice));
  CUDA_CHECK(
      cudaMemcpy2D(out.data(), wide_pitch, d2, pitch2, width, height, cudaMemcpyDeviceToHost));
  bool rows_ok = true, padding_ok = true;
  for (size_t r = 0; r < height; ++r) {
    rows_ok = rows_ok && std::memcmp(&out[r * wide_pitch], &src[r * width], width) == 0;
    padding_ok = padding_ok && AllBytes(&out[r * wide_pitch + width], wide_pitch - width, 0xEE);
  }
  EXPECT(rows_ok);
  EXPECT(padding_ok);
  CUDA_CHECK(cudaFree(d));
  CUDA_CHECK(cudaFree(d2));
}

void CheckMalloc3D() {
  std::printf("cudaMalloc3D / cudaMemcpy3D\n");
  const cudaExtent extent = make_cudaExtent(200, 9, 5);  // width in bytes, height, depth
  cudaPitchedPtr dev{};
  CUDA_CHECK(cudaMalloc3D(&dev, extent));
  std::printf("  pitch %zu, xsize %zu, ysize %zu\n", dev.pitch, dev.xsize, dev.ysize);
  EXPECT(dev.ptr != nullptr && dev.pitch >= extent.width);
  EXPECT(dev.xsize == extent.width && dev.ysize == extent.height);
  const size_t bytes = extent.width * extent.height * extent.depth;
  std::vector<unsigned char> src(bytes), out(bytes, 0);
  Fill(src.data(), bytes, 3);

  cudaMemcpy3DParms up{};
  up.srcPtr = make_cudaPitchedPtr(src.data(), extent.width, extent.width, extent.height);
  up.dstPtr = dev;
  up.extent = extent;
  up.kind = cudaMemcpyHostToDevice;
  CUDA_CHECK(cudaMemcpy3D(&up));
  cudaMemcpy3DParms down{};
  down.srcPtr = dev;
  down.dstPtr = make_cudaPitchedPtr(out.data(), extent.width, extent.width, extent.height);
  down.extent = extent;
  down.kind = cudaMemcpyDeviceToHost;
  CUDA_CHECK(cudaMemcpy3D(&down));
  EXPECT(Same(src.data(), out.data(), bytes, "3D round trip"));
  CUDA_CHECK(cudaFree(dev.ptr));
}

// With unified addressing the runtime infers the direction from the pointers.
void CheckMemcpyDefault() {
  std::printf("cudaMemcpyDefault\n");
  int uva = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&uva, cudaDevAttrUnifiedAddressing, 0));
  EXPECT(uva == 1);
  if (uva != 1) return;
  const size_t n = 65536 + 3;
  std::vector<unsigned char> pageable(n), back(n, 0);
  Fill(pageable.data(), n, 4);
  unsigned char* pinned = nullptr;
  CUDA_CHECK(cudaMallocHost(&pinned, n));
  void *d1 = nullptr, *d2 = nullptr;
  CUDA_CHECK(cudaMalloc(&d1, n));
  CUDA_CHECK(cudaMalloc(&d2, n));
  CUDA_CHECK(cudaMemcpy(d1, pageable.data(), n, cudaMemcpyDefault));
  CUDA_CHECK(cudaMemcpy(d2, d1, n, cudaMemcpyDefault));
  CUDA_CHECK(cudaMemcpy(pinned, d2, n, cudaMemcpyDefault));
  CUDA_CHECK(cudaMemcpy(back.data(), pinned, n, cudaMemcpyDefault));  // host to host
  EXPECT(Same(pageable.data(), back.data(), n, "cudaMemcpyDefault"));
  CUDA_CHECK(cudaFree(d1));
  CUDA_CHECK(cudaFree(d2));
  CUDA_CHECK(cudaFreeHost(pinned));
}

void CheckPointerAttributes() {
  std::printf("cudaPointerGetAttributes\n");
  cudaPointerAttributes a{};
  unsigned char* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, 4096));
  CUDA_CHECK(cudaPointerGetAttributes(&a, d + 100));  // interior pointers resolve too
  EXPECT(a.type == cudaMemoryTypeDevice);
  EXPECT(a.device == 0);
  EXPECT(a.devicePointer == d + 100);
  EXPECT(a.hostPointer == nullptr);

  unsigned char* pinned = nullptr;
  CUDA_CHECK(cudaMallocHost(&pinned, 4096));
  a = {};
  CUDA_CHECK(cudaPointerGetAttributes(&a, pinned));
  std::printf("  pinned: host %p, device %p\n", a.hostPointer, a.devicePointer);
  EXPECT(a.type == cudaMemoryTypeHost);
  EXPECT(a.hostPointer == pinned);

  // Since CUDA 11 an unregistered host pointer is not an error: it reports "unregistered".
  std::vector<unsigned char> plain(4096);
  a = {};
  a.type = cudaMemoryTypeDevice;
  EXPECT_ERR(cudaPointerGetAttributes(&a, plain.data()), cudaSuccess);
  EXPECT(a.type == cudaMemoryTypeUnregistered);

  // Registering the same pageable buffer makes it host memory known to the runtime.
  CUDA_CHECK(cudaHostRegister(plain.data(), plain.size(), cudaHostRegisterDefault));
  a = {};
  CUDA_CHECK(cudaPointerGetAttributes(&a, plain.data()));
  EXPECT(a.type == cudaMemoryTypeHost);
  EXPECT(a.hostPointer == plain.data());
  CUDA_CHECK(cudaHostUnregister(plain.data()));

  CUDA_CHECK(cudaFree(d));
  CUDA_CHECK(cudaFreeHost(pinned));
  (void)cudaGetLastError();
}

}  // namespace

int main() {
  CUDA_CHECK(cudaSetDevice(0));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  std::printf("round trips (H2D, D2D, D2H)\n");
  const size_t sizes[] = {1, 4097, 1 << 20, 8 << 20};
  for (HostKind kind : {HostKind::kPageable, HostKind::kMallocHost, HostKind::kHostAlloc})
    for (size_t n : sizes) RoundTrip(kind, n, stream);
  CUDA_CHECK(cudaStreamDestroy(stream));
  CheckMemset();
  CheckPitch2D();
  CheckMalloc3D();
  CheckMemcpyDefault();
  CheckPointerAttributes();
  return check::Report("bandwidth");
}
