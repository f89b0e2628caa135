// cuBLASLt layouts muBLASLt's layouts cannot describe, emulated through packed copies:
// - the tiled IMMA orders CUBLASLT_ORDER_COL32, CUBLASLT_ORDER_COL4_4R2_8C and
//   CUBLASLT_ORDER_COL32_2R_4R4 (muBLASLt's layouts are column- or row-major);
// - planar complex matrices (CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET: real and imaginary parts in two
//   planes), when muBLASLt refuses the plane offset.
//
// Setting either on a layout (attributes.cc) leaves muBLASLt's layout column-major (interleaved)
// with the caller's rows, columns, leading dimension and batch, and records it (layout_notes). A
// cublasLtMatmul or cublasLtMatrixTransform with such a layout runs here: each such operand is
// copied to a packed column-major (interleaved) matrix, the muBLASLt call runs on those, and such
// an output is copied back. Every copy is a muBLASLt matrix transform (alpha 1, beta 0) between
// two strided views of the same elements, on the caller's stream; the copies are exact for every
// type. A planar plane's leading dimension and batch stride count plane elements.
//
// Where element (r, c) of an IMMA order lives, offsets in elements, c = 32 * g + c':
//   COL32         g * ld + r * 32 + c'
//   COL32_2R_4R4  g * ld + (r / 32) * 1024 + p(r % 32) * 32 + c',  p(x) = ((x%8)/2*4 + x/8)*2 + x%2
//   COL4_4R2_8C   g * ld + (r / 8) * 256 + (r % 2) * 128 + (c' / 8) * 32 + (c' % 8 / 4) * 16
//                        + (r % 8 / 2) * 4 + c' % 4
// (NVIDIA's FasterTransformer computes the same offsets for these orders.) The last two go
// through a COL32 copy P whose rows are padded to the order's row tile: P -> order moves
// 32-element rows (COL32_2R_4R4, 32 transforms) or 4-element runs (COL4_4R2_8C, 64 transforms),
// each batched over the 32-column groups. Padding is written with zeros, as cuBLASLt writes it
// (seen on an H100): row-tiled orders whole tiles at a time, COL32 the columns of its last group
// past the matrix's.
//
// Scratch memory is allocated for the call (musaMalloc) and freed after the stream has run it:
// these calls block until their work is done.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "core/backend.h"
#include "cublasLt/cublasLt.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublasLt12_impl.h"
#else
#include "gen/cublasLt13_impl.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace emulated_layouts {
namespace {

static_assert(CUBLASLT_ORDER_COL == 0 && CUBLASLT_ORDER_ROW == 1 && CUBLASLT_ORDER_COL32 == 2 &&
                  CUBLASLT_ORDER_COL4_4R2_8C == 3 && CUBLASLT_ORDER_COL32_2R_4R4 == 4,
              "cublasLtOrder_t values as documented");

const MublasLtTable& lt() { return mublasLt_backend().table; }

// One operand as muBLASLt's layout holds it (muBLASLt's values: handed back to it only).
struct Operand {
  int32_t type = 0;  // musaDataType
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch = 1;
  int64_t stride = 0;
  int32_t order = CUBLASLT_ORDER_COL;  // cuBLASLt's
  size_t esize = 0;
  char* ptr = nullptr;
  mublasLtMatrixLayout_t layout = nullptr;  // the caller's
  int64_t plane = 0;       // planar complex: bytes from the real plane to the imaginary one
  int32_t part_type = -1;  // planar complex: the type of one plane's elements (-1: real type)
  size_t part_size = 0;
  bool imma() const { return order >= CUBLASLT_ORDER_COL32; }
  bool emulated() const { return imma() || plane != 0; }
  // Rows padded to the order's row tile.
  uint64_t padded_rows() const {
    const uint64_t tile = order == CUBLASLT_ORDER_COL4_4R2_8C    ? 8
                          : order == CUBLASLT_ORDER_COL32_2R_4R4 ? 32
                                                                 : 1;
    return (rows + tile - 1) / tile * tile;
  }
  uint64_t groups() const { return (cols + 31) / 32; }
  size_t packed_bytes() const { return rows * cols * static_cast<size_t>(batch) * esize; }
  // The COL32 copy P (row-tiled orders only): one instance.
  size_t p_bytes() const {
    const bool tiled = order == CUBLASLT_ORDER_COL4_4R2_8C || order == CUBLASLT_ORDER_COL32_2R_4R4;
    return tiled ? groups() * 32 * padded_rows() * esize : 0;
  }
};

size_t element_size(int32_t t) {
  switch (t) {
    case MUSA_R_8I:
    case MUSA_R_8U:
    case MUSA_R_8F_E4M3:
    case MUSA_R_8F_E5M2:
      return 1;
    case MUSA_R_16F:
    case MUSA_R_16BF:
      return 2;
    case MUSA_R_32F:
    case MUSA_R_32I:
      return 4;
    case MUSA_R_64F:
      return 8;
    default:
      return 0;  // complex and the rest (see complex_part)
  }
}

// A complex type's real part; -1 for other types (MUSA_R_32F is 0).
int32_t complex_part(int32_t t) {
  switch (t) {
    case MUSA_C_16F:
      return MUSA_R_16F;
    case MUSA_C_32F:
      return MUSA_R_32F;
    case MUSA_C_64F:
      return MUSA_R_64F;
    default:
      return -1;
  }
}

bool read(cublasLtMatrixLayout_t l, const void* ptr, Operand& o) {
  o.layout = convert<mublasLtMatrixLayout_t>(l);
  o.ptr = static_cast<char*>(const_cast<void*>(ptr));
  const layout_notes::Note note = layout_notes::get(l);
  o.order = note.imma_order != 0 ? note.imma_order : CUBLASLT_ORDER_COL;
  o.plane = note.plane_offset;
  uint32_t type = 0;
  if (!(layout_get(o.layout, MUBLASLT_MATRIX_LAYOUT_TYPE, type) &&
        layout_get(o.layout, MUBLASLT_MATRIX_LAYOUT_ROWS, o.rows) &&
        layout_get(o.layout, MUBLASLT_MATRIX_LAYOUT_COLS, o.cols) &&
        layout_get(o.layout, MUBLASLT_MATRIX_LAYOUT_LD, o.ld) &&
        layout_get(o.layout, MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, o.batch) &&
        layout_get(o.layout, MUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, o.stride)))
    return false;
  o.type = static_cast<int32_t>(type);
  o.esize = element_size(o.type);
  o.part_type = complex_part(o.type);
  o.part_size = element_size(o.part_type);
  return true;
}

// A muBLASLt layout made for the call, destroyed with the object.
class View {
 public:
  View() = default;
  View(const View&) = delete;
  View& operator=(const View&) = delete;
  ~View() {
    if (l_ != nullptr) lt().mublasLtMatrixLayoutDestroy(l_);
  }
  mublasStatus_t make(int32_t type, bool row, uint64_t rows, uint64_t cols, int64_t ld,
                      int32_t batch, int64_t stride) {
    mublasStatus_t s =
        lt().mublasLtMatrixLayoutCreate(&l_, static_cast<musaDataType>(type), rows, cols, ld);
    if (s != MUBLAS_STATUS_SUCCESS) {
      l_ = nullptr;
      return s;
    }
    const int32_t order = row ? MUBLASLT_ORDER_ROW : MUBLASLT_ORDER_COL;
    s = lt().mublasLtMatrixLayoutSetAttribute(l_, MUBLASLT_MATRIX_LAYOUT_ORDER, &order,
                                              sizeof(order));
    if (s == MUBLAS_STATUS_SUCCESS)
      s = lt().mublasLtMatrixLayoutSetAttribute(l_, MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                                sizeof(batch));
    if (s == MUBLAS_STATUS_SUCCESS)
      s = lt().mublasLtMatrixLayoutSetAttribute(l_, MUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                &stride, sizeof(stride));
    return s;
  }
  mublasLtMatrixLayout_t get() const { return l_; }

