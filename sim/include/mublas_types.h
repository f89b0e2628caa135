// The simulator's description of muBLAS's types and enum values (no official header is public).
// Values follow ../shared/musa-abi.md: the status names and the rocBLAS-style numbering of the
// operation/fill/diag/side enums come from an unattributed source [C]. They differ from cuBLAS's
// on purpose in the places musa-abi.md says they do, so a missing translation in the shim shows
// up as a wrong answer or an error in the tests.
#pragma once

#include "musa_library_types.h"

struct _mublasHandle_t;
typedef struct _mublasHandle_t* mublasHandle_t;

typedef enum {
  MUBLAS_STATUS_SUCCESS = 0,
  MUBLAS_STATUS_INVALID_HANDLE = 1,
  MUBLAS_STATUS_NOT_IMPLEMENTED = 2,
  MUBLAS_STATUS_INVALID_POINTER = 3,
  MUBLAS_STATUS_INVALID_SIZE = 4,
  MUBLAS_STATUS_MEMORY_ERROR = 5,
  MUBLAS_STATUS_INTERNAL_ERROR = 6,
  MUBLAS_STATUS_PERF_DEGRADED = 7,
  MUBLAS_STATUS_SIZE_QUERY_MISMATCH = 8,
  MUBLAS_STATUS_SIZE_INCREASED = 9,
  MUBLAS_STATUS_SIZE_UNCHANGED = 10,
  MUBLAS_STATUS_INVALID_VALUE = 11,
  MUBLAS_STATUS_CONTINUE = 12,
  MUBLAS_STATUS_CHECK_NUMERICS_FAIL = 13,
} mublasStatus_t;

typedef enum { MUBLAS_OP_N = 111, MUBLAS_OP_T = 112, MUBLAS_OP_C = 113 } mublasOperation_t;
typedef enum {
  MUBLAS_FILL_MODE_UPPER = 121,
  MUBLAS_FILL_MODE_LOWER = 122,
  MUBLAS_FILL_MODE_FULL = 123
} mublasFillMode_t;
typedef enum { MUBLAS_DIAG_NON_UNIT = 131, MUBLAS_DIAG_UNIT = 132 } mublasDiagType_t;
typedef enum {
  MUBLAS_SIDE_LEFT = 141,
  MUBLAS_SIDE_RIGHT = 142,
  MUBLAS_SIDE_BOTH = 143
} mublasSideMode_t;
typedef enum { MUBLAS_POINTER_MODE_HOST = 0, MUBLAS_POINTER_MODE_DEVICE = 1 } mublasPointerMode_t;
typedef enum { MUBLAS_ATOMICS_NOT_ALLOWED = 0, MUBLAS_ATOMICS_ALLOWED = 1 } mublasAtomicsMode_t;

// Math modes: musa-abi.md records a rename at SDK 4.2 (MUBLAS_MATH_MODE_DEFAULT became
// MUBLAS_TENSOR_OP_MATH for the TF32 role); the simulator follows the newer names.
typedef enum {
  MUBLAS_DEFAULT_MATH = 0,
  MUBLAS_TENSOR_OP_MATH = 1,
  MUBLAS_PEDANTIC_MATH = 2,
  MUBLAS_TF32_TENSOR_OP_MATH = 3,
  MUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,
} mublasMath_t;

typedef enum {
  MUBLAS_COMPUTE_16F = 64,
  MUBLAS_COMPUTE_16F_PEDANTIC = 65,
  MUBLAS_COMPUTE_32F = 68,
  MUBLAS_COMPUTE_32F_PEDANTIC = 69,
  MUBLAS_COMPUTE_64F = 70,
  MUBLAS_COMPUTE_64F_PEDANTIC = 71,
  MUBLAS_COMPUTE_32I = 72,
  MUBLAS_COMPUTE_32I_PEDANTIC = 73,
  MUBLAS_COMPUTE_32F_FAST_16F = 74,
  MUBLAS_COMPUTE_32F_FAST_16BF = 75,
  MUBLAS_COMPUTE_32F_FAST_TF32 = 77,
} mublasComputeType_t;

// muBLAS has only the default algorithms; cuBLAS's numbered algorithms are hints the shim maps
// onto these two.
typedef enum { MUBLAS_GEMM_DEFAULT = 0, MUBLAS_GEMM_DEFAULT_TENSOR_OP = 1 } mublasGemmAlgo_t;

// Complex numbers: same layout as CUDA's float2/double2 (checked by the shim's static_asserts).
typedef struct __attribute__((aligned(8))) {
  float x, y;
} muFloatComplex;
typedef struct __attribute__((aligned(16))) {
  double x, y;
} muDoubleComplex;
typedef muFloatComplex muComplex;
