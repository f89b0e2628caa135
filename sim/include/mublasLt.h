/* torchada: the simulator's declaration of muBLASLt (libmublasLt.so.1), implemented on the CPU in
 * sim/blaslt. No muBLASLt header is public (../shared/musa-abi.md: the library exists only in SDK
 * >= 4.3 [A]). The functions mirror cublasLt.h's signatures with the mechanical rename
 * (cublasLt* -> mublasLt*, cuda* types -> musa*, cublas* types -> mublas*); a cuBLASLt function
 * without a mublasLt* declaration here is one the simulator does not provide.
 *
 * Enum values: the NAMES are cuBLASLt's with the MUBLASLT_ prefix. muBLASLt's real VALUES are
 * unknown [C]. The simulator picks values that DIFFER from cuBLASLt's for every attribute enum,
 * for the epilogues and for the memory orders, so that a value the shim forgets to translate is
 * refused (MUBLAS_STATUS_INVALID_VALUE) instead of being silently misread:
 *   - matmul descriptor attributes:        cuBLASLt value + 100
 *   - matrix layout attributes:            cuBLASLt value + 200
 *   - matmul preference attributes:        cuBLASLt value + 300
 *   - algo capability attributes:          cuBLASLt value + 400
 *   - algo configuration attributes:       cuBLASLt value + 500
 *   - matrix transform desc. attributes:   cuBLASLt value + 600
 *   - epilogues:                           cuBLASLt value << 12 (so the bit structure is kept,
 *                                          and CAP_EPILOGUE_MASK is the same mask << 12)
 *   - orders:                              COL = 16, ROW = 17
 * Pointer modes, reduction schemes, search modes, batch modes and the numerical implementation
 * flags keep cuBLASLt's values. Only enumerators the simulator implements (or honestly accepts,
 * as a hint that cannot change a result) are declared; any other value is refused with
 * MUBLAS_STATUS_INVALID_VALUE.
 *
 * Status conventions (cuBLASLt's statuses that muBLAS lacks, see mublas_types.h):
 *   - NULL handle                         -> MUBLAS_STATUS_INVALID_HANDLE
 *   - NULL descriptor/layout/preference,
 *     NULL output pointer, bad attribute
 *     value or size, too small *_internal
 *     size, inconsistent dimensions       -> MUBLAS_STATUS_INVALID_VALUE
 *   - allocation failure                  -> MUBLAS_STATUS_MEMORY_ERROR (cuBLASLt: ALLOC_FAILED)
 *   - valid but unsupported combination   -> MUBLAS_STATUS_NOT_IMPLEMENTED (cuBLASLt:
 *                                            NOT_SUPPORTED)
 *   - the stream refused the work         -> MUBLAS_STATUS_INTERNAL_ERROR (cuBLASLt:
 *                                            EXECUTION_FAILED)
 */
#ifndef TORCHADA_SIM_MUBLASLT_H
#define TORCHADA_SIM_MUBLASLT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mublas_types.h"
#include "musa_runtime_api.h"

#if defined(__GNUC__)
#define MUBLASLT_API __attribute__((visibility("default")))
#else
#define MUBLASLT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Version reported by mublasLtGetVersion: major * 10000 + minor * 100 + patch of the SDK the
 * simulator stands for (4.3.0; the real encoding is unknown [C]). */
#define MUBLASLT_VER_MAJOR 4
#define MUBLASLT_VER_MINOR 3
#define MUBLASLT_VER_PATCH 0
#define MUBLASLT_VERSION \
  (MUBLASLT_VER_MAJOR * 10000 + MUBLASLT_VER_MINOR * 100 + MUBLASLT_VER_PATCH)

/* ---- Handle */
struct mublasLtContext;
typedef struct mublasLtContext* mublasLtHandle_t;

MUBLASLT_API mublasStatus_t mublasLtCreate(mublasLtHandle_t* lightHandle);
MUBLASLT_API mublasStatus_t mublasLtDestroy(mublasLtHandle_t lightHandle);
MUBLASLT_API const char* mublasLtGetStatusName(mublasStatus_t status);
MUBLASLT_API const char* mublasLtGetStatusString(mublasStatus_t status);
MUBLASLT_API size_t mublasLtGetVersion(void);
/* The simulator keeps no heuristics cache; the capacity is stored and reported back. */
MUBLASLT_API mublasStatus_t mublasLtHeuristicsCacheGetCapacity(size_t* capacity);
MUBLASLT_API mublasStatus_t mublasLtHeuristicsCacheSetCapacity(size_t capacity);
/* Stored and returned (previous mask); the simulator's code path does not depend on it. */
MUBLASLT_API unsigned mublasLtDisableCpuInstructionsSetMask(unsigned mask);