 private:
  mublasLtMatrixLayout_t l_ = nullptr;
};

// A strided view of rows x cols elements (row- or column-major, leading dimension ld) repeated
// `batch` times `stride` elements apart, starting `offset` elements into a matrix.
struct Strided {
  bool row;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch;
  int64_t stride;
  int64_t offset;
};

// Copies views of the same shape through muBLASLt transforms (alpha 1, beta 0) on one stream.
class Copier {
 public:
  Copier(mublasLtHandle_t h, musaStream_t s) : handle_(h), stream_(s) {}
  Copier(const Copier&) = delete;
  Copier& operator=(const Copier&) = delete;
  ~Copier() {
    for (auto& d : descs_)
      if (d.desc != nullptr) lt().mublasLtMatrixTransformDescDestroy(d.desc);
  }

  mublasStatus_t copy(int32_t type, size_t esize, const char* src, const Strided& sv, char* dst,
                      const Strided& dv) {
    if (sv.rows == 0 || sv.cols == 0 || sv.batch == 0) return MUBLAS_STATUS_SUCCESS;
    // int32 and double through a double scale: exact (a float scale would round int32 values).
    const bool wide = type == MUSA_R_32I || type == MUSA_R_64F;
    mublasLtMatrixTransformDesc_t desc = nullptr;
    mublasStatus_t s = this->desc(wide ? MUSA_R_64F : MUSA_R_32F, desc);
    if (s != MUBLAS_STATUS_SUCCESS) return s;
    View a, c;
    s = a.make(type, sv.row, sv.rows, sv.cols, sv.ld, sv.batch, sv.stride);
    if (s == MUBLAS_STATUS_SUCCESS)
      s = c.make(type, dv.row, dv.rows, dv.cols, dv.ld, dv.batch, dv.stride);
    if (s != MUBLAS_STATUS_SUCCESS) return s;
    const double one_d = 1.0, zero_d = 0.0;
    const float one_f = 1.0f, zero_f = 0.0f;
    const void* one = wide ? static_cast<const void*>(&one_d) : &one_f;
    const void* zero = wide ? static_cast<const void*>(&zero_d) : &zero_f;
    return lt().mublasLtMatrixTransform(
        handle_, desc, one, src + sv.offset * static_cast<int64_t>(esize), a.get(), zero, nullptr,
        nullptr, dst + dv.offset * static_cast<int64_t>(esize), c.get(), stream_);
  }

