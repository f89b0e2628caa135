// mublasLtMatrixTransform (C = alpha * op(A) + beta * op(B)) and its descriptors.
#include "elements.h"
#include "internal.h"

#include <complex>
#include <vector>

namespace lt {
namespace {

bool xform_type_ok(int32_t t) { return data_type_size(t) != 0 && !is_fp8(t); }  // FP8: matmul only

mublasStatus_t init_xform(mublasLtMatrixTransformDesc_t p, uint32_t flags, musaDataType scale) {
  if (!known_data_type(scale)) return MUBLAS_STATUS_INVALID_VALUE;
  std::memset(p, 0, sizeof(*p));
  auto* s = new (p) XformState{};
  s->flags = flags;
  s->scale_type = scale;
  s->pointer_mode = MUBLASLT_POINTER_MODE_HOST;
  s->transa = MUBLAS_OP_N;
  s->transb = MUBLAS_OP_N;
  s->magic = kXformMagic;
  return MUBLAS_STATUS_SUCCESS;
}

int32_t* xform_field(XformState* s, mublasLtMatrixTransformDescAttributes_t attr) {
  switch (attr) {
    case MUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE:
      return &s->scale_type;
    case MUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE:
      return &s->pointer_mode;
    case MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA:
      return &s->transa;
    case MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB:
      return &s->transb;
  }
  return nullptr;
}

bool xform_value_ok(mublasLtMatrixTransformDescAttributes_t attr, int32_t v) {
  switch (attr) {
    case MUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE:
      return known_data_type(v);
    case MUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE:
      return v == MUBLASLT_POINTER_MODE_HOST || v == MUBLASLT_POINTER_MODE_DEVICE;
    case MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA:
    case MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB:
      return known_operation(v);
  }
  return false;
}

struct Transform final : Work {
  Operand a, b, c;
  bool use_a = false, use_b = false, ta = false, tb = false;
  int64_t batch = 1;
  bool device_scalars = false;
  int32_t scale_type = MUSA_R_32F;
  const void* alpha = nullptr;
  const void* beta = nullptr;
  double alpha_host = 0, beta_host = 0;
  std::vector<double> tmp;  // one batch member of C, column-major
  // A complex C: every element in complex arithmetic, OP_C conjugating (ctmp replaces tmp).
  bool complex = false;
  int32_t op_a = MUBLAS_OP_N, op_b = MUBLAS_OP_N;
  std::vector<std::complex<double>> ctmp;

  static std::complex<double> element(const Operand& x, int32_t op, int64_t bi, int64_t i,
                                      int64_t j) {
    if (op == MUBLAS_OP_N) return load_complex(x.at(bi, i, j), x.type);
    const std::complex<double> v = load_complex(x.at(bi, j, i), x.type);
    return op == MUBLAS_OP_C ? std::conj(v) : v;
  }

  void execute_complex() {
    using cd = std::complex<double>;
    const cd al = device_scalars && use_a ? load_complex(alpha, scale_type) : alpha_c;
    const cd be = device_scalars && use_b ? load_complex(beta, scale_type) : beta_c;
    const int64_t m = c.rows, n = c.cols;
    for (int64_t bi = 0; bi < batch; ++bi) {
      for (int64_t j = 0; j < n; ++j) {  // read everything first: C may alias A or B
        for (int64_t i = 0; i < m; ++i) {
          cd v(0.0, 0.0);
          if (use_a) v += al * element(a, op_a, bi, i, j);
          if (use_b) v += be * element(b, op_b, bi, i, j);
          ctmp[static_cast<size_t>(i + j * m)] = v;
        }
      }
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < m; ++i) {
          store_complex(const_cast<char*>(c.at(bi, i, j)), c.type,
                        ctmp[static_cast<size_t>(i + j * m)]);
        }
      }
    }
  }
  std::complex<double> alpha_c, beta_c;  // host scalars of a complex transform

  void execute() override {
    if (complex) {
      execute_complex();
      return;
    }
    const double al = device_scalars && use_a ? load(alpha, scale_type) : alpha_host;
    const double be = device_scalars && use_b ? load(beta, scale_type) : beta_host;
    const int64_t m = c.rows, n = c.cols;
    for (int64_t bi = 0; bi < batch; ++bi) {
      // Read everything first: C may alias A or B.
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < m; ++i) {
          double v = 0;
          if (use_a) v += al * load(ta ? a.at(bi, j, i) : a.at(bi, i, j), a.type);
          if (use_b) v += be * load(tb ? b.at(bi, j, i) : b.at(bi, i, j), b.type);
          tmp[static_cast<size_t>(i + j * m)] = v;
        }
      }
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < m; ++i) {
          store<double>(const_cast<char*>(c.at(bi, i, j)), c.type,
                        tmp[static_cast<size_t>(i + j * m)]);
        }
      }
    }
  }
};