/* ---- Semi-opaque descriptors. The sizes are cuBLASLt's (the *Init_internal functions take the
 * caller's storage; a size below these is refused with MUBLAS_STATUS_INVALID_VALUE). The
 * contents are private to the library. */
typedef struct {
  uint64_t data[8];
} mublasLtMatrixLayoutOpaque_t;
typedef mublasLtMatrixLayoutOpaque_t* mublasLtMatrixLayout_t;

/* An algorithm: 64 bytes, trivially copyable, like cublasLtMatmulAlgo_t. */
typedef struct {
  uint64_t data[8];
} mublasLtMatmulAlgo_t;

typedef struct {
  uint64_t data[32];
} mublasLtMatmulDescOpaque_t;
typedef mublasLtMatmulDescOpaque_t* mublasLtMatmulDesc_t;

typedef struct {
  uint64_t data[8];
} mublasLtMatrixTransformDescOpaque_t;
typedef mublasLtMatrixTransformDescOpaque_t* mublasLtMatrixTransformDesc_t;

typedef struct {
  uint64_t data[8];
} mublasLtMatmulPreferenceOpaque_t;
typedef mublasLtMatmulPreferenceOpaque_t* mublasLtMatmulPreference_t;

/* ---- Algorithm configuration enums. The simulator has one algorithm (id 0) with no tiles,
 * stages, inner shapes or clusters: only the "undefined/auto" value of each is accepted. */
typedef enum { MUBLASLT_MATMUL_TILE_UNDEFINED = 0 } mublasLtMatmulTile_t;
typedef enum { MUBLASLT_MATMUL_STAGES_UNDEFINED = 0 } mublasLtMatmulStages_t;
typedef enum { MUBLASLT_CLUSTER_SHAPE_AUTO = 0 } mublasLtClusterShape_t;
typedef enum { MUBLASLT_MATMUL_INNER_SHAPE_UNDEFINED = 0 } mublasLtMatmulInnerShape_t;

/* Pointer mode of alpha/beta (cuBLASLt's values; HOST/DEVICE equal muBLAS's pointer modes). */
typedef enum {
  MUBLASLT_POINTER_MODE_HOST = MUBLAS_POINTER_MODE_HOST,
  MUBLASLT_POINTER_MODE_DEVICE = MUBLAS_POINTER_MODE_DEVICE,
  /* alpha and beta: device arrays of length m (rows of D) */
  MUBLASLT_POINTER_MODE_DEVICE_VECTOR = 2,
  /* alpha: device array of length m; beta is zero */
  MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO = 3,
  /* alpha: device array of length m; beta: one host value */
  MUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST = 4,
} mublasLtPointerMode_t;

typedef enum {
  MUBLASLT_POINTER_MODE_MASK_HOST = 1,
  MUBLASLT_POINTER_MODE_MASK_DEVICE = 2,
  MUBLASLT_POINTER_MODE_MASK_DEVICE_VECTOR = 4,
  MUBLASLT_POINTER_MODE_MASK_ALPHA_DEVICE_VECTOR_BETA_ZERO = 8,
  MUBLASLT_POINTER_MODE_MASK_ALPHA_DEVICE_VECTOR_BETA_HOST = 16,
} mublasLtPointerModeMask_t;

/* Numerical implementation flags (cuBLASLt's bit values). The simulator's algorithm reports FMA,
 * the accumulator of its compute type and the input type of A/B. */
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_FMA (0x01ull << 0)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_HMMA (0x02ull << 0)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_IMMA (0x04ull << 0)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_DMMA (0x08ull << 0)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_TENSOR_OP_MASK (0xfeull << 0)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_OP_TYPE_MASK (0xffull << 0)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_16F (0x01ull << 8)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32F (0x02ull << 8)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_64F (0x04ull << 8)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32I (0x08ull << 8)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_TYPE_MASK (0xffull << 8)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16F (0x01ull << 16)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16BF (0x02ull << 16)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_TF32 (0x04ull << 16)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_32F (0x08ull << 16)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_64F (0x10ull << 16)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8I (0x20ull << 16)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E4M3 (0x40ull << 16)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E5M2 (0x80ull << 16)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_OP_INPUT_TYPE_MASK (0xffull << 16)
#define MUBLASLT_NUMERICAL_IMPL_FLAGS_GAUSSIAN (0x01ull << 32)
typedef uint64_t mublasLtNumericalImplFlags_t;

