// mublasLtMatmul with compute type 32I: cuBLASLt's int8 GEMMs, computed exactly.
//   A, B MUSA_R_8I; C, D MUSA_R_32I; scale 32I:
//       D = alpha * op(A) op(B) + beta * C in 32-bit two's complement (wrapping, like the GPU)
//   A, B MUSA_R_8I; C, D MUSA_R_8I; scale 32F:
//       acc = op(A) op(B) in int32 (wrapping), v = alpha * (float)acc + beta * (float)C in float,
//       D = v rounded to nearest (ties to even) and saturated to [-128, 127] (NaN: 0)
// No floating-point BLAS: a float cannot hold an int32 sum exactly. op(A)'s rows and op(B)'s
// columns are packed contiguously (int16, which vectorises as pairwise multiply-adds) and each
// element of D is one inner product over k.
#include "elements.h"
#include "internal.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace lt {
namespace {

// sum_l a[l] * b[l] modulo 2^32. Each product fits in int32 (|a b| <= 2^14); the sum is kept
// in uint32 so that wrapping is defined.
uint32_t dot(const int16_t* __restrict a, const int16_t* __restrict b, int64_t k) {
  uint32_t s = 0;
  for (int64_t l = 0; l < k; ++l) {
    s += static_cast<uint32_t>(static_cast<int32_t>(a[l]) * static_cast<int32_t>(b[l]));
  }
  return s;
}

int32_t as_int32(uint32_t u) {
  int32_t i;
  std::memcpy(&i, &u, sizeof(i));
  return i;
}

struct IntJob final : Work {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool ta = false, tb = false;
  Operand a, b, c, d;
  bool int_out = true;  // C/D 32I with scale 32I; else C/D 8I with scale 32F
  int32_t pointer_mode = MUBLASLT_POINTER_MODE_HOST;
  int32_t scale_type = MUSA_R_32I;
  const void* alpha = nullptr;  // device pointers (device and vector modes)
  const void* beta = nullptr;
  double alpha_host = 1.0, beta_host = 0.0;  // exact: an int32 or a float
  int64_t alpha_stride = 0;
  std::vector<int16_t> pa, pb;  // op(A) rows (m x k), op(B) columns (n x k)
  std::vector<uint32_t> acc;    // m x n, column-major

  double scalar(const void* p, int64_t index) const {
    return load(
        static_cast<const char*>(p) + index * static_cast<int64_t>(data_type_size(scale_type)),
        scale_type);
  }

  void execute() override {
    const bool alpha_vec = pointer_mode == MUBLASLT_POINTER_MODE_DEVICE_VECTOR ||
                           pointer_mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO ||
                           pointer_mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST;
    const bool beta_vec = pointer_mode == MUBLASLT_POINTER_MODE_DEVICE_VECTOR;
    double alpha_s = alpha_host, beta_s = beta_host;
    if (pointer_mode == MUBLASLT_POINTER_MODE_DEVICE) {
      alpha_s = scalar(alpha, 0);
      beta_s = scalar(beta, 0);
    } else if (pointer_mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO) {
      beta_s = 0.0;
    }
    for (int64_t bi = 0; bi < batch; ++bi) {
      if (k > 0) {
        for (int64_t i = 0; i < m; ++i) {
          int16_t* row = pa.data() + i * k;
          for (int64_t l = 0; l < k; ++l) {
            row[l] = *reinterpret_cast<const int8_t*>(ta ? a.at(bi, l, i) : a.at(bi, i, l));
          }
        }
        for (int64_t j = 0; j < n; ++j) {
          int16_t* col = pb.data() + j * k;
          for (int64_t l = 0; l < k; ++l) {
            col[l] = *reinterpret_cast<const int8_t*>(tb ? b.at(bi, j, l) : b.at(bi, l, j));
          }
        }
      }
      // Blocks of op(A)'s rows stay in cache while every column of op(B) passes by.
      const int64_t block = std::max<int64_t>(1, std::min<int64_t>(64, (256 * 1024) / (2 * k + 1)));
      for (int64_t i0 = 0; i0 < m; i0 += block) {
        const int64_t i1 = std::min(m, i0 + block);
        for (int64_t j = 0; j < n; ++j) {
          const int16_t* col = pb.data() + j * k;
          for (int64_t i = i0; i < i1; ++i) {
            acc[static_cast<size_t>(i + j * m)] = k > 0 ? dot(pa.data() + i * k, col, k) : 0u;
          }
        }
      }
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < m; ++i) {
          const double al = alpha_vec ? scalar(alpha, bi * alpha_stride + i) : alpha_s;
          const double be = beta_vec ? scalar(beta, i) : beta_s;
          const uint32_t p = acc[static_cast<size_t>(i + j * m)];
          char* out = const_cast<char*>(d.at(bi, i, j));
          if (int_out) {
            // alpha and beta are int32 values (exact in double); wrap like 32-bit hardware.
            uint32_t v = static_cast<uint32_t>(static_cast<int32_t>(al)) * p;
            if (be != 0.0) {
              int32_t cv;
              std::memcpy(&cv, c.at(bi, i, j), sizeof(cv));
              v += static_cast<uint32_t>(static_cast<int32_t>(be)) * static_cast<uint32_t>(cv);
            }
            const int32_t r = as_int32(v);
            std::memcpy(out, &r, sizeof(r));
          } else {
            float v = static_cast<float>(al) * static_cast<float>(as_int32(p));
            if (be != 0.0) {
              const float cv = static_cast<float>(*reinterpret_cast<const int8_t*>(c.at(bi, i, j)));
              v += static_cast<float>(be) * cv;
            }
            store<float>(out, MUSA_R_8I, v);
          }
        }
      }
    }
  }
};

}  // namespace