  // `height` rows of `width` bytes, `pitch` bytes apart, set to zero on the stream.
  mublasStatus_t zero(char* dst, size_t pitch, size_t width, size_t height) {
    if (width == 0 || height == 0) return MUBLAS_STATUS_SUCCESS;
    if (musart().musaMemset2DAsync == nullptr) return MUBLAS_STATUS_NOT_IMPLEMENTED;
    return musart().musaMemset2DAsync(dst, pitch, 0, width, height, stream_) == musaSuccess
               ? MUBLAS_STATUS_SUCCESS
               : MUBLAS_STATUS_INTERNAL_ERROR;
  }

 private:
  struct Desc {
    musaDataType scale;
    mublasLtMatrixTransformDesc_t desc;
  };
  mublasStatus_t desc(musaDataType scale, mublasLtMatrixTransformDesc_t& out) {
    for (auto& d : descs_) {
      if (d.desc != nullptr && d.scale == scale) {
        out = d.desc;
        return MUBLAS_STATUS_SUCCESS;
      }
    }
    for (auto& d : descs_) {
      if (d.desc == nullptr) {
        const mublasStatus_t s = lt().mublasLtMatrixTransformDescCreate(&d.desc, scale);
        if (s != MUBLAS_STATUS_SUCCESS) {
          d.desc = nullptr;
          return s;
        }
        d.scale = scale;
        out = d.desc;
        return MUBLAS_STATUS_SUCCESS;
      }
    }
    return MUBLAS_STATUS_INTERNAL_ERROR;
  }

