// Matrix layouts, matmul descriptors and matmul preferences: creation in heap or caller storage,
// and their attributes.
#include "internal.h"

namespace lt {
namespace {

uint32_t magic_of(const void* p) {
  uint32_t m = 0;
  std::memcpy(&m, p, sizeof(m));
  return m;
}

// Allocates zeroed opaque storage for *Create.
template <typename Opaque>
Opaque* allocate() {
  auto* p = new (std::nothrow) Opaque;
  if (p != nullptr) std::memset(p, 0, sizeof(*p));
  return p;
}

// Destroys a descriptor: storage from *Create is freed, caller storage (from *Init) only
// forgets its magic.
template <typename Opaque, typename State>
void release(Opaque* p, State* s) {
  const bool heap = (s->flags & kHeapAllocated) != 0;
  s->magic = 0;
  if (heap) delete p;
}

mublasStatus_t init_layout(mublasLtMatrixLayout_t p, uint32_t flags, musaDataType type,
                           uint64_t rows, uint64_t cols, int64_t ld) {
  if (!known_data_type(type)) return MUBLAS_STATUS_INVALID_VALUE;
  std::memset(p, 0, sizeof(*p));
  auto* s = new (p) LayoutState{};
  s->flags = flags;
  s->type = static_cast<uint32_t>(type);
  s->order = MUBLASLT_ORDER_COL;
  s->batch_count = 1;
  s->batch_mode = MUBLASLT_BATCH_MODE_STRIDED;
  s->rows = rows;
  s->cols = cols;
  s->ld = ld;
  s->magic = kLayoutMagic;
  return MUBLAS_STATUS_SUCCESS;
}

mublasStatus_t init_desc(mublasLtMatmulDesc_t p, uint32_t flags, mublasComputeType_t compute,
                         musaDataType_t scale) {
  if (!known_compute_type(compute) || !known_data_type(scale)) return MUBLAS_STATUS_INVALID_VALUE;
  std::memset(p, 0, sizeof(*p));
  auto* s = new (p) DescState{};
  s->flags = flags;
  s->compute_type = compute;
  s->scale_type = scale;
  s->pointer_mode = MUBLASLT_POINTER_MODE_HOST;
  s->transa = MUBLAS_OP_N;
  s->transb = MUBLAS_OP_N;
  s->transc = MUBLAS_OP_N;
  s->fill_mode = MUBLAS_FILL_MODE_FULL;
  s->epilogue = MUBLASLT_EPILOGUE_DEFAULT;
  s->bias_data_type = -1;
  s->aux_data_type = -1;
  for (int32_t& m : s->scale_mode) m = MUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  s->magic = kDescMagic;
  return MUBLAS_STATUS_SUCCESS;
}

void init_pref(mublasLtMatmulPreference_t p, uint32_t flags) {
  std::memset(p, 0, sizeof(*p));
  auto* s = new (p) PrefState{};
  s->flags = flags;
  s->search_mode = MUBLASLT_SEARCH_BEST_FIT;
  s->reduction_mask = MUBLASLT_REDUCTION_SCHEME_MASK;
  for (uint32_t& a : s->min_alignment) a = 256;
  s->max_waves = 0.0f;
  s->max_workspace = 0;
  s->impl_mask = ~uint64_t{0};
  s->magic = kPrefMagic;
}

// An attribute's storage inside a state: its address and size.
struct Field {
  void* ptr = nullptr;
  size_t size = 0;
};
template <typename T>
Field field(T& member) {
  return Field{&member, sizeof(T)};
}

Field layout_field(LayoutState* s, mublasLtMatrixLayoutAttribute_t attr) {
  switch (attr) {
    case MUBLASLT_MATRIX_LAYOUT_TYPE:
      return field(s->type);
    case MUBLASLT_MATRIX_LAYOUT_ORDER:
      return field(s->order);
    case MUBLASLT_MATRIX_LAYOUT_ROWS:
      return field(s->rows);
    case MUBLASLT_MATRIX_LAYOUT_COLS:
      return field(s->cols);
    case MUBLASLT_MATRIX_LAYOUT_LD:
      return field(s->ld);
    case MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
      return field(s->batch_count);
    case MUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      return field(s->batch_stride);
    case MUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET:
      return field(s->plane_offset);
    case MUBLASLT_MATRIX_LAYOUT_BATCH_MODE:
      return field(s->batch_mode);
  }
  return Field{};
}

// Value checks for layout attributes (the size is already checked).
bool layout_value_ok(mublasLtMatrixLayoutAttribute_t attr, const void* buf) {
  switch (attr) {
    case MUBLASLT_MATRIX_LAYOUT_TYPE: {
      uint32_t v;
      std::memcpy(&v, buf, sizeof(v));
      return v <= 0x7fffffffu && known_data_type(static_cast<int32_t>(v));
    }
    case MUBLASLT_MATRIX_LAYOUT_ORDER: {
      int32_t v;
      std::memcpy(&v, buf, sizeof(v));
      return v == MUBLASLT_ORDER_COL || v == MUBLASLT_ORDER_ROW;
    }
    case MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: {
      int32_t v;
      std::memcpy(&v, buf, sizeof(v));
      return v >= 1;
    }
    case MUBLASLT_MATRIX_LAYOUT_BATCH_MODE: {
      uint32_t v;
      std::memcpy(&v, buf, sizeof(v));
      return v == MUBLASLT_BATCH_MODE_STRIDED;
    }
    case MUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET: {
      int64_t v;
      std::memcpy(&v, buf, sizeof(v));
      return v == 0;  // planar complex is not implemented; 0 is the default
    }
    default:
      return true;
  }
}

Field desc_field(DescState* s, mublasLtMatmulDescAttributes_t attr) {
  switch (attr) {
    case MUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
      return field(s->compute_type);
    case MUBLASLT_MATMUL_DESC_SCALE_TYPE:
      return field(s->scale_type);
    case MUBLASLT_MATMUL_DESC_POINTER_MODE:
      return field(s->pointer_mode);
    case MUBLASLT_MATMUL_DESC_TRANSA:
      return field(s->transa);
    case MUBLASLT_MATMUL_DESC_TRANSB:
      return field(s->transb);
    case MUBLASLT_MATMUL_DESC_TRANSC:
      return field(s->transc);
    case MUBLASLT_MATMUL_DESC_FILL_MODE:
      return field(s->fill_mode);
    case MUBLASLT_MATMUL_DESC_EPILOGUE:
      return field(s->epilogue);
    case MUBLASLT_MATMUL_DESC_BIAS_POINTER:
      return field(s->bias);
    case MUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE:
      return field(s->bias_batch_stride);
    case MUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE:
      return field(s->alpha_vector_batch_stride);
    case MUBLASLT_MATMUL_DESC_SM_COUNT_TARGET:
      return field(s->sm_count_target);
    case MUBLASLT_MATMUL_DESC_FAST_ACCUM:
      return field(s->fast_accum);
    case MUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
      return field(s->bias_data_type);
    case MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
      return field(s->aux);
    case MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
      return field(s->aux_ld);
    case MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE:
      return field(s->aux_batch_stride);
    case MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE:
      return field(s->aux_data_type);
    case MUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
      return field(s->scale[0]);
    case MUBLASLT_MATMUL_DESC_B_SCALE_POINTER:
      return field(s->scale[1]);
    case MUBLASLT_MATMUL_DESC_C_SCALE_POINTER:
      return field(s->scale[2]);
    case MUBLASLT_MATMUL_DESC_D_SCALE_POINTER:
      return field(s->scale[3]);
    case MUBLASLT_MATMUL_DESC_AMAX_D_POINTER:
      return field(s->amax_d);
    case MUBLASLT_MATMUL_DESC_A_SCALE_MODE:
      return field(s->scale_mode[0]);
    case MUBLASLT_MATMUL_DESC_B_SCALE_MODE:
      return field(s->scale_mode[1]);
    case MUBLASLT_MATMUL_DESC_C_SCALE_MODE:
      return field(s->scale_mode[2]);
    case MUBLASLT_MATMUL_DESC_D_SCALE_MODE:
      return field(s->scale_mode[3]);
  }
  return Field{};
}

bool desc_value_ok(mublasLtMatmulDescAttributes_t attr, const void* buf) {
  int32_t i = 0;
  switch (attr) {
    case MUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
      std::memcpy(&i, buf, sizeof(i));
      return known_compute_type(i);
    case MUBLASLT_MATMUL_DESC_SCALE_TYPE:
      std::memcpy(&i, buf, sizeof(i));
      return known_data_type(i);
    case MUBLASLT_MATMUL_DESC_POINTER_MODE:
      std::memcpy(&i, buf, sizeof(i));
      return known_pointer_mode(i);
    case MUBLASLT_MATMUL_DESC_TRANSA:
    case MUBLASLT_MATMUL_DESC_TRANSB:
    case MUBLASLT_MATMUL_DESC_TRANSC:
      std::memcpy(&i, buf, sizeof(i));
      return known_operation(i);
    case MUBLASLT_MATMUL_DESC_FILL_MODE:
      std::memcpy(&i, buf, sizeof(i));
      return known_fill_mode(i);
    case MUBLASLT_MATMUL_DESC_EPILOGUE: {
      uint32_t e;
      std::memcpy(&e, buf, sizeof(e));
      return known_epilogue(e);
    }
    case MUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
    case MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE:
      std::memcpy(&i, buf, sizeof(i));
      return i == -1 || known_data_type(i);
    case MUBLASLT_MATMUL_DESC_SM_COUNT_TARGET:
      std::memcpy(&i, buf, sizeof(i));
      return i >= 0;
    case MUBLASLT_MATMUL_DESC_A_SCALE_MODE:
    case MUBLASLT_MATMUL_DESC_B_SCALE_MODE:
    case MUBLASLT_MATMUL_DESC_C_SCALE_MODE:
    case MUBLASLT_MATMUL_DESC_D_SCALE_MODE:
      std::memcpy(&i, buf, sizeof(i));
      return i == MUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F ||
             i == MUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F ||
             i == MUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 ||
             i == MUBLASLT_MATMUL_MATRIX_SCALE_PER_BATCH_SCALAR_32F;
    default:
      return true;
  }
}

Field pref_field(PrefState* s, mublasLtMatmulPreferenceAttributes_t attr) {
  switch (attr) {
    case MUBLASLT_MATMUL_PREF_SEARCH_MODE:
      return field(s->search_mode);
    case MUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
      return field(s->max_workspace);
    case MUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK:
      return field(s->reduction_mask);
    case MUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
      return field(s->min_alignment[0]);
    case MUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
      return field(s->min_alignment[1]);
    case MUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
      return field(s->min_alignment[2]);
    case MUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
      return field(s->min_alignment[3]);
    case MUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT:
      return field(s->max_waves);
    case MUBLASLT_MATMUL_PREF_IMPL_MASK:
      return field(s->impl_mask);
  }
  return Field{};
}

bool pref_value_ok(mublasLtMatmulPreferenceAttributes_t attr, const void* buf) {
  uint32_t u = 0;
  switch (attr) {
    case MUBLASLT_MATMUL_PREF_SEARCH_MODE:
      std::memcpy(&u, buf, sizeof(u));
      return u == MUBLASLT_SEARCH_BEST_FIT || u == MUBLASLT_SEARCH_LIMITED_BY_ALGO_ID;
    case MUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK:
      std::memcpy(&u, buf, sizeof(u));
      return (u & ~uint32_t{MUBLASLT_REDUCTION_SCHEME_MASK}) == 0;
    case MUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT: {
      float f;
      std::memcpy(&f, buf, sizeof(f));
      return f >= 0.0f;  // also refuses NaN
    }
    default:
      return true;
  }
}

template <typename State, typename Attr, typename FieldFn, typename OkFn>
mublasStatus_t set_attr(State* s, Attr attr, const void* buf, size_t sizeInBytes, FieldFn field_fn,
                        OkFn ok_fn) {
  Field f = field_fn(s, attr);
  if (f.ptr == nullptr) return MUBLAS_STATUS_INVALID_VALUE;  // unknown attribute
  mublasStatus_t st = check_set(buf, sizeInBytes, f.size);
  if (st != MUBLAS_STATUS_SUCCESS) return st;
  if (!ok_fn(attr, buf)) return MUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(f.ptr, buf, f.size);
  return MUBLAS_STATUS_SUCCESS;
}

template <typename State, typename Attr, typename FieldFn>
mublasStatus_t get_attr(State* s, Attr attr, void* buf, size_t sizeInBytes, size_t* sizeWritten,
                        FieldFn field_fn) {
  Field f = field_fn(s, attr);
  if (f.ptr == nullptr) return MUBLAS_STATUS_INVALID_VALUE;
  return get_value(f.ptr, f.size, buf, sizeInBytes, sizeWritten);
}

}  // namespace

bool valid(mublasLtMatrixLayout_t p) { return p != nullptr && magic_of(p) == kLayoutMagic; }
bool valid(mublasLtMatmulDesc_t p) { return p != nullptr && magic_of(p) == kDescMagic; }
bool valid(mublasLtMatmulPreference_t p) { return p != nullptr && magic_of(p) == kPrefMagic; }

}  // namespace lt