// An operand's layout must be valid, computable, of op's shape and of C's batch count.
mublasStatus_t check_operand(mublasLtMatrixLayout_t l, bool trans, const LayoutState& c) {
  if (!valid(l)) return MUBLAS_STATUS_INVALID_VALUE;
  const LayoutState& s = *state(l);
  mublasStatus_t st = check_layout(s);
  if (st != MUBLAS_STATUS_SUCCESS) return st;
  if (!xform_type_ok(static_cast<int32_t>(s.type))) return MUBLAS_STATUS_NOT_IMPLEMENTED;
  const uint64_t r = trans ? s.cols : s.rows, k = trans ? s.rows : s.cols;
  if (r != c.rows || k != c.cols || s.batch_count != c.batch_count) {
    return MUBLAS_STATUS_INVALID_VALUE;
  }
  return MUBLAS_STATUS_SUCCESS;
}

}  // namespace

bool valid(mublasLtMatrixTransformDesc_t p) {
  uint32_t m = 0;
  if (p != nullptr) std::memcpy(&m, p, sizeof(m));
  return m == kXformMagic;
}

}  // namespace lt

using lt::state;
using lt::valid;

extern "C" {

MUBLASLT_API mublasStatus_t mublasLtMatrixTransformDescInit_internal(
    mublasLtMatrixTransformDesc_t transformDesc, size_t size, musaDataType scaleType) {
  if (transformDesc == nullptr || size < sizeof(mublasLtMatrixTransformDescOpaque_t)) {
    return MUBLAS_STATUS_INVALID_VALUE;
  }
  return lt::init_xform(transformDesc, 0, scaleType);
}

MUBLASLT_API mublasStatus_t mublasLtMatrixTransformDescCreate(
    mublasLtMatrixTransformDesc_t* transformDesc, musaDataType scaleType) {
  if (transformDesc == nullptr) return MUBLAS_STATUS_INVALID_VALUE;
  auto* p = new (std::nothrow) mublasLtMatrixTransformDescOpaque_t;
  if (p == nullptr) return MUBLAS_STATUS_MEMORY_ERROR;
  const mublasStatus_t st = lt::init_xform(p, lt::kHeapAllocated, scaleType);
  if (st != MUBLAS_STATUS_SUCCESS) {
    delete p;
    return st;
  }
  *transformDesc = p;
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t
mublasLtMatrixTransformDescDestroy(mublasLtMatrixTransformDesc_t transformDesc) {
  if (transformDesc == nullptr) return MUBLAS_STATUS_SUCCESS;
  if (!valid(transformDesc)) return MUBLAS_STATUS_INVALID_VALUE;
  lt::XformState* s = state(transformDesc);
  const bool heap = (s->flags & lt::kHeapAllocated) != 0;
  s->magic = 0;
  if (heap) delete transformDesc;
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtMatrixTransformDescSetAttribute(
    mublasLtMatrixTransformDesc_t transformDesc, mublasLtMatrixTransformDescAttributes_t attr,
    const void* buf, size_t sizeInBytes) {
  if (!valid(transformDesc)) return MUBLAS_STATUS_INVALID_VALUE;
  int32_t* f = lt::xform_field(state(transformDesc), attr);
  if (f == nullptr || lt::check_set(buf, sizeInBytes, sizeof(*f)) != MUBLAS_STATUS_SUCCESS) {
    return MUBLAS_STATUS_INVALID_VALUE;
  }
  int32_t v;
  std::memcpy(&v, buf, sizeof(v));
  if (!lt::xform_value_ok(attr, v)) return MUBLAS_STATUS_INVALID_VALUE;
  *f = v;
  return MUBLAS_STATUS_SUCCESS;
}

MUBLASLT_API mublasStatus_t mublasLtMatrixTransformDescGetAttribute(
    mublasLtMatrixTransformDesc_t transformDesc, mublasLtMatrixTransformDescAttributes_t attr,
    void* buf, size_t sizeInBytes, size_t* sizeWritten) {
  if (!valid(transformDesc)) return MUBLAS_STATUS_INVALID_VALUE;
  int32_t* f = lt::xform_field(state(transformDesc), attr);
  if (f == nullptr) return MUBLAS_STATUS_INVALID_VALUE;
  return lt::get_value(f, sizeof(*f), buf, sizeInBytes, sizeWritten);
}

MUBLASLT_API mublasStatus_t mublasLtMatrixTransform(
    mublasLtHandle_t lightHandle, mublasLtMatrixTransformDesc_t transformDesc, const void* alpha,
    const void* A, mublasLtMatrixLayout_t Adesc, const void* beta, const void* B,
    mublasLtMatrixLayout_t Bdesc, void* C, mublasLtMatrixLayout_t Cdesc, musaStream_t stream) {
  static const char* const kFn = "mublasLtMatrixTransform";
  if (!valid(lightHandle)) return lt::log_error(kFn, MUBLAS_STATUS_INVALID_HANDLE, "handle");
  if (!valid(transformDesc) || !valid(Cdesc) || C == nullptr) {
    return lt::log_error(kFn, MUBLAS_STATUS_INVALID_VALUE, "descriptor, C or Cdesc");
  }
  const lt::XformState& x = *state(transformDesc);
  const lt::LayoutState& lc = *state(Cdesc);
  mublasStatus_t st = lt::check_layout(lc);
  if (st != MUBLAS_STATUS_SUCCESS) return lt::log_error(kFn, st, "Cdesc");
  if (!lt::xform_type_ok(static_cast<int32_t>(lc.type)) || !lt::xform_type_ok(x.scale_type)) {
    return lt::log_error(kFn, MUBLAS_STATUS_NOT_IMPLEMENTED, "type");
  }
  // Complex operands or scalars only into a complex C.
  const bool complex = lt::is_complex(static_cast<int32_t>(lc.type));
  const auto complex_in = [&](const void* p, mublasLtMatrixLayout_t l) {
    return p != nullptr && valid(l) && lt::is_complex(static_cast<int32_t>(state(l)->type));
  };
  if (!complex && (lt::is_complex(x.scale_type) || complex_in(A, Adesc) || complex_in(B, Bdesc))) {
    return lt::log_error(kFn, MUBLAS_STATUS_NOT_IMPLEMENTED, "complex into a real C");
  }
  auto t = std::unique_ptr<lt::Transform>(new (std::nothrow) lt::Transform);
  if (!t) return lt::log_error(kFn, MUBLAS_STATUS_MEMORY_ERROR, "work");
  t->complex = complex;
  t->op_a = x.transa;
  t->op_b = x.transb;
  t->use_a = A != nullptr;
  t->use_b = B != nullptr;
  t->ta = x.transa != MUBLAS_OP_N;
  t->tb = x.transb != MUBLAS_OP_N;
  for (int side = 0; side < 2; ++side) {
    const bool used = side == 0 ? t->use_a : t->use_b;
    if (!used) continue;
    if ((side == 0 ? alpha : beta) == nullptr) {
      return lt::log_error(kFn, MUBLAS_STATUS_INVALID_VALUE, "alpha/beta");
    }
    st = lt::check_operand(side == 0 ? Adesc : Bdesc, side == 0 ? t->ta : t->tb, lc);
    if (st != MUBLAS_STATUS_SUCCESS) return lt::log_error(kFn, st, "A/B");
  }
  t->c = lt::make_operand(C, lc);
  if (t->use_a) t->a = lt::make_operand(A, *state(Adesc));
  if (t->use_b) t->b = lt::make_operand(B, *state(Bdesc));
  t->batch = lc.batch_count;
  t->scale_type = x.scale_type;
  t->device_scalars = x.pointer_mode == MUBLASLT_POINTER_MODE_DEVICE;
  if (t->device_scalars) {
    t->alpha = alpha;
    t->beta = beta;
  } else {
    if (t->use_a) t->alpha_host = lt::load(alpha, x.scale_type);
    if (t->use_b) t->beta_host = lt::load(beta, x.scale_type);
    if (t->use_a) t->alpha_c = lt::load_complex(alpha, x.scale_type);
    if (t->use_b) t->beta_c = lt::load_complex(beta, x.scale_type);
  }
  if (lc.rows == 0 || lc.cols == 0) return MUBLAS_STATUS_SUCCESS;
  try {
    if (complex) {
      t->ctmp.resize(static_cast<size_t>(lc.rows * lc.cols));
    } else {
      t->tmp.resize(static_cast<size_t>(lc.rows * lc.cols));
    }
  } catch (const std::exception&) {
    return lt::log_error(kFn, MUBLAS_STATUS_MEMORY_ERROR, "scratch");
  }
  st = lt::enqueue(std::unique_ptr<lt::Work>(t.release()), stream);
  if (st != MUBLAS_STATUS_SUCCESS) return lt::log_error(kFn, st, "stream refused the work");
  return MUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