/* ---- Matmul: D = epilogue(alpha * op(A) * op(B) + beta * C [+ bias]), computed on the CPU
 * (OpenBLAS) as a host function on `stream`, so it is ordered with the stream's other work.
 * `algo` may be NULL (the library's default algorithm); the workspace is not used. C may alias
 * D (same layout). Supported types (A = B, C = D):
 *   compute 32F (also _PEDANTIC, _FAST_16F, _FAST_16BF, _FAST_TF32), scale 32F:
 *       A/B 32F, C/D 32F | A/B 16F, C/D 16F or 32F | A/B 16BF, C/D 16BF or 32F
 *   compute 64F (also _PEDANTIC), scale 64F: all 64F
 *   compute 16F (also _PEDANTIC), scale 16F: all 16F (accumulated in fp32, rounded once)
 *   FP8 A/B: see "FP8 matmuls" with the matmul descriptor's attributes
 *   compute 32I (also _PEDANTIC), A/B 8I, epilogue DEFAULT only, computed exactly on integers:
 *       scale 32I, C/D 32I: D = alpha * op(A) op(B) + beta * C in wrapping 32-bit arithmetic
 *       scale 32F, C/D 8I: v = alpha * (float)acc + beta * (float)C in float (acc = op(A) op(B)
 *       in int32), D = v rounded to nearest even and saturated to [-128, 127]
 *   complex, epilogue DEFAULT, pointer modes HOST / DEVICE, op N, T or C (conjugate transpose),
 *   accumulated in double and rounded once:
 *       compute 32F, scale C_32F: A/B C_16F or C_32F, C/D of A's type or C_32F
 *       compute 64F, scale C_64F: all C_64F
 * Anything else: MUBLAS_STATUS_NOT_IMPLEMENTED. */
MUBLASLT_API mublasStatus_t mublasLtMatmul(
    mublasLtHandle_t lightHandle, mublasLtMatmulDesc_t computeDesc, const void* alpha,
    const void* A, mublasLtMatrixLayout_t Adesc, const void* B, mublasLtMatrixLayout_t Bdesc,
    const void* beta, const void* C, mublasLtMatrixLayout_t Cdesc, void* D,
    mublasLtMatrixLayout_t Ddesc, const mublasLtMatmulAlgo_t* algo, void* workspace,
    size_t workspaceSizeInBytes, musaStream_t stream);

/* ---- Matrix transform: C = alpha * op(A) + beta * op(B), for changing a matrix's order or
 * scaling/adding matrices. Types: any of 32F, 64F, 16F, 16BF, 8I, 32I for A, B, C and the scale
 * type (computed in double, rounded once; to 8I/32I C: to nearest even, saturated, NaN 0); into a
 * complex C (C_16F, C_32F, C_64F) complex A, B and scale too, op C conjugating. A (or B) may be
 * NULL, which drops its term. op(A), op(B) and C have C's rows x cols; batch counts must match C's. Pointer modes HOST and DEVICE. C may
 * alias A or B. Runs on `stream` like mublasLtMatmul. */
MUBLASLT_API mublasStatus_t mublasLtMatrixTransform(
    mublasLtHandle_t lightHandle, mublasLtMatrixTransformDesc_t transformDesc, const void* alpha,
    const void* A, mublasLtMatrixLayout_t Adesc, const void* beta, const void* B,
    mublasLtMatrixLayout_t Bdesc, void* C, mublasLtMatrixLayout_t Cdesc, musaStream_t stream);

/* ---- Matrix layouts */
typedef enum {
  MUBLASLT_ORDER_COL = 16, /* column-major, ld = stride between columns */
  MUBLASLT_ORDER_ROW = 17, /* row-major, ld = stride between rows */
} mublasLtOrder_t;

typedef enum {
  MUBLASLT_BATCH_MODE_STRIDED = 0,
} mublasLtBatchMode_t;

typedef enum {
  MUBLASLT_MATRIX_LAYOUT_TYPE = 200,                 /* uint32_t, musaDataType_t */
  MUBLASLT_MATRIX_LAYOUT_ORDER = 201,                /* int32_t, default MUBLASLT_ORDER_COL */
  MUBLASLT_MATRIX_LAYOUT_ROWS = 202,                 /* uint64_t */
  MUBLASLT_MATRIX_LAYOUT_COLS = 203,                 /* uint64_t */
  MUBLASLT_MATRIX_LAYOUT_LD = 204,                   /* int64_t */
  MUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 205,          /* int32_t, default 1 */
  MUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 206, /* int64_t elements, default 0 */
  MUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET = 207,         /* int64_t, 0 (planar: NOT_IMPLEMENTED) */
  MUBLASLT_MATRIX_LAYOUT_BATCH_MODE = 208,           /* uint32_t, only STRIDED */
} mublasLtMatrixLayoutAttribute_t;

MUBLASLT_API mublasStatus_t mublasLtMatrixLayoutInit_internal(mublasLtMatrixLayout_t matLayout,
                                                              size_t size, musaDataType type,
                                                              uint64_t rows, uint64_t cols,
                                                              int64_t ld);
