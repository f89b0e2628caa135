// The simulator's one matmul algorithm: problem checks, heuristics, algorithm init/check and the
// capability/configuration attributes.
#include "internal.h"

#include <climits>
#include <initializer_list>

namespace lt {
namespace {

constexpr int kAlgoId = 0;

uint64_t numerical_flags(int32_t compute_type, int32_t a_type) {
  if (compute_kind(compute_type) == Kind::kI32) {  // exact integer products and sums
    return MUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32I | MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8I;
  }
  uint64_t f = MUBLASLT_NUMERICAL_IMPL_FLAGS_FMA;
  switch (compute_kind(compute_type)) {
    case Kind::kF64:
      f |= MUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_64F;
      break;
    default:
      f |= MUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32F;
      break;
  }
  switch (a_type) {
    case MUSA_R_16F:
      f |= MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16F;
      break;
    case MUSA_R_16BF:
      f |= MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16BF;
      break;
    case MUSA_R_64F:
      f |= MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_64F;
      break;
    case MUSA_R_8F_E4M3:
      f |= MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E4M3;
      break;
    case MUSA_R_8F_E5M2:
      f |= MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E5M2;
      break;
    default:
      f |= MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_32F;
      break;
  }
  return f;
}

bool load_algo(const mublasLtMatmulAlgo_t* algo, AlgoState* out) {
  if (algo == nullptr) return false;
  std::memcpy(out, algo->data, sizeof(*out));
  return out->magic == kAlgoMagic && out->id == kAlgoId;
}

void store_algo(mublasLtMatmulAlgo_t* algo, const AlgoState& s) {
  std::memset(algo->data, 0, sizeof(algo->data));
  std::memcpy(algo->data, &s, sizeof(s));
}

}  // namespace

// Layout consistency: leading dimension, sizes the BLAS calls can take.
mublasStatus_t check_layout(const LayoutState& l) {
  const uint64_t inner = l.order == MUBLASLT_ORDER_ROW ? l.cols : l.rows;
  if (l.ld < 0 || static_cast<uint64_t>(l.ld) < inner) return MUBLAS_STATUS_INVALID_VALUE;
  if (l.rows > INT_MAX || l.cols > INT_MAX || l.ld > INT_MAX) return MUBLAS_STATUS_NOT_IMPLEMENTED;
  if (l.batch_mode != MUBLASLT_BATCH_MODE_STRIDED || l.plane_offset != 0) {
    return MUBLAS_STATUS_NOT_IMPLEMENTED;
  }
  if (l.batch_count < 1) return MUBLAS_STATUS_INVALID_VALUE;
  return MUBLAS_STATUS_SUCCESS;
}

Kind compute_kind(int32_t compute_type) {
  switch (compute_type) {
    case MUBLAS_COMPUTE_32F:
    case MUBLAS_COMPUTE_32F_PEDANTIC:
    case MUBLAS_COMPUTE_32F_FAST_16F:
    case MUBLAS_COMPUTE_32F_FAST_16BF:
    case MUBLAS_COMPUTE_32F_FAST_TF32:
      return Kind::kF32;
    case MUBLAS_COMPUTE_64F:
    case MUBLAS_COMPUTE_64F_PEDANTIC:
      return Kind::kF64;
    case MUBLAS_COMPUTE_16F:
    case MUBLAS_COMPUTE_16F_PEDANTIC:
      return Kind::kF16;
    case MUBLAS_COMPUTE_32I:
    case MUBLAS_COMPUTE_32I_PEDANTIC:
      return Kind::kI32;
    default:
      return Kind::kNone;
  }
}

namespace {

// FP8 A/B (mublasLt.h, "FP8 matmuls"): cuBLASLt's combinations, with C's and D's types free.
mublasStatus_t check_fp8_types(int32_t compute_type, int32_t scale_type, int32_t a_type,
                               int32_t b_type, int32_t c_type, int32_t d_type) {
  const auto wide = [](int32_t t) {
    return t == MUSA_R_16F || t == MUSA_R_16BF || t == MUSA_R_32F;
  };
  const bool ok = compute_kind(compute_type) == Kind::kF32 && scale_type == MUSA_R_32F &&
                  is_fp8(a_type) && is_fp8(b_type) &&
                  !(a_type == MUSA_R_8F_E5M2 && b_type == MUSA_R_8F_E5M2) && wide(c_type) &&
                  (wide(d_type) || is_fp8(d_type));
  return ok ? MUBLAS_STATUS_SUCCESS : MUBLAS_STATUS_NOT_IMPLEMENTED;
}

// Scale pointers and AMAX_D: FP8 problems only; outer vectors and 32-element blocks for A and B
// only, blocks along K stored innermost and without batches; FP8 epilogues without aux or
// bias-gradient outputs.
mublasStatus_t check_fp8_scaling(const DescState& d, bool fp8, const LayoutState& a,
                                 const LayoutState& b) {
  const bool scaled = d.scale[0] != nullptr || d.scale[1] != nullptr || d.scale[2] != nullptr ||
                      d.scale[3] != nullptr || d.amax_d != nullptr;
  if (!fp8) return scaled ? MUBLAS_STATUS_INVALID_VALUE : MUBLAS_STATUS_SUCCESS;
  for (int i = 2; i < 4; ++i) {
    if (d.scale_mode[i] == MUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F ||
        d.scale_mode[i] == MUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0) {
      return MUBLAS_STATUS_INVALID_VALUE;
    }
  }
  // K innermost: op(A) = A^T of a column-major A (or A of a row-major one); op(B) = B likewise.
  const bool a_k_inner = (d.transa != MUBLAS_OP_N) == (a.order == MUBLASLT_ORDER_COL);
  const bool b_k_inner = (d.transb == MUBLAS_OP_N) == (b.order == MUBLASLT_ORDER_COL);
  const bool k_inner[2] = {a_k_inner, b_k_inner};
  for (int i = 0; i < 2; ++i) {
    if (d.scale_mode[i] == MUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 &&
        (!k_inner[i] || a.batch_count != 1)) {
      return MUBLAS_STATUS_NOT_IMPLEMENTED;
    }
  }
  const EpilogueInfo e = epilogue_info(d.epilogue);
  return e.uses_aux() || e.writes_bias() ? MUBLAS_STATUS_NOT_IMPLEMENTED : MUBLAS_STATUS_SUCCESS;
}

}  // namespace

mublasStatus_t check_types(int32_t compute_type, int32_t scale_type, int32_t a_type, int32_t b_type,
                           int32_t c_type, int32_t d_type) {
  if (is_fp8(a_type) || is_fp8(b_type)) {
    return check_fp8_types(compute_type, scale_type, a_type, b_type, c_type, d_type);
  }
  if (a_type != b_type || c_type != d_type) return MUBLAS_STATUS_NOT_IMPLEMENTED;
  if (is_complex(a_type) || is_complex(d_type)) {
    // Complex GEMMs (matmul_complex.cc): fp16 or fp32 parts with fp32 compute and a C_32F scale
    // (D of A's type or C_32F), or all C_64F with fp64 compute.
    const Kind k = compute_kind(compute_type);
    if (k == Kind::kF32) {
      return scale_type == MUSA_C_32F && (a_type == MUSA_C_16F || a_type == MUSA_C_32F) &&
                     (d_type == a_type || d_type == MUSA_C_32F)
                 ? MUBLAS_STATUS_SUCCESS
                 : MUBLAS_STATUS_NOT_IMPLEMENTED;
    }
    return k == Kind::kF64 && scale_type == MUSA_C_64F && a_type == MUSA_C_64F &&
                   d_type == MUSA_C_64F
               ? MUBLAS_STATUS_SUCCESS
               : MUBLAS_STATUS_NOT_IMPLEMENTED;
  }
  switch (compute_kind(compute_type)) {
    case Kind::kF32:
      if (scale_type != MUSA_R_32F) return MUBLAS_STATUS_NOT_IMPLEMENTED;
      if (a_type != MUSA_R_32F && a_type != MUSA_R_16F && a_type != MUSA_R_16BF) {
        return MUBLAS_STATUS_NOT_IMPLEMENTED;
      }
      return d_type == a_type || d_type == MUSA_R_32F ? MUBLAS_STATUS_SUCCESS
                                                      : MUBLAS_STATUS_NOT_IMPLEMENTED;
    case Kind::kF64:
      return scale_type == MUSA_R_64F && a_type == MUSA_R_64F && d_type == MUSA_R_64F
                 ? MUBLAS_STATUS_SUCCESS
                 : MUBLAS_STATUS_NOT_IMPLEMENTED;
    case Kind::kF16:
      return scale_type == MUSA_R_16F && a_type == MUSA_R_16F && d_type == MUSA_R_16F
                 ? MUBLAS_STATUS_SUCCESS
                 : MUBLAS_STATUS_NOT_IMPLEMENTED;
    case Kind::kI32:
      // cuBLASLt's int8 GEMMs: A/B 8I with C/D 32I and scale 32I, or C/D 8I and scale 32F.
      if (a_type != MUSA_R_8I) return MUBLAS_STATUS_NOT_IMPLEMENTED;
      return (scale_type == MUSA_R_32I && d_type == MUSA_R_32I) ||
                     (scale_type == MUSA_R_32F && d_type == MUSA_R_8I)
                 ? MUBLAS_STATUS_SUCCESS
                 : MUBLAS_STATUS_NOT_IMPLEMENTED;
    case Kind::kNone:
      break;
  }
  return MUBLAS_STATUS_NOT_IMPLEMENTED;
}

mublasStatus_t check_problem(const DescState& d, const LayoutState& a, const LayoutState& b,
                             const LayoutState& c, const LayoutState& dd) {
  for (const LayoutState* l : {&a, &b, &c, &dd}) {
    mublasStatus_t st = check_layout(*l);
    if (st != MUBLAS_STATUS_SUCCESS) return st;
  }
  // Dimensions: D is m x n, op(A) m x k, op(B) k x n, C like D.
  const uint64_t m = dd.rows, n = dd.cols;
  if (c.rows != m || c.cols != n) return MUBLAS_STATUS_INVALID_VALUE;
  const bool ta = d.transa != MUBLAS_OP_N, tb = d.transb != MUBLAS_OP_N;
  const uint64_t a_m = ta ? a.cols : a.rows, k = ta ? a.rows : a.cols;
  const uint64_t b_k = tb ? b.cols : b.rows, b_n = tb ? b.rows : b.cols;
  if (a_m != m || b_k != k || b_n != n) return MUBLAS_STATUS_INVALID_VALUE;
  if (a.batch_count != dd.batch_count || b.batch_count != dd.batch_count ||
      c.batch_count != dd.batch_count) {
    return MUBLAS_STATUS_INVALID_VALUE;
  }
  if (d.transc != MUBLAS_OP_N || d.fill_mode != MUBLAS_FILL_MODE_FULL) {
    return MUBLAS_STATUS_NOT_IMPLEMENTED;
  }
  mublasStatus_t st = check_types(d.compute_type, d.scale_type, static_cast<int32_t>(a.type),
                                  static_cast<int32_t>(b.type), static_cast<int32_t>(c.type),
                                  static_cast<int32_t>(dd.type));
  if (st != MUBLAS_STATUS_SUCCESS) return st;
  st = check_fp8_scaling(d, is_fp8(static_cast<int32_t>(a.type)), a, b);
  if (st != MUBLAS_STATUS_SUCCESS) return st;
  // Integer matmuls have no epilogue (as cuBLASLt's IMMA kernels); the rest applies to the
  // floating-point ones.
  if ((compute_kind(d.compute_type) == Kind::kI32 || is_complex(static_cast<int32_t>(a.type))) &&
      d.epilogue != MUBLASLT_EPILOGUE_DEFAULT) {
    return MUBLAS_STATUS_NOT_IMPLEMENTED;
  }
  // Complex GEMMs take host or device scalars (no alpha vectors).
  if (is_complex(static_cast<int32_t>(a.type)) && d.pointer_mode != MUBLASLT_POINTER_MODE_HOST &&
      d.pointer_mode != MUBLASLT_POINTER_MODE_DEVICE) {
    return MUBLAS_STATUS_NOT_IMPLEMENTED;
  }
  const EpilogueInfo e = epilogue_info(d.epilogue);
  const auto computable = [](int32_t t) {
    return data_type_size(t) != 0 && !is_fp8(t) && !is_int(t) && !is_complex(t);
  };
  if (e.uses_bias() && d.bias_data_type != -1 && !computable(d.bias_data_type)) {
    return MUBLAS_STATUS_NOT_IMPLEMENTED;
  }
  if (e.gelu_aux || e.dgelu) {
    if (d.aux_data_type != -1 && !computable(d.aux_data_type)) {
      return MUBLAS_STATUS_NOT_IMPLEMENTED;
    }
    // cuBLASLt's rules: GELU aux ld a multiple of 8, at least m; batch stride a multiple of 8.
    if (d.aux_ld < static_cast<int64_t>(m) || d.aux_ld % 8 != 0 || d.aux_batch_stride % 8 != 0) {
      return MUBLAS_STATUS_INVALID_VALUE;
    }
  }
  if (e.relu_mask()) {
    // ReLU bit mask: ld (bits) a multiple of 128, at least m; batch stride a multiple of 128.
    if (d.aux_ld < static_cast<int64_t>(m) || d.aux_ld % 128 != 0 ||
        d.aux_batch_stride % 128 != 0) {
      return MUBLAS_STATUS_INVALID_VALUE;
    }
  }
  if (d.pointer_mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO &&
      d.alpha_vector_batch_stride != 0) {
    return MUBLAS_STATUS_INVALID_VALUE;
  }
  return MUBLAS_STATUS_SUCCESS;
}

void default_algo(mublasLtMatmulAlgo_t* algo, int32_t compute_type, int32_t scale_type,
                  int32_t a_type, int32_t b_type, int32_t c_type, int32_t d_type) {
  AlgoState s{};
  s.magic = kAlgoMagic;
  s.id = kAlgoId;
  s.tile = MUBLASLT_MATMUL_TILE_UNDEFINED;
  s.stages = MUBLASLT_MATMUL_STAGES_UNDEFINED;
  s.splitk = 1;
  s.reduction = MUBLASLT_REDUCTION_SCHEME_NONE;
  s.inner_shape = MUBLASLT_MATMUL_INNER_SHAPE_UNDEFINED;
  s.cluster_shape = MUBLASLT_CLUSTER_SHAPE_AUTO;
  s.compute_type = compute_type;
  s.scale_type = scale_type;
  s.a_type = a_type;
  s.b_type = b_type;
  s.c_type = c_type;
  s.d_type = d_type;
  store_algo(algo, s);
}

mublasStatus_t check_algo(const mublasLtMatmulAlgo_t* algo, const DescState& d,
                          const LayoutState& a, const LayoutState& b, const LayoutState& c,
                          const LayoutState& dd) {
  AlgoState s;
  if (!load_algo(algo, &s)) return MUBLAS_STATUS_INVALID_VALUE;
  if (s.compute_type != d.compute_type || s.scale_type != d.scale_type ||
      s.a_type != static_cast<int32_t>(a.type) || s.b_type != static_cast<int32_t>(b.type) ||
      s.c_type != static_cast<int32_t>(c.type) || s.d_type != static_cast<int32_t>(dd.type)) {
    return MUBLAS_STATUS_INVALID_VALUE;
  }
  return MUBLAS_STATUS_SUCCESS;
}

}  // namespace lt