  mublasLtHandle_t handle_;
  musaStream_t stream_;
  Desc descs_[2] = {};
};

// Between a column-major matrix (ld `ldc`) and a COL32 one (`ld32` between 32-column groups):
// the full groups in one batched transform, a last partial group in another, its columns past
// the matrix's zeroed when writing COL32.
mublasStatus_t col_col32(Copier& cp, const Operand& o, char* col, int64_t ldc, char* col32,
                         int64_t ld32, bool to_col32) {
  const uint64_t full = o.cols / 32, rest = o.cols % 32;
  const auto ldc32 = static_cast<int64_t>(32) * ldc;
  const Strided cf{false, o.rows, 32, ldc, static_cast<int32_t>(full), ldc32, 0};
  const Strided pf{true, o.rows, 32, 32, static_cast<int32_t>(full), ld32, 0};
  const Strided cr{false, o.rows, rest, ldc, 1, 0, static_cast<int64_t>(full) * ldc32};
  const Strided pr{true, o.rows, rest, 32, 1, 0, static_cast<int64_t>(full) * ld32};
  mublasStatus_t s = to_col32 ? cp.copy(o.type, o.esize, col, cf, col32, pf)
                              : cp.copy(o.type, o.esize, col32, pf, col, cf);
  if (s != MUBLAS_STATUS_SUCCESS || rest == 0) return s;
  if (!to_col32) return cp.copy(o.type, o.esize, col32, pr, col, cr);
  s = cp.copy(o.type, o.esize, col, cr, col32, pr);
  if (s != MUBLAS_STATUS_SUCCESS) return s;
  char* pad = col32 + (static_cast<int64_t>(full) * ld32 + static_cast<int64_t>(rest)) *
                          static_cast<int64_t>(o.esize);
  return cp.zero(pad, 32 * o.esize, (32 - rest) * o.esize, o.rows);
}

// Between the padded COL32 copy P and a row-tiled order (the whole padded tiles).
mublasStatus_t p_tiled(Copier& cp, const Operand& o, char* p, char* tiled, int64_t ld,
                       bool to_tiled) {
  const uint64_t rp = o.padded_rows();
  const auto groups = static_cast<int32_t>(o.groups());
  const auto ldp = static_cast<int64_t>(32 * rp);
  auto move = [&](uint64_t rows, uint64_t cols, int64_t row_ld, int64_t p_off, int64_t t_off) {
    const Strided pv{true, rows, cols, row_ld, groups, ldp, p_off};
    const Strided tv{true, rows, cols, row_ld, groups, ld, t_off};
    return to_tiled ? cp.copy(o.type, o.esize, p, pv, tiled, tv)
                    : cp.copy(o.type, o.esize, tiled, tv, p, pv);
  };
  if (o.order == CUBLASLT_ORDER_COL32_2R_4R4) {
    for (int x = 0; x < 32; ++x) {  // row x of every 32-row tile: 32 contiguous elements
      const int px = ((x % 8) / 2 * 4 + x / 8) * 2 + x % 2;
      const mublasStatus_t s = move(rp / 32, 32, 1024, x * 32, px * 32);
      if (s != MUBLAS_STATUS_SUCCESS) return s;
    }
    return MUBLAS_STATUS_SUCCESS;
  }
  for (int h = 0; h < 4; ++h) {  // COL4_4R2_8C: row 2h + e of every 8-row tile, columns 4u..4u+3
    for (int e = 0; e < 2; ++e) {
      for (int u = 0; u < 8; ++u) {
        const mublasStatus_t s =
            move(rp / 8, 4, 256, (2 * h + e) * 32 + 4 * u, e * 128 + 16 * u + 4 * h);
        if (s != MUBLAS_STATUS_SUCCESS) return s;
      }
    }
  }
  return MUBLAS_STATUS_SUCCESS;
}

// A planar complex operand <-> its packed interleaved copy: each plane's columns to the real or
// imaginary slots of the copy's (a row-major rows x 1 view with leading dimension 2), one
// transform per plane batched over the columns. ld and the batch stride count plane elements.
mublasStatus_t planar(Copier& cp, const Operand& o, char* packed, bool to_packed) {
  const auto cols = static_cast<int32_t>(o.cols);
  const auto rows = static_cast<int64_t>(o.rows);
  const Strided plane{false, o.rows, 1, o.ld, cols, o.ld, 0};
  for (int32_t b = 0; b < o.batch; ++b) {
    char* real = o.ptr + b * o.stride * static_cast<int64_t>(o.part_size);
    char* col = packed + static_cast<size_t>(b) * o.rows * o.cols * o.esize;
    for (int part = 0; part < 2; ++part) {
      char* mine = real + (part == 0 ? 0 : o.plane);
      const Strided slots{true, o.rows, 1, 2, cols, 2 * rows, part};
      const mublasStatus_t s = to_packed
                                   ? cp.copy(o.part_type, o.part_size, mine, plane, col, slots)
                                   : cp.copy(o.part_type, o.part_size, col, slots, mine, plane);
      if (s != MUBLAS_STATUS_SUCCESS) return s;
    }
  }
  return MUBLAS_STATUS_SUCCESS;
}

// The IMMA operand `o` <-> its packed column-major copy `packed` (ld = rows, instances
// rows * cols apart). `p`: scratch for the COL32 copy (row-tiled orders).
mublasStatus_t convert_operand(Copier& cp, const Operand& o, char* packed, char* p,
                               musaStream_t stream, bool to_imma) {
  if (o.plane != 0) return planar(cp, o, packed, !to_imma);
  const auto ldc = static_cast<int64_t>(o.rows);
  for (int32_t b = 0; b < o.batch; ++b) {
    char* mine = o.ptr + b * o.stride * static_cast<int64_t>(o.esize);
    char* col = packed + static_cast<size_t>(b) * o.rows * o.cols * o.esize;
    mublasStatus_t s = MUBLAS_STATUS_SUCCESS;
    if (o.order == CUBLASLT_ORDER_COL32) {
      s = col_col32(cp, o, col, ldc, mine, o.ld, to_imma);
    } else if (to_imma) {
      if (musart().musaMemsetAsync(p, 0, o.p_bytes(), stream) != musaSuccess)
        return MUBLAS_STATUS_INTERNAL_ERROR;
      s = col_col32(cp, o, col, ldc, p, static_cast<int64_t>(32 * o.padded_rows()), true);
      if (s == MUBLAS_STATUS_SUCCESS) s = p_tiled(cp, o, p, mine, o.ld, true);
    } else {
      s = p_tiled(cp, o, p, mine, o.ld, false);
      if (s == MUBLAS_STATUS_SUCCESS)
        s = col_col32(cp, o, col, ldc, p, static_cast<int64_t>(32 * o.padded_rows()), false);
    }
    if (s != MUBLAS_STATUS_SUCCESS) return s;
  }
  return MUBLAS_STATUS_SUCCESS;
}

// Scratch device memory for one call: freed once the stream has run the call's work.
class Scratch {
 public:
  explicit Scratch(musaStream_t s) : stream_(s) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    if (base_ == nullptr) return;
    musart().musaStreamSynchronize(stream_);
    musart().musaFree(base_);
  }
  bool allocate(size_t bytes) {
    if (bytes == 0) return true;
    if (musart().musaMalloc(reinterpret_cast<void**>(&base_), bytes) != musaSuccess) {
      base_ = nullptr;
      (void)musart().musaGetLastError();  // the failure is this call's status, not a sticky one
      return false;
    }
    return true;
  }
  char* base() const { return base_; }