static inline mublasStatus_t mublasLtMatrixLayoutInit(mublasLtMatrixLayout_t matLayout,
                                                      musaDataType type, uint64_t rows,
                                                      uint64_t cols, int64_t ld) {
  return mublasLtMatrixLayoutInit_internal(matLayout, sizeof(*matLayout), type, rows, cols, ld);
}
MUBLASLT_API mublasStatus_t mublasLtMatrixLayoutCreate(mublasLtMatrixLayout_t* matLayout,
                                                       musaDataType type, uint64_t rows,
                                                       uint64_t cols, int64_t ld);
MUBLASLT_API mublasStatus_t mublasLtMatrixLayoutDestroy(mublasLtMatrixLayout_t matLayout);
/* Set: sizeInBytes must equal the attribute's size. Get: sizeInBytes 0 with buf NULL asks for
 * the size in *sizeWritten; otherwise sizeInBytes must equal the attribute's size. */
MUBLASLT_API mublasStatus_t mublasLtMatrixLayoutSetAttribute(mublasLtMatrixLayout_t matLayout,
                                                             mublasLtMatrixLayoutAttribute_t attr,
                                                             const void* buf, size_t sizeInBytes);
MUBLASLT_API mublasStatus_t mublasLtMatrixLayoutGetAttribute(mublasLtMatrixLayout_t matLayout,
                                                             mublasLtMatrixLayoutAttribute_t attr,
                                                             void* buf, size_t sizeInBytes,
                                                             size_t* sizeWritten);

/* ---- Matmul descriptors */
typedef enum {
  MUBLASLT_MATMUL_DESC_COMPUTE_TYPE = 100,         /* int32_t, mublasComputeType_t */
  MUBLASLT_MATMUL_DESC_SCALE_TYPE = 101,           /* int32_t, musaDataType_t */
  MUBLASLT_MATMUL_DESC_POINTER_MODE = 102,         /* int32_t, mublasLtPointerMode_t */
  MUBLASLT_MATMUL_DESC_TRANSA = 103,               /* int32_t, mublasOperation_t */
  MUBLASLT_MATMUL_DESC_TRANSB = 104,               /* int32_t, mublasOperation_t */
  MUBLASLT_MATMUL_DESC_TRANSC = 105,               /* int32_t, mublasOperation_t; only N runs */
  MUBLASLT_MATMUL_DESC_FILL_MODE = 106,            /* int32_t, mublasFillMode_t; only FULL runs */
  MUBLASLT_MATMUL_DESC_EPILOGUE = 107,             /* uint32_t, mublasLtEpilogue_t */
  MUBLASLT_MATMUL_DESC_BIAS_POINTER = 108,         /* const void*, length m */
  MUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE = 110,    /* int64_t elements */
  MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER = 111, /* void* */
  MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD = 112,      /* int64_t elements (bits for ReLU) */
  MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE = 113, /* int64_t elements (bits for ReLU) */
  MUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE = 114, /* int64_t elements */
  MUBLASLT_MATMUL_DESC_SM_COUNT_TARGET = 115,           /* int32_t, a hint: stored, no effect */
  /* FP8 scaling (see "FP8 matmuls" below): const void*, default NULL (a scale of 1) */
  MUBLASLT_MATMUL_DESC_A_SCALE_POINTER = 117,
  MUBLASLT_MATMUL_DESC_B_SCALE_POINTER = 118,
  MUBLASLT_MATMUL_DESC_C_SCALE_POINTER = 119,
  MUBLASLT_MATMUL_DESC_D_SCALE_POINTER = 120,
  MUBLASLT_MATMUL_DESC_AMAX_D_POINTER = 121,            /* void*: one float, max |D| unscaled */
  MUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE = 122,    /* int32_t, musaDataType_t; -1: D's type */
  MUBLASLT_MATMUL_DESC_FAST_ACCUM = 125,                /* int8_t, FP8: stored, no effect */
  MUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 126,            /* int32_t, musaDataType_t; -1: D's type */
  /* int32_t mublasLtMatmulMatrixScale_t of each scale pointer, default SCALAR_32F */
  MUBLASLT_MATMUL_DESC_A_SCALE_MODE = 131,
  MUBLASLT_MATMUL_DESC_B_SCALE_MODE = 132,
  MUBLASLT_MATMUL_DESC_C_SCALE_MODE = 133,
  MUBLASLT_MATMUL_DESC_D_SCALE_MODE = 134,
} mublasLtMatmulDescAttributes_t;

