// Internal state of the simulated muBLASLt. Descriptors live in the caller-visible opaque storage
// (mublasLt*Opaque_t), so the *Init_internal functions can place them in the caller's memory;
// each starts with a magic number that every entry point checks.
#ifndef TORCHADA_SIM_BLASLT_INTERNAL_H
#define TORCHADA_SIM_BLASLT_INTERNAL_H

#include <mublasLt.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>

namespace lt {

constexpr uint32_t kLayoutMagic = 0x4c54'4c31u;  // "LTL1"
constexpr uint32_t kDescMagic = 0x4c54'4431u;    // "LTD1"
constexpr uint32_t kPrefMagic = 0x4c54'5031u;    // "LTP1"
constexpr uint32_t kXformMagic = 0x4c54'5831u;   // "LTX1"
constexpr uint32_t kAlgoMagic = 0x4c54'4131u;    // "LTA1"
constexpr uint32_t kHandleMagic = 0x4c54'4831u;  // "LTH1"

// flags: bit 0 = allocated by *Create (Destroy frees it); otherwise the caller owns the storage.
constexpr uint32_t kHeapAllocated = 1u;

struct LayoutState {
  uint32_t magic;
  uint32_t flags;
  uint32_t type;  // musaDataType_t
  int32_t order;  // mublasLtOrder_t
  int32_t batch_count;
  uint32_t batch_mode;
  uint64_t rows;
  uint64_t cols;
  int64_t ld;
  int64_t batch_stride;
  int64_t plane_offset;
};
static_assert(sizeof(LayoutState) <= sizeof(mublasLtMatrixLayoutOpaque_t), "layout state size");

struct DescState {
  uint32_t magic;
  uint32_t flags;
  int32_t compute_type;  // mublasComputeType_t
  int32_t scale_type;    // musaDataType_t
  int32_t pointer_mode;  // mublasLtPointerMode_t
  int32_t transa;        // mublasOperation_t
  int32_t transb;
  int32_t transc;
  int32_t fill_mode;  // mublasFillMode_t
  uint32_t epilogue;  // mublasLtEpilogue_t
  const void* bias;
  int64_t bias_batch_stride;
  int64_t alpha_vector_batch_stride;
  int32_t sm_count_target;
  int32_t bias_data_type;  // musaDataType_t or -1
  int8_t fast_accum;
  void* aux;
  int64_t aux_ld;
  int64_t aux_batch_stride;
  int32_t aux_data_type;  // musaDataType_t or -1
  // FP8 scaling: A, B, C, D scale pointers (NULL: 1) and their mublasLtMatmulMatrixScale_t.
  const void* scale[4];
  int32_t scale_mode[4];
  void* amax_d;
};
static_assert(sizeof(DescState) <= sizeof(mublasLtMatmulDescOpaque_t), "desc state size");

struct PrefState {
  uint32_t magic;
  uint32_t flags;
  uint32_t search_mode;
  uint32_t reduction_mask;
  uint32_t min_alignment[4];  // A, B, C, D
  float max_waves;
  uint32_t pad;
  uint64_t max_workspace;
  uint64_t impl_mask;
};
static_assert(sizeof(PrefState) <= sizeof(mublasLtMatmulPreferenceOpaque_t), "pref state size");

struct XformState {
  uint32_t magic;
  uint32_t flags;
  int32_t scale_type;
  int32_t pointer_mode;
  int32_t transa;
  int32_t transb;
};
static_assert(sizeof(XformState) <= sizeof(mublasLtMatrixTransformDescOpaque_t), "xform size");

// The algorithm as stored in mublasLtMatmulAlgo_t::data.
struct AlgoState {
  uint32_t magic;
  int32_t id;
  uint32_t tile;
  uint32_t stages;
  int32_t splitk;
  uint32_t reduction;
  uint32_t swizzle;
  uint32_t custom;
  uint16_t inner_shape;
  uint16_t cluster_shape;
  // Problem signature recorded by AlgoInit (types), checked by AlgoCheck/Matmul.
  int32_t compute_type;
  int32_t scale_type;
  int32_t a_type;
  int32_t b_type;
  int32_t c_type;
  int32_t d_type;
};
static_assert(sizeof(AlgoState) <= sizeof(mublasLtMatmulAlgo_t), "algo state size");
static_assert(std::is_trivially_copyable<AlgoState>::value, "algo state is copied bytewise");

// Typed views of the opaque storage. The storage is uint64_t-aligned, enough for every member.
// The states were created in that storage with placement new by the *Init/*Create functions.
inline LayoutState* state(mublasLtMatrixLayout_t p) {
  return std::launder(reinterpret_cast<LayoutState*>(p));
}
inline DescState* state(mublasLtMatmulDesc_t p) {
  return std::launder(reinterpret_cast<DescState*>(p));
}
inline PrefState* state(mublasLtMatmulPreference_t p) {
  return std::launder(reinterpret_cast<PrefState*>(p));
}
inline XformState* state(mublasLtMatrixTransformDesc_t p) {
  return std::launder(reinterpret_cast<XformState*>(p));
}

// Valid descriptor checks (NULL or not initialised by this library: false).
bool valid(mublasLtMatrixLayout_t p);
bool valid(mublasLtMatmulDesc_t p);
bool valid(mublasLtMatmulPreference_t p);
bool valid(mublasLtMatrixTransformDesc_t p);
bool valid(mublasLtHandle_t h);

// Attribute protocol shared by every Get/Set function, following cuBLASLt:
//   Set: buf non-NULL and sizeInBytes == the attribute's size.
//   Get: sizeInBytes == 0 and buf == NULL: *sizeWritten = the attribute's size (sizeWritten
//        required); otherwise buf non-NULL and sizeInBytes == the attribute's size (>= for array
//        attributes, see get_array).
mublasStatus_t get_value(const void* src, size_t size, void* buf, size_t sizeInBytes,
                         size_t* sizeWritten);
mublasStatus_t check_set(const void* buf, size_t sizeInBytes, size_t size);

// Enum validation.
bool known_data_type(int32_t t);
bool known_compute_type(int32_t t);
bool known_operation(int32_t op);
bool known_fill_mode(int32_t f);
bool known_epilogue(uint32_t e);
bool known_pointer_mode(int32_t m);
size_t data_type_size(int32_t t);  // 0 for types the simulator cannot compute with
bool is_fp8(int32_t t);            // MUSA_R_8F_E4M3 or MUSA_R_8F_E5M2
bool is_int(int32_t t);            // MUSA_R_8I or MUSA_R_32I
bool is_complex(int32_t t);        // MUSA_C_16F, MUSA_C_32F or MUSA_C_64F
int32_t complex_part(int32_t t);   // a complex type's real part (other types: themselves)

// The precision the simulator computes in for a compute type.
// kI32: COMPUTE_32I(_PEDANTIC), exact int32 accumulation of int8 products (matmul_int.cc).
enum class Kind { kNone, kF32, kF64, kF16, kI32 };
Kind compute_kind(int32_t compute_type);
// Whether the simulator computes this type combination: SUCCESS or NOT_IMPLEMENTED.
mublasStatus_t check_types(int32_t compute_type, int32_t scale_type, int32_t a_type, int32_t b_type,
                           int32_t c_type, int32_t d_type);

// A layout the simulator can address: ld >= the inner dimension, sizes within int32, strided
// batches of real matrices. SUCCESS, INVALID_VALUE or NOT_IMPLEMENTED.
mublasStatus_t check_layout(const LayoutState& l);

// What an epilogue does (see mublasLt.h).
struct EpilogueInfo {
  bool known = false;
  bool bias_in = false;   // adds bias[i]
  bool relu = false;      // D = max(x, 0)
  bool gelu = false;      // D = gelu(x)
  bool relu_aux = false;  // writes the ReLU bit mask
  bool gelu_aux = false;  // writes the GELU input
  bool drelu = false;     // D = mask ? x : 0
  bool dgelu = false;     // D = x * gelu'(aux)
  bool bgrad = false;     // bias[i] = sum_j D(i, j)
  bool bgrada = false;    // bias[i] = sum_l op(A)(i, l)
  bool bgradb = false;    // bias[j] = sum_l op(B)(l, j)
  bool reads_aux() const { return drelu || dgelu; }
  bool writes_aux() const { return relu_aux || gelu_aux; }
  bool uses_aux() const { return reads_aux() || writes_aux(); }
  bool writes_bias() const { return bgrad || bgrada || bgradb; }
  bool uses_bias() const { return bias_in || writes_bias(); }
  bool relu_mask() const { return relu_aux || drelu; }
};
EpilogueInfo epilogue_info(uint32_t e);

// Problem checks shared by AlgoGetHeuristic, AlgoCheck and Matmul: every descriptor's state is
// consistent and the type combination is supported. Returns SUCCESS, INVALID_VALUE or
// NOT_IMPLEMENTED.
mublasStatus_t check_problem(const DescState& d, const LayoutState& a, const LayoutState& b,
                             const LayoutState& c, const LayoutState& dd);

// The simulator's one algorithm, initialised for the given types.
void default_algo(mublasLtMatmulAlgo_t* algo, int32_t compute_type, int32_t scale_type,
                  int32_t a_type, int32_t b_type, int32_t c_type, int32_t d_type);
// Whether `algo` is one this library produced (magic and id 0) and fits the problem's types.
mublasStatus_t check_algo(const mublasLtMatmulAlgo_t* algo, const DescState& d,
                          const LayoutState& a, const LayoutState& b, const LayoutState& c,
                          const LayoutState& dd);

// A matmul's matrix pointers: A and B when k > 0, D, and C when it is read (none when D is empty);
// an in-place C == D only with D's layout. SUCCESS, or INVALID_VALUE logged under `fn`.
mublasStatus_t check_matrices(const char* fn, bool d_empty, int64_t k, bool c_needed, const void* A,
                              const void* B, const void* C, const void* D, const LayoutState& lc,
                              const LayoutState& ld);

struct Work;

// The tail of a matmul variant's enqueue: `allocate` (may throw bad_alloc / length_error: a
// MEMORY_ERROR), the sizes logged at level 5 under `label`, the job enqueued on the stream.
// Errors are logged under `fn`.
mublasStatus_t allocate_and_enqueue(const char* fn, const char* label, std::unique_ptr<Work> job,
                                    int64_t m, int64_t n, int64_t k, int64_t batch,
                                    void (*allocate)(Work&), musaStream_t stream);

// The integer matmul (compute 32I, matmul_int.cc) of a problem check_problem and check_algo
// accepted, with alpha and beta non-NULL (beta unless its pointer mode makes it zero): checks the
// matrix pointers, allocates and enqueues it. Errors are logged under `fn`.
mublasStatus_t enqueue_int_matmul(const char* fn, const DescState& ds, const LayoutState& la,
                                  const LayoutState& lb, const LayoutState& lc,
                                  const LayoutState& ld, const void* alpha, const void* A,
                                  const void* B, const void* beta, const void* C, void* D,
                                  musaStream_t stream);

// The complex matmul (matmul_complex.cc), like enqueue_int_matmul.
mublasStatus_t enqueue_complex_matmul(const char* fn, const DescState& ds, const LayoutState& la,
                                      const LayoutState& lb, const LayoutState& lc,
                                      const LayoutState& ld, const void* alpha, const void* A,
                                      const void* B, const void* beta, const void* C, void* D,
                                      musaStream_t stream);

// Work run as a host function on a stream (stream.cc). Everything it needs is checked and
// allocated before it is enqueued, so execute() cannot fail.
struct Work {
  virtual ~Work() = default;
  virtual void execute() = 0;
  // Work captured into a graph runs once per launch, possibly concurrently: serialised.
  std::mutex run_mu;
};
// Enqueues `work` on `stream` (ownership passes in every case). When the stream is capturing,
// the graph owns the work through a user object. SUCCESS, INVALID_VALUE (bad stream) or
// INTERNAL_ERROR.
mublasStatus_t enqueue(std::unique_ptr<Work> work, musaStream_t stream);

// Logging (mublasLtLogger*): level 1 errors, 5 API trace.
void log_message(int level, const char* function, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
mublasStatus_t log_error(const char* function, mublasStatus_t status, const char* what);

}  // namespace lt

#endif  // TORCHADA_SIM_BLASLT_INTERNAL_H