 private:
  musaStream_t stream_;
  char* base_ = nullptr;
};

constexpr size_t align(size_t n) { return (n + 255) / 256 * 256; }

// The operands of a call, their packed copies and the COL32 scratch.
struct Plan {
  Operand ops[4];
  int count = 0;
  size_t packed_at[4] = {};
  bool shares[4] = {};  // this operand is an earlier one (in-place C and D): its copy is theirs
  int shared_with[4] = {};
  size_t p_at = 0, total = 0;
  View packed_view[4];
};

// What cannot be emulated: named in the log once per function, counted (TORCHADA_STRICT aborts).
cublasStatus_t refuse(Fn id, const char* why) {
  note_unsupported(id, why);
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

cublasStatus_t invalid(Fn id, const char* why) {
  TORCHADA_LOG(kWarn, "%s: %s: CUBLAS_STATUS_INVALID_VALUE", kFnNames[static_cast<int>(id)], why);
  note_error(id);
  return CUBLAS_STATUS_INVALID_VALUE;
}

// Reads the operands (null layouts skipped) and lays out the scratch.
cublasStatus_t plan(Fn id, Plan& pl, const cublasLtMatrixLayout_t* layouts, const void* const* ptrs,
                    int n) {
  size_t p_bytes = 0, at = 0;
  pl.count = n;
  for (int k = 0; k < n; ++k) {
    Operand& o = pl.ops[k];
    if (layouts[k] == nullptr) continue;
    if (!read(layouts[k], ptrs[k], o)) return invalid(id, "a matrix layout could not be read");
    if (!o.emulated()) continue;
    if (o.imma() && o.plane != 0)
      return invalid(id, "a layout with both an IMMA order and a plane offset");
    if (o.imma() && o.esize == 0)
      return refuse(id,
                    "an IMMA order (COL32, COL4_4R2_8C, COL32_2R_4R4) on a complex type: "
                    "reordered for real types only");
    if (o.plane != 0 && o.part_type < 0)
      return invalid(id, "a plane offset (CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET) on a real type");
    if (o.plane != 0) o.esize = 2 * o.part_size;
    const auto min_ld = static_cast<int64_t>(o.imma() ? 32 * o.padded_rows() : o.rows);
    if (o.ld < min_ld)
      return invalid(id, o.imma() ? "the leading dimension of an IMMA-ordered matrix is below 32 "
                                    "x its (tile-padded) rows"
                                  : "the leading dimension of a planar matrix is below its rows");
    if (o.ptr == nullptr) continue;
    for (int j = 0; j < k; ++j) {
      if (pl.ops[j].emulated() && pl.ops[j].ptr == o.ptr && pl.ops[j].layout == o.layout) {
        pl.shares[k] = true;
        pl.shared_with[k] = j;
      }
    }
    if (!pl.shares[k]) {
      pl.packed_at[k] = at;
      at += align(o.packed_bytes());
    }
    if (o.p_bytes() > p_bytes) p_bytes = o.p_bytes();
  }
  pl.p_at = at;
  pl.total = at + p_bytes;
  for (int k = 0; k < n; ++k) {
    const Operand& o = pl.ops[k];
    if (!o.emulated()) continue;
    const auto s = CublasLtLib::status(
        pl.packed_view[k].make(o.type, false, o.rows, o.cols, static_cast<int64_t>(o.rows), o.batch,
                               static_cast<int64_t>(o.rows * o.cols)));
    if (s != CUBLAS_STATUS_SUCCESS) return CublasLtLib::fail(id, s);
  }
  return CUBLAS_STATUS_SUCCESS;
}

char* packed(const Plan& pl, const Scratch& sc, int k) {
  const int owner = pl.shares[k] ? pl.shared_with[k] : k;
  return sc.base() + pl.packed_at[owner];
}

// What muBLASLt gets for each operand: the packed copy and its layout where emulated, else the
// caller's matrix and layout (null for an unused one).
void substitute(const Plan& pl, const Scratch& sc, const void* const* ptrs, const void** args,
                mublasLtMatrixLayout_t* ls) {
  for (int k = 0; k < pl.count; ++k) {
    const bool emulated = pl.ops[k].emulated();
    args[k] = emulated && ptrs[k] != nullptr ? packed(pl, sc, k) : ptrs[k];
    ls[k] = emulated ? pl.packed_view[k].get() : pl.ops[k].layout;
  }
}

// Converts the emulated inputs in `which` to their packed copies (skipping shared ones).
mublasStatus_t inputs(Copier& cp, const Plan& pl, const Scratch& sc, musaStream_t s,
                      std::initializer_list<int> which) {
  for (int k : which) {
    const Operand& o = pl.ops[k];
    if (!o.emulated() || o.ptr == nullptr || pl.shares[k]) continue;
    const mublasStatus_t st = convert_operand(cp, o, packed(pl, sc, k), sc.base() + pl.p_at, s,
                                              /*to_imma=*/false);
    if (st != MUBLAS_STATUS_SUCCESS) return st;
  }
  return MUBLAS_STATUS_SUCCESS;
}

// Whether the matmul is known not to read C: beta a host zero, or the pointer mode that makes it
// zero. Then an emulated C is not copied in (int8 inference passes beta 0).
bool beta_is_zero(cublasLtMatmulDesc_t desc, const void* beta) {
  const auto get = lt().mublasLtMatmulDescGetAttribute;
  int32_t mode = -1, scale = -1;
  size_t written = 0;
  const auto d = convert<mublasLtMatmulDesc_t>(desc);
  if (get == nullptr ||
      get(d, MUBLASLT_MATMUL_DESC_POINTER_MODE, &mode, sizeof(mode), &written) !=
          MUBLAS_STATUS_SUCCESS ||
      get(d, MUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale, sizeof(scale), &written) !=
          MUBLAS_STATUS_SUCCESS)
    return false;
  if (mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO) return true;
  if ((mode != MUBLASLT_POINTER_MODE_HOST &&
       mode != MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST) ||
      beta == nullptr)
    return false;
  // Host scalars: zero whatever the sign (every bit but the sign bit clear), real and imaginary.
  const size_t size =
      element_size(scale) != 0 ? element_size(scale) : 2 * element_size(complex_part(scale));
  if (size == 0 || size > 16) return false;
  unsigned char bytes[16];
  std::memcpy(bytes, beta, size);
  const size_t part = element_size(scale) != 0 ? size : size / 2;
  for (size_t at = 0; at < size; at += part) {
    for (size_t i = 0; i < part; ++i) {
      // The sign bit of a floating-point part (its last byte's top bit, little-endian) may be set.
      const bool sign_byte = i == part - 1 && scale != MUSA_R_32I && scale != MUSA_R_8I;
      if ((bytes[at + i] & (sign_byte ? 0x7f : 0xff)) != 0) return false;
    }
  }
  return true;
}

void log_once() {
  static std::atomic<bool> logged{false};
  if (!logged.exchange(true, std::memory_order_relaxed))
    TORCHADA_LOG(kInfo,
                 "cuBLASLt IMMA orders (COL32, COL4_4R2_8C, COL32_2R_4R4) emulated through "
                 "column-major copies reordered by muBLASLt transforms (logged once)");
}

// The emulation allocates scratch memory and waits for its stream: neither may happen while the
// stream is captured into a graph (the capture would be invalidated). Refused by name instead.
bool capturing(musaStream_t s) {
  const auto is_capturing = musart().musaStreamIsCapturing;
  musaStreamCaptureStatus status = musaStreamCaptureStatusNone;
  return is_capturing != nullptr && is_capturing(s, &status) == musaSuccess &&
         status != musaStreamCaptureStatusNone;
}

bool runtime_ready() {
  const MusartTable& rt = musart();
  const MublasLtTable& t = lt();
  return rt.musaMalloc && rt.musaFree && rt.musaMemsetAsync && rt.musaStreamSynchronize &&
         rt.musaGetLastError && t.mublasLtMatrixTransform && t.mublasLtMatrixTransformDescCreate &&
         t.mublasLtMatrixTransformDescDestroy && t.mublasLtMatrixLayoutCreate &&
         t.mublasLtMatrixLayoutDestroy && t.mublasLtMatrixLayoutSetAttribute &&
         t.mublasLtMatrixLayoutGetAttribute;
}

}  // namespace