using lt::state;
using lt::valid;

namespace {

// Validates the handle and the four layouts and the descriptor shared by GetHeuristic and Check.
mublasStatus_t check_args(mublasLtHandle_t h, mublasLtMatmulDesc_t desc, mublasLtMatrixLayout_t a,
                          mublasLtMatrixLayout_t b, mublasLtMatrixLayout_t c,
                          mublasLtMatrixLayout_t d) {
  if (!valid(h)) return MUBLAS_STATUS_INVALID_HANDLE;
  if (!valid(desc) || !valid(a) || !valid(b) || !valid(c) || !valid(d)) {
    return MUBLAS_STATUS_INVALID_VALUE;
  }
  return lt::check_problem(*state(desc), *state(a), *state(b), *state(c), *state(d));
}

uint32_t type_alignment(int32_t t) {
  size_t s = lt::data_type_size(t);
  return s == 0 ? 1 : static_cast<uint32_t>(s);
}

}  // namespace

extern "C" {

MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoGetHeuristic(
    mublasLtHandle_t lightHandle, mublasLtMatmulDesc_t operationDesc, mublasLtMatrixLayout_t Adesc,
    mublasLtMatrixLayout_t Bdesc, mublasLtMatrixLayout_t Cdesc, mublasLtMatrixLayout_t Ddesc,
    mublasLtMatmulPreference_t preference, int requestedAlgoCount,
    mublasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount) {
  static const char* const kFn = "mublasLtMatmulAlgoGetHeuristic";
  if (!valid(lightHandle)) return lt::log_error(kFn, MUBLAS_STATUS_INVALID_HANDLE, "handle");
  if (requestedAlgoCount <= 0 || heuristicResultsArray == nullptr || returnAlgoCount == nullptr ||
      !valid(preference)) {
    return lt::log_error(kFn, MUBLAS_STATUS_INVALID_VALUE, "arguments");
  }
  *returnAlgoCount = 0;
  mublasStatus_t st = check_args(lightHandle, operationDesc, Adesc, Bdesc, Cdesc, Ddesc);
  if (st != MUBLAS_STATUS_SUCCESS) return lt::log_error(kFn, st, "problem");
  const lt::DescState& d = *state(operationDesc);
  const lt::PrefState& p = *state(preference);
  if (p.search_mode == MUBLASLT_SEARCH_LIMITED_BY_ALGO_ID) {
    lt::AlgoState s;
    if (!lt::load_algo(&heuristicResultsArray[0].algo, &s)) {
      return lt::log_error(kFn, MUBLAS_STATUS_INVALID_VALUE, "LIMITED_BY_ALGO_ID needs an algo");
    }
  }
  // Preference filters: the algorithm needs no workspace and no reduction; it needs its types'
  // natural alignment; it reports one wave and the numerical flags of numerical_flags().
  const int32_t types[4] = {
      static_cast<int32_t>(state(Adesc)->type), static_cast<int32_t>(state(Bdesc)->type),
      static_cast<int32_t>(state(Cdesc)->type), static_cast<int32_t>(state(Ddesc)->type)};
  for (int i = 0; i < 4; ++i) {
    if (p.min_alignment[i] < type_alignment(types[i])) {
      return lt::log_error(kFn, MUBLAS_STATUS_NOT_IMPLEMENTED, "alignment below element size");
    }
  }
  if ((lt::numerical_flags(d.compute_type, types[0]) & ~p.impl_mask) != 0 ||
      (p.max_waves > 0.0f && p.max_waves < 1.0f)) {
    return lt::log_error(kFn, MUBLAS_STATUS_NOT_IMPLEMENTED, "preferences exclude the algorithm");
  }
  mublasLtMatmulHeuristicResult_t& r = heuristicResultsArray[0];
  std::memset(&r, 0, sizeof(r));
  lt::default_algo(&r.algo, d.compute_type, d.scale_type, types[0], types[1], types[2], types[3]);
  r.workspaceSize = 0;
  r.state = MUBLAS_STATUS_SUCCESS;
  r.wavesCount = 1.0f;
  *returnAlgoCount = 1;
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoGetIds(mublasLtHandle_t lightHandle,
                                                     mublasComputeType_t computeType,
                                                     musaDataType_t scaleType, musaDataType_t Atype,
                                                     musaDataType_t Btype, musaDataType_t Ctype,
                                                     musaDataType_t Dtype, int requestedAlgoCount,
                                                     int algoIdsArray[], int* returnAlgoCount) {
  if (!valid(lightHandle)) return MUBLAS_STATUS_INVALID_HANDLE;
  if (requestedAlgoCount <= 0 || algoIdsArray == nullptr || returnAlgoCount == nullptr) {
    return MUBLAS_STATUS_INVALID_VALUE;
  }
  *returnAlgoCount = 0;
  if (lt::check_types(computeType, scaleType, Atype, Btype, Ctype, Dtype) ==
      MUBLAS_STATUS_SUCCESS) {
    algoIdsArray[0] = lt::kAlgoId;
    *returnAlgoCount = 1;
  }
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoInit(mublasLtHandle_t lightHandle,
                                                   mublasComputeType_t computeType,
                                                   musaDataType_t scaleType, musaDataType_t Atype,
                                                   musaDataType_t Btype, musaDataType_t Ctype,
                                                   musaDataType_t Dtype, int algoId,
                                                   mublasLtMatmulAlgo_t* algo) {
  if (!valid(lightHandle)) return MUBLAS_STATUS_INVALID_HANDLE;
  if (algo == nullptr || algoId != lt::kAlgoId) return MUBLAS_STATUS_INVALID_VALUE;
  mublasStatus_t st = lt::check_types(computeType, scaleType, Atype, Btype, Ctype, Dtype);
  if (st != MUBLAS_STATUS_SUCCESS) return st;
  lt::default_algo(algo, computeType, scaleType, Atype, Btype, Ctype, Dtype);
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoCheck(
    mublasLtHandle_t lightHandle, mublasLtMatmulDesc_t operationDesc, mublasLtMatrixLayout_t Adesc,
    mublasLtMatrixLayout_t Bdesc, mublasLtMatrixLayout_t Cdesc, mublasLtMatrixLayout_t Ddesc,
    const mublasLtMatmulAlgo_t* algo, mublasLtMatmulHeuristicResult_t* result) {
  if (!valid(lightHandle)) return MUBLAS_STATUS_INVALID_HANDLE;
  if (algo == nullptr || result == nullptr) return MUBLAS_STATUS_INVALID_VALUE;
  mublasStatus_t st = check_args(lightHandle, operationDesc, Adesc, Bdesc, Cdesc, Ddesc);
  if (st != MUBLAS_STATUS_SUCCESS) return st;
  st = lt::check_algo(algo, *state(operationDesc), *state(Adesc), *state(Bdesc), *state(Cdesc),
                      *state(Ddesc));
  if (st != MUBLAS_STATUS_SUCCESS) return st;
  // `algo` may point to result->algo, which is never written.
  result->workspaceSize = 0;
  result->state = MUBLAS_STATUS_SUCCESS;
  result->wavesCount = 1.0f;
  std::memset(result->reserved, 0, sizeof(result->reserved));
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoCapGetAttribute(
    const mublasLtMatmulAlgo_t* algo, mublasLtMatmulAlgoCapAttributes_t attr, void* buf,
    size_t sizeInBytes, size_t* sizeWritten) {
  lt::AlgoState s;
  if (!lt::load_algo(algo, &s)) return MUBLAS_STATUS_INVALID_VALUE;
  int32_t i32 = 0;
  uint32_t u32 = 0;
  uint64_t u64 = 0;
  switch (attr) {
    case MUBLASLT_ALGO_CAP_SPLITK_SUPPORT:
    case MUBLASLT_ALGO_CAP_UPLO_SUPPORT:
    case MUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX:
    case MUBLASLT_ALGO_CAP_CUSTOM_MEMORY_ORDER:
    case MUBLASLT_ALGO_CAP_LD_NEGATIVE:
    case MUBLASLT_ALGO_CAP_POINTER_ARRAY_BATCH_SUPPORT:
    case MUBLASLT_ALGO_CAP_FLOATING_POINT_EMULATION_SUPPORT:
      i32 = 0;
      return lt::get_value(&i32, sizeof(i32), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CAP_STRIDED_BATCH_SUPPORT:
    case MUBLASLT_ALGO_CAP_OUT_OF_PLACE_RESULT_SUPPORT:
      i32 = 1;
      return lt::get_value(&i32, sizeof(i32), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK:
    case MUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT:
      u32 = 0;
      return lt::get_value(&u32, sizeof(u32), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CAP_POINTER_MODE_MASK:
      u32 = MUBLASLT_POINTER_MODE_MASK_HOST | MUBLASLT_POINTER_MODE_MASK_DEVICE |
            MUBLASLT_POINTER_MODE_MASK_DEVICE_VECTOR |
            MUBLASLT_POINTER_MODE_MASK_ALPHA_DEVICE_VECTOR_BETA_ZERO |
            MUBLASLT_POINTER_MODE_MASK_ALPHA_DEVICE_VECTOR_BETA_HOST;
      return lt::get_value(&u32, sizeof(u32), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CAP_EPILOGUE_MASK:
      u32 = 0;
      if (lt::compute_kind(s.compute_type) == lt::Kind::kI32) {  // no epilogue (check_problem)
        u32 = MUBLASLT_EPILOGUE_DEFAULT;
        return lt::get_value(&u32, sizeof(u32), buf, sizeInBytes, sizeWritten);
      }
      for (uint32_t e :
           {MUBLASLT_EPILOGUE_DEFAULT, MUBLASLT_EPILOGUE_RELU, MUBLASLT_EPILOGUE_RELU_AUX,
            MUBLASLT_EPILOGUE_BIAS, MUBLASLT_EPILOGUE_RELU_BIAS, MUBLASLT_EPILOGUE_RELU_AUX_BIAS,
            MUBLASLT_EPILOGUE_DRELU, MUBLASLT_EPILOGUE_DRELU_BGRAD, MUBLASLT_EPILOGUE_GELU,
            MUBLASLT_EPILOGUE_GELU_AUX, MUBLASLT_EPILOGUE_GELU_BIAS,
            MUBLASLT_EPILOGUE_GELU_AUX_BIAS, MUBLASLT_EPILOGUE_DGELU, MUBLASLT_EPILOGUE_DGELU_BGRAD,
            MUBLASLT_EPILOGUE_BGRADA, MUBLASLT_EPILOGUE_BGRADB}) {
        u32 |= e;
      }
      return lt::get_value(&u32, sizeof(u32), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS:
      u64 = lt::numerical_flags(s.compute_type, s.a_type);
      return lt::get_value(&u64, sizeof(u64), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES:
      u32 = type_alignment(s.a_type);
      return lt::get_value(&u32, sizeof(u32), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES:
      u32 = type_alignment(s.b_type);
      return lt::get_value(&u32, sizeof(u32), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES:
      u32 = type_alignment(s.c_type);
      return lt::get_value(&u32, sizeof(u32), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES:
      u32 = type_alignment(s.d_type);
      return lt::get_value(&u32, sizeof(u32), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CAP_TILE_IDS:
    case MUBLASLT_ALGO_CAP_STAGES_IDS: {
      // Arrays with one element (UNDEFINED): a buffer of at least one element is accepted.
      u32 = 0;
      if (sizeInBytes == 0) return lt::get_value(&u32, sizeof(u32), buf, 0, sizeWritten);
      if (buf == nullptr || sizeInBytes < sizeof(u32)) return MUBLAS_STATUS_INVALID_VALUE;
      std::memcpy(buf, &u32, sizeof(u32));
      if (sizeWritten != nullptr) *sizeWritten = sizeof(u32);
      return MUBLAS_STATUS_SUCCESS;
    }
  }
  return MUBLAS_STATUS_INVALID_VALUE;
}

MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoConfigSetAttribute(
    mublasLtMatmulAlgo_t* algo, mublasLtMatmulAlgoConfigAttributes_t attr, const void* buf,
    size_t sizeInBytes) {
  lt::AlgoState s;
  if (!lt::load_algo(algo, &s)) return MUBLAS_STATUS_INVALID_VALUE;
  // Only the single configuration the simulator has is accepted: each attribute's default.
  auto set32 = [&](auto* member, auto allowed) {
    using T = std::remove_pointer_t<decltype(member)>;
    if (lt::check_set(buf, sizeInBytes, sizeof(T)) != MUBLAS_STATUS_SUCCESS) {
      return MUBLAS_STATUS_INVALID_VALUE;
    }
    T v;
    std::memcpy(&v, buf, sizeof(v));
    if (v != static_cast<T>(allowed)) return MUBLAS_STATUS_INVALID_VALUE;
    *member = v;
    lt::store_algo(algo, s);
    return MUBLAS_STATUS_SUCCESS;
  };
  switch (attr) {
    case MUBLASLT_ALGO_CONFIG_ID:
      return MUBLAS_STATUS_INVALID_VALUE;  // read-only
    case MUBLASLT_ALGO_CONFIG_TILE_ID:
      return set32(&s.tile, MUBLASLT_MATMUL_TILE_UNDEFINED);
    case MUBLASLT_ALGO_CONFIG_SPLITK_NUM:
      return set32(&s.splitk, 1);
    case MUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME:
      return set32(&s.reduction, MUBLASLT_REDUCTION_SCHEME_NONE);
    case MUBLASLT_ALGO_CONFIG_CTA_SWIZZLING:
      return set32(&s.swizzle, 0);
    case MUBLASLT_ALGO_CONFIG_CUSTOM_OPTION:
      return set32(&s.custom, 0);
    case MUBLASLT_ALGO_CONFIG_STAGES_ID:
      return set32(&s.stages, MUBLASLT_MATMUL_STAGES_UNDEFINED);
    case MUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID:
      return set32(&s.inner_shape, MUBLASLT_MATMUL_INNER_SHAPE_UNDEFINED);
    case MUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID:
      return set32(&s.cluster_shape, MUBLASLT_CLUSTER_SHAPE_AUTO);
  }
  return MUBLAS_STATUS_INVALID_VALUE;
}

MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoConfigGetAttribute(
    const mublasLtMatmulAlgo_t* algo, mublasLtMatmulAlgoConfigAttributes_t attr, void* buf,
    size_t sizeInBytes, size_t* sizeWritten) {
  lt::AlgoState s;
  if (!lt::load_algo(algo, &s)) return MUBLAS_STATUS_INVALID_VALUE;
  switch (attr) {
    case MUBLASLT_ALGO_CONFIG_ID:
      return lt::get_value(&s.id, sizeof(s.id), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CONFIG_TILE_ID:
      return lt::get_value(&s.tile, sizeof(s.tile), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CONFIG_SPLITK_NUM:
      return lt::get_value(&s.splitk, sizeof(s.splitk), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME:
      return lt::get_value(&s.reduction, sizeof(s.reduction), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CONFIG_CTA_SWIZZLING:
      return lt::get_value(&s.swizzle, sizeof(s.swizzle), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CONFIG_CUSTOM_OPTION:
      return lt::get_value(&s.custom, sizeof(s.custom), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CONFIG_STAGES_ID:
      return lt::get_value(&s.stages, sizeof(s.stages), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID:
      return lt::get_value(&s.inner_shape, sizeof(s.inner_shape), buf, sizeInBytes, sizeWritten);
    case MUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID:
      return lt::get_value(&s.cluster_shape, sizeof(s.cluster_shape), buf, sizeInBytes,
                           sizeWritten);
  }
  return MUBLAS_STATUS_INVALID_VALUE;
}

}  // extern "C"