/* How a scale pointer is read (cuBLASLt's values + 16 [C]). cuBLASLt's other block-scaled modes
 * (VEC16_UE4M3: NVFP4; VEC128_32F, BLK128x128_32F) are not implemented, so not declared.
 * VEC32_UE8M0 (MXFP8), A and B only: one UE8M0 factor (2^(e - 127); 0xff NaN) per 32 consecutive
 * K elements of each row of op(A) / column of op(B), A and B stored with K innermost (op(A) =
 * A^T column-major, op(B) = B), one batch instance; factor (r, c) of the r-th row of op(A)
 * (column of op(B)) and the c-th K block lies in cuBLASLt's tiles of 128 x 4 factors:
 *   ((r / 128) * ceil(ceil(k / 32) / 4) + c / 4) * 512
 *   + (r % 32) * 16 + (r % 128 / 32) * 4 + c % 4. */
typedef enum {
  MUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F = 16,           /* one float for the whole matrix */
  MUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 = 18,          /* see above */
  MUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F = 19,        /* A, B only: m (A) or n (B) floats;
                                                             D(i, j) gets a[i] * b[j] */
  MUBLASLT_MATMUL_MATRIX_SCALE_PER_BATCH_SCALAR_32F = 22, /* one float per batch instance */
} mublasLtMatmulMatrixScale_t;

/* FP8 matmuls: compute 32F (any 32F variant), scale 32F, A and B MUSA_R_8F_E4M3 or _E5M2 (not
 * both E5M2), C 16F, 16BF or 32F, D 16F, 16BF, 32F, 8F_E4M3 or 8F_E5M2 (C's type need not be
 * D's: C is read only when beta != 0). The inputs are decoded exactly, products accumulated in
 * fp32 (FAST_ACCUM is accepted: that is at least as accurate), and
 *   x = alpha * (scaleA * op(A)) (scaleB * op(B)) + beta * scaleC * C  [+ bias, ReLU / GELU]
 *   AMAX_D = max |x| over D (all batches), written as one float when the pointer is set
 *   D = scaleD * x, rounded to D's type (FP8: to nearest even, saturating to +-448 / +-57344)
 * scaleD applies to FP8 D only (PyTorch documents cuBLASLt so: 16/32-bit D is not scaled). The
 * bias (BIAS_DATA_TYPE 16F, 16BF or 32F; default C's type when D is FP8) is added before the
 * activation. Epilogues: DEFAULT, BIAS, RELU(_BIAS), GELU(_BIAS);
 * those with aux or bias-gradient outputs are NOT_IMPLEMENTED for FP8. Scale pointers or AMAX_D
 * with non-FP8 A/B: INVALID_VALUE. OUTER_VEC_32F or VEC32_UE8M0 on C or D: INVALID_VALUE;
 * VEC32_UE8M0 with another storage of A or B, or with batches: NOT_IMPLEMENTED. */

/* Epilogues: cuBLASLt's values << 12 [C]. x = alpha * op(A) * op(B) + beta * C, in the compute
 * precision; "bias" is BIAS_POINTER (length m, BIAS_DATA_TYPE, default D's type), "aux" is
 * EPILOGUE_AUX_POINTER (AUX_LD, AUX_BATCH_STRIDE; GELU aux of AUX_DATA_TYPE, default D's type,
 * ld a multiple of 8 and >= m; ReLU aux a bit mask, bit (b * stride + j * ld + i) = bit (idx % 8)
 * of byte idx / 8, ld a multiple of 128 (bits) and >= m). GELU is the tanh approximation
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
 *   DEFAULT: D = x                 RELU: D = max(x, 0)          GELU: D = gelu(x)
 *   *_BIAS: x + bias[i] first      *_AUX: also aux = ReLU mask (x > 0) / GELU input x
 *   DRELU: D = mask ? x : 0        DGELU: D = x * gelu'(aux)    (aux read, not written)
 *   D*_BGRAD: also bias[i] = sum_j D(i, j) (written; in the compute precision)
 *   BGRADA: D = x and bias[i] = sum_l op(A)(i, l) (length m); BGRADB: bias[j] = sum_l
 *   op(B)(l, j) (length n). The bias gradients are unscaled sums. */
