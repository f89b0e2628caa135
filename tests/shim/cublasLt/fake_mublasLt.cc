// A stand-in libmublasLt.so.1 for tests/shim/cublasLt (CUBLASLT_TEST_FAKE=1): it answers what
// the simulator never does — heuristic results whose states are failures or warnings (or no
// muBLASLt status at all), values cuBLASLt has no name for — so the shim's translation of them
// can be checked. It has only the functions those tests call (and the two every muBLASLt must
// export to be accepted). Not a muBLASLt: nothing here computes.
#include <mublasLt.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace {

uint64_t g_seen_algo = 0;
std::atomic<const void*> g_seen_handle{nullptr};
std::atomic<int> g_live{0};
std::atomic<int> g_created{0};
constexpr uint32_t kMagic = 0x4c744641;  // each handle is a heap word holding it

}  // namespace

extern "C" {

// What the last call was given as its algorithm (word 0 for the heuristic, 2 for the check).
MUBLASLT_API uint64_t fake_mublasLt_seen_algo(void) { return g_seen_algo; }
// The handle the last heuristic call was given; handles alive, and made, so far.
MUBLASLT_API const void* fake_mublasLt_seen_handle(void) { return g_seen_handle.load(); }
MUBLASLT_API int fake_mublasLt_live_handles(void) { return g_live.load(); }
MUBLASLT_API int fake_mublasLt_created_handles(void) { return g_created.load(); }

MUBLASLT_API mublasStatus_t mublasLtCreate(mublasLtHandle_t* lightHandle) {
  if (lightHandle == nullptr) return MUBLAS_STATUS_INVALID_VALUE;
  *lightHandle = reinterpret_cast<mublasLtHandle_t>(new uint32_t(kMagic));
  g_live.fetch_add(1);
  g_created.fetch_add(1);
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtDestroy(mublasLtHandle_t lightHandle) {
  auto* h = reinterpret_cast<uint32_t*>(lightHandle);
  if (h == nullptr || *h != kMagic) return MUBLAS_STATUS_INVALID_HANDLE;
  *h = 0;
  delete h;
  g_live.fetch_sub(1);
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtMatmul(mublasLtHandle_t, mublasLtMatmulDesc_t, const void*,
                                           const void*, mublasLtMatrixLayout_t, const void*,
                                           mublasLtMatrixLayout_t, const void*, const void*,
                                           mublasLtMatrixLayout_t, void*, mublasLtMatrixLayout_t,
                                           const mublasLtMatmulAlgo_t*, void*, size_t,
                                           musaStream_t) {
  return MUBLAS_STATUS_NOT_IMPLEMENTED;
}

// Six results (14 is no muBLAS status, though inside the enum's range); result i has workspace 1000
// i, waves i / 2, algo words 0 = 200 + i and 1 = 100 + i, reserved[3] = 40 + i and the i-th of
// these states.
MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoGetHeuristic(
    mublasLtHandle_t lightHandle, mublasLtMatmulDesc_t, mublasLtMatrixLayout_t,
    mublasLtMatrixLayout_t, mublasLtMatrixLayout_t, mublasLtMatrixLayout_t,
    mublasLtMatmulPreference_t, int requestedAlgoCount,
    mublasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount) {
  if (requestedAlgoCount <= 0 || heuristicResultsArray == nullptr || returnAlgoCount == nullptr)
    return MUBLAS_STATUS_INVALID_VALUE;
  g_seen_handle.store(lightHandle);
  const auto* h = reinterpret_cast<const uint32_t*>(lightHandle);
  if (h == nullptr || *h != kMagic) return MUBLAS_STATUS_INVALID_HANDLE;
  static const int kStates[6] = {MUBLAS_STATUS_SUCCESS,       MUBLAS_STATUS_NOT_IMPLEMENTED,
                                 MUBLAS_STATUS_MEMORY_ERROR,  MUBLAS_STATUS_INVALID_HANDLE,
                                 MUBLAS_STATUS_PERF_DEGRADED, 14};
  g_seen_algo = heuristicResultsArray[0].algo.data[0];
  const int n = requestedAlgoCount < 6 ? requestedAlgoCount : 6;
  for (int i = 0; i < n; ++i) {
    mublasLtMatmulHeuristicResult_t& r = heuristicResultsArray[i];
    std::memset(&r, 0, sizeof(r));
    r.algo.data[0] = 200 + static_cast<uint64_t>(i);
    r.algo.data[1] = 100 + static_cast<uint64_t>(i);
    r.workspaceSize = 1000 * static_cast<size_t>(i);
    std::memcpy(&r.state, &kStates[i], sizeof(r.state));
    r.wavesCount = 0.5f * static_cast<float>(i);
    r.reserved[3] = 40 + i;
  }
  *returnAlgoCount = n;
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoCheck(mublasLtHandle_t, mublasLtMatmulDesc_t,
                                                    mublasLtMatrixLayout_t, mublasLtMatrixLayout_t,
                                                    mublasLtMatrixLayout_t, mublasLtMatrixLayout_t,
                                                    const mublasLtMatmulAlgo_t* algo,
                                                    mublasLtMatmulHeuristicResult_t* result) {
  if (algo == nullptr || result == nullptr) return MUBLAS_STATUS_INVALID_VALUE;
  g_seen_algo = algo->data[2];
  result->algo.data[2] = 0xbad;  // a library that writes where it should not
  result->workspaceSize = 4096;
  result->state = MUBLAS_STATUS_MEMORY_ERROR;
  result->wavesCount = 2.0f;
  return MUBLAS_STATUS_SUCCESS;
}

// EPILOGUE holds a value no cuBLASLt epilogue maps to.
MUBLASLT_API mublasStatus_t mublasLtMatmulDescGetAttribute(mublasLtMatmulDesc_t,
                                                           mublasLtMatmulDescAttributes_t attr,
                                                           void* buf, size_t sizeInBytes,
                                                           size_t* sizeWritten) {
  if (attr != MUBLASLT_MATMUL_DESC_EPILOGUE) return MUBLAS_STATUS_INVALID_VALUE;
  const uint32_t v = 0x7777;
  if (sizeInBytes == 0) {
    if (sizeWritten == nullptr) return MUBLAS_STATUS_INVALID_VALUE;
    *sizeWritten = sizeof(v);
    return MUBLAS_STATUS_SUCCESS;
  }
  if (buf == nullptr || sizeInBytes != sizeof(v)) return MUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(buf, &v, sizeof(v));
  if (sizeWritten != nullptr) *sizeWritten = sizeof(v);
  return MUBLAS_STATUS_SUCCESS;
}

// TILE_IDS: {UNDEFINED, 999, UNDEFINED}; EPILOGUE_MASK: RELU | BIAS and a bit no epilogue has.
MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoCapGetAttribute(
    const mublasLtMatmulAlgo_t*, mublasLtMatmulAlgoCapAttributes_t attr, void* buf,
    size_t sizeInBytes, size_t* sizeWritten) {
  if (attr == MUBLASLT_ALGO_CAP_TILE_IDS) {
    const uint32_t tiles[3] = {MUBLASLT_MATMUL_TILE_UNDEFINED, 999, MUBLASLT_MATMUL_TILE_UNDEFINED};
    if (sizeInBytes == 0) {
      if (sizeWritten == nullptr) return MUBLAS_STATUS_INVALID_VALUE;
      *sizeWritten = sizeof(tiles);
      return MUBLAS_STATUS_SUCCESS;
    }
    if (buf == nullptr || sizeInBytes < sizeof(uint32_t)) return MUBLAS_STATUS_INVALID_VALUE;
    const size_t n = sizeInBytes < sizeof(tiles) ? sizeInBytes / sizeof(uint32_t) : 3;
    std::memcpy(buf, tiles, n * sizeof(uint32_t));
    if (sizeWritten != nullptr) *sizeWritten = n * sizeof(uint32_t);
    return MUBLAS_STATUS_SUCCESS;
  }
  if (attr == MUBLASLT_ALGO_CAP_EPILOGUE_MASK) {
    const uint32_t mask = MUBLASLT_EPILOGUE_RELU | MUBLASLT_EPILOGUE_BIAS | (1u << 31);
    if (buf == nullptr || sizeInBytes != sizeof(mask)) return MUBLAS_STATUS_INVALID_VALUE;
    std::memcpy(buf, &mask, sizeof(mask));
    if (sizeWritten != nullptr) *sizeWritten = sizeof(mask);
    return MUBLAS_STATUS_SUCCESS;
  }
  return MUBLAS_STATUS_INVALID_VALUE;
}

}  // extern "C"