bool is_imma_order(int64_t order) {
  return order == CUBLASLT_ORDER_COL32 || order == CUBLASLT_ORDER_COL4_4R2_8C ||
         order == CUBLASLT_ORDER_COL32_2R_4R4;
}

cublasStatus_t matmul(mublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                      const void* A, cublasLtMatrixLayout_t Adesc, const void* B,
                      cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C,
                      cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
                      void* workspace, size_t workspaceSizeInBytes, cudaStream_t stream) {
  constexpr Fn id = Fn::k_cublasLtMatmul;
  if (!runtime_ready() || lt().mublasLtMatmul == nullptr) return CublasLtLib::missing(id);
  if (Adesc == nullptr || Bdesc == nullptr || Cdesc == nullptr || Ddesc == nullptr)
    return invalid(id, "a NULL matrix layout");
  log_once();
  const auto s = convert<musaStream_t>(stream);
  if (capturing(s))
    return refuse(id,
                  "an IMMA-ordered or planar complex layout on a stream being captured into a "
                  "graph (the emulation allocates and synchronizes)");
  const cublasLtMatrixLayout_t layouts[4] = {Adesc, Bdesc, Cdesc, Ddesc};
  const void* const ptrs[4] = {A, B, C, D};
  Plan pl;
  cublasStatus_t st = plan(id, pl, layouts, ptrs, 4);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  Scratch sc(s);
  if (!sc.allocate(pl.total)) return invalid(id, "no device memory for the IMMA reordering copies");
  Copier cp(handle, s);
  mublasStatus_t ms =
      beta_is_zero(desc, beta) ? inputs(cp, pl, sc, s, {0, 1}) : inputs(cp, pl, sc, s, {0, 1, 2});
  const void* args[4];
  mublasLtMatrixLayout_t ls[4];
  substitute(pl, sc, ptrs, args, ls);
  // The algorithm is left to muBLASLt: one chosen for the IMMA layouts does not describe these.
  if (ms == MUBLAS_STATUS_SUCCESS)
    ms = lt().mublasLtMatmul(handle, convert<mublasLtMatmulDesc_t>(desc), alpha, args[0], ls[0],
                             args[1], ls[1], beta, args[2], ls[2], const_cast<void*>(args[3]),
                             ls[3], nullptr, workspace, workspaceSizeInBytes, s);
  if (ms == MUBLAS_STATUS_SUCCESS && pl.ops[3].emulated() && D != nullptr)
    ms = convert_operand(cp, pl.ops[3], packed(pl, sc, 3), sc.base() + pl.p_at, s, true);
  st = CublasLtLib::status(ms);
  return st == CUBLAS_STATUS_SUCCESS ? st : CublasLtLib::fail(id, st);
}

