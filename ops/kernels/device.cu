// Device queries shared by the launchers.
#include "portable.cuh"

namespace torchada::TORCHADA_KERNELS_NS {

int device_warp_size() {
  // Read once per device: the attribute is constant and the query would otherwise sit on the
  // launch path. 64 devices is far beyond any node; larger ordinals are simply not cached.
  static int cache[64] = {};
  int dev = 0;
  if (torchadaGetDevice(&dev) != TORCHADA_GPU_SUCCESS) return 32;
  if (dev >= 0 && dev < 64 && cache[dev] != 0) return cache[dev];
  int ws = 0;
  if (torchadaDeviceGetAttribute(&ws, TORCHADA_ATTR_WARP_SIZE, dev) != TORCHADA_GPU_SUCCESS ||
      ws <= 0)
    ws = 32;
  if (dev >= 0 && dev < 64) cache[dev] = ws;
  return ws;
}

#if defined(TORCHADA_KERNELS_HOST)
bool available() { return ::musa_sim::launch_function() != nullptr; }
#else
bool available() { return true; }
#endif

}  // namespace torchada::TORCHADA_KERNELS_NS