typedef enum {
  MUBLASLT_EPILOGUE_DEFAULT = 1 << 12,
  MUBLASLT_EPILOGUE_RELU = 2 << 12,
  MUBLASLT_EPILOGUE_RELU_AUX = (2 | 128) << 12,
  MUBLASLT_EPILOGUE_BIAS = 4 << 12,
  MUBLASLT_EPILOGUE_RELU_BIAS = (2 | 4) << 12,
  MUBLASLT_EPILOGUE_RELU_AUX_BIAS = (2 | 128 | 4) << 12,
  MUBLASLT_EPILOGUE_DRELU = (8 | 128) << 12,
  MUBLASLT_EPILOGUE_DRELU_BGRAD = (8 | 128 | 16) << 12,
  MUBLASLT_EPILOGUE_GELU = 32 << 12,
  MUBLASLT_EPILOGUE_GELU_AUX = (32 | 128) << 12,
  MUBLASLT_EPILOGUE_GELU_BIAS = (32 | 4) << 12,
  MUBLASLT_EPILOGUE_GELU_AUX_BIAS = (32 | 128 | 4) << 12,
  MUBLASLT_EPILOGUE_DGELU = (64 | 128) << 12,
  MUBLASLT_EPILOGUE_DGELU_BGRAD = (64 | 128 | 16) << 12,
  MUBLASLT_EPILOGUE_BGRADA = 256 << 12,
  MUBLASLT_EPILOGUE_BGRADB = 512 << 12,
} mublasLtEpilogue_t;

MUBLASLT_API mublasStatus_t mublasLtMatmulDescInit_internal(mublasLtMatmulDesc_t matmulDesc,
                                                            size_t size,
                                                            mublasComputeType_t computeType,
                                                            musaDataType_t scaleType);
static inline mublasStatus_t mublasLtMatmulDescInit(mublasLtMatmulDesc_t matmulDesc,
                                                    mublasComputeType_t computeType,
                                                    musaDataType_t scaleType) {
  return mublasLtMatmulDescInit_internal(matmulDesc, sizeof(*matmulDesc), computeType, scaleType);
}
MUBLASLT_API mublasStatus_t mublasLtMatmulDescCreate(mublasLtMatmulDesc_t* matmulDesc,
                                                     mublasComputeType_t computeType,
                                                     musaDataType_t scaleType);
MUBLASLT_API mublasStatus_t mublasLtMatmulDescDestroy(mublasLtMatmulDesc_t matmulDesc);
MUBLASLT_API mublasStatus_t mublasLtMatmulDescSetAttribute(mublasLtMatmulDesc_t matmulDesc,
                                                           mublasLtMatmulDescAttributes_t attr,
                                                           const void* buf, size_t sizeInBytes);
MUBLASLT_API mublasStatus_t mublasLtMatmulDescGetAttribute(mublasLtMatmulDesc_t matmulDesc,
                                                           mublasLtMatmulDescAttributes_t attr,
                                                           void* buf, size_t sizeInBytes,
                                                           size_t* sizeWritten);

/* ---- Matrix transform descriptors: cuBLASLt value + 600 [C]. */
typedef enum {
  MUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE = 600,   /* int32_t, musaDataType_t */
  MUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE = 601, /* int32_t, HOST or DEVICE */
  MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA = 602,       /* int32_t, mublasOperation_t */
  MUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB = 603,       /* int32_t, mublasOperation_t */
} mublasLtMatrixTransformDescAttributes_t;

MUBLASLT_API mublasStatus_t mublasLtMatrixTransformDescInit_internal(
    mublasLtMatrixTransformDesc_t transformDesc, size_t size, musaDataType scaleType);
static inline mublasStatus_t mublasLtMatrixTransformDescInit(
    mublasLtMatrixTransformDesc_t transformDesc, musaDataType scaleType) {
  return mublasLtMatrixTransformDescInit_internal(transformDesc, sizeof(*transformDesc), scaleType);
}
MUBLASLT_API mublasStatus_t mublasLtMatrixTransformDescCreate(
    mublasLtMatrixTransformDesc_t* transformDesc, musaDataType scaleType);
MUBLASLT_API mublasStatus_t
mublasLtMatrixTransformDescDestroy(mublasLtMatrixTransformDesc_t transformDesc);
MUBLASLT_API mublasStatus_t mublasLtMatrixTransformDescSetAttribute(
    mublasLtMatrixTransformDesc_t transformDesc, mublasLtMatrixTransformDescAttributes_t attr,
    const void* buf, size_t sizeInBytes);
MUBLASLT_API mublasStatus_t mublasLtMatrixTransformDescGetAttribute(
    mublasLtMatrixTransformDesc_t transformDesc, mublasLtMatrixTransformDescAttributes_t attr,
    void* buf, size_t sizeInBytes, size_t* sizeWritten);

/* ---- Heuristics */
typedef enum {
  MUBLASLT_REDUCTION_SCHEME_NONE = 0,
  MUBLASLT_REDUCTION_SCHEME_INPLACE = 1,
  MUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE = 2,
  MUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE = 4,
  MUBLASLT_REDUCTION_SCHEME_MASK = 0x7,
} mublasLtReductionScheme_t;