cublasStatus_t transform(mublasLtHandle_t handle, cublasLtMatrixTransformDesc_t desc,
                         const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc,
                         const void* beta, const void* B, cublasLtMatrixLayout_t Bdesc, void* C,
                         cublasLtMatrixLayout_t Cdesc, cudaStream_t stream) {
  constexpr Fn id = Fn::k_cublasLtMatrixTransform;
  if (!runtime_ready()) return CublasLtLib::missing(id);
  if (Cdesc == nullptr) return invalid(id, "a NULL layout for C");
  log_once();
  const auto s = convert<musaStream_t>(stream);
  if (capturing(s))
    return refuse(id,
                  "an IMMA-ordered or planar complex layout on a stream being captured into a "
                  "graph (the emulation allocates and synchronizes)");
  // A and B are skipped when their pointer is NULL (unused), as cuBLASLt does.
  const cublasLtMatrixLayout_t layouts[3] = {A ? Adesc : nullptr, B ? Bdesc : nullptr, Cdesc};
  const void* const ptrs[3] = {A, B, C};
  Plan pl;
  cublasStatus_t st = plan(id, pl, layouts, ptrs, 3);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  Scratch sc(s);
  if (!sc.allocate(pl.total)) return invalid(id, "no device memory for the IMMA reordering copies");
  Copier cp(handle, s);
  mublasStatus_t ms = inputs(cp, pl, sc, s, {0, 1});
  const void* args[3];
  mublasLtMatrixLayout_t ls[3];
  substitute(pl, sc, ptrs, args, ls);
  if (ms == MUBLAS_STATUS_SUCCESS)
    ms = lt().mublasLtMatrixTransform(handle, convert<mublasLtMatrixTransformDesc_t>(desc), alpha,
                                      args[0], ls[0], beta, args[1], ls[1],
                                      const_cast<void*>(args[2]), ls[2], s);
  if (ms == MUBLAS_STATUS_SUCCESS && pl.ops[2].emulated() && C != nullptr)
    ms = convert_operand(cp, pl.ops[2], packed(pl, sc, 2), sc.base() + pl.p_at, s, true);
  st = CublasLtLib::status(ms);
  return st == CUBLAS_STATUS_SUCCESS ? st : CublasLtLib::fail(id, st);
}

}  // namespace emulated_layouts

