// cublasLtMatmul and what it depends on that muBLASLt lacks:
//
// - Pointer-array batches (CUBLASLT_MATRIX_LAYOUT_BATCH_MODE = CUBLASLT_BATCH_MODE_POINTER_ARRAY):
//   muBLASLt has only strided batches. cublasLtMatrixLayoutSetAttribute (attributes.cc) records
//   the layout here and leaves muBLASLt's layout strided; cublasLtMatmul with such layouts reads
//   the four device arrays of device pointers back to the host on the caller's stream (after the
//   work that wrote them: musaMemcpyAsync, then musaStreamSynchronize) and issues one muBLASLt
//   matmul per instance, in order on that stream, through single-matrix copies of the layouts.
//   The descriptor, scalars, algorithm and workspace are the caller's. Layouts mixing pointer
//   arrays and strides are CUBLAS_STATUS_INVALID_VALUE, as in cuBLASLt. What cannot keep its
//   meaning is refused, logged: batch strides of a bias, an auxiliary output or an alpha vector
//   that the call uses (each instance would need its own descriptor; the stride of one the call
//   does not use is ignored, as cuBLASLt does), and FP8 scaling that spans the batch (AMAX_D,
//   per-batch scales).
// - cublasLtMatmulAlgoInit with an algorithm id muBLASLt does not know: the id is a hint (every
//   algorithm computes the same product), so muBLASLt's default one for the types (the first id
//   mublasLtMatmulAlgoGetIds answers) stands in, logged once at info level. The caller's algo is
//   the shim's record of muBLASLt's (algos.cc), reporting the caller's id; cublasLtMatmul runs a
//   record on its configured muBLASLt algorithm.
//
// Creating, initialising or destroying a layout forgets whatever was recorded for its address.
// Compiled once per CUDA ABI.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <utility>

#include "core/backend.h"
#include "cublasLt/cublasLt.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublasLt12_impl.h"
#else
#include "gen/cublasLt13_impl.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {

