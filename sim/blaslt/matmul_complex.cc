// mublasLtMatmul with complex matrices: D = alpha * op(A) op(B) + beta * C with complex scalars,
// op = N, T or C (conjugate transpose), as cuBLASLt's complex GEMMs:
//   A, B MUSA_C_16F or MUSA_C_32F, compute 32F, scale MUSA_C_32F, C and D of A's type or C_32F;
//   everything MUSA_C_64F, compute 64F.
// Host or device scalars, strided batches, COL and ROW orders, no epilogue (check_problem). The
// products are accumulated in double and rounded once when D is stored: at least as accurate as
// fp32 accumulation. op(A)'s rows and op(B)'s columns are packed contiguously first.
#include "elements.h"
#include "internal.h"

#include <complex>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace lt {
namespace {

using cd = std::complex<double>;

struct ComplexJob final : Work {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int32_t op_a = MUBLAS_OP_N, op_b = MUBLAS_OP_N;
  Operand a, b, c, d;
  bool device_scalars = false;
  int32_t scale_type = MUSA_C_32F;
  const void* alpha = nullptr;  // device pointers (device mode)
  const void* beta = nullptr;
  cd alpha_host, beta_host;
  std::vector<cd> pa, pb;  // op(A) rows (m x k), op(B) columns (n x k)

  // op(X)(i, l) of a stored operand: X(i, l), X(l, i) or conj(X(l, i)).
  static cd element(const Operand& x, int32_t op, int64_t bi, int64_t i, int64_t l) {
    if (op == MUBLAS_OP_N) return load_complex(x.at(bi, i, l), x.type);
    const cd v = load_complex(x.at(bi, l, i), x.type);
    return op == MUBLAS_OP_C ? std::conj(v) : v;
  }

  void execute() override {
    const cd al = device_scalars ? load_complex(alpha, scale_type) : alpha_host;
    const cd be = device_scalars ? load_complex(beta, scale_type) : beta_host;
    for (int64_t bi = 0; bi < batch; ++bi) {
      for (int64_t i = 0; i < m; ++i)
        for (int64_t l = 0; l < k; ++l)
          pa[static_cast<size_t>(i * k + l)] = element(a, op_a, bi, i, l);
      // op(B)(l, j): B(l, j), B(j, l) or conj(B(j, l)); stored as column j.
      for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < k; ++l)
          pb[static_cast<size_t>(j * k + l)] = element(b, op_b, bi, l, j);
      for (int64_t j = 0; j < n; ++j) {
        const cd* col = pb.data() + j * k;
        for (int64_t i = 0; i < m; ++i) {
          const cd* row = pa.data() + i * k;
          double re = 0.0, im = 0.0;  // parts kept apart: no complex multiply's NaN handling
          for (int64_t l = 0; l < k; ++l) {
            re += row[l].real() * col[l].real() - row[l].imag() * col[l].imag();
            im += row[l].real() * col[l].imag() + row[l].imag() * col[l].real();
          }
          cd v = al * cd(re, im);
          if (be != cd(0.0, 0.0)) v += be * load_complex(c.at(bi, i, j), c.type);
          store_complex(const_cast<char*>(d.at(bi, i, j)), d.type, v);
        }
      }
    }
  }
};

}  // namespace

mublasStatus_t enqueue_complex_matmul(const char* fn, const DescState& ds, const LayoutState& la,
                                      const LayoutState& lb, const LayoutState& lc,
                                      const LayoutState& ld, const void* alpha, const void* A,
                                      const void* B, const void* beta, const void* C, void* D,
                                      musaStream_t stream) {
  auto job = std::unique_ptr<ComplexJob>(new (std::nothrow) ComplexJob);
  if (!job) return log_error(fn, MUBLAS_STATUS_MEMORY_ERROR, "job");
  ComplexJob& j = *job;
  j.m = static_cast<int64_t>(ld.rows);
  j.n = static_cast<int64_t>(ld.cols);
  j.op_a = ds.transa;
  j.op_b = ds.transb;
  j.k = static_cast<int64_t>(j.op_a != MUBLAS_OP_N ? la.rows : la.cols);
  j.batch = ld.batch_count;
  j.a = make_operand(A, la);
  j.b = make_operand(B, lb);
  j.c = make_operand(C, lc);
  j.d = make_operand(D, ld);
  j.scale_type = ds.scale_type;
  j.device_scalars = ds.pointer_mode == MUBLASLT_POINTER_MODE_DEVICE;
  if (j.m == 0 || j.n == 0) return MUBLAS_STATUS_SUCCESS;
  bool c_needed = true;
  if (j.device_scalars) {
    j.alpha = alpha;
    j.beta = beta;
  } else {  // host scalars are read now, like cuBLASLt
    j.alpha_host = load_complex(alpha, ds.scale_type);
    j.beta_host = load_complex(beta, ds.scale_type);
    c_needed = j.beta_host != cd(0.0, 0.0);
  }
  const mublasStatus_t checked = check_matrices(fn, false, j.k, c_needed, A, B, C, D, lc, ld);
  if (checked != MUBLAS_STATUS_SUCCESS) return checked;
  const int64_t m = j.m, n = j.n, k = j.k, batch = j.batch;
  return allocate_and_enqueue(
      fn, "complex", std::unique_ptr<Work>(job.release()), m, n, k, batch,
      [](Work& w) {
        auto& c = static_cast<ComplexJob&>(w);
        c.pa.resize(static_cast<size_t>(c.m * c.k));
        c.pb.resize(static_cast<size_t>(c.n * c.k));
      },
      stream);
}

}  // namespace lt
