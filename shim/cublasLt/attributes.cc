// cuBLASLt's attribute calls -> muBLASLt's: matmul descriptors, matrix layouts, matmul
// preferences, matrix transform descriptors, algorithm capabilities and configurations.
//
// Both the attribute ids and the enum-valued attribute VALUES are translated by name through the
// generated pairs (shim/gen/cublas*_types.h, cublasLt*_types.h): muBLASLt's numbers are its own
// (../shared/musa-abi.md [C]; the simulator's deliberately differ). Masks are translated bit by
// bit, arrays element by element. An attribute muBLASLt has no counterpart for is refused with
// CUBLAS_STATUS_INVALID_VALUE and a logged reason naming it; so is a value without a counterpart.
// The size protocol is cuBLASLt's: Set needs the attribute's exact size, Get answers a size query
// (sizeInBytes 0) with the size in *sizeWritten and otherwise needs the exact size (arrays: any
// size of at least one element). Compiled once per CUDA ABI.
#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "cublasLt/cublasLt.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublas12_types.h"  // cublasOperation_t, cublasFillMode_t
#include "gen/cublasLt12_impl.h"
#else
#include "gen/cublas13_types.h"
#include "gen/cublasLt13_impl.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace {

// How an attribute's value travels between the two libraries.
enum class Value : uint8_t {
  kBytes,              // unchanged: numbers, pointers, flags with cuBLASLt's bits, hints
  kOperation,          // int32_t cublasOperation_t
  kComputeType,        // int32_t cublasComputeType_t
  kDataType,           // 32-bit cudaDataType
  kDataTypeOrDefault,  // int32_t cudaDataType, or -1 (the output matrix's type)
  kPointerMode,        // int32_t cublasLtPointerMode_t
  kFillMode,           // int32_t cublasFillMode_t
  kEpilogue,           // uint32_t cublasLtEpilogue_t
  kOrder,              // int32_t cublasLtOrder_t
  kBatchMode,          // uint32_t cublasLtBatchMode_t
  kSearchMode,         // uint32_t cublasLtMatmulSearch_t
  kReductionScheme,    // uint32_t cublasLtReductionScheme_t
  kReductionMask,      // uint32_t, a mask of cublasLtReductionScheme_t bits
  kPointerModeMask,    // uint32_t, a mask of cublasLtPointerModeMask_t bits
  kEpilogueMask,       // uint32_t, a mask of cublasLtEpilogue_t bits
  kTile,               // uint32_t cublasLtMatmulTile_t
  kStages,             // uint32_t cublasLtMatmulStages_t
  kInnerShape,         // uint16_t cublasLtMatmulInnerShape_t
  kClusterShape,       // uint16_t cublasLtClusterShape_t
  kScaleMode,          // int32_t cublasLtMatmulMatrixScale_t
  kTileArray,          // uint32_t[] of cublasLtMatmulTile_t
  kStagesArray,        // uint32_t[] of cublasLtMatmulStages_t
};

struct AttrInfo {
  int value;
  const char* name;
  Value kind;
};
#define TORCHADA_ATTR(name, kind) \
  { name, #name, Value::kind }

// Every attribute of each family in the caller's header. Whether muBLASLt has it is the generated
// pair's business (its table); these say how the value travels, and name it in the log.
constexpr AttrInfo kDescAttrs[] = {
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, kComputeType),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_SCALE_TYPE, kDataType),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_POINTER_MODE, kPointerMode),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_TRANSA, kOperation),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_TRANSB, kOperation),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_TRANSC, kOperation),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_FILL_MODE, kFillMode),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE, kEpilogue),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_BIAS_POINTER, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, kDataTypeOrDefault),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_FAST_ACCUM, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, kDataTypeOrDefault),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, kScaleMode),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, kScaleMode),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_C_SCALE_MODE, kScaleMode),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_D_SCALE_MODE, kScaleMode),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_MODE, kScaleMode),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE, kScaleMode),
#if CUBLAS_VER_MAJOR >= 13
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, kBytes),
#else
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_ATOMIC_SYNC_NUM_CHUNKS_D_ROWS, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_ATOMIC_SYNC_NUM_CHUNKS_D_COLS, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_ATOMIC_SYNC_IN_COUNTERS_POINTER, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_ATOMIC_SYNC_OUT_COUNTERS_POINTER, kBytes),
#endif
#if CUBLAS_VERSION >= 130400  // cuBLASLt 13.4 (the pinned PyTorch's)
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_ALPHA_BATCH_STRIDE, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_DESC_BETA_BATCH_STRIDE, kBytes),
#endif
};

constexpr AttrInfo kLayoutAttrs[] = {
    TORCHADA_ATTR(CUBLASLT_MATRIX_LAYOUT_TYPE, kDataType),
    TORCHADA_ATTR(CUBLASLT_MATRIX_LAYOUT_ORDER, kOrder),
    TORCHADA_ATTR(CUBLASLT_MATRIX_LAYOUT_ROWS, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATRIX_LAYOUT_COLS, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATRIX_LAYOUT_LD, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, kBatchMode),
#if CUBLAS_VERSION >= 130400  // grouped GEMM layouts: muBLASLt has none, refused by the pair
    TORCHADA_ATTR(CUBLASLT_GROUPED_MATRIX_LAYOUT_ROWS_ARRAY, kBytes),
    TORCHADA_ATTR(CUBLASLT_GROUPED_MATRIX_LAYOUT_COLS_ARRAY, kBytes),
    TORCHADA_ATTR(CUBLASLT_GROUPED_MATRIX_LAYOUT_LD_ARRAY, kBytes),
    TORCHADA_ATTR(CUBLASLT_GROUPED_MATRIX_LAYOUT_ROWS_COLS_ARRAY_INTEGER_WIDTH, kBytes),
    TORCHADA_ATTR(CUBLASLT_GROUPED_MATRIX_LAYOUT_LD_ARRAY_INTEGER_WIDTH, kBytes),
#endif
};