namespace {

const MublasLtTable& lt() { return mublasLt_backend().table; }

cublasStatus_t invalid(Fn id, const char* what) {
  TORCHADA_LOG(kWarn, "%s: %s: CUBLAS_STATUS_INVALID_VALUE", kFnNames[static_cast<int>(id)], what);
  note_error(id);
  return CUBLAS_STATUS_INVALID_VALUE;
}

// What a pointer-array call cannot do on muBLASLt: named once, counted, TORCHADA_STRICT aborts.
cublasStatus_t unsupported(Fn id, const char* why) {
  note_unsupported(id, why);
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

// One muBLASLt layout's shape (muBLASLt's own values: they are only handed back to it).
struct Shape {
  uint32_t type = 0;
  int32_t order = 0;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch = 0;
};

bool read_shape(mublasLtMatrixLayout_t l, Shape& s) {
  return layout_get(l, MUBLASLT_MATRIX_LAYOUT_TYPE, s.type) &&
         layout_get(l, MUBLASLT_MATRIX_LAYOUT_ORDER, s.order) &&
         layout_get(l, MUBLASLT_MATRIX_LAYOUT_ROWS, s.rows) &&
         layout_get(l, MUBLASLT_MATRIX_LAYOUT_COLS, s.cols) &&
         layout_get(l, MUBLASLT_MATRIX_LAYOUT_LD, s.ld) &&
         layout_get(l, MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, s.batch);
}

// A single-matrix layout of `s`'s shape, destroyed with the object.
class SingleLayout {
 public:
  SingleLayout() = default;
  SingleLayout(const SingleLayout&) = delete;
  SingleLayout& operator=(const SingleLayout&) = delete;
  ~SingleLayout() {
    if (layout_ != nullptr) lt().mublasLtMatrixLayoutDestroy(layout_);
  }
  mublasStatus_t make(const Shape& s) {
    mublasStatus_t st = lt().mublasLtMatrixLayoutCreate(&layout_, static_cast<musaDataType>(s.type),
                                                        s.rows, s.cols, s.ld);
    if (st != MUBLAS_STATUS_SUCCESS) {
      layout_ = nullptr;
      return st;
    }
    return lt().mublasLtMatrixLayoutSetAttribute(layout_, MUBLASLT_MATRIX_LAYOUT_ORDER, &s.order,
                                                 sizeof(s.order));
  }
  mublasLtMatrixLayout_t get() const { return layout_; }

 private:
  mublasLtMatrixLayout_t layout_ = nullptr;
};

// A matmul descriptor attribute by its cuBLASLt id, read from muBLASLt; false when muBLASLt lacks
// the attribute (then it cannot have been set) or cannot read it.
template <class T>
bool desc_get(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, T& out) {
  using P = Pair<cublasLtMatmulDescAttributes_t>;
  size_t written = 0;
  return P::valid(attr) &&
         lt().mublasLtMatmulDescGetAttribute(convert<mublasLtMatmulDesc_t>(desc), P::to_musa(attr),
                                             &out, sizeof(out),
                                             &written) == MUBLAS_STATUS_SUCCESS &&
         written == sizeof(out);
}

// FP8 scaling that spans the batch: AMAX_D is one maximum over every instance, a per-batch scale
// is indexed by the instance; one matmul per instance would see only its own.
bool batch_wide_fp8_scaling(cublasLtMatmulDesc_t desc) {
  void* amax = nullptr;
  if (desc_get(desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, amax) && amax != nullptr) return true;
#if CUBLAS_VER_MAJOR >= 13 && defined(TORCHADA_PAIR_cublasLtMatmulMatrixScale_t)
  for (auto attr : {CUBLASLT_MATMUL_DESC_A_SCALE_MODE, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                    CUBLASLT_MATMUL_DESC_C_SCALE_MODE, CUBLASLT_MATMUL_DESC_D_SCALE_MODE}) {
    int32_t mode = 0;
    if (desc_get(desc, attr, mode) && Pair<cublasLtMatmulMatrixScale_t>::to_cuda(
                                          static_cast<mublasLtMatmulMatrixScale_t>(mode)) ==
                                          CUBLASLT_MATMUL_MATRIX_SCALE_PER_BATCH_SCALAR_32F)
      return true;
  }
#endif
  return false;
}

// Whether the descriptor has a batch stride for a bias, an auxiliary output or an alpha vector
// that the call reads or writes (its epilogue or pointer mode uses it). cuBLASLt ignores the
// stride of one the call does not use.
enum class BatchStrided { kNone, kUsed, kUnreadable };
BatchStrided batch_strided_operand(cublasLtMatmulDesc_t desc) {
  int32_t musa_epilogue = 0, musa_mode = 0;
  if (!desc_get(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, musa_epilogue) ||
      !desc_get(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, musa_mode))
    return BatchStrided::kUnreadable;
  const auto epilogue = static_cast<int>(
      Pair<cublasLtEpilogue_t>::to_cuda(static_cast<mublasLtEpilogue_t>(musa_epilogue)));
  const auto mode = static_cast<int>(
      Pair<cublasLtPointerMode_t>::to_cuda(static_cast<mublasLtPointerMode_t>(musa_mode)));
  // The epilogue bits: BIAS (4), BGRAD (16: DRELU_BGRAD, DGELU_BGRAD), BGRADA (256), BGRADB (512)
  // read or write the bias vector; AUX (128) the auxiliary output.
  const bool bias = (epilogue & (CUBLASLT_EPILOGUE_BIAS | 16 | CUBLASLT_EPILOGUE_BGRADA |
                                 CUBLASLT_EPILOGUE_BGRADB)) != 0;
  const bool aux = (epilogue & 128) != 0;
  const bool alpha_vector = mode == CUBLASLT_POINTER_MODE_DEVICE_VECTOR ||
                            mode == CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO ||
                            mode == CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST;
  const std::pair<bool, cublasLtMatmulDescAttributes_t> strides[] = {
      {bias, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE},
      {aux, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE},
      {alpha_vector, CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE}};
  for (const auto& [used, attr] : strides) {
    int64_t v = 0;  // an attribute muBLASLt lacks cannot have been set
    if (used && desc_get(desc, attr, v) && v != 0) return BatchStrided::kUsed;
  }
  return BatchStrided::kNone;
}

// cublasLtMatmul with pointer-array layouts (at least one of the four is one).
cublasStatus_t pointer_array_matmul(mublasLtHandle_t handle, cublasLtMatmulDesc_t computeDesc,
                                    const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc,
                                    const void* B, cublasLtMatrixLayout_t Bdesc, const void* beta,
                                    const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
                                    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo,
                                    void* workspace, size_t workspaceSizeInBytes,
                                    cudaStream_t stream) {
  constexpr Fn id = Fn::k_cublasLtMatmul;
  const MublasLtTable& t = lt();
  const MusartTable& rt = musart();
  if (t.mublasLtMatmul == nullptr || t.mublasLtMatrixLayoutGetAttribute == nullptr ||
      t.mublasLtMatrixLayoutCreate == nullptr || t.mublasLtMatrixLayoutDestroy == nullptr ||
      t.mublasLtMatrixLayoutSetAttribute == nullptr ||
      t.mublasLtMatmulDescGetAttribute == nullptr || rt.musaMemcpyAsync == nullptr ||
      rt.musaStreamSynchronize == nullptr)
    return CublasLtLib::missing(id);
  const cublasLtMatrixLayout_t layouts[4] = {Adesc, Bdesc, Cdesc, Ddesc};
  const void* const arrays[4] = {A, B, C, D};
  Shape shapes[4];
  for (int k = 0; k < 4; ++k) {
    // cuBLASLt answers a mix with CUBLAS_STATUS_INVALID_VALUE (an H200's cuBLASLt 13.1 does).
    if (!layout_notes::get(layouts[k]).pointer_array)
      return invalid(id,
                     "pointer-array and strided layouts in one call (with "
                     "CUBLASLT_BATCH_MODE_POINTER_ARRAY, every one of A, B, C and D must use it)");
    if (!read_shape(convert<mublasLtMatrixLayout_t>(layouts[k]), shapes[k]))
      return invalid(id, "a matrix layout is not one muBLASLt can read");
    if (arrays[k] == nullptr) return invalid(id, "a pointer array (A, B, C or D) is NULL");
  }
  const int32_t batch = shapes[3].batch;
  for (const Shape& s : shapes)
    if (s.batch != batch || batch < 1)
      return invalid(id, "the layouts' batch counts differ (or are not positive)");
  if (batch > 1) {
    switch (batch_strided_operand(computeDesc)) {
      case BatchStrided::kNone:
        break;
      case BatchStrided::kUnreadable:
        return invalid(id, "the matmul descriptor is not one muBLASLt can read");
      case BatchStrided::kUsed:
        return unsupported(id,
                           "a batch stride of the bias, the epilogue's auxiliary output or the "
                           "alpha vector the call uses, with CUBLASLT_BATCH_MODE_POINTER_ARRAY "
                           "(each instance would need its own descriptor)");
    }
    // On other types AMAX_D is an invalid value, cuBLASLt's answer (an H200's 13.1), which the
    // first instance's call gives before anything is written.
    const bool fp8 = shapes[0].type == MUSA_R_8F_E4M3 || shapes[0].type == MUSA_R_8F_E5M2;
    if (fp8 && batch_wide_fp8_scaling(computeDesc))
      return unsupported(id,
                         "CUBLASLT_MATMUL_DESC_AMAX_D_POINTER or a per-batch scale mode with "
                         "CUBLASLT_BATCH_MODE_POINTER_ARRAY (they span the batch; each instance "
                         "is a matmul of its own)");
  }

  // The pointers, read on the caller's stream after the work that wrote them.
  const auto n = static_cast<size_t>(batch);
  std::unique_ptr<const void*[]> ptrs(new (std::nothrow) const void*[4 * n]);
  if (!ptrs) {
    note_error(id);
    return CUBLAS_STATUS_ALLOC_FAILED;
  }
  const auto s = convert<musaStream_t>(stream);
  for (int k = 0; k < 4; ++k) {
    if (rt.musaMemcpyAsync(ptrs.get() + k * n, arrays[k], n * sizeof(void*), musaMemcpyDeviceToHost,
                           s) != musaSuccess)
      return invalid(id, "a pointer array (A, B, C or D) could not be read from the device");
  }
  if (rt.musaStreamSynchronize(s) != musaSuccess) {
    TORCHADA_LOG(kWarn,
                 "cublasLtMatmul: the stream failed while the pointer arrays were read: "
                 "CUBLAS_STATUS_EXECUTION_FAILED");
    note_error(id);
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }

  SingleLayout single[4];
  for (int k = 0; k < 4; ++k) {
    const cublasStatus_t st = CublasLtLib::status(single[k].make(shapes[k]));
    if (st != CUBLAS_STATUS_SUCCESS) return CublasLtLib::fail(id, st);
  }
  static std::atomic<bool> logged{false};
  if (!logged.exchange(true, std::memory_order_relaxed))
    TORCHADA_LOG(kInfo,
                 "cublasLtMatmul: CUBLASLT_BATCH_MODE_POINTER_ARRAY emulated as one muBLASLt "
                 "matmul per instance (%d here), the pointers read back on the stream (logged "
                 "once)",
                 batch);
  const auto desc = convert<mublasLtMatmulDesc_t>(computeDesc);
  const auto musa_algo = convert<const mublasLtMatmulAlgo_t*>(algo);
  for (size_t i = 0; i < n; ++i) {
    const cublasStatus_t st = CublasLtLib::status(t.mublasLtMatmul(
        handle, desc, alpha, ptrs[i], single[0].get(), ptrs[n + i], single[1].get(), beta,
        ptrs[2 * n + i], single[2].get(), const_cast<void*>(ptrs[3 * n + i]), single[3].get(),
        musa_algo, workspace, workspaceSizeInBytes, s));
    if (st != CUBLAS_STATUS_SUCCESS) {
      TORCHADA_LOG(kWarn, "cublasLtMatmul: instance %zu of a pointer-array batch of %d failed: %d",
                   i, batch, static_cast<int>(st));
      return CublasLtLib::fail(id, st);
    }
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

namespace impl {

cublasStatus_t cublasLtMatmul(mublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                              const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc,
                              const void* B, cublasLtMatrixLayout_t Bdesc, const void* beta,
                              const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo,
                              void* workspace, size_t workspaceSizeInBytes, cudaStream_t stream) {
  // A record (algos.cc) runs on its configured muBLASLt algorithm, which travels in a
  // cublasLtMatmulAlgo_t (the same 64 bytes: the generated pair copies them to muBLASLt's).
  const cublasLtMatmulAlgo_t* const original = algo;
  cublasLtMatmulAlgo_t run;
  if (algo != nullptr) {
    mublasLtMatmulAlgo_t m{};
    if (algos::musa_of(*algo, m)) {
      run = bit_copy<cublasLtMatmulAlgo_t>(m);
      algo = &run;
    }
  }
  // 128-element and 128 x 128 block scaling and D's output scales, which muBLASLt lacks
  // (block_scaled.cc).
  const desc_notes::Note dn = desc_notes::get(computeDesc);
  if (TORCHADA_UNLIKELY(
          dn.nvfp4() ||
          (layout_notes::any() && (layout_notes::get(Adesc).fp4 || layout_notes::get(Bdesc).fp4 ||
                                   layout_notes::get(Cdesc).fp4 || layout_notes::get(Ddesc).fp4))))
    return block_scaled::nvfp4_matmul(lightHandle, computeDesc, dn, alpha, A, Adesc, B, Bdesc, beta,
                                      C, Cdesc, D, Ddesc, workspace, workspaceSizeInBytes, stream);
  if (TORCHADA_UNLIKELY(dn.blockwise()))
    return block_scaled::blockwise_matmul(lightHandle, computeDesc, dn, alpha, A, Adesc, B, Bdesc,
                                          beta, C, Cdesc, D, Ddesc, workspace, workspaceSizeInBytes,
                                          stream);
  if (TORCHADA_UNLIKELY(dn.d_out_mode >= 0))
    return block_scaled::matmul(lightHandle, computeDesc, dn, alpha, A, Adesc, B, Bdesc, beta, C,
                                Cdesc, D, Ddesc, workspace, workspaceSizeInBytes, stream);
  if (TORCHADA_UNLIKELY(layout_notes::any())) {
    const layout_notes::Note n[4] = {layout_notes::get(Adesc), layout_notes::get(Bdesc),
                                     layout_notes::get(Cdesc), layout_notes::get(Ddesc)};
    if (n[0].pointer_array || n[1].pointer_array || n[2].pointer_array || n[3].pointer_array)
      return pointer_array_matmul(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C,
                                  Cdesc, D, Ddesc, algo, workspace, workspaceSizeInBytes, stream);
    if (n[0].reordered() || n[1].reordered() || n[2].reordered() || n[3].reordered())
      return emulated_layouts::matmul(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C,
                                      Cdesc, D, Ddesc, workspace, workspaceSizeInBytes, stream);
  }
  cublasStatus_t s = lib_call<CublasLtLib>(Fn::k_cublasLtMatmul, lt().mublasLtMatmul, lightHandle,
                                           computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc,
                                           D, Ddesc, algo, workspace, workspaceSizeInBytes, stream);
  // muBLASLt refused the configured algorithm for this problem: the one the record was made from
  // (the same product).
  if (s != CUBLAS_STATUS_SUCCESS && s != CUBLAS_STATUS_NOT_INITIALIZED && algo != nullptr &&
      algo != original && algos::configured_differs(*original)) {
    mublasLtMatmulAlgo_t base{};
    algos::musa_of(*original, base, /*configured=*/false);
    run = bit_copy<cublasLtMatmulAlgo_t>(base);
    const cublasLtMatmulAlgo_t* const fallback = &run;
    s = lib_call<CublasLtLib>(Fn::k_cublasLtMatmul, lt().mublasLtMatmul, lightHandle, computeDesc,
                              alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, fallback,
                              workspace, workspaceSizeInBytes, stream);
  }
  return s;
}

cublasStatus_t cublasLtMatmulAlgoInit(mublasLtHandle_t lightHandle, cublasComputeType_t computeType,
                                      cudaDataType_t scaleType, cudaDataType_t Atype,
                                      cudaDataType_t Btype, cudaDataType_t Ctype,
                                      cudaDataType_t Dtype, int algoId,
                                      cublasLtMatmulAlgo_t* algo) {
  constexpr Fn id = Fn::k_cublasLtMatmulAlgoInit;
  const auto init = lt().mublasLtMatmulAlgoInit;
  if (init == nullptr) return CublasLtLib::missing(id);
  if (!(arg_ok(computeType) && arg_ok(scaleType) && arg_ok(Atype) && arg_ok(Btype) &&
        arg_ok(Ctype) && arg_ok(Dtype)))
    return CublasLtLib::invalid_enum(id);
  const auto ct = convert<mublasComputeType_t>(computeType);
  const auto st = convert<musaDataType_t>(scaleType);
  const auto at = convert<musaDataType_t>(Atype), bt = convert<musaDataType_t>(Btype);
  const auto cty = convert<musaDataType_t>(Ctype), dt = convert<musaDataType_t>(Dtype);
  if (algo == nullptr) return invalid(id, "algo is NULL");
  // The caller's algo becomes the shim's record of muBLASLt's (algos.cc), reporting algoId.
  mublasLtMatmulAlgo_t musa{};
  const cublasStatus_t s =
      CublasLtLib::status(init(lightHandle, ct, st, at, bt, cty, dt, algoId, &musa));
  if (s == CUBLAS_STATUS_SUCCESS) return algos::wrap(id, musa, algoId, false, *algo);
  if (s == CUBLAS_STATUS_NOT_INITIALIZED) return CublasLtLib::fail(id, s);
  // muBLASLt refused the id: its default algorithm for these types, when it has one and it is
  // another id (else the refusal stands).
  const auto get_ids = lt().mublasLtMatmulAlgoGetIds;
  int fallback = -1, count = 0;
  if (get_ids != nullptr &&
      get_ids(lightHandle, ct, st, at, bt, cty, dt, 1, &fallback, &count) ==
          MUBLAS_STATUS_SUCCESS &&
      count >= 1 && fallback != algoId &&
      init(lightHandle, ct, st, at, bt, cty, dt, fallback, &musa) == MUBLAS_STATUS_SUCCESS) {
    static std::atomic<bool> logged{false};
    if (!logged.exchange(true, std::memory_order_relaxed))
      TORCHADA_LOG(kInfo,
                   "cublasLtMatmulAlgoInit: muBLASLt has no algorithm %d for these types; its "
                   "default algorithm %d stands in (an algorithm id is a hint: the product is the "
                   "same) (logged once)",
                   algoId, fallback);
    return algos::wrap(id, musa, algoId, false, *algo);
  }
  return CublasLtLib::fail(id, s, "no algorithm for these types");
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* matLayout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
  // NVFP4's elements, which MUSA lacks: an FP8 stand-in of the same shape, noted.
  if (type == CUDA_R_4F_E2M1 && matLayout != nullptr) {
    const cublasStatus_t s =
        lib_call<CublasLtLib>(Fn::k_cublasLtMatrixLayoutCreate, lt().mublasLtMatrixLayoutCreate,
                              matLayout, CUDA_R_8F_E4M3, rows, cols, ld);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    layout_notes::forget(*matLayout);
    if (!layout_notes::set_fp4(*matLayout, true)) {
      lt().mublasLtMatrixLayoutDestroy(convert<mublasLtMatrixLayout_t>(*matLayout));
      *matLayout = nullptr;
      note_unsupported(Fn::k_cublasLtMatrixLayoutCreate,
                       "more CUDA_R_4F_E2M1 layouts at once than the shim records");
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return s;
  }
  const cublasStatus_t s =
      lib_call<CublasLtLib>(Fn::k_cublasLtMatrixLayoutCreate, lt().mublasLtMatrixLayoutCreate,
                            matLayout, type, rows, cols, ld);
  if (s == CUBLAS_STATUS_SUCCESS && matLayout != nullptr) layout_notes::forget(*matLayout);
  return s;
}

cublasStatus_t cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t matLayout, size_t size,
                                                 cudaDataType type, uint64_t rows, uint64_t cols,
                                                 int64_t ld) {
  layout_notes::forget(matLayout);
  if (type == CUDA_R_4F_E2M1) {
    const cublasStatus_t s = lib_call<CublasLtLib>(Fn::k_cublasLtMatrixLayoutInit_internal,
                                                   lt().mublasLtMatrixLayoutInit_internal,
                                                   matLayout, size, CUDA_R_8F_E4M3, rows, cols, ld);
    if (s == CUBLAS_STATUS_SUCCESS && !layout_notes::set_fp4(matLayout, true)) {
      note_unsupported(Fn::k_cublasLtMatrixLayoutInit_internal,
                       "more CUDA_R_4F_E2M1 layouts at once than the shim records");
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return s;
  }
  return lib_call<CublasLtLib>(Fn::k_cublasLtMatrixLayoutInit_internal,
                               lt().mublasLtMatrixLayoutInit_internal, matLayout, size, type, rows,
                               cols, ld);
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout) {
  layout_notes::forget(matLayout);
  return lib_call<CublasLtLib>(Fn::k_cublasLtMatrixLayoutDestroy, lt().mublasLtMatrixLayoutDestroy,
                               matLayout);
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
