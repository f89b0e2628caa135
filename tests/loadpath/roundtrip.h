// The smallest useful unit of cudart work: allocate, upload, download, compare, free. Included by
// programs built against either CUDA 12 or CUDA 13 headers; the calls bind to whichever cudart
// (or interposer) the including binary reaches.
#pragma once

#include <cuda_runtime_api.h>

#include <cstring>
#include <vector>

namespace loadpath {

// Returns 0 on success, else the first failing cudaError_t (or -1 for a data mismatch).
inline int RoundTrip(size_t bytes, unsigned char seed, cudaStream_t stream = nullptr) {
  std::vector<unsigned char> src(bytes), dst(bytes, 0);
  for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<unsigned char>(seed + i * 7);
  void* d = nullptr;
  int rc = cudaMalloc(&d, bytes);
  if (rc != 0) return rc;
  if (stream) {
    rc = cudaMemcpyAsync(d, src.data(), bytes, cudaMemcpyHostToDevice, stream);
    if (rc == 0) rc = cudaMemcpyAsync(dst.data(), d, bytes, cudaMemcpyDeviceToHost, stream);
    if (rc == 0) rc = cudaStreamSynchronize(stream);
  } else {
    rc = cudaMemcpy(d, src.data(), bytes, cudaMemcpyHostToDevice);
    if (rc == 0) rc = cudaMemcpy(dst.data(), d, bytes, cudaMemcpyDeviceToHost);
  }
  const int free_rc = cudaFree(d);
  if (rc == 0) rc = free_rc;
  if (rc == 0 && std::memcmp(src.data(), dst.data(), bytes) != 0) rc = -1;
  return rc;
}

}  // namespace loadpath