typedef enum {
  MUBLASLT_SEARCH_BEST_FIT = 0,
  MUBLASLT_SEARCH_LIMITED_BY_ALGO_ID = 1,
} mublasLtMatmulSearch_t;

typedef enum {
  MUBLASLT_MATMUL_PREF_SEARCH_MODE = 300,           /* uint32_t, default BEST_FIT */
  MUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 301,   /* uint64_t, default 0 */
  MUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = 303, /* uint32_t, default MASK */
  MUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 305, /* uint32_t, default 256 */
  MUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 306, /* uint32_t, default 256 */
  MUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 307, /* uint32_t, default 256 */
  MUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 308, /* uint32_t, default 256 */
  MUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT = 309,       /* float, default 0 */
  MUBLASLT_MATMUL_PREF_IMPL_MASK = 312,             /* uint64_t, default all ones */
} mublasLtMatmulPreferenceAttributes_t;

MUBLASLT_API mublasStatus_t mublasLtMatmulPreferenceInit_internal(mublasLtMatmulPreference_t pref,
                                                                  size_t size);
static inline mublasStatus_t mublasLtMatmulPreferenceInit(mublasLtMatmulPreference_t pref) {
  return mublasLtMatmulPreferenceInit_internal(pref, sizeof(*pref));
}
MUBLASLT_API mublasStatus_t mublasLtMatmulPreferenceCreate(mublasLtMatmulPreference_t* pref);
MUBLASLT_API mublasStatus_t mublasLtMatmulPreferenceDestroy(mublasLtMatmulPreference_t pref);
MUBLASLT_API mublasStatus_t mublasLtMatmulPreferenceSetAttribute(
    mublasLtMatmulPreference_t pref, mublasLtMatmulPreferenceAttributes_t attr, const void* buf,
    size_t sizeInBytes);
MUBLASLT_API mublasStatus_t mublasLtMatmulPreferenceGetAttribute(
    mublasLtMatmulPreference_t pref, mublasLtMatmulPreferenceAttributes_t attr, void* buf,
    size_t sizeInBytes, size_t* sizeWritten);

/* Same fields, order and size as cublasLtMatmulHeuristicResult_t. */
typedef struct {
  mublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  mublasStatus_t state;
  float wavesCount;
  int reserved[4];
} mublasLtMatmulHeuristicResult_t;

/* One algorithm exists: a supported problem gets exactly one result (workspaceSize 0, state
 * SUCCESS, wavesCount 1), an unsupported one MUBLAS_STATUS_NOT_IMPLEMENTED. */
MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoGetHeuristic(
    mublasLtHandle_t lightHandle, mublasLtMatmulDesc_t operationDesc, mublasLtMatrixLayout_t Adesc,
    mublasLtMatrixLayout_t Bdesc, mublasLtMatrixLayout_t Cdesc, mublasLtMatrixLayout_t Ddesc,
    mublasLtMatmulPreference_t preference, int requestedAlgoCount,
    mublasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount);

/* ---- Lower-level algorithm API. The simulator has one algorithm, id 0. */
MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoGetIds(mublasLtHandle_t lightHandle,
                                                     mublasComputeType_t computeType,
                                                     musaDataType_t scaleType, musaDataType_t Atype,
                                                     musaDataType_t Btype, musaDataType_t Ctype,
                                                     musaDataType_t Dtype, int requestedAlgoCount,
                                                     int algoIdsArray[], int* returnAlgoCount);
MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoInit(mublasLtHandle_t lightHandle,
                                                   mublasComputeType_t computeType,
                                                   musaDataType_t scaleType, musaDataType_t Atype,
                                                   musaDataType_t Btype, musaDataType_t Ctype,
                                                   musaDataType_t Dtype, int algoId,
                                                   mublasLtMatmulAlgo_t* algo);
MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoCheck(
    mublasLtHandle_t lightHandle, mublasLtMatmulDesc_t operationDesc, mublasLtMatrixLayout_t Adesc,
    mublasLtMatrixLayout_t Bdesc, mublasLtMatrixLayout_t Cdesc, mublasLtMatrixLayout_t Ddesc,
    const mublasLtMatmulAlgo_t* algo, mublasLtMatmulHeuristicResult_t* result);