// IMPL_MASK holds cublasLtNumericalImplFlags_t bits: macros, not an enum, and muBLASLt keeps
// cuBLASLt's values for them (sim/include/mublasLt.h).
constexpr AttrInfo kPrefAttrs[] = {
    TORCHADA_ATTR(CUBLASLT_MATMUL_PREF_SEARCH_MODE, kSearchMode),
    TORCHADA_ATTR(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, kReductionMask),
    TORCHADA_ATTR(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_PREF_IMPL_MASK, kBytes),
#if CUBLAS_VERSION >= 130400
    TORCHADA_ATTR(CUBLASLT_MATMUL_PREF_GROUPED_AVERAGE_REDUCTION_DIM, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_PREF_GROUPED_DESC_D_AVERAGE_ROWS, kBytes),
    TORCHADA_ATTR(CUBLASLT_MATMUL_PREF_GROUPED_DESC_D_AVERAGE_COLS, kBytes),
#endif
};

constexpr AttrInfo kTransformAttrs[] = {
    TORCHADA_ATTR(CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE, kDataType),
    TORCHADA_ATTR(CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE, kPointerMode),
    TORCHADA_ATTR(CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, kOperation),
    TORCHADA_ATTR(CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB, kOperation),
};

constexpr AttrInfo kCapAttrs[] = {
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK, kReductionMask),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_STRIDED_BATCH_SUPPORT, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_OUT_OF_PLACE_RESULT_SUPPORT, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_UPLO_SUPPORT, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_TILE_IDS, kTileArray),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_CUSTOM_MEMORY_ORDER, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_POINTER_MODE_MASK, kPointerModeMask),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_EPILOGUE_MASK, kEpilogueMask),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_STAGES_IDS, kStagesArray),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_LD_NEGATIVE, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_POINTER_ARRAY_BATCH_SUPPORT, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_FLOATING_POINT_EMULATION_SUPPORT, kBytes),
#if CUBLAS_VER_MAJOR < 13
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_ATOMIC_SYNC, kBytes),
#endif
#if CUBLAS_VERSION >= 130400
    TORCHADA_ATTR(CUBLASLT_ALGO_CAP_POINTER_ARRAY_GROUPED_SUPPORT, kBytes),
#endif
};

constexpr AttrInfo kConfigAttrs[] = {
    TORCHADA_ATTR(CUBLASLT_ALGO_CONFIG_ID, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CONFIG_TILE_ID, kTile),
    TORCHADA_ATTR(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, kReductionScheme),
    TORCHADA_ATTR(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, kBytes),
    TORCHADA_ATTR(CUBLASLT_ALGO_CONFIG_STAGES_ID, kStages),
    TORCHADA_ATTR(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, kInnerShape),
    TORCHADA_ATTR(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, kClusterShape),
};
#undef TORCHADA_ATTR

// Each table lists every enumerator of its attribute enum in the caller's header: a newer header
// with an attribute nobody classified fails to compile here.
template <class Attr, std::size_t N>
constexpr bool lists_every_attribute(const AttrInfo (&infos)[N]) {
  for (int v : Pair<Attr>::kCudaValues) {
    bool found = false;
    for (const AttrInfo& i : infos) found = found || i.value == v;
    if (!found) return false;
  }
  return N == sizeof(Pair<Attr>::kCudaValues) / sizeof(int);
}
static_assert(lists_every_attribute<cublasLtMatmulDescAttributes_t>(kDescAttrs));
static_assert(lists_every_attribute<cublasLtMatrixLayoutAttribute_t>(kLayoutAttrs));
static_assert(lists_every_attribute<cublasLtMatmulPreferenceAttributes_t>(kPrefAttrs));
static_assert(lists_every_attribute<cublasLtMatrixTransformDescAttributes_t>(kTransformAttrs));
static_assert(lists_every_attribute<cublasLtMatmulAlgoCapAttributes_t>(kCapAttrs));
static_assert(lists_every_attribute<cublasLtMatmulAlgoConfigAttributes_t>(kConfigAttrs));

// ---- Values

// Name lookups in a generated pair's table, both directions (the first entry wins, as in the
// pair's own to_musa / to_cuda). Plain ints: a caller's value outside the enum never becomes one.
template <std::size_t N>
bool lookup_musa(const EnumEntry (&table)[N], int64_t cuda, int64_t& musa) {
  for (const EnumEntry& e : table) {
    if (e.cuda == cuda) {
      musa = e.musa;
      return true;
    }
  }
  return false;
}
template <std::size_t N>
bool lookup_cuda(const EnumEntry (&table)[N], int64_t musa, int64_t& cuda) {
  for (const EnumEntry& e : table) {
    if (e.musa == musa) {
      cuda = e.cuda;
      return true;
    }
  }
  return false;
}

template <class E>
bool enum_value(int64_t v, bool to_musa, int64_t& out) {
  return to_musa ? lookup_musa(Pair<E>::kTable, v, out) : lookup_cuda(Pair<E>::kTable, v, out);
}

// A mask of enumerator bits: the translated mask holds each enumerator of the other side whose
// bits are all present. To MUSA, bits no cuBLASLt enumerator covers are refused; enumerators
// muBLASLt lacks are dropped (a filter then excludes them, as nothing can provide them). To CUDA,
// muBLASLt bits no cuBLASLt enumerator names are dropped.
template <class E>
bool mask_value(uint64_t v, bool to_musa, int64_t& out) {
  uint64_t result = 0;
  if (to_musa) {
    uint64_t covered = 0;
    for (int c : Pair<E>::kCudaValues) {
      const auto bits = static_cast<uint64_t>(static_cast<uint32_t>(c));
      if (bits == 0 || (v & bits) != bits) continue;
      covered |= bits;
      int64_t m = 0;
      if (lookup_musa(Pair<E>::kTable, c, m)) result |= static_cast<uint32_t>(m);
    }
    if ((v & ~covered) != 0) return false;
  } else {
    for (const EnumEntry& e : Pair<E>::kTable) {
      const auto bits = static_cast<uint64_t>(static_cast<uint32_t>(e.musa));
      if (bits != 0 && (v & bits) == bits) result |= static_cast<uint32_t>(e.cuda);
    }
  }
  out = static_cast<int64_t>(result);
  return true;
}

