// cuBLASLt -> muBLASLt: the traits the generated exports (shim/gen/cublasLt<abi>_exports.cc) and
// the hand-written translations (shim/cublasLt/*.cc) share. Compiled once per CUDA ABI.
#pragma once

#include <cublasLt.h>
#include <mublasLt.h>

#include "abi/library.h"
#include "core/blas_handles.h"
#include "core/library_tables.h"
#include "core/log.h"
#include "gen/fn_ids.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublasLt12_types.h"
#else
#include "gen/cublasLt13_types.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {

struct CublasLtLib {
  using Status = cublasStatus_t;
  static constexpr Status kSuccess = CUBLAS_STATUS_SUCCESS;

  static const LibraryBackend<MublasLtTable>& backend() { return mublasLt_backend(); }
  // Null until the library is loaded (lib_ready, lib_backend).
  [[gnu::always_inline]] static const LibraryBackend<MublasLtTable>* ready() {
    return detail::g_mublasLt_backend.load(std::memory_order_acquire);
  }

  static Status status(mublasStatus_t s) {
    return s == MUBLAS_STATUS_SUCCESS ? CUBLAS_STATUS_SUCCESS : Pair<cublasStatus_t>::to_cuda(s);
  }
  // No muBLASLt (SDK < 4.3, or no backend): like cuBLASLt without a usable GPU.
  static Status missing(Fn id) {
    if (backend().failed) return CUBLAS_STATUS_NOT_INITIALIZED;
    note_missing(id);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  static Status unsupported(Fn id) {
    note_unsupported(id);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  // A failed muBLASLt call: counted; muBLASLt's refusal (NOT_IMPLEMENTED, cuBLAS's NOT_SUPPORTED)
  // names the function once in the log. `why`: what was refused, when the caller knows.
  [[gnu::noinline, gnu::cold]] static Status fail(Fn id, Status s, const char* why = nullptr) {
    note_error(id);
    if (s == CUBLAS_STATUS_NOT_SUPPORTED) note_backend_refusal(id, "muBLASLt", why);
    return s;
  }
  // The muBLASLt handle behind a cublasLtHandle_t argument, for every cuBLASLt call that takes one
  // but cublasLtCreate / cublasLtDestroy (symbols/libraries.py generates the call; translate rows
  // receive the result): cublasLtCreate's handle as is, a cublasCreate handle's own muBLASLt
  // handle (made on its first use, core/blas_handles.h); anything else is refused, logged, with
  // CUBLAS_STATUS_NOT_INITIALIZED.
  static Status resolve_handle(Fn id, cublasLtHandle_t h, mublasLtHandle_t& out) {
    if (void* lt = blas_handles::lt_fast(h); __builtin_expect(lt != nullptr, 1)) {
      out = static_cast<mublasLtHandle_t>(lt);
      return kSuccess;
    }
    return resolve_handle_slow(id, h, out);
  }
  static Status resolve_handle_slow(Fn id, cublasLtHandle_t h, mublasLtHandle_t& out);
  static Status invalid_enum(Fn id) {
    TORCHADA_LOG(kWarn,
                 "%s: an enum argument has no muBLASLt counterpart: CUBLAS_STATUS_INVALID_VALUE",
                 kFnNames[static_cast<int>(id)]);
    note_error(id);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
};

// A muBLASLt layout attribute read into `out` (exactly its size); false when muBLASLt cannot.
template <class T>
bool layout_get(mublasLtMatrixLayout_t l, mublasLtMatrixLayoutAttribute_t attr, T& out) {
  size_t written = 0;
  return mublasLt_backend().table.mublasLtMatrixLayoutGetAttribute(
             l, attr, &out, sizeof(out), &written) == MUBLAS_STATUS_SUCCESS &&
         written == sizeof(out);
}

// What the shim records about a layout because muBLASLt's layout object cannot hold it
// (layout_notes.cc): CUBLASLT_BATCH_MODE_POINTER_ARRAY (muBLASLt has strided batches only; its
// layout stays strided, cublasLtMatmul emulates the mode, matmul.cc), the tiled IMMA orders
// (muBLASLt's layouts are column- or row-major; its layout says COL) and a planar complex plane
// offset muBLASLt refuses (its layout says interleaved); cublasLtMatmul and
// cublasLtMatrixTransform go through packed column-major copies for the last two
// (emulated_layouts.cc). Creating, initialising or destroying a layout forgets its address.
namespace layout_notes {
struct Note {
  bool pointer_array = false;
  int32_t imma_order = 0;    // a cublasLtOrder_t of the IMMA kind, 0 for none
  int64_t plane_offset = 0;  // bytes from the real plane to the imaginary one, 0 for none
  // CUDA_R_4F_E2M1 (NVFP4's elements, which MUSA lacks): muBLASLt's layout says MUSA_R_8F_E4M3, a
  // stand-in of the same shape for its heuristics; cublasLtMatmul decodes (block_scaled.cc).
  bool fp4 = false;
  bool reordered() const { return imma_order != 0 || plane_offset != 0; }
};
// Whether any layout is recorded: cublasLtMatmul's one check on its usual path.
bool any();
Note get(const void* layout);
// false when the table is full (refused by the caller).
bool set_pointer_array(const void* layout, bool on);
bool set_imma_order(const void* layout, int32_t order);    // 0 forgets it
bool set_plane_offset(const void* layout, int64_t bytes);  // 0 forgets it
bool set_fp4(const void* layout, bool on);
void forget(const void* layout);
constexpr int kCapacity = 4096;
}  // namespace layout_notes

// cuBLASLt algorithms as the shim's records (algos.cc): the muBLASLt algorithm a
// cublasLtMatmulAlgo_t was made from (cublasLtMatmulAlgoInit, a heuristic), the one it runs on
// (with the settings muBLASLt takes) and the configuration as the program set it, read back by
// ConfigGetAttribute.
namespace algos {
// Whether `a` is a record of this ABI's exports (anything else is passed to muBLASLt as it is).
bool is_record(const cublasLtMatmulAlgo_t& a);
// The muBLASLt algorithm of a record: the configured one, or the one it was made from.
bool musa_of(const cublasLtMatmulAlgo_t& a, mublasLtMatmulAlgo_t& out, bool configured = true);
// Whether the configured algorithm differs from the one the record was made from.
bool configured_differs(const cublasLtMatmulAlgo_t& a);
// A record of muBLASLt's algorithm `m` into `out`, its configuration read from muBLASLt's (values
// cuBLASLt names; defaults otherwise); CONFIG_ID reads algo_id, or muBLASLt's own id when
// id_from_musa.
cublasStatus_t wrap(Fn id, const mublasLtMatmulAlgo_t& m, int32_t algo_id, bool id_from_musa,
                    cublasLtMatmulAlgo_t& out);
cublasStatus_t config_set(cublasLtMatmulAlgo_t* algo, cublasLtMatmulAlgoConfigAttributes_t attr,
                          const void* buf, size_t sizeInBytes);
cublasStatus_t config_get(const cublasLtMatmulAlgo_t* algo,
                          cublasLtMatmulAlgoConfigAttributes_t attr, void* buf, size_t sizeInBytes,
                          size_t* sizeWritten);
// The capabilities the configuration layer answers itself (split-K, reduction schemes, swizzling,
// tile and stage ids): true with *status set; false for the others (muBLASLt's answer stands).
bool cap_answer(const cublasLtMatmulAlgo_t* algo, cublasLtMatmulAlgoCapAttributes_t attr, void* buf,
                size_t sizeInBytes, size_t* sizeWritten, cublasStatus_t& status);
}  // namespace algos

// What the shim notes on a matmul descriptor that muBLASLt's cannot hold (emulation.cc): the
// caller's compute type when it is a CUDA 13 emulated one (muBLASLt's says 32F / 64F), the
// CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR pointer, and D's output scales
// (CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE / _POINTER, computed by the shim: block_scaled.cc).
// Creating, initialising or destroying a descriptor forgets its address.
namespace desc_notes {
struct Note {
  int32_t compute_type = -1;    // a cublasComputeType_t, -1 for none
  void* emulation = nullptr;    // a cublasLtEmulationDesc_t
  int32_t d_out_mode = -1;      // a cublasLtMatmulMatrixScale_t D_OUT_SCALE_MODE, -1 for none
  void* d_out_scale = nullptr;  // D_OUT_SCALE_POINTER
  // A_SCALE_MODE / B_SCALE_MODE when VEC128_32F, BLK128x128_32F or VEC16_UE4M3 (muBLASLt's
  // descriptor then says SCALAR_32F), -1 for none.
  int32_t ab_mode[2] = {-1, -1};
  bool empty() const {
    return compute_type < 0 && emulation == nullptr && d_out_mode < 0 && d_out_scale == nullptr &&
           ab_mode[0] < 0 && ab_mode[1] < 0;
  }
  bool blockwise() const { return ab_mode[0] >= 0 || ab_mode[1] >= 0; }
  bool nvfp4() const {
    return ab_mode[0] == CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3 ||
           ab_mode[1] == CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
  }
};
Note get(const void* desc);
// false when the table is full (refused by the caller). A compute type that is not an emulated
// one forgets the noted one.
bool set_compute_type(const void* desc, int32_t compute_type);
bool set_emulation(const void* desc, void* emulation);        // null forgets it
bool set_d_out_mode(const void* desc, int32_t mode);          // -1 forgets it
bool set_d_out_scale(const void* desc, void* scale);          // null forgets it
bool set_ab_mode(const void* desc, int which, int32_t mode);  // which: 0 A, 1 B; -1 forgets
void forget(const void* desc);
constexpr int kCapacity = 4096;
}  // namespace desc_notes
// CUBLAS_COMPUTE_32F_EMULATED_16BFX9 or (CUDA 13) CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT.
bool is_emulated_compute(int32_t compute_type);

// The emulation of IMMA orders and planar complex layouts (emulated_layouts.cc): calls with at
// least one layout noted with either.
namespace emulated_layouts {
bool is_imma_order(int64_t order);  // COL32, COL4_4R2_8C or COL32_2R_4R4
cublasStatus_t matmul(mublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                      const void* A, cublasLtMatrixLayout_t Adesc, const void* B,
                      cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C,
                      cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
                      void* workspace, size_t workspaceSizeInBytes, cudaStream_t stream);
cublasStatus_t transform(mublasLtHandle_t handle, cublasLtMatrixTransformDesc_t desc,
                         const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc,
                         const void* beta, const void* B, cublasLtMatrixLayout_t Bdesc, void* C,
                         cublasLtMatrixLayout_t Cdesc, cudaStream_t stream);
}  // namespace emulated_layouts

// Block-scaled outputs muBLASLt lacks (block_scaled.cc): cublasLtMatmul with a D_OUT_SCALE_MODE
// noted on its descriptor.
namespace block_scaled {
cublasStatus_t matmul(mublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                      const desc_notes::Note& note, const void* alpha, const void* A,
                      cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
                      const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
                      cublasLtMatrixLayout_t Ddesc, void* workspace, size_t workspaceSizeInBytes,
                      cudaStream_t stream);
// cublasLtMatmul with A or B scaled per 128 K elements (VEC128_32F) or per 128 x 128 block
// (BLK128x128_32F).
cublasStatus_t blockwise_matmul(mublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                const desc_notes::Note& note, const void* alpha, const void* A,
                                cublasLtMatrixLayout_t Adesc, const void* B,
                                cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C,
                                cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
                                void* workspace, size_t workspaceSizeInBytes, cudaStream_t stream);
// cublasLtMatmul with NVFP4 operands (CUDA_R_4F_E2M1 layouts, VEC16_UE4M3 scales).
cublasStatus_t nvfp4_matmul(mublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                            const desc_notes::Note& note, const void* alpha, const void* A,
                            cublasLtMatrixLayout_t Adesc, const void* B,
                            cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C,
                            cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
                            void* workspace, size_t workspaceSizeInBytes, cudaStream_t stream);
}  // namespace block_scaled

}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