namespace impl {

cublasStatus_t cublasLtMatrixTransform(mublasLtHandle_t lightHandle,
                                       cublasLtMatrixTransformDesc_t transformDesc,
                                       const void* alpha, const void* A,
                                       cublasLtMatrixLayout_t Adesc, const void* beta,
                                       const void* B, cublasLtMatrixLayout_t Bdesc, void* C,
                                       cublasLtMatrixLayout_t Cdesc, cudaStream_t stream) {
  // FP4 layouts hold an FP8 stand-in in muBLASLt (block_scaled.cc): a transform would move bytes,
  // not elements.
  if (TORCHADA_UNLIKELY(layout_notes::any()) &&
      (layout_notes::get(Adesc).fp4 || layout_notes::get(Bdesc).fp4 ||
       layout_notes::get(Cdesc).fp4)) {
    note_unsupported(Fn::k_cublasLtMatrixTransform,
                     "cublasLtMatrixTransform of CUDA_R_4F_E2M1 matrices (MUSA has no FP4 type)");
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (TORCHADA_UNLIKELY(layout_notes::any()) &&
      (layout_notes::get(Adesc).reordered() || layout_notes::get(Bdesc).reordered() ||
       layout_notes::get(Cdesc).reordered()))
    return emulated_layouts::transform(lightHandle, transformDesc, alpha, A, Adesc, beta, B, Bdesc,
                                       C, Cdesc, stream);
  return lib_call<CublasLtLib>(Fn::k_cublasLtMatrixTransform,
                               mublasLt_backend().table.mublasLtMatrixTransform, lightHandle,
                               transformDesc, alpha, A, Adesc, beta, B, Bdesc, C, Cdesc, stream);
}

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