mublasStatus_t enqueue_int_matmul(const char* fn, const DescState& ds, const LayoutState& la,
                                  const LayoutState& lb, const LayoutState& lc,
                                  const LayoutState& ld, const void* alpha, const void* A,
                                  const void* B, const void* beta, const void* C, void* D,
                                  musaStream_t stream) {
  auto job = std::unique_ptr<IntJob>(new (std::nothrow) IntJob);
  if (!job) return log_error(fn, MUBLAS_STATUS_MEMORY_ERROR, "job");
  IntJob& j = *job;
  const int32_t mode = ds.pointer_mode;
  j.m = static_cast<int64_t>(ld.rows);
  j.n = static_cast<int64_t>(ld.cols);
  j.ta = ds.transa != MUBLAS_OP_N;
  j.tb = ds.transb != MUBLAS_OP_N;
  j.k = static_cast<int64_t>(j.ta ? la.rows : la.cols);
  j.batch = ld.batch_count;
  j.a = make_operand(A, la);
  j.b = make_operand(B, lb);
  j.c = make_operand(C, lc);
  j.d = make_operand(D, ld);
  j.int_out = ld.type == MUSA_R_32I;
  j.pointer_mode = mode;
  j.scale_type = ds.scale_type;
  j.alpha_stride = ds.alpha_vector_batch_stride;
  if (j.m == 0 || j.n == 0) return MUBLAS_STATUS_SUCCESS;
  // Host scalars are read now, like cuBLASLt; device ones when the work runs.
  if (mode == MUBLASLT_POINTER_MODE_HOST) {
    j.alpha_host = load(alpha, ds.scale_type);
    j.beta_host = load(beta, ds.scale_type);
  } else if (mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST) {
    j.beta_host = load(beta, ds.scale_type);
  }
  j.alpha = alpha;
  j.beta = beta;
  bool c_needed = true;
  if (mode == MUBLASLT_POINTER_MODE_HOST ||
      mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST) {
    c_needed = j.beta_host != 0.0;
  } else if (mode == MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO) {
    c_needed = false;
  }
  const mublasStatus_t checked = check_matrices(fn, false, j.k, c_needed, A, B, C, D, lc, ld);
  if (checked != MUBLAS_STATUS_SUCCESS) return checked;
  const int64_t m = j.m, n = j.n, k = j.k, batch = j.batch;
  return allocate_and_enqueue(
      fn, "int8", std::unique_ptr<Work>(job.release()), m, n, k, batch,
      [](Work& w) {
        auto& i = static_cast<IntJob&>(w);
        i.acc.resize(static_cast<size_t>(i.m * i.n));
        if (i.k > 0) {
          i.pa.resize(static_cast<size_t>(i.m * i.k));
          i.pb.resize(static_cast<size_t>(i.n * i.k));
        }
      },
      stream);
}

}  // namespace lt