using lt::state;
using lt::valid;

extern "C" {

// ---- Matrix layouts

MUBLASLT_API mublasStatus_t mublasLtMatrixLayoutInit_internal(mublasLtMatrixLayout_t matLayout,
                                                              size_t size, musaDataType type,
                                                              uint64_t rows, uint64_t cols,
                                                              int64_t ld) {
  if (matLayout == nullptr || size < sizeof(mublasLtMatrixLayoutOpaque_t)) {
    return MUBLAS_STATUS_INVALID_VALUE;
  }
  return lt::init_layout(matLayout, 0, type, rows, cols, ld);
}

MUBLASLT_API mublasStatus_t mublasLtMatrixLayoutCreate(mublasLtMatrixLayout_t* matLayout,
                                                       musaDataType type, uint64_t rows,
                                                       uint64_t cols, int64_t ld) {
  if (matLayout == nullptr) return MUBLAS_STATUS_INVALID_VALUE;
  auto* p = lt::allocate<mublasLtMatrixLayoutOpaque_t>();
  if (p == nullptr) return MUBLAS_STATUS_MEMORY_ERROR;
  mublasStatus_t st = lt::init_layout(p, lt::kHeapAllocated, type, rows, cols, ld);
  if (st != MUBLAS_STATUS_SUCCESS) {
    delete p;
    return st;
  }
  *matLayout = p;
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtMatrixLayoutDestroy(mublasLtMatrixLayout_t matLayout) {
  if (matLayout == nullptr) return MUBLAS_STATUS_SUCCESS;  // like cuBLASLt: NULL is a no-op
  if (!valid(matLayout)) return MUBLAS_STATUS_INVALID_VALUE;
  lt::release(matLayout, state(matLayout));
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtMatrixLayoutSetAttribute(mublasLtMatrixLayout_t matLayout,
                                                             mublasLtMatrixLayoutAttribute_t attr,
                                                             const void* buf, size_t sizeInBytes) {
  if (!valid(matLayout)) return MUBLAS_STATUS_INVALID_VALUE;
  // A planar complex layout (a non-zero plane offset) is valid, but not implemented here.
  if (attr == MUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET && buf != nullptr &&
      sizeInBytes == sizeof(int64_t)) {
    int64_t v;
    std::memcpy(&v, buf, sizeof(v));
    if (v != 0) return MUBLAS_STATUS_NOT_IMPLEMENTED;
  }
  return lt::set_attr(state(matLayout), attr, buf, sizeInBytes, lt::layout_field,
                      lt::layout_value_ok);
}

MUBLASLT_API mublasStatus_t mublasLtMatrixLayoutGetAttribute(mublasLtMatrixLayout_t matLayout,
                                                             mublasLtMatrixLayoutAttribute_t attr,
                                                             void* buf, size_t sizeInBytes,
                                                             size_t* sizeWritten) {
  if (!valid(matLayout)) return MUBLAS_STATUS_INVALID_VALUE;
  return lt::get_attr(state(matLayout), attr, buf, sizeInBytes, sizeWritten, lt::layout_field);
}

// ---- Matmul descriptors

MUBLASLT_API mublasStatus_t mublasLtMatmulDescInit_internal(mublasLtMatmulDesc_t matmulDesc,
                                                            size_t size,
                                                            mublasComputeType_t computeType,
                                                            musaDataType_t scaleType) {
  if (matmulDesc == nullptr || size < sizeof(mublasLtMatmulDescOpaque_t)) {
    return MUBLAS_STATUS_INVALID_VALUE;
  }
  return lt::init_desc(matmulDesc, 0, computeType, scaleType);
}

MUBLASLT_API mublasStatus_t mublasLtMatmulDescCreate(mublasLtMatmulDesc_t* matmulDesc,
                                                     mublasComputeType_t computeType,
                                                     musaDataType_t scaleType) {
  if (matmulDesc == nullptr) return MUBLAS_STATUS_INVALID_VALUE;
  auto* p = lt::allocate<mublasLtMatmulDescOpaque_t>();
  if (p == nullptr) return MUBLAS_STATUS_MEMORY_ERROR;
  mublasStatus_t st = lt::init_desc(p, lt::kHeapAllocated, computeType, scaleType);
  if (st != MUBLAS_STATUS_SUCCESS) {
    delete p;
    return st;
  }
  *matmulDesc = p;
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtMatmulDescDestroy(mublasLtMatmulDesc_t matmulDesc) {
  if (matmulDesc == nullptr) return MUBLAS_STATUS_SUCCESS;
  if (!valid(matmulDesc)) return MUBLAS_STATUS_INVALID_VALUE;
  lt::release(matmulDesc, state(matmulDesc));
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtMatmulDescSetAttribute(mublasLtMatmulDesc_t matmulDesc,
                                                           mublasLtMatmulDescAttributes_t attr,
                                                           const void* buf, size_t sizeInBytes) {
  if (!valid(matmulDesc)) return MUBLAS_STATUS_INVALID_VALUE;
  return lt::set_attr(state(matmulDesc), attr, buf, sizeInBytes, lt::desc_field, lt::desc_value_ok);
}

MUBLASLT_API mublasStatus_t mublasLtMatmulDescGetAttribute(mublasLtMatmulDesc_t matmulDesc,
                                                           mublasLtMatmulDescAttributes_t attr,
                                                           void* buf, size_t sizeInBytes,
                                                           size_t* sizeWritten) {
  if (!valid(matmulDesc)) return MUBLAS_STATUS_INVALID_VALUE;
  return lt::get_attr(state(matmulDesc), attr, buf, sizeInBytes, sizeWritten, lt::desc_field);
}

// ---- Matmul preferences

MUBLASLT_API mublasStatus_t mublasLtMatmulPreferenceInit_internal(mublasLtMatmulPreference_t pref,
                                                                  size_t size) {
  if (pref == nullptr || size < sizeof(mublasLtMatmulPreferenceOpaque_t)) {
    return MUBLAS_STATUS_INVALID_VALUE;
  }
  lt::init_pref(pref, 0);
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtMatmulPreferenceCreate(mublasLtMatmulPreference_t* pref) {
  if (pref == nullptr) return MUBLAS_STATUS_INVALID_VALUE;
  auto* p = lt::allocate<mublasLtMatmulPreferenceOpaque_t>();
  if (p == nullptr) return MUBLAS_STATUS_MEMORY_ERROR;
  lt::init_pref(p, lt::kHeapAllocated);
  *pref = p;
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtMatmulPreferenceDestroy(mublasLtMatmulPreference_t pref) {
  if (pref == nullptr) return MUBLAS_STATUS_SUCCESS;
  if (!valid(pref)) return MUBLAS_STATUS_INVALID_VALUE;
  lt::release(pref, state(pref));
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtMatmulPreferenceSetAttribute(
    mublasLtMatmulPreference_t pref, mublasLtMatmulPreferenceAttributes_t attr, const void* buf,
    size_t sizeInBytes) {
  if (!valid(pref)) return MUBLAS_STATUS_INVALID_VALUE;
  return lt::set_attr(state(pref), attr, buf, sizeInBytes, lt::pref_field, lt::pref_value_ok);
}

MUBLASLT_API mublasStatus_t mublasLtMatmulPreferenceGetAttribute(
    mublasLtMatmulPreference_t pref, mublasLtMatmulPreferenceAttributes_t attr, void* buf,
    size_t sizeInBytes, size_t* sizeWritten) {
  if (!valid(pref)) return MUBLAS_STATUS_INVALID_VALUE;
  return lt::get_attr(state(pref), attr, buf, sizeInBytes, sizeWritten, lt::pref_field);
}

}  // extern "C"