/* Capabilities of an algorithm: cuBLASLt value + 400 [C]. */
typedef enum {
  MUBLASLT_ALGO_CAP_SPLITK_SUPPORT = 400,                   /* int32_t: 0 */
  MUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK = 401,            /* uint32_t: 0 */
  MUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT = 402,            /* uint32_t: 0 */
  MUBLASLT_ALGO_CAP_STRIDED_BATCH_SUPPORT = 403,            /* int32_t: 1 */
  MUBLASLT_ALGO_CAP_OUT_OF_PLACE_RESULT_SUPPORT = 404,      /* int32_t: 1 */
  MUBLASLT_ALGO_CAP_UPLO_SUPPORT = 405,                     /* int32_t: 0 */
  MUBLASLT_ALGO_CAP_TILE_IDS = 406,                         /* uint32_t[]: {UNDEFINED} */
  MUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX = 407,                /* int32_t: 0 */
  MUBLASLT_ALGO_CAP_CUSTOM_MEMORY_ORDER = 410,              /* int32_t: 0 */
  MUBLASLT_ALGO_CAP_POINTER_MODE_MASK = 411,                /* uint32_t: all five modes */
  MUBLASLT_ALGO_CAP_EPILOGUE_MASK = 412,                    /* uint32_t: OR of the epilogues */
  MUBLASLT_ALGO_CAP_STAGES_IDS = 413,                       /* uint32_t[]: {UNDEFINED} */
  MUBLASLT_ALGO_CAP_LD_NEGATIVE = 414,                      /* int32_t: 0 */
  MUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS = 415,             /* uint64_t */
  MUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES = 416,            /* uint32_t: element size */
  MUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES = 417,            /* uint32_t: element size */
  MUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES = 418,            /* uint32_t: element size */
  MUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES = 419,            /* uint32_t: element size */
  MUBLASLT_ALGO_CAP_POINTER_ARRAY_BATCH_SUPPORT = 421,      /* int32_t: 0 */
  MUBLASLT_ALGO_CAP_FLOATING_POINT_EMULATION_SUPPORT = 422, /* int32_t: 0 */
} mublasLtMatmulAlgoCapAttributes_t;

/* Array attributes (TILE_IDS, STAGES_IDS) accept any buffer of at least one element and report
 * the bytes written; the others follow the exact-size protocol. */
MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoCapGetAttribute(
    const mublasLtMatmulAlgo_t* algo, mublasLtMatmulAlgoCapAttributes_t attr, void* buf,
    size_t sizeInBytes, size_t* sizeWritten);

/* Configuration of an algorithm: cuBLASLt value + 500 [C]. The simulator's algorithm has one
 * configuration: setting any value other than the default is refused (INVALID_VALUE). */
typedef enum {
  MUBLASLT_ALGO_CONFIG_ID = 500,               /* int32_t, read-only */
  MUBLASLT_ALGO_CONFIG_TILE_ID = 501,          /* uint32_t: UNDEFINED */
  MUBLASLT_ALGO_CONFIG_SPLITK_NUM = 502,       /* int32_t: 1 */
  MUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME = 503, /* uint32_t: NONE */
  MUBLASLT_ALGO_CONFIG_CTA_SWIZZLING = 504,    /* uint32_t: 0 */
  MUBLASLT_ALGO_CONFIG_CUSTOM_OPTION = 505,    /* uint32_t: 0 */
  MUBLASLT_ALGO_CONFIG_STAGES_ID = 506,        /* uint32_t: UNDEFINED */
  MUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID = 507,   /* uint16_t: UNDEFINED */
  MUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID = 508, /* uint16_t: AUTO */
} mublasLtMatmulAlgoConfigAttributes_t;

MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoConfigSetAttribute(
    mublasLtMatmulAlgo_t* algo, mublasLtMatmulAlgoConfigAttributes_t attr, const void* buf,
    size_t sizeInBytes);
MUBLASLT_API mublasStatus_t mublasLtMatmulAlgoConfigGetAttribute(
    const mublasLtMatmulAlgo_t* algo, mublasLtMatmulAlgoConfigAttributes_t attr, void* buf,
    size_t sizeInBytes, size_t* sizeWritten);

/* ---- Logger. Level N enables mask bits 1..N (1 errors, 2 performance trace, 4 performance
 * hints, 8 heuristics trace, 16 API trace); the simulator emits errors (1) and API traces of
 * mublasLtMatmul (16). */
typedef void (*mublasLtLoggerCallback_t)(int logLevel, const char* functionName,
                                         const char* message);
MUBLASLT_API mublasStatus_t mublasLtLoggerSetCallback(mublasLtLoggerCallback_t callback);
MUBLASLT_API mublasStatus_t mublasLtLoggerSetFile(FILE* file);
MUBLASLT_API mublasStatus_t mublasLtLoggerOpenFile(const char* logFile);
MUBLASLT_API mublasStatus_t mublasLtLoggerSetLevel(int level);
MUBLASLT_API mublasStatus_t mublasLtLoggerSetMask(int mask);
MUBLASLT_API mublasStatus_t mublasLtLoggerForceDisable(void);

#ifdef __cplusplus
}
#endif

#endif /* TORCHADA_SIM_MUBLASLT_H */
