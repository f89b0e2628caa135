// cublasLtMatmulAlgoGetHeuristic and cublasLtMatmulAlgoCheck -> muBLASLt's. Their results hold a
// status (`state`), which is muBLASLt's in the library's answer: the results are read into
// muBLASLt's own structures and copied field by field into the caller's, the state translated.
// The handle comes resolved (CublasLtLib::resolve_handle, in the generated export). Compiled once
// per CUDA ABI.
#include <cstring>
#include <memory>
#include <new>

#include "cublasLt/cublasLt.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublasLt12_impl.h"
#else
#include "gen/cublasLt13_impl.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

using CudaResult = cublasLtMatmulHeuristicResult_t;
using MusaResult = mublasLtMatmulHeuristicResult_t;

static_assert(sizeof(CudaResult::reserved) == sizeof(MusaResult::reserved));
static_assert(sizeof(MusaResult::state) == sizeof(int));

// No muBLASLt answers more than this many algorithms for one problem (the caller may ask for any
// number; fewer results than requested is what cuBLASLt reports too).
constexpr int kMaxResults = 1024;
constexpr int kOnStack = 8;

cublasStatus_t invalid(Fn id, const char* what) {
  TORCHADA_LOG(kWarn, "%s: %s: CUBLAS_STATUS_INVALID_VALUE", kFnNames[static_cast<int>(id)], what);
  note_error(id);
  return CUBLAS_STATUS_INVALID_VALUE;
}

// The muBLASLt algorithm of a cuBLASLt one: a record's configured one (algos.cc), anything else
// as it is.
mublasLtMatmulAlgo_t musa_algo(const cublasLtMatmulAlgo_t& a, bool configured = true) {
  mublasLtMatmulAlgo_t m{};
  if (algos::musa_of(a, m, configured)) return m;
  return Pair<cublasLtMatmulAlgo_t>::to_musa(a);
}

// The caller's algo goes in (CUBLASLT_SEARCH_LIMITED_BY_ALGO_ID reads results[0].algo).
MusaResult to_musa(const CudaResult& c) {
  MusaResult m{};
  m.algo = musa_algo(c.algo);
  return m;
}

// A result's algorithm comes out as the shim's record (algos.cc) of muBLASLt's, with its id.
cublasStatus_t copy_out(Fn id, const MusaResult& m, CudaResult& c, bool with_algo) {
  if (with_algo) {
    const cublasStatus_t s = algos::wrap(id, m.algo, 0, true, c.algo);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
  }
  c.workspaceSize = m.workspaceSize;
  // Read as a number: a library may answer a status its header does not define.
  int state = 0;
  std::memcpy(&state, &m.state, sizeof(state));
  c.state = static_cast<cublasStatus_t>(
      enum_to_cuda(Pair<cublasStatus_t>::kTable, state, int(CUBLAS_STATUS_INTERNAL_ERROR)));
  c.wavesCount = m.wavesCount;
  std::memcpy(c.reserved, m.reserved, sizeof(c.reserved));
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

namespace impl {

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    mublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc, cublasLtMatrixLayout_t Adesc,
    cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount) {
  constexpr Fn id = Fn::k_cublasLtMatmulAlgoGetHeuristic;
  const auto fn = mublasLt_backend().table.mublasLtMatmulAlgoGetHeuristic;
  if (fn == nullptr) return CublasLtLib::missing(id);
  if (requestedAlgoCount <= 0) return invalid(id, "requestedAlgoCount must be positive");
  if (heuristicResultsArray == nullptr || returnAlgoCount == nullptr)
    return invalid(id, "heuristicResultsArray and returnAlgoCount must not be NULL");
  const int n = requestedAlgoCount < kMaxResults ? requestedAlgoCount : kMaxResults;
  MusaResult on_stack[kOnStack];
  std::unique_ptr<MusaResult[]> on_heap;
  MusaResult* results = on_stack;
  if (n > kOnStack) {
    on_heap.reset(new (std::nothrow) MusaResult[n]);
    if (!on_heap) {
      note_error(id);
      return CUBLAS_STATUS_ALLOC_FAILED;
    }
    results = on_heap.get();
  }
  for (int i = 0; i < n; ++i) results[i] = to_musa(heuristicResultsArray[i]);
  int returned = 0;
  const cublasStatus_t s = CublasLtLib::status(
      fn(lightHandle, convert<mublasLtMatmulDesc_t>(operationDesc),
         convert<mublasLtMatrixLayout_t>(Adesc), convert<mublasLtMatrixLayout_t>(Bdesc),
         convert<mublasLtMatrixLayout_t>(Cdesc), convert<mublasLtMatrixLayout_t>(Ddesc),
         convert<mublasLtMatmulPreference_t>(preference), n, results, &returned));
  if (returned < 0 || returned > n) returned = 0;  // never trust a count past the array
  for (int i = 0; i < returned; ++i) {
    const cublasStatus_t c = copy_out(id, results[i], heuristicResultsArray[i], true);
    if (c != CUBLAS_STATUS_SUCCESS) {
      *returnAlgoCount = i;
      return c;
    }
  }
  *returnAlgoCount = returned;
  if (s != CUBLAS_STATUS_SUCCESS) return CublasLtLib::fail(id, s);
  return s;
}

cublasStatus_t cublasLtMatmulAlgoCheck(mublasLtHandle_t lightHandle,
                                       cublasLtMatmulDesc_t operationDesc,
                                       cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                                       cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                                       const cublasLtMatmulAlgo_t* algo,
                                       cublasLtMatmulHeuristicResult_t* result) {
  constexpr Fn id = Fn::k_cublasLtMatmulAlgoCheck;
  const auto fn = mublasLt_backend().table.mublasLtMatmulAlgoCheck;
  if (fn == nullptr) return CublasLtLib::missing(id);
  if (algo == nullptr || result == nullptr) return invalid(id, "algo and result must not be NULL");
  // `algo` may point into `result`: both are read before anything is written back, and
  // result->algo is never written (cuBLASLt's contract).
  // A record is checked on its configured muBLASLt algorithm, and on the one it was made from
  // should muBLASLt refuse that one for the problem (as cublasLtMatmul runs it).
  const bool fallback = algos::configured_differs(*algo);
  const mublasLtMatmulAlgo_t configured = musa_algo(*algo);
  const mublasLtMatmulAlgo_t base = musa_algo(*algo, /*configured=*/false);
  auto check = [&](const mublasLtMatmulAlgo_t& m, MusaResult& r) {
    return CublasLtLib::status(
        fn(lightHandle, convert<mublasLtMatmulDesc_t>(operationDesc),
           convert<mublasLtMatrixLayout_t>(Adesc), convert<mublasLtMatrixLayout_t>(Bdesc),
           convert<mublasLtMatrixLayout_t>(Cdesc), convert<mublasLtMatrixLayout_t>(Ddesc), &m, &r));
  };
  MusaResult r = to_musa(*result);
  cublasStatus_t s = check(configured, r);
  if (s != CUBLAS_STATUS_SUCCESS && s != CUBLAS_STATUS_NOT_INITIALIZED && fallback) {
    r = to_musa(*result);
    s = check(base, r);
  }
  if (s != CUBLAS_STATUS_SUCCESS) return CublasLtLib::fail(id, s);
  copy_out(id, r, *result, false);
  return s;
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