// The size of an enum-valued attribute (the same on both sides: muBLASLt's declarations mirror
// cuBLASLt's types).
size_t value_size(Value kind) {
  switch (kind) {
    case Value::kInnerShape:
    case Value::kClusterShape:
      return sizeof(uint16_t);
    case Value::kTileArray:
    case Value::kStagesArray:
    case Value::kBytes:
      return 0;
    default:
      return sizeof(uint32_t);
  }
}

int64_t read_value(const void* buf, Value kind) {
  if (value_size(kind) == sizeof(uint16_t)) {
    uint16_t v;
    std::memcpy(&v, buf, sizeof(v));
    return v;
  }
  switch (kind) {
    case Value::kReductionMask:
    case Value::kPointerModeMask:
    case Value::kEpilogueMask: {
      uint32_t v;
      std::memcpy(&v, buf, sizeof(v));
      return v;
    }
    default: {
      int32_t v;  // enums held in int32_t or uint32_t: valid values are non-negative either way
      std::memcpy(&v, buf, sizeof(v));
      return v;
    }
  }
}

void write_value(void* buf, Value kind, int64_t v) {
  if (value_size(kind) == sizeof(uint16_t)) {
    const auto u = static_cast<uint16_t>(v);
    std::memcpy(buf, &u, sizeof(u));
  } else {
    const auto u = static_cast<uint32_t>(v);
    std::memcpy(buf, &u, sizeof(u));
  }
}

// One value of `kind`, CUDA -> MUSA or back. false: no counterpart.
bool translate_value(Value kind, int64_t v, bool to_musa, int64_t& out) {
  switch (kind) {
    case Value::kBytes:
    case Value::kTileArray:
    case Value::kStagesArray:
      out = v;
      return true;
    case Value::kOperation:
      return enum_value<cublasOperation_t>(v, to_musa, out);
    case Value::kComputeType:
      return enum_value<cublasComputeType_t>(v, to_musa, out);
    case Value::kDataType:
      return enum_value<cudaDataType_t>(v, to_musa, out);
    case Value::kDataTypeOrDefault:
      if (v == -1) {
        out = -1;
        return true;
      }
      return enum_value<cudaDataType_t>(v, to_musa, out);
    case Value::kPointerMode:
      return enum_value<cublasLtPointerMode_t>(v, to_musa, out);
    case Value::kFillMode:
      return enum_value<cublasFillMode_t>(v, to_musa, out);
    case Value::kEpilogue:
      return enum_value<cublasLtEpilogue_t>(v, to_musa, out);
    case Value::kOrder:
      return enum_value<cublasLtOrder_t>(v, to_musa, out);
    case Value::kBatchMode:
      return enum_value<cublasLtBatchMode_t>(v, to_musa, out);
    case Value::kSearchMode:
      return enum_value<cublasLtMatmulSearch_t>(v, to_musa, out);
    case Value::kReductionScheme:
      return enum_value<cublasLtReductionScheme_t>(v, to_musa, out);
    case Value::kTile:
      return enum_value<cublasLtMatmulTile_t>(v, to_musa, out);
    case Value::kStages:
      return enum_value<cublasLtMatmulStages_t>(v, to_musa, out);
    case Value::kInnerShape:
      return enum_value<cublasLtMatmulInnerShape_t>(v, to_musa, out);
    case Value::kClusterShape:
      return enum_value<cublasLtClusterShape_t>(v, to_musa, out);
    case Value::kScaleMode:  // a muBLASLt without scale modes has no pair: nothing translates
#ifdef TORCHADA_PAIR_cublasLtMatmulMatrixScale_t
      return enum_value<cublasLtMatmulMatrixScale_t>(v, to_musa, out);
#else
      return false;
#endif
    case Value::kReductionMask:
      return mask_value<cublasLtReductionScheme_t>(static_cast<uint64_t>(v), to_musa, out);
    case Value::kPointerModeMask:
      return mask_value<cublasLtPointerModeMask_t>(static_cast<uint64_t>(v), to_musa, out);
    case Value::kEpilogueMask:
      return mask_value<cublasLtEpilogue_t>(static_cast<uint64_t>(v), to_musa, out);
  }
  return false;
}

// ---- Refusals (logged with the attribute's name, counted)

cublasStatus_t refuse(Fn id, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
cublasStatus_t refuse(Fn id, const char* fmt, ...) {
  char reason[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(reason, sizeof(reason), fmt, ap);
  va_end(ap);
  TORCHADA_LOG(kWarn, "%s: %s: CUBLAS_STATUS_INVALID_VALUE", kFnNames[static_cast<int>(id)],
               reason);
  note_error(id);
  return CUBLAS_STATUS_INVALID_VALUE;
}

// Valid cuBLASLt values muBLASLt has no counterpart for, refused as unsupported rather than
// invalid: scale modes (the simulator's muBLASLt lacks the block-scaled ones but MXFP8: NVFP4's
// and the 128-element blocks; the shim computes the last for A and B, and MXFP8 output scales,
// noted before these are consulted: block_scaled.cc). cuBLASLt's IMMA orders have none either: they
// are emulated (emulated_layouts.cc), recorded by cublasLtMatrixLayoutSetAttribute.
struct MissingValue {
  const char* name = nullptr;  // null: not a valid cuBLASLt value of this kind
  const char* why = nullptr;
  unsigned log_bit = 0;  // of the log-once mask
};
MissingValue missing_value(Value kind, int64_t v) {
#define TORCHADA_CASE(value, why, bit) \
  case value:                          \
    return MissingValue{#value, why, bit};
  constexpr const char* kScale = "a scale mode muBLASLt does not have";
  if (kind == Value::kScaleMode) {
    switch (v) {
      TORCHADA_CASE(CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, kScale, 8)
      TORCHADA_CASE(CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3, kScale, 9)
      TORCHADA_CASE(CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0, kScale, 10)
      TORCHADA_CASE(CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F, kScale, 11)
      TORCHADA_CASE(CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, kScale, 12)
      TORCHADA_CASE(CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, kScale, 13)
#if CUBLAS_VER_MAJOR >= 13
      TORCHADA_CASE(CUBLASLT_MATMUL_MATRIX_SCALE_PER_BATCH_SCALAR_32F, kScale, 14)
#endif
      default:
        break;
    }
  }
#undef TORCHADA_CASE
  return MissingValue{};
}

// Such a value: unsupported, named once per value, counted (TORCHADA_STRICT=1 aborts).
cublasStatus_t refuse_missing_value(Fn id, const AttrInfo& info, const MissingValue& m) {
  static std::atomic<uint32_t> logged{0};
  const uint32_t bit = uint32_t{1} << m.log_bit;
  if ((logged.fetch_or(bit, std::memory_order_relaxed) & bit) == 0)
    TORCHADA_LOG(kWarn, "%s: %s = %s (%s): CUBLAS_STATUS_NOT_SUPPORTED (logged once)",
                 kFnNames[static_cast<int>(id)], info.name, m.name, m.why);
  note_unsupported(id, nullptr, /*logged=*/true);
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

// ---- The generic Set / Get

template <class Attr>
struct Family {
  const AttrInfo* infos;
  std::size_t count;
};

template <class Attr, std::size_t N>
constexpr Family<Attr> family(const AttrInfo (&infos)[N]) {
  static_assert(N <= 64, "refusals are logged once per attribute through a 64-bit mask");
  return Family<Attr>{infos, N};
}

// Which attributes of each family muBLASLt has refused, per direction ([0] Get, [1] Set): bit i
// is the family's table entry i. Static storage, no constructor: usable at any time.
template <class Attr>
std::atomic<uint64_t> g_refusals_logged[2];

// muBLASLt answered a failure for an attribute it has: its refusal (NOT_IMPLEMENTED, cuBLAS's
// NOT_SUPPORTED) names the attribute once per direction in the log and counts as refused by the
// backend; any failure is counted.
template <class Attr>
cublasStatus_t attribute_failed(Fn id, const Family<Attr>& fam, const AttrInfo& info, bool set,
                                cublasStatus_t s) {
  if (s != CUBLAS_STATUS_NOT_SUPPORTED) return CublasLtLib::fail(id, s);
  const uint64_t bit = uint64_t{1} << static_cast<unsigned>(&info - fam.infos);
  const bool first =
      (g_refusals_logged<Attr>[set ? 1 : 0].fetch_or(bit, std::memory_order_relaxed) & bit) == 0;
  if (first)
    TORCHADA_LOG(kWarn,
                 "%s: muBLASLt does not support %s%s: CUBLAS_STATUS_NOT_SUPPORTED (logged once)",
                 kFnNames[static_cast<int>(id)], info.name, set ? " with this value" : "");
  note_backend_refusal(id, "muBLASLt", nullptr, /*logged=*/true);
  note_error(id);
  return s;
}

// The attribute's entry and its muBLASLt id; null (refused, logged) when either is missing.
template <class Attr>
const AttrInfo* resolve(Fn id, const Family<Attr>& fam, Attr attr,
                        typename Pair<Attr>::Musa& musa_attr) {
  const int a = static_cast<int>(attr);
  const AttrInfo* info = nullptr;
  for (std::size_t i = 0; i < fam.count; ++i)
    if (fam.infos[i].value == a) info = &fam.infos[i];
  if (info == nullptr) {
    refuse(id, "attribute %d is not one of this call's cuBLASLt attributes", a);
    return nullptr;
  }
  int64_t m = 0;
  if (!lookup_musa(Pair<Attr>::kTable, a, m)) {
    refuse(id, "%s has no muBLASLt counterpart", info->name);
    return nullptr;
  }
  musa_attr = static_cast<typename Pair<Attr>::Musa>(m);
  return info;
}

// set(musa_attr, buf, size) -> mublasStatus_t
template <class Attr, class SetFn>
cublasStatus_t set_attribute(Fn id, const Family<Attr>& fam, Attr attr, const void* buf,
                             size_t sizeInBytes, SetFn set) {
  typename Pair<Attr>::Musa musa_attr{};
  const AttrInfo* info = resolve(id, fam, attr, musa_attr);
  if (info == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  if (info->kind == Value::kBytes) {
    const cublasStatus_t s = CublasLtLib::status(set(musa_attr, buf, sizeInBytes));
    return s == CUBLAS_STATUS_SUCCESS ? s : attribute_failed(id, fam, *info, true, s);
  }
  const size_t size = value_size(info->kind);
  if (buf == nullptr || size == 0 || sizeInBytes != size)
    return refuse(id, "%s needs a buffer of exactly %zu bytes", info->name, size);
  const int64_t v = read_value(buf, info->kind);
  int64_t m = 0;
  if (!translate_value(info->kind, v, true, m)) {
    const MissingValue missing = missing_value(info->kind, v);
    if (missing.name != nullptr) return refuse_missing_value(id, *info, missing);
    return refuse(id, "%s: the value %lld has no muBLASLt counterpart", info->name,
                  static_cast<long long>(v));
  }
  unsigned char local[sizeof(uint64_t)] = {};
  write_value(local, info->kind, m);
  const cublasStatus_t s = CublasLtLib::status(set(musa_attr, local, size));
  return s == CUBLAS_STATUS_SUCCESS ? s : attribute_failed(id, fam, *info, true, s);
}

// Capability arrays (tile and stage ids): element by element; ids cuBLASLt cannot name are left
// out (nothing could select them).
template <class Attr, class GetFn, class MusaAttr>
cublasStatus_t get_array(Fn id, const Family<Attr>& fam, const AttrInfo& info, MusaAttr musa_attr,
                         void* buf, size_t sizeInBytes, size_t* sizeWritten, GetFn get) {
  constexpr size_t kMax = 256;  // more than either enum has enumerators
  uint32_t local[kMax];
  const size_t n = sizeInBytes / sizeof(uint32_t);
  if (buf == nullptr || n == 0)
    return refuse(id, "%s needs a buffer of at least %zu bytes", info.name, sizeof(uint32_t));
  size_t written = 0;
  const cublasStatus_t s = CublasLtLib::status(
      get(musa_attr, local, (n < kMax ? n : kMax) * sizeof(uint32_t), &written));
  if (s != CUBLAS_STATUS_SUCCESS) return attribute_failed(id, fam, info, false, s);
  const size_t got = (written < sizeof(local) ? written : sizeof(local)) / sizeof(uint32_t);
  const Value element = info.kind == Value::kTileArray ? Value::kTile : Value::kStages;
  size_t out = 0;
  for (size_t i = 0; i < got && out < n; ++i) {
    int64_t c = 0;
    if (!translate_value(element, local[i], false, c)) {
      TORCHADA_LOG(kDebug, "%s: %s: muBLASLt's id %u has no cuBLASLt counterpart, left out",
                   kFnNames[static_cast<int>(id)], info.name, local[i]);
      continue;
    }
    const auto u = static_cast<uint32_t>(c);
    std::memcpy(static_cast<unsigned char*>(buf) + out * sizeof(u), &u, sizeof(u));
    ++out;
  }
  if (sizeWritten != nullptr) *sizeWritten = out * sizeof(uint32_t);
  return CUBLAS_STATUS_SUCCESS;
}

// get(musa_attr, buf, size, sizeWritten) -> mublasStatus_t
template <class Attr, class GetFn>
cublasStatus_t get_attribute(Fn id, const Family<Attr>& fam, Attr attr, void* buf,
                             size_t sizeInBytes, size_t* sizeWritten, GetFn get) {
  typename Pair<Attr>::Musa musa_attr{};
  const AttrInfo* info = resolve(id, fam, attr, musa_attr);
  if (info == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  // Plain values and size queries: muBLASLt answers (the sizes are the same on both sides).
  if (info->kind == Value::kBytes || sizeInBytes == 0) {
    const cublasStatus_t s = CublasLtLib::status(get(musa_attr, buf, sizeInBytes, sizeWritten));
    return s == CUBLAS_STATUS_SUCCESS ? s : attribute_failed(id, fam, *info, false, s);
  }
  if (info->kind == Value::kTileArray || info->kind == Value::kStagesArray)
    return get_array(id, fam, *info, musa_attr, buf, sizeInBytes, sizeWritten, get);
  const size_t size = value_size(info->kind);
  if (buf == nullptr || sizeInBytes != size)
    return refuse(id, "%s needs a buffer of exactly %zu bytes", info->name, size);
  unsigned char local[sizeof(uint64_t)] = {};
  size_t written = 0;
  const cublasStatus_t s = CublasLtLib::status(get(musa_attr, local, size, &written));
  if (s != CUBLAS_STATUS_SUCCESS) return attribute_failed(id, fam, *info, false, s);
  const int64_t m = read_value(local, info->kind);
  int64_t c = 0;
  if (!translate_value(info->kind, m, false, c)) {
    TORCHADA_LOG(kWarn,
                 "%s: %s: muBLASLt reports the value %lld, which cuBLASLt cannot name: "
                 "CUBLAS_STATUS_NOT_SUPPORTED",
                 kFnNames[static_cast<int>(id)], info->name, static_cast<long long>(m));
    note_error(id);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  write_value(buf, info->kind, c);
  if (sizeWritten != nullptr) *sizeWritten = size;
  return CUBLAS_STATUS_SUCCESS;
}

const MublasLtTable& lt() { return mublasLt_backend().table; }

// An attribute the shim records (layout_notes, desc_notes), read back: a size query, or a buffer
// of exactly the value's size.
template <class T>
cublasStatus_t answer_recorded(Fn id, const char* name, T value, void* buf, size_t sizeInBytes,
                               size_t* sizeWritten) {
  if (sizeInBytes == 0 && sizeWritten != nullptr) {
    *sizeWritten = sizeof(value);
    return CUBLAS_STATUS_SUCCESS;
  }
  if (buf == nullptr || sizeInBytes != sizeof(value))
    return refuse(id, "%s needs a buffer of exactly %zu bytes", name, sizeof(value));
  std::memcpy(buf, &value, sizeof(value));
  if (sizeWritten != nullptr) *sizeWritten = sizeof(value);
  return CUBLAS_STATUS_SUCCESS;
}

// D's output scales (CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE / _POINTER), which muBLASLt lacks:
// noted on the descriptor, computed by the shim (block_scaled.cc). Modes: SCALAR_32F (the
// default: no output scales) and VEC32_UE8M0 (MXFP8); cuBLASLt's other modes are refused as
// unsupported, named.
cublasStatus_t set_d_out(Fn id, cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                         const void* buf, size_t sizeInBytes) {
  bool noted = false;
  if (attr == CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER) {
    void* p = nullptr;
    if (buf == nullptr || sizeInBytes != sizeof(p))
      return refuse(id,
                    "CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER needs a buffer of exactly %zu bytes",
                    sizeof(p));
    std::memcpy(&p, buf, sizeof(p));
    noted = desc_notes::set_d_out_scale(desc, p);
  } else {
    int32_t mode = 0;
    if (buf == nullptr || sizeInBytes != sizeof(mode))
      return refuse(id, "CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE needs a buffer of exactly %zu bytes",
                    sizeof(mode));
    std::memcpy(&mode, buf, sizeof(mode));
    if (mode == CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F) {
      noted = desc_notes::set_d_out_mode(desc, -1);
    } else if (mode == CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0) {
      noted = desc_notes::set_d_out_mode(desc, mode);
    } else {
      const MissingValue missing = missing_value(Value::kScaleMode, mode);
      if (missing.name == nullptr)
        return refuse(id, "CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE: %d is not a scale mode", mode);
      for (const AttrInfo& info : kDescAttrs)
        if (info.value == CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE)
          return refuse_missing_value(id, info, missing);
    }
  }
  if (!noted) {
    note_unsupported(id, "more matmul descriptors with noted settings at once than the shim notes");
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

namespace impl {

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                              cublasLtMatmulDescAttributes_t attr, const void* buf,
                                              size_t sizeInBytes) {
  constexpr Fn id = Fn::k_cublasLtMatmulDescSetAttribute;
  const auto fn = lt().mublasLtMatmulDescSetAttribute;
  if (fn == nullptr) return CublasLtLib::missing(id);
  if (attr == CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE ||
      attr == CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER)
    return set_d_out(id, matmulDesc, attr, buf, sizeInBytes);
  // A's or B's 128-element / 128 x 128 block scaling, which muBLASLt lacks: noted (block_scaled.cc
  // computes it), muBLASLt's descriptor set to SCALAR_32F; any other mode forgets the note.
  if ((attr == CUBLASLT_MATMUL_DESC_A_SCALE_MODE || attr == CUBLASLT_MATMUL_DESC_B_SCALE_MODE) &&
      buf != nullptr && sizeInBytes == sizeof(int32_t)) {
    int32_t mode = 0;
    std::memcpy(&mode, buf, sizeof(mode));
    const int which = attr == CUBLASLT_MATMUL_DESC_A_SCALE_MODE ? 0 : 1;
    const bool blockwise = mode == CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F ||
                           mode == CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F ||
                           mode == CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
    if (!desc_notes::set_ab_mode(matmulDesc, which, blockwise ? mode : -1)) {
      note_unsupported(id,
                       "more matmul descriptors with noted settings at once than the shim notes");
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    static const int32_t kScalar = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    if (blockwise) buf = &kScalar;
  }
#if CUBLAS_VER_MAJOR >= 13
  // The emulation descriptor, which muBLASLt lacks: noted (emulation.cc), changes no result.
  if (attr == CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR) {
    void* e = nullptr;
    if (buf == nullptr || sizeInBytes != sizeof(e))
      return refuse(id,
                    "CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR needs a buffer of exactly %zu bytes",
                    sizeof(e));
    std::memcpy(&e, buf, sizeof(e));
    if (!desc_notes::set_emulation(matmulDesc, e)) {
      note_unsupported(
          id, "more matmul descriptors with emulation settings at once than the shim notes");
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return CUBLAS_STATUS_SUCCESS;
  }
#endif
  const cublasStatus_t s =
      set_attribute(id, family<cublasLtMatmulDescAttributes_t>(kDescAttrs), attr, buf, sizeInBytes,
                    [&](auto a, const void* b, size_t n) {
                      return fn(convert<mublasLtMatmulDesc_t>(matmulDesc), a, b, n);
                    });
  // An emulated compute type reached muBLASLt as its native one: noted, to be read back as set.
  if (s == CUBLAS_STATUS_SUCCESS && attr == CUBLASLT_MATMUL_DESC_COMPUTE_TYPE) {
    int32_t compute = 0;
    std::memcpy(&compute, buf, sizeof(compute));
    if (!desc_notes::set_compute_type(matmulDesc, compute)) {
      note_unsupported(
          id, "more matmul descriptors with emulation settings at once than the shim notes");
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
  }
  return s;
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                              cublasLtMatmulDescAttributes_t attr, void* buf,
                                              size_t sizeInBytes, size_t* sizeWritten) {
  constexpr Fn id = Fn::k_cublasLtMatmulDescGetAttribute;
  const auto fn = lt().mublasLtMatmulDescGetAttribute;
  if (fn == nullptr) return CublasLtLib::missing(id);
  // What the shim notes (emulation.cc) it answers itself.
  const desc_notes::Note note = desc_notes::get(matmulDesc);
  if (attr == CUBLASLT_MATMUL_DESC_COMPUTE_TYPE && note.compute_type >= 0)
    return answer_recorded(id, "CUBLASLT_MATMUL_DESC_COMPUTE_TYPE", note.compute_type, buf,
                           sizeInBytes, sizeWritten);
  for (int which = 0; which < 2; ++which) {
    const auto mode_attr =
        which == 0 ? CUBLASLT_MATMUL_DESC_A_SCALE_MODE : CUBLASLT_MATMUL_DESC_B_SCALE_MODE;
    if (attr == mode_attr && note.ab_mode[which] >= 0)
      return answer_recorded(
          id,
          which == 0 ? "CUBLASLT_MATMUL_DESC_A_SCALE_MODE" : "CUBLASLT_MATMUL_DESC_B_SCALE_MODE",
          note.ab_mode[which], buf, sizeInBytes, sizeWritten);
  }
  if (attr == CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE)
    return answer_recorded(
        id, "CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE",
        note.d_out_mode < 0 ? int32_t{CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F} : note.d_out_mode,
        buf, sizeInBytes, sizeWritten);
  if (attr == CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER)
    return answer_recorded(id, "CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER", note.d_out_scale, buf,
                           sizeInBytes, sizeWritten);
#if CUBLAS_VER_MAJOR >= 13
  if (attr == CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR)
    return answer_recorded(id, "CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR", note.emulation, buf,
                           sizeInBytes, sizeWritten);
#endif
  return get_attribute(id, family<cublasLtMatmulDescAttributes_t>(kDescAttrs), attr, buf,
                       sizeInBytes, sizeWritten, [&](auto a, void* b, size_t n, size_t* w) {
                         return fn(convert<mublasLtMatmulDesc_t>(matmulDesc), a, b, n, w);
                       });
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, size_t sizeInBytes) {
  constexpr Fn id = Fn::k_cublasLtMatrixLayoutSetAttribute;
  const auto fn = lt().mublasLtMatrixLayoutSetAttribute;
  if (fn == nullptr) return CublasLtLib::missing(id);
  const auto set = [&](cublasLtMatrixLayoutAttribute_t a, const void* b, size_t size) {
    return set_attribute(id, family<cublasLtMatrixLayoutAttribute_t>(kLayoutAttrs), a, b, size,
                         [&](auto m, const void* mb, size_t n) {
                           return fn(convert<mublasLtMatrixLayout_t>(matLayout), m, mb, n);
                         });
  };
  // NVFP4's element type, which MUSA lacks: an FP8 stand-in, noted (matmul.cc); any other type
  // forgets it.
  if (attr == CUBLASLT_MATRIX_LAYOUT_TYPE && buf != nullptr && sizeInBytes == sizeof(uint32_t)) {
    uint32_t type = 0;
    std::memcpy(&type, buf, sizeof(type));
    const bool fp4 = type == CUDA_R_4F_E2M1;
    const uint32_t stand_in = CUDA_R_8F_E4M3;
    const cublasStatus_t s = set(attr, fp4 ? &stand_in : buf, sizeInBytes);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    if (!layout_notes::set_fp4(matLayout, fp4)) {
      note_unsupported(id, "more CUDA_R_4F_E2M1 layouts at once than the shim records");
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return s;
  }
  // Pointer-array batches, which muBLASLt lacks: its layout stays strided, the shim records the
  // mode (emulated by cublasLtMatmul, matmul.cc). Any other mode forgets it.
  if (attr == CUBLASLT_MATRIX_LAYOUT_BATCH_MODE && buf != nullptr &&
      sizeInBytes == sizeof(uint32_t)) {
    uint32_t mode = 0;
    std::memcpy(&mode, buf, sizeof(mode));
    if (mode == CUBLASLT_BATCH_MODE_POINTER_ARRAY) {
      const uint32_t strided = CUBLASLT_BATCH_MODE_STRIDED;
      const cublasStatus_t s = set(attr, &strided, sizeof(strided));
      if (s != CUBLAS_STATUS_SUCCESS) return s;
      if (!layout_notes::set_pointer_array(matLayout, true)) {
        note_unsupported(id, "more pointer-array layouts at once than the shim records");
        return CUBLAS_STATUS_NOT_SUPPORTED;
      }
      return s;
    }
    const cublasStatus_t s = set(attr, buf, sizeInBytes);
    if (s == CUBLAS_STATUS_SUCCESS) layout_notes::set_pointer_array(matLayout, false);
    return s;
  }
  // A plane offset (planar complex) muBLASLt refuses: its layout stays interleaved, the shim
  // records the offset (emulated, emulated_layouts.cc). One muBLASLt takes is its own.
  if (attr == CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET && buf != nullptr &&
      sizeInBytes == sizeof(int64_t)) {
    int64_t bytes = 0;
    std::memcpy(&bytes, buf, sizeof(bytes));
    const mublasStatus_t native = fn(convert<mublasLtMatrixLayout_t>(matLayout),
                                     MUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, buf, sizeInBytes);
    if (native == MUBLAS_STATUS_SUCCESS || bytes == 0) {
      layout_notes::set_plane_offset(matLayout, 0);
      return native == MUBLAS_STATUS_SUCCESS ? CUBLAS_STATUS_SUCCESS : set(attr, buf, sizeInBytes);
    }
    if (native != MUBLAS_STATUS_NOT_IMPLEMENTED) return set(attr, buf, sizeInBytes);
    if (!layout_notes::set_plane_offset(matLayout, bytes)) {
      note_unsupported(id, "more emulated layouts at once than the shim records");
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return CUBLAS_STATUS_SUCCESS;
  }
  // The IMMA orders, which muBLASLt lacks: its layout says column-major (same rows, columns and
  // leading dimension), the shim records the order (emulated, emulated_layouts.cc). Any other order
  // forgets it.
  if (attr == CUBLASLT_MATRIX_LAYOUT_ORDER && buf != nullptr && sizeInBytes == sizeof(int32_t)) {
    int32_t order = 0;
    std::memcpy(&order, buf, sizeof(order));
    if (emulated_layouts::is_imma_order(order)) {
      const int32_t col = CUBLASLT_ORDER_COL;
      const cublasStatus_t s = set(attr, &col, sizeof(col));
      if (s != CUBLAS_STATUS_SUCCESS) return s;
      if (!layout_notes::set_imma_order(matLayout, order)) {
        note_unsupported(id, "more IMMA-ordered layouts at once than the shim records");
        return CUBLAS_STATUS_NOT_SUPPORTED;
      }
      return s;
    }
    const cublasStatus_t s = set(attr, buf, sizeInBytes);
    if (s == CUBLAS_STATUS_SUCCESS) layout_notes::set_imma_order(matLayout, 0);
    return s;
  }
  return set(attr, buf, sizeInBytes);
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t matLayout,
                                                cublasLtMatrixLayoutAttribute_t attr, void* buf,
                                                size_t sizeInBytes, size_t* sizeWritten) {
  const auto fn = lt().mublasLtMatrixLayoutGetAttribute;
  if (fn == nullptr) return CublasLtLib::missing(Fn::k_cublasLtMatrixLayoutGetAttribute);
  // What the shim records (layout_notes) it answers itself: muBLASLt's layout holds a stand-in
  // (strided batches, column-major order, no plane offset).
  const layout_notes::Note note = layout_notes::get(matLayout);
  if (attr == CUBLASLT_MATRIX_LAYOUT_BATCH_MODE && note.pointer_array)
    return answer_recorded(
        Fn::k_cublasLtMatrixLayoutGetAttribute, "CUBLASLT_MATRIX_LAYOUT_BATCH_MODE",
        uint32_t{CUBLASLT_BATCH_MODE_POINTER_ARRAY}, buf, sizeInBytes, sizeWritten);
  if (attr == CUBLASLT_MATRIX_LAYOUT_TYPE && note.fp4)
    return answer_recorded(Fn::k_cublasLtMatrixLayoutGetAttribute, "CUBLASLT_MATRIX_LAYOUT_TYPE",
                           uint32_t{CUDA_R_4F_E2M1}, buf, sizeInBytes, sizeWritten);
  if (attr == CUBLASLT_MATRIX_LAYOUT_ORDER && note.imma_order != 0)
    return answer_recorded(Fn::k_cublasLtMatrixLayoutGetAttribute, "CUBLASLT_MATRIX_LAYOUT_ORDER",
                           note.imma_order, buf, sizeInBytes, sizeWritten);
  if (attr == CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET && note.plane_offset != 0)
    return answer_recorded(Fn::k_cublasLtMatrixLayoutGetAttribute,
                           "CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET", note.plane_offset, buf,
                           sizeInBytes, sizeWritten);
  return get_attribute(Fn::k_cublasLtMatrixLayoutGetAttribute,
                       family<cublasLtMatrixLayoutAttribute_t>(kLayoutAttrs), attr, buf,
                       sizeInBytes, sizeWritten, [&](auto a, void* b, size_t n, size_t* w) {
                         return fn(convert<mublasLtMatrixLayout_t>(matLayout), a, b, n, w);
                       });
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void* buf, size_t sizeInBytes) {
  const auto fn = lt().mublasLtMatmulPreferenceSetAttribute;
  if (fn == nullptr) return CublasLtLib::missing(Fn::k_cublasLtMatmulPreferenceSetAttribute);
  return set_attribute(Fn::k_cublasLtMatmulPreferenceSetAttribute,
                       family<cublasLtMatmulPreferenceAttributes_t>(kPrefAttrs), attr, buf,
                       sizeInBytes, [&](auto a, const void* b, size_t n) {
                         return fn(convert<mublasLtMatmulPreference_t>(pref), a, b, n);
                       });
}

cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    void* buf, size_t sizeInBytes,
                                                    size_t* sizeWritten) {
  const auto fn = lt().mublasLtMatmulPreferenceGetAttribute;
  if (fn == nullptr) return CublasLtLib::missing(Fn::k_cublasLtMatmulPreferenceGetAttribute);
  return get_attribute(Fn::k_cublasLtMatmulPreferenceGetAttribute,
                       family<cublasLtMatmulPreferenceAttributes_t>(kPrefAttrs), attr, buf,
                       sizeInBytes, sizeWritten, [&](auto a, void* b, size_t n, size_t* w) {
                         return fn(convert<mublasLtMatmulPreference_t>(pref), a, b, n, w);
                       });
}

cublasStatus_t cublasLtMatrixTransformDescSetAttribute(cublasLtMatrixTransformDesc_t transformDesc,
                                                       cublasLtMatrixTransformDescAttributes_t attr,
                                                       const void* buf, size_t sizeInBytes) {
  const auto fn = lt().mublasLtMatrixTransformDescSetAttribute;
  if (fn == nullptr) return CublasLtLib::missing(Fn::k_cublasLtMatrixTransformDescSetAttribute);
  return set_attribute(Fn::k_cublasLtMatrixTransformDescSetAttribute,
                       family<cublasLtMatrixTransformDescAttributes_t>(kTransformAttrs), attr, buf,
                       sizeInBytes, [&](auto a, const void* b, size_t n) {
                         return fn(convert<mublasLtMatrixTransformDesc_t>(transformDesc), a, b, n);
                       });
}

cublasStatus_t cublasLtMatrixTransformDescGetAttribute(cublasLtMatrixTransformDesc_t transformDesc,
                                                       cublasLtMatrixTransformDescAttributes_t attr,
                                                       void* buf, size_t sizeInBytes,
                                                       size_t* sizeWritten) {
  const auto fn = lt().mublasLtMatrixTransformDescGetAttribute;
  if (fn == nullptr) return CublasLtLib::missing(Fn::k_cublasLtMatrixTransformDescGetAttribute);
  return get_attribute(Fn::k_cublasLtMatrixTransformDescGetAttribute,
                       family<cublasLtMatrixTransformDescAttributes_t>(kTransformAttrs), attr, buf,
                       sizeInBytes, sizeWritten, [&](auto a, void* b, size_t n, size_t* w) {
                         return fn(convert<mublasLtMatrixTransformDesc_t>(transformDesc), a, b, n,
                                   w);
                       });
}

cublasStatus_t cublasLtMatmulAlgoCapGetAttribute(const cublasLtMatmulAlgo_t* algo,
                                                 cublasLtMatmulAlgoCapAttributes_t attr, void* buf,
                                                 size_t sizeInBytes, size_t* sizeWritten) {
  const auto fn = lt().mublasLtMatmulAlgoCapGetAttribute;
  if (fn == nullptr) return CublasLtLib::missing(Fn::k_cublasLtMatmulAlgoCapGetAttribute);
  // The configuration layer's own capabilities (algos.cc), then muBLASLt's for the algorithm the
  // record was made from.
  cublasStatus_t answered = CUBLAS_STATUS_SUCCESS;
  if (algos::cap_answer(algo, attr, buf, sizeInBytes, sizeWritten, answered)) return answered;
  mublasLtMatmulAlgo_t base{};
  const mublasLtMatmulAlgo_t* musa_algo = convert<const mublasLtMatmulAlgo_t*>(algo);
  if (algo != nullptr && algos::musa_of(*algo, base, /*configured=*/false)) musa_algo = &base;
  const cublasStatus_t s = get_attribute(
      Fn::k_cublasLtMatmulAlgoCapGetAttribute, family<cublasLtMatmulAlgoCapAttributes_t>(kCapAttrs),
      attr, buf, sizeInBytes, sizeWritten,
      [&](auto a, void* b, size_t n, size_t* w) { return fn(musa_algo, a, b, n, w); });
  // Every algorithm takes pointer-array batches through the shim's emulation (matmul.cc).
  if (s == CUBLAS_STATUS_SUCCESS && attr == CUBLASLT_ALGO_CAP_POINTER_ARRAY_BATCH_SUPPORT &&
      buf != nullptr && sizeInBytes == sizeof(int32_t)) {
    const int32_t yes = 1;
    std::memcpy(buf, &yes, sizeof(yes));
  }
  return s;
}

// Configurations are the shim's records (algos.cc): recorded, read back, applied to muBLASLt's
// algorithm as far as it takes them.
cublasStatus_t cublasLtMatmulAlgoConfigSetAttribute(cublasLtMatmulAlgo_t* algo,
                                                    cublasLtMatmulAlgoConfigAttributes_t attr,
                                                    const void* buf, size_t sizeInBytes) {
  return algos::config_set(algo, attr, buf, sizeInBytes);
}

cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t* algo,
                                                    cublasLtMatmulAlgoConfigAttributes_t attr,
                                                    void* buf, size_t sizeInBytes,
                                                    size_t* sizeWritten) {
  return algos::config_get(algo, attr, buf, sizeInBytes, sizeWritten);
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
