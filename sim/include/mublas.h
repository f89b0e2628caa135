/* torchada: the simulator's declaration of the muBLAS API (libmublas.so.1), implemented on the CPU
 * with OpenBLAS by sim/blas. No official muBLAS header is public; the functions follow cuBLAS's
 * (`cublasX_v2` / `cublasX` is `mublasX`: no `_v2`, no `_64` names), with the same parameter order
 * and the types renamed (cublasHandle_t -> mublasHandle_t, cuComplex -> muComplex,
 * cudaStream_t -> musaStream_t, cudaDataType -> musaDataType_t, enums -> mublas* enums whose
 * values are muBLAS's own: see mublas_types.h and ../../shared/musa-abi.md).
 *
 * Exactly what libmublas implements is declared here (the shim forwards a cuBLAS function when its
 * muBLAS name is declared). Matrices are column-major, as in cuBLAS. All work runs in order on the
 * handle's stream; results of level-1 reductions written to a host pointer (pointer mode host)
 * are complete when the call returns.
 *
 * Two SDK generations are modelled (sim/blas/README.md):
 *   - default (SDK >= 4.2): mublasGetStatusString, and the GemmEx family taking the compute type
 *     both as mublasComputeType_t and as musaDataType_t;
 *   - MUBLAS_SIM_LEGACY_API defined (SDK < 4.2): mublasStatus_to_string instead of
 *     mublasGetStatusString, and only the musaDataType_t compute-type GemmEx overloads.
 * The GemmEx family has C++ linkage (mangled names), as in the real library.
 */
#ifndef TORCHADA_SIM_MUBLAS_H
#define TORCHADA_SIM_MUBLAS_H

#include <stddef.h>

#include "mublas_types.h"
#include "musa_runtime_api.h"

#if defined(__GNUC__)
#define MUBLAS_API __attribute__((visibility("default")))
#else
#define MUBLAS_API
#endif

/* Half-precision element types of the H/T routines, used only through pointers here: IEEE binary16
 * (__half, MUSA's musa_fp16.h) and bfloat16 (__mt_bfloat16, MUSA's musa_bf16.h). */
#ifdef __cplusplus
struct __half;
struct __mt_bfloat16;
#else
typedef struct __half __half;
typedef struct __mt_bfloat16 __mt_bfloat16;
#endif

/* mublasGetProperty's selector (CUDA's libraryPropertyType; a muBLAS-prefixed name so that it
 * cannot clash with CUDA's in a translation unit that includes both). */
typedef enum {
  MUBLAS_PROPERTY_MAJOR_VERSION = 0,
  MUBLAS_PROPERTY_MINOR_VERSION = 1,
  MUBLAS_PROPERTY_PATCH_LEVEL = 2
} mublasLibraryPropertyType_t;

/* The simulated library's version: mublasGetVersion reports major * 10000 + minor * 100 + patch. */
#define MUBLAS_SIM_VERSION_MAJOR 2
#define MUBLAS_SIM_VERSION_MINOR 1
#define MUBLAS_SIM_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Handle, stream, modes, workspace */
MUBLAS_API mublasStatus_t mublasCreate(mublasHandle_t* handle);
MUBLAS_API mublasStatus_t mublasDestroy(mublasHandle_t handle);
MUBLAS_API mublasStatus_t mublasGetVersion(mublasHandle_t handle, int* version);
MUBLAS_API mublasStatus_t mublasGetProperty(mublasLibraryPropertyType_t type, int* value);
MUBLAS_API mublasStatus_t mublasSetWorkspace(mublasHandle_t handle, void* workspace,
                                             size_t workspaceSizeInBytes);
MUBLAS_API mublasStatus_t mublasSetStream(mublasHandle_t handle, musaStream_t streamId);
MUBLAS_API mublasStatus_t mublasGetStream(mublasHandle_t handle, musaStream_t* streamId);
MUBLAS_API mublasStatus_t mublasGetPointerMode(mublasHandle_t handle, mublasPointerMode_t* mode);
MUBLAS_API mublasStatus_t mublasSetPointerMode(mublasHandle_t handle, mublasPointerMode_t mode);
MUBLAS_API mublasStatus_t mublasGetAtomicsMode(mublasHandle_t handle, mublasAtomicsMode_t* mode);
MUBLAS_API mublasStatus_t mublasSetAtomicsMode(mublasHandle_t handle, mublasAtomicsMode_t mode);
MUBLAS_API mublasStatus_t mublasGetMathMode(mublasHandle_t handle, mublasMath_t* mode);
MUBLAS_API mublasStatus_t mublasSetMathMode(mublasHandle_t handle, mublasMath_t mode);
MUBLAS_API mublasStatus_t mublasGetSmCountTarget(mublasHandle_t handle, int* smCountTarget);
MUBLAS_API mublasStatus_t mublasSetSmCountTarget(mublasHandle_t handle, int smCountTarget);

/* ---- Status names */
MUBLAS_API const char* mublasGetStatusName(mublasStatus_t status);
#ifndef MUBLAS_SIM_LEGACY_API
MUBLAS_API const char* mublasGetStatusString(mublasStatus_t status);
#else
MUBLAS_API const char* mublasStatus_to_string(mublasStatus_t status);
#endif

/* ---- Host <-> device transfers (synchronous forms wait for the legacy stream) */
MUBLAS_API mublasStatus_t mublasSetVector(int n, int elemSize, const void* x, int incx,
                                          void* devicePtr, int incy);
MUBLAS_API mublasStatus_t mublasGetVector(int n, int elemSize, const void* x, int incx, void* y,
                                          int incy);
MUBLAS_API mublasStatus_t mublasSetMatrix(int rows, int cols, int elemSize, const void* A, int lda,
                                          void* B, int ldb);
MUBLAS_API mublasStatus_t mublasGetMatrix(int rows, int cols, int elemSize, const void* A, int lda,
                                          void* B, int ldb);
MUBLAS_API mublasStatus_t mublasSetVectorAsync(int n, int elemSize, const void* hostPtr, int incx,
                                               void* devicePtr, int incy, musaStream_t stream);
MUBLAS_API mublasStatus_t mublasGetVectorAsync(int n, int elemSize, const void* devicePtr, int incx,
                                               void* hostPtr, int incy, musaStream_t stream);
MUBLAS_API mublasStatus_t mublasSetMatrixAsync(int rows, int cols, int elemSize, const void* A,
                                               int lda, void* B, int ldb, musaStream_t stream);
MUBLAS_API mublasStatus_t mublasGetMatrixAsync(int rows, int cols, int elemSize, const void* A,
                                               int lda, void* B, int ldb, musaStream_t stream);

/* ---- Level 1 */
MUBLAS_API mublasStatus_t mublasSnrm2(mublasHandle_t handle, int n, const float* x, int incx,
                                      float* result);
MUBLAS_API mublasStatus_t mublasDnrm2(mublasHandle_t handle, int n, const double* x, int incx,
                                      double* result);
MUBLAS_API mublasStatus_t mublasScnrm2(mublasHandle_t handle, int n, const muComplex* x, int incx,
                                       float* result);
MUBLAS_API mublasStatus_t mublasDznrm2(mublasHandle_t handle, int n, const muDoubleComplex* x,
                                       int incx, double* result);
MUBLAS_API mublasStatus_t mublasSdot(mublasHandle_t handle, int n, const float* x, int incx,
                                     const float* y, int incy, float* result);
MUBLAS_API mublasStatus_t mublasDdot(mublasHandle_t handle, int n, const double* x, int incx,
                                     const double* y, int incy, double* result);
MUBLAS_API mublasStatus_t mublasCdotu(mublasHandle_t handle, int n, const muComplex* x, int incx,
                                      const muComplex* y, int incy, muComplex* result);
MUBLAS_API mublasStatus_t mublasCdotc(mublasHandle_t handle, int n, const muComplex* x, int incx,
                                      const muComplex* y, int incy, muComplex* result);
MUBLAS_API mublasStatus_t mublasZdotu(mublasHandle_t handle, int n, const muDoubleComplex* x,
                                      int incx, const muDoubleComplex* y, int incy,
                                      muDoubleComplex* result);
MUBLAS_API mublasStatus_t mublasZdotc(mublasHandle_t handle, int n, const muDoubleComplex* x,
                                      int incx, const muDoubleComplex* y, int incy,
                                      muDoubleComplex* result);
MUBLAS_API mublasStatus_t mublasSscal(mublasHandle_t handle, int n, const float* alpha, float* x,
                                      int incx);
MUBLAS_API mublasStatus_t mublasDscal(mublasHandle_t handle, int n, const double* alpha, double* x,
                                      int incx);
MUBLAS_API mublasStatus_t mublasCscal(mublasHandle_t handle, int n, const muComplex* alpha,
                                      muComplex* x, int incx);
MUBLAS_API mublasStatus_t mublasCsscal(mublasHandle_t handle, int n, const float* alpha,
                                       muComplex* x, int incx);
MUBLAS_API mublasStatus_t mublasZscal(mublasHandle_t handle, int n, const muDoubleComplex* alpha,
                                      muDoubleComplex* x, int incx);
MUBLAS_API mublasStatus_t mublasZdscal(mublasHandle_t handle, int n, const double* alpha,
                                       muDoubleComplex* x, int incx);
MUBLAS_API mublasStatus_t mublasSaxpy(mublasHandle_t handle, int n, const float* alpha,
                                      const float* x, int incx, float* y, int incy);
MUBLAS_API mublasStatus_t mublasDaxpy(mublasHandle_t handle, int n, const double* alpha,
                                      const double* x, int incx, double* y, int incy);
MUBLAS_API mublasStatus_t mublasCaxpy(mublasHandle_t handle, int n, const muComplex* alpha,
                                      const muComplex* x, int incx, muComplex* y, int incy);
MUBLAS_API mublasStatus_t mublasZaxpy(mublasHandle_t handle, int n, const muDoubleComplex* alpha,
                                      const muDoubleComplex* x, int incx, muDoubleComplex* y,
                                      int incy);
MUBLAS_API mublasStatus_t mublasScopy(mublasHandle_t handle, int n, const float* x, int incx,
                                      float* y, int incy);
MUBLAS_API mublasStatus_t mublasDcopy(mublasHandle_t handle, int n, const double* x, int incx,
                                      double* y, int incy);
MUBLAS_API mublasStatus_t mublasCcopy(mublasHandle_t handle, int n, const muComplex* x, int incx,
                                      muComplex* y, int incy);
MUBLAS_API mublasStatus_t mublasZcopy(mublasHandle_t handle, int n, const muDoubleComplex* x,
                                      int incx, muDoubleComplex* y, int incy);
MUBLAS_API mublasStatus_t mublasSswap(mublasHandle_t handle, int n, float* x, int incx, float* y,
                                      int incy);
MUBLAS_API mublasStatus_t mublasDswap(mublasHandle_t handle, int n, double* x, int incx, double* y,
                                      int incy);
MUBLAS_API mublasStatus_t mublasCswap(mublasHandle_t handle, int n, muComplex* x, int incx,
                                      muComplex* y, int incy);
MUBLAS_API mublasStatus_t mublasZswap(mublasHandle_t handle, int n, muDoubleComplex* x, int incx,
                                      muDoubleComplex* y, int incy);
MUBLAS_API mublasStatus_t mublasIsamax(mublasHandle_t handle, int n, const float* x, int incx,
                                       int* result);
MUBLAS_API mublasStatus_t mublasIdamax(mublasHandle_t handle, int n, const double* x, int incx,
                                       int* result);
MUBLAS_API mublasStatus_t mublasIcamax(mublasHandle_t handle, int n, const muComplex* x, int incx,
                                       int* result);
MUBLAS_API mublasStatus_t mublasIzamax(mublasHandle_t handle, int n, const muDoubleComplex* x,
                                       int incx, int* result);
MUBLAS_API mublasStatus_t mublasIsamin(mublasHandle_t handle, int n, const float* x, int incx,
                                       int* result);
MUBLAS_API mublasStatus_t mublasIdamin(mublasHandle_t handle, int n, const double* x, int incx,
                                       int* result);
MUBLAS_API mublasStatus_t mublasIcamin(mublasHandle_t handle, int n, const muComplex* x, int incx,
                                       int* result);
MUBLAS_API mublasStatus_t mublasIzamin(mublasHandle_t handle, int n, const muDoubleComplex* x,
                                       int incx, int* result);
MUBLAS_API mublasStatus_t mublasSasum(mublasHandle_t handle, int n, const float* x, int incx,
                                      float* result);
MUBLAS_API mublasStatus_t mublasDasum(mublasHandle_t handle, int n, const double* x, int incx,
                                      double* result);
MUBLAS_API mublasStatus_t mublasScasum(mublasHandle_t handle, int n, const muComplex* x, int incx,
                                       float* result);
MUBLAS_API mublasStatus_t mublasDzasum(mublasHandle_t handle, int n, const muDoubleComplex* x,
                                       int incx, double* result);
MUBLAS_API mublasStatus_t mublasSrot(mublasHandle_t handle, int n, float* x, int incx, float* y,
                                     int incy, const float* c, const float* s);
MUBLAS_API mublasStatus_t mublasDrot(mublasHandle_t handle, int n, double* x, int incx, double* y,
                                     int incy, const double* c, const double* s);
MUBLAS_API mublasStatus_t mublasCrot(mublasHandle_t handle, int n, muComplex* x, int incx,
                                     muComplex* y, int incy, const float* c, const muComplex* s);
MUBLAS_API mublasStatus_t mublasCsrot(mublasHandle_t handle, int n, muComplex* x, int incx,
                                      muComplex* y, int incy, const float* c, const float* s);
MUBLAS_API mublasStatus_t mublasZrot(mublasHandle_t handle, int n, muDoubleComplex* x, int incx,
                                     muDoubleComplex* y, int incy, const double* c,
                                     const muDoubleComplex* s);
MUBLAS_API mublasStatus_t mublasZdrot(mublasHandle_t handle, int n, muDoubleComplex* x, int incx,
                                      muDoubleComplex* y, int incy, const double* c,
                                      const double* s);
MUBLAS_API mublasStatus_t mublasSrotg(mublasHandle_t handle, float* a, float* b, float* c,
                                      float* s);
MUBLAS_API mublasStatus_t mublasDrotg(mublasHandle_t handle, double* a, double* b, double* c,
                                      double* s);
MUBLAS_API mublasStatus_t mublasCrotg(mublasHandle_t handle, muComplex* a, muComplex* b, float* c,
                                      muComplex* s);
MUBLAS_API mublasStatus_t mublasZrotg(mublasHandle_t handle, muDoubleComplex* a, muDoubleComplex* b,
                                      double* c, muDoubleComplex* s);
MUBLAS_API mublasStatus_t mublasSrotm(mublasHandle_t handle, int n, float* x, int incx, float* y,
                                      int incy, const float* param);
MUBLAS_API mublasStatus_t mublasDrotm(mublasHandle_t handle, int n, double* x, int incx, double* y,
                                      int incy, const double* param);
MUBLAS_API mublasStatus_t mublasSrotmg(mublasHandle_t handle, float* d1, float* d2, float* x1,
                                       const float* y1, float* param);
MUBLAS_API mublasStatus_t mublasDrotmg(mublasHandle_t handle, double* d1, double* d2, double* x1,
                                       const double* y1, double* param);

/* ---- Level 1, mixed precision (data type, execution type) */
MUBLAS_API mublasStatus_t mublasNrm2Ex(mublasHandle_t handle, int n, const void* x,
                                       musaDataType_t xType, int incx, void* result,
                                       musaDataType_t resultType, musaDataType_t executionType);
MUBLAS_API mublasStatus_t mublasDotEx(mublasHandle_t handle, int n, const void* x,
                                      musaDataType_t xType, int incx, const void* y,
                                      musaDataType_t yType, int incy, void* result,
                                      musaDataType_t resultType, musaDataType_t executionType);
MUBLAS_API mublasStatus_t mublasDotcEx(mublasHandle_t handle, int n, const void* x,
                                       musaDataType_t xType, int incx, const void* y,
                                       musaDataType_t yType, int incy, void* result,
                                       musaDataType_t resultType, musaDataType_t executionType);
MUBLAS_API mublasStatus_t mublasScalEx(mublasHandle_t handle, int n, const void* alpha,
                                       musaDataType_t alphaType, void* x, musaDataType_t xType,
                                       int incx, musaDataType_t executionType);
MUBLAS_API mublasStatus_t mublasAxpyEx(mublasHandle_t handle, int n, const void* alpha,
                                       musaDataType_t alphaType, const void* x,
                                       musaDataType_t xType, int incx, void* y,
                                       musaDataType_t yType, int incy,
                                       musaDataType_t executiontype);
MUBLAS_API mublasStatus_t mublasCopyEx(mublasHandle_t handle, int n, const void* x,
                                       musaDataType_t xType, int incx, void* y,
                                       musaDataType_t yType, int incy);
MUBLAS_API mublasStatus_t mublasSwapEx(mublasHandle_t handle, int n, void* x, musaDataType_t xType,
                                       int incx, void* y, musaDataType_t yType, int incy);
MUBLAS_API mublasStatus_t mublasIamaxEx(mublasHandle_t handle, int n, const void* x,
                                        musaDataType_t xType, int incx, int* result);
MUBLAS_API mublasStatus_t mublasIaminEx(mublasHandle_t handle, int n, const void* x,
                                        musaDataType_t xType, int incx, int* result);
MUBLAS_API mublasStatus_t mublasAsumEx(mublasHandle_t handle, int n, const void* x,
                                       musaDataType_t xType, int incx, void* result,
                                       musaDataType_t resultType, musaDataType_t executiontype);
MUBLAS_API mublasStatus_t mublasRotEx(mublasHandle_t handle, int n, void* x, musaDataType_t xType,
                                      int incx, void* y, musaDataType_t yType, int incy,
                                      const void* c, const void* s, musaDataType_t csType,
                                      musaDataType_t executiontype);
MUBLAS_API mublasStatus_t mublasRotgEx(mublasHandle_t handle, void* a, void* b,
                                       musaDataType_t abType, void* c, void* s,
                                       musaDataType_t csType, musaDataType_t executiontype);
MUBLAS_API mublasStatus_t mublasRotmEx(mublasHandle_t handle, int n, void* x, musaDataType_t xType,
                                       int incx, void* y, musaDataType_t yType, int incy,
                                       const void* param, musaDataType_t paramType,
                                       musaDataType_t executiontype);
MUBLAS_API mublasStatus_t mublasRotmgEx(mublasHandle_t handle, void* d1, musaDataType_t d1Type,
                                        void* d2, musaDataType_t d2Type, void* x1,
                                        musaDataType_t x1Type, const void* y1,
                                        musaDataType_t y1Type, void* param,
                                        musaDataType_t paramType, musaDataType_t executiontype);

/* ---- Level 2 */
MUBLAS_API mublasStatus_t mublasSgemv(mublasHandle_t handle, mublasOperation_t trans, int m, int n,
                                      const float* alpha, const float* A, int lda, const float* x,
                                      int incx, const float* beta, float* y, int incy);
MUBLAS_API mublasStatus_t mublasDgemv(mublasHandle_t handle, mublasOperation_t trans, int m, int n,
                                      const double* alpha, const double* A, int lda,
                                      const double* x, int incx, const double* beta, double* y,
                                      int incy);
MUBLAS_API mublasStatus_t mublasCgemv(mublasHandle_t handle, mublasOperation_t trans, int m, int n,
                                      const muComplex* alpha, const muComplex* A, int lda,
                                      const muComplex* x, int incx, const muComplex* beta,
                                      muComplex* y, int incy);
MUBLAS_API mublasStatus_t mublasZgemv(mublasHandle_t handle, mublasOperation_t trans, int m, int n,
                                      const muDoubleComplex* alpha, const muDoubleComplex* A,
                                      int lda, const muDoubleComplex* x, int incx,
                                      const muDoubleComplex* beta, muDoubleComplex* y, int incy);
MUBLAS_API mublasStatus_t mublasSgbmv(mublasHandle_t handle, mublasOperation_t trans, int m, int n,
                                      int kl, int ku, const float* alpha, const float* A, int lda,
                                      const float* x, int incx, const float* beta, float* y,
                                      int incy);
MUBLAS_API mublasStatus_t mublasDgbmv(mublasHandle_t handle, mublasOperation_t trans, int m, int n,
                                      int kl, int ku, const double* alpha, const double* A, int lda,
                                      const double* x, int incx, const double* beta, double* y,
                                      int incy);
MUBLAS_API mublasStatus_t mublasCgbmv(mublasHandle_t handle, mublasOperation_t trans, int m, int n,
                                      int kl, int ku, const muComplex* alpha, const muComplex* A,
                                      int lda, const muComplex* x, int incx, const muComplex* beta,
                                      muComplex* y, int incy);
MUBLAS_API mublasStatus_t mublasZgbmv(mublasHandle_t handle, mublasOperation_t trans, int m, int n,
                                      int kl, int ku, const muDoubleComplex* alpha,
                                      const muDoubleComplex* A, int lda, const muDoubleComplex* x,
                                      int incx, const muDoubleComplex* beta, muDoubleComplex* y,
                                      int incy);
MUBLAS_API mublasStatus_t mublasStrmv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n,
                                      const float* A, int lda, float* x, int incx);
MUBLAS_API mublasStatus_t mublasDtrmv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n,
                                      const double* A, int lda, double* x, int incx);
MUBLAS_API mublasStatus_t mublasCtrmv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n,
                                      const muComplex* A, int lda, muComplex* x, int incx);
MUBLAS_API mublasStatus_t mublasZtrmv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n,
                                      const muDoubleComplex* A, int lda, muDoubleComplex* x,
                                      int incx);
MUBLAS_API mublasStatus_t mublasStbmv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n, int k,
                                      const float* A, int lda, float* x, int incx);
MUBLAS_API mublasStatus_t mublasDtbmv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n, int k,
                                      const double* A, int lda, double* x, int incx);
MUBLAS_API mublasStatus_t mublasCtbmv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n, int k,
                                      const muComplex* A, int lda, muComplex* x, int incx);
MUBLAS_API mublasStatus_t mublasZtbmv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n, int k,
                                      const muDoubleComplex* A, int lda, muDoubleComplex* x,
                                      int incx);
MUBLAS_API mublasStatus_t mublasStpmv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n,
                                      const float* AP, float* x, int incx);
MUBLAS_API mublasStatus_t mublasDtpmv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n,
                                      const double* AP, double* x, int incx);
MUBLAS_API mublasStatus_t mublasCtpmv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n,
                                      const muComplex* AP, muComplex* x, int incx);
MUBLAS_API mublasStatus_t mublasZtpmv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n,
                                      const muDoubleComplex* AP, muDoubleComplex* x, int incx);
MUBLAS_API mublasStatus_t mublasStrsv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n,
                                      const float* A, int lda, float* x, int incx);
MUBLAS_API mublasStatus_t mublasDtrsv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n,
                                      const double* A, int lda, double* x, int incx);
MUBLAS_API mublasStatus_t mublasCtrsv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n,
                                      const muComplex* A, int lda, muComplex* x, int incx);
MUBLAS_API mublasStatus_t mublasZtrsv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n,
                                      const muDoubleComplex* A, int lda, muDoubleComplex* x,
                                      int incx);
MUBLAS_API mublasStatus_t mublasStpsv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n,
                                      const float* AP, float* x, int incx);
MUBLAS_API mublasStatus_t mublasDtpsv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n,
                                      const double* AP, double* x, int incx);
MUBLAS_API mublasStatus_t mublasCtpsv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n,
                                      const muComplex* AP, muComplex* x, int incx);
MUBLAS_API mublasStatus_t mublasZtpsv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n,
                                      const muDoubleComplex* AP, muDoubleComplex* x, int incx);
MUBLAS_API mublasStatus_t mublasStbsv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n, int k,
                                      const float* A, int lda, float* x, int incx);
MUBLAS_API mublasStatus_t mublasDtbsv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n, int k,
                                      const double* A, int lda, double* x, int incx);
MUBLAS_API mublasStatus_t mublasCtbsv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n, int k,
                                      const muComplex* A, int lda, muComplex* x, int incx);
MUBLAS_API mublasStatus_t mublasZtbsv(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, mublasDiagType_t diag, int n, int k,
                                      const muDoubleComplex* A, int lda, muDoubleComplex* x,
                                      int incx);
MUBLAS_API mublasStatus_t mublasSsymv(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const float* alpha, const float* A, int lda, const float* x,
                                      int incx, const float* beta, float* y, int incy);
MUBLAS_API mublasStatus_t mublasDsymv(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const double* alpha, const double* A, int lda,
                                      const double* x, int incx, const double* beta, double* y,
                                      int incy);
MUBLAS_API mublasStatus_t mublasCsymv(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const muComplex* alpha, const muComplex* A, int lda,
                                      const muComplex* x, int incx, const muComplex* beta,
                                      muComplex* y, int incy);
MUBLAS_API mublasStatus_t mublasZsymv(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const muDoubleComplex* alpha, const muDoubleComplex* A,
                                      int lda, const muDoubleComplex* x, int incx,
                                      const muDoubleComplex* beta, muDoubleComplex* y, int incy);
MUBLAS_API mublasStatus_t mublasChemv(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const muComplex* alpha, const muComplex* A, int lda,
                                      const muComplex* x, int incx, const muComplex* beta,
                                      muComplex* y, int incy);
MUBLAS_API mublasStatus_t mublasZhemv(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const muDoubleComplex* alpha, const muDoubleComplex* A,
                                      int lda, const muDoubleComplex* x, int incx,
                                      const muDoubleComplex* beta, muDoubleComplex* y, int incy);
MUBLAS_API mublasStatus_t mublasSsbmv(mublasHandle_t handle, mublasFillMode_t uplo, int n, int k,
                                      const float* alpha, const float* A, int lda, const float* x,
                                      int incx, const float* beta, float* y, int incy);
MUBLAS_API mublasStatus_t mublasDsbmv(mublasHandle_t handle, mublasFillMode_t uplo, int n, int k,
                                      const double* alpha, const double* A, int lda,
                                      const double* x, int incx, const double* beta, double* y,
                                      int incy);
MUBLAS_API mublasStatus_t mublasChbmv(mublasHandle_t handle, mublasFillMode_t uplo, int n, int k,
                                      const muComplex* alpha, const muComplex* A, int lda,
                                      const muComplex* x, int incx, const muComplex* beta,
                                      muComplex* y, int incy);
MUBLAS_API mublasStatus_t mublasZhbmv(mublasHandle_t handle, mublasFillMode_t uplo, int n, int k,
                                      const muDoubleComplex* alpha, const muDoubleComplex* A,
                                      int lda, const muDoubleComplex* x, int incx,
                                      const muDoubleComplex* beta, muDoubleComplex* y, int incy);
MUBLAS_API mublasStatus_t mublasSspmv(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const float* alpha, const float* AP, const float* x, int incx,
                                      const float* beta, float* y, int incy);
MUBLAS_API mublasStatus_t mublasDspmv(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const double* alpha, const double* AP, const double* x,
                                      int incx, const double* beta, double* y, int incy);
MUBLAS_API mublasStatus_t mublasChpmv(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const muComplex* alpha, const muComplex* AP,
                                      const muComplex* x, int incx, const muComplex* beta,
                                      muComplex* y, int incy);
MUBLAS_API mublasStatus_t mublasZhpmv(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const muDoubleComplex* alpha, const muDoubleComplex* AP,
                                      const muDoubleComplex* x, int incx,
                                      const muDoubleComplex* beta, muDoubleComplex* y, int incy);
MUBLAS_API mublasStatus_t mublasSger(mublasHandle_t handle, int m, int n, const float* alpha,
                                     const float* x, int incx, const float* y, int incy, float* A,
                                     int lda);
MUBLAS_API mublasStatus_t mublasDger(mublasHandle_t handle, int m, int n, const double* alpha,
                                     const double* x, int incx, const double* y, int incy,
                                     double* A, int lda);
MUBLAS_API mublasStatus_t mublasCgeru(mublasHandle_t handle, int m, int n, const muComplex* alpha,
                                      const muComplex* x, int incx, const muComplex* y, int incy,
                                      muComplex* A, int lda);
MUBLAS_API mublasStatus_t mublasCgerc(mublasHandle_t handle, int m, int n, const muComplex* alpha,
                                      const muComplex* x, int incx, const muComplex* y, int incy,
                                      muComplex* A, int lda);
MUBLAS_API mublasStatus_t mublasZgeru(mublasHandle_t handle, int m, int n,
                                      const muDoubleComplex* alpha, const muDoubleComplex* x,
                                      int incx, const muDoubleComplex* y, int incy,
                                      muDoubleComplex* A, int lda);
MUBLAS_API mublasStatus_t mublasZgerc(mublasHandle_t handle, int m, int n,
                                      const muDoubleComplex* alpha, const muDoubleComplex* x,
                                      int incx, const muDoubleComplex* y, int incy,
                                      muDoubleComplex* A, int lda);
MUBLAS_API mublasStatus_t mublasSsyr(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                     const float* alpha, const float* x, int incx, float* A,
                                     int lda);
MUBLAS_API mublasStatus_t mublasDsyr(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                     const double* alpha, const double* x, int incx, double* A,
                                     int lda);
MUBLAS_API mublasStatus_t mublasCsyr(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                     const muComplex* alpha, const muComplex* x, int incx,
                                     muComplex* A, int lda);
MUBLAS_API mublasStatus_t mublasZsyr(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                     const muDoubleComplex* alpha, const muDoubleComplex* x,
                                     int incx, muDoubleComplex* A, int lda);
MUBLAS_API mublasStatus_t mublasCher(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                     const float* alpha, const muComplex* x, int incx, muComplex* A,
                                     int lda);
MUBLAS_API mublasStatus_t mublasZher(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                     const double* alpha, const muDoubleComplex* x, int incx,
                                     muDoubleComplex* A, int lda);
MUBLAS_API mublasStatus_t mublasSspr(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                     const float* alpha, const float* x, int incx, float* AP);
MUBLAS_API mublasStatus_t mublasDspr(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                     const double* alpha, const double* x, int incx, double* AP);
MUBLAS_API mublasStatus_t mublasChpr(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                     const float* alpha, const muComplex* x, int incx,
                                     muComplex* AP);
MUBLAS_API mublasStatus_t mublasZhpr(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                     const double* alpha, const muDoubleComplex* x, int incx,
                                     muDoubleComplex* AP);
MUBLAS_API mublasStatus_t mublasSsyr2(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const float* alpha, const float* x, int incx, const float* y,
                                      int incy, float* A, int lda);
MUBLAS_API mublasStatus_t mublasDsyr2(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const double* alpha, const double* x, int incx,
                                      const double* y, int incy, double* A, int lda);
MUBLAS_API mublasStatus_t mublasCsyr2(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const muComplex* alpha, const muComplex* x, int incx,
                                      const muComplex* y, int incy, muComplex* A, int lda);
MUBLAS_API mublasStatus_t mublasZsyr2(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const muDoubleComplex* alpha, const muDoubleComplex* x,
                                      int incx, const muDoubleComplex* y, int incy,
                                      muDoubleComplex* A, int lda);
MUBLAS_API mublasStatus_t mublasCher2(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const muComplex* alpha, const muComplex* x, int incx,
                                      const muComplex* y, int incy, muComplex* A, int lda);
MUBLAS_API mublasStatus_t mublasZher2(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const muDoubleComplex* alpha, const muDoubleComplex* x,
                                      int incx, const muDoubleComplex* y, int incy,
                                      muDoubleComplex* A, int lda);
MUBLAS_API mublasStatus_t mublasSspr2(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const float* alpha, const float* x, int incx, const float* y,
                                      int incy, float* AP);
MUBLAS_API mublasStatus_t mublasDspr2(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const double* alpha, const double* x, int incx,
                                      const double* y, int incy, double* AP);
MUBLAS_API mublasStatus_t mublasChpr2(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const muComplex* alpha, const muComplex* x, int incx,
                                      const muComplex* y, int incy, muComplex* AP);
MUBLAS_API mublasStatus_t mublasZhpr2(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                      const muDoubleComplex* alpha, const muDoubleComplex* x,
                                      int incx, const muDoubleComplex* y, int incy,
                                      muDoubleComplex* AP);

/* ---- Level 3 (trmm is cuBLAS's out-of-place form: C = alpha op(A) B, B unchanged) */
MUBLAS_API mublasStatus_t mublasSgemm(mublasHandle_t handle, mublasOperation_t transa,
                                      mublasOperation_t transb, int m, int n, int k,
                                      const float* alpha, const float* A, int lda, const float* B,
                                      int ldb, const float* beta, float* C, int ldc);
MUBLAS_API mublasStatus_t mublasDgemm(mublasHandle_t handle, mublasOperation_t transa,
                                      mublasOperation_t transb, int m, int n, int k,
                                      const double* alpha, const double* A, int lda,
                                      const double* B, int ldb, const double* beta, double* C,
                                      int ldc);
MUBLAS_API mublasStatus_t mublasCgemm(mublasHandle_t handle, mublasOperation_t transa,
                                      mublasOperation_t transb, int m, int n, int k,
                                      const muComplex* alpha, const muComplex* A, int lda,
                                      const muComplex* B, int ldb, const muComplex* beta,
                                      muComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasZgemm(mublasHandle_t handle, mublasOperation_t transa,
                                      mublasOperation_t transb, int m, int n, int k,
                                      const muDoubleComplex* alpha, const muDoubleComplex* A,
                                      int lda, const muDoubleComplex* B, int ldb,
                                      const muDoubleComplex* beta, muDoubleComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasCgemm3m(mublasHandle_t handle, mublasOperation_t transa,
                                        mublasOperation_t transb, int m, int n, int k,
                                        const muComplex* alpha, const muComplex* A, int lda,
                                        const muComplex* B, int ldb, const muComplex* beta,
                                        muComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasZgemm3m(mublasHandle_t handle, mublasOperation_t transa,
                                        mublasOperation_t transb, int m, int n, int k,
                                        const muDoubleComplex* alpha, const muDoubleComplex* A,
                                        int lda, const muDoubleComplex* B, int ldb,
                                        const muDoubleComplex* beta, muDoubleComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasSsymm(mublasHandle_t handle, mublasSideMode_t side,
                                      mublasFillMode_t uplo, int m, int n, const float* alpha,
                                      const float* A, int lda, const float* B, int ldb,
                                      const float* beta, float* C, int ldc);
MUBLAS_API mublasStatus_t mublasDsymm(mublasHandle_t handle, mublasSideMode_t side,
                                      mublasFillMode_t uplo, int m, int n, const double* alpha,
                                      const double* A, int lda, const double* B, int ldb,
                                      const double* beta, double* C, int ldc);
MUBLAS_API mublasStatus_t mublasCsymm(mublasHandle_t handle, mublasSideMode_t side,
                                      mublasFillMode_t uplo, int m, int n, const muComplex* alpha,
                                      const muComplex* A, int lda, const muComplex* B, int ldb,
                                      const muComplex* beta, muComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasZsymm(mublasHandle_t handle, mublasSideMode_t side,
                                      mublasFillMode_t uplo, int m, int n,
                                      const muDoubleComplex* alpha, const muDoubleComplex* A,
                                      int lda, const muDoubleComplex* B, int ldb,
                                      const muDoubleComplex* beta, muDoubleComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasChemm(mublasHandle_t handle, mublasSideMode_t side,
                                      mublasFillMode_t uplo, int m, int n, const muComplex* alpha,
                                      const muComplex* A, int lda, const muComplex* B, int ldb,
                                      const muComplex* beta, muComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasZhemm(mublasHandle_t handle, mublasSideMode_t side,
                                      mublasFillMode_t uplo, int m, int n,
                                      const muDoubleComplex* alpha, const muDoubleComplex* A,
                                      int lda, const muDoubleComplex* B, int ldb,
                                      const muDoubleComplex* beta, muDoubleComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasSsyrk(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, int n, int k, const float* alpha,
                                      const float* A, int lda, const float* beta, float* C,
                                      int ldc);
MUBLAS_API mublasStatus_t mublasDsyrk(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, int n, int k, const double* alpha,
                                      const double* A, int lda, const double* beta, double* C,
                                      int ldc);
MUBLAS_API mublasStatus_t mublasCsyrk(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, int n, int k, const muComplex* alpha,
                                      const muComplex* A, int lda, const muComplex* beta,
                                      muComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasZsyrk(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, int n, int k,
                                      const muDoubleComplex* alpha, const muDoubleComplex* A,
                                      int lda, const muDoubleComplex* beta, muDoubleComplex* C,
                                      int ldc);
MUBLAS_API mublasStatus_t mublasCherk(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, int n, int k, const float* alpha,
                                      const muComplex* A, int lda, const float* beta, muComplex* C,
                                      int ldc);
MUBLAS_API mublasStatus_t mublasZherk(mublasHandle_t handle, mublasFillMode_t uplo,
                                      mublasOperation_t trans, int n, int k, const double* alpha,
                                      const muDoubleComplex* A, int lda, const double* beta,
                                      muDoubleComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasSsyr2k(mublasHandle_t handle, mublasFillMode_t uplo,
                                       mublasOperation_t trans, int n, int k, const float* alpha,
                                       const float* A, int lda, const float* B, int ldb,
                                       const float* beta, float* C, int ldc);
MUBLAS_API mublasStatus_t mublasDsyr2k(mublasHandle_t handle, mublasFillMode_t uplo,
                                       mublasOperation_t trans, int n, int k, const double* alpha,
                                       const double* A, int lda, const double* B, int ldb,
                                       const double* beta, double* C, int ldc);
MUBLAS_API mublasStatus_t mublasCsyr2k(mublasHandle_t handle, mublasFillMode_t uplo,
                                       mublasOperation_t trans, int n, int k,
                                       const muComplex* alpha, const muComplex* A, int lda,
                                       const muComplex* B, int ldb, const muComplex* beta,
                                       muComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasZsyr2k(mublasHandle_t handle, mublasFillMode_t uplo,
                                       mublasOperation_t trans, int n, int k,
                                       const muDoubleComplex* alpha, const muDoubleComplex* A,
                                       int lda, const muDoubleComplex* B, int ldb,
                                       const muDoubleComplex* beta, muDoubleComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasCher2k(mublasHandle_t handle, mublasFillMode_t uplo,
                                       mublasOperation_t trans, int n, int k,
                                       const muComplex* alpha, const muComplex* A, int lda,
                                       const muComplex* B, int ldb, const float* beta, muComplex* C,
                                       int ldc);
MUBLAS_API mublasStatus_t mublasZher2k(mublasHandle_t handle, mublasFillMode_t uplo,
                                       mublasOperation_t trans, int n, int k,
                                       const muDoubleComplex* alpha, const muDoubleComplex* A,
                                       int lda, const muDoubleComplex* B, int ldb,
                                       const double* beta, muDoubleComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasSsyrkx(mublasHandle_t handle, mublasFillMode_t uplo,
                                       mublasOperation_t trans, int n, int k, const float* alpha,
                                       const float* A, int lda, const float* B, int ldb,
                                       const float* beta, float* C, int ldc);
MUBLAS_API mublasStatus_t mublasDsyrkx(mublasHandle_t handle, mublasFillMode_t uplo,
                                       mublasOperation_t trans, int n, int k, const double* alpha,
                                       const double* A, int lda, const double* B, int ldb,
                                       const double* beta, double* C, int ldc);
MUBLAS_API mublasStatus_t mublasCsyrkx(mublasHandle_t handle, mublasFillMode_t uplo,
                                       mublasOperation_t trans, int n, int k,
                                       const muComplex* alpha, const muComplex* A, int lda,
                                       const muComplex* B, int ldb, const muComplex* beta,
                                       muComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasZsyrkx(mublasHandle_t handle, mublasFillMode_t uplo,
                                       mublasOperation_t trans, int n, int k,
                                       const muDoubleComplex* alpha, const muDoubleComplex* A,
                                       int lda, const muDoubleComplex* B, int ldb,
                                       const muDoubleComplex* beta, muDoubleComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasCherkx(mublasHandle_t handle, mublasFillMode_t uplo,
                                       mublasOperation_t trans, int n, int k,
                                       const muComplex* alpha, const muComplex* A, int lda,
                                       const muComplex* B, int ldb, const float* beta, muComplex* C,
                                       int ldc);
MUBLAS_API mublasStatus_t mublasZherkx(mublasHandle_t handle, mublasFillMode_t uplo,
                                       mublasOperation_t trans, int n, int k,
                                       const muDoubleComplex* alpha, const muDoubleComplex* A,
                                       int lda, const muDoubleComplex* B, int ldb,
                                       const double* beta, muDoubleComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasStrmm(mublasHandle_t handle, mublasSideMode_t side,
                                      mublasFillMode_t uplo, mublasOperation_t trans,
                                      mublasDiagType_t diag, int m, int n, const float* alpha,
                                      const float* A, int lda, const float* B, int ldb, float* C,
                                      int ldc);
MUBLAS_API mublasStatus_t mublasDtrmm(mublasHandle_t handle, mublasSideMode_t side,
                                      mublasFillMode_t uplo, mublasOperation_t trans,
                                      mublasDiagType_t diag, int m, int n, const double* alpha,
                                      const double* A, int lda, const double* B, int ldb, double* C,
                                      int ldc);
MUBLAS_API mublasStatus_t mublasCtrmm(mublasHandle_t handle, mublasSideMode_t side,
                                      mublasFillMode_t uplo, mublasOperation_t trans,
                                      mublasDiagType_t diag, int m, int n, const muComplex* alpha,
                                      const muComplex* A, int lda, const muComplex* B, int ldb,
                                      muComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasZtrmm(mublasHandle_t handle, mublasSideMode_t side,
                                      mublasFillMode_t uplo, mublasOperation_t trans,
                                      mublasDiagType_t diag, int m, int n,
                                      const muDoubleComplex* alpha, const muDoubleComplex* A,
                                      int lda, const muDoubleComplex* B, int ldb,
                                      muDoubleComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasStrsm(mublasHandle_t handle, mublasSideMode_t side,
                                      mublasFillMode_t uplo, mublasOperation_t trans,
                                      mublasDiagType_t diag, int m, int n, const float* alpha,
                                      const float* A, int lda, float* B, int ldb);
MUBLAS_API mublasStatus_t mublasDtrsm(mublasHandle_t handle, mublasSideMode_t side,
                                      mublasFillMode_t uplo, mublasOperation_t trans,
                                      mublasDiagType_t diag, int m, int n, const double* alpha,
                                      const double* A, int lda, double* B, int ldb);
MUBLAS_API mublasStatus_t mublasCtrsm(mublasHandle_t handle, mublasSideMode_t side,
                                      mublasFillMode_t uplo, mublasOperation_t trans,
                                      mublasDiagType_t diag, int m, int n, const muComplex* alpha,
                                      const muComplex* A, int lda, muComplex* B, int ldb);
MUBLAS_API mublasStatus_t mublasZtrsm(mublasHandle_t handle, mublasSideMode_t side,
                                      mublasFillMode_t uplo, mublasOperation_t trans,
                                      mublasDiagType_t diag, int m, int n,
                                      const muDoubleComplex* alpha, const muDoubleComplex* A,
                                      int lda, muDoubleComplex* B, int ldb);

/* ---- BLAS-like extensions */
MUBLAS_API mublasStatus_t mublasSgeam(mublasHandle_t handle, mublasOperation_t transa,
                                      mublasOperation_t transb, int m, int n, const float* alpha,
                                      const float* A, int lda, const float* beta, const float* B,
                                      int ldb, float* C, int ldc);
MUBLAS_API mublasStatus_t mublasDgeam(mublasHandle_t handle, mublasOperation_t transa,
                                      mublasOperation_t transb, int m, int n, const double* alpha,
                                      const double* A, int lda, const double* beta, const double* B,
                                      int ldb, double* C, int ldc);
MUBLAS_API mublasStatus_t mublasCgeam(mublasHandle_t handle, mublasOperation_t transa,
                                      mublasOperation_t transb, int m, int n,
                                      const muComplex* alpha, const muComplex* A, int lda,
                                      const muComplex* beta, const muComplex* B, int ldb,
                                      muComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasZgeam(mublasHandle_t handle, mublasOperation_t transa,
                                      mublasOperation_t transb, int m, int n,
                                      const muDoubleComplex* alpha, const muDoubleComplex* A,
                                      int lda, const muDoubleComplex* beta,
                                      const muDoubleComplex* B, int ldb, muDoubleComplex* C,
                                      int ldc);
MUBLAS_API mublasStatus_t mublasSdgmm(mublasHandle_t handle, mublasSideMode_t mode, int m, int n,
                                      const float* A, int lda, const float* x, int incx, float* C,
                                      int ldc);
MUBLAS_API mublasStatus_t mublasDdgmm(mublasHandle_t handle, mublasSideMode_t mode, int m, int n,
                                      const double* A, int lda, const double* x, int incx,
                                      double* C, int ldc);
MUBLAS_API mublasStatus_t mublasCdgmm(mublasHandle_t handle, mublasSideMode_t mode, int m, int n,
                                      const muComplex* A, int lda, const muComplex* x, int incx,
                                      muComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasZdgmm(mublasHandle_t handle, mublasSideMode_t mode, int m, int n,
                                      const muDoubleComplex* A, int lda, const muDoubleComplex* x,
                                      int incx, muDoubleComplex* C, int ldc);
MUBLAS_API mublasStatus_t mublasStpttr(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                       const float* AP, float* A, int lda);
MUBLAS_API mublasStatus_t mublasDtpttr(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                       const double* AP, double* A, int lda);
MUBLAS_API mublasStatus_t mublasCtpttr(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                       const muComplex* AP, muComplex* A, int lda);
MUBLAS_API mublasStatus_t mublasZtpttr(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                       const muDoubleComplex* AP, muDoubleComplex* A, int lda);
MUBLAS_API mublasStatus_t mublasStrttp(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                       const float* A, int lda, float* AP);
MUBLAS_API mublasStatus_t mublasDtrttp(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                       const double* A, int lda, double* AP);
MUBLAS_API mublasStatus_t mublasCtrttp(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                       const muComplex* A, int lda, muComplex* AP);
MUBLAS_API mublasStatus_t mublasZtrttp(mublasHandle_t handle, mublasFillMode_t uplo, int n,
                                       const muDoubleComplex* A, int lda, muDoubleComplex* AP);

/* ---- Batched BLAS */
MUBLAS_API mublasStatus_t mublasSgemmBatched(mublasHandle_t handle, mublasOperation_t transa,
                                             mublasOperation_t transb, int m, int n, int k,
                                             const float* alpha, const float* const Aarray[],
                                             int lda, const float* const Barray[], int ldb,
                                             const float* beta, float* const Carray[], int ldc,
                                             int batchCount);
MUBLAS_API mublasStatus_t mublasDgemmBatched(mublasHandle_t handle, mublasOperation_t transa,
                                             mublasOperation_t transb, int m, int n, int k,
                                             const double* alpha, const double* const Aarray[],
                                             int lda, const double* const Barray[], int ldb,
                                             const double* beta, double* const Carray[], int ldc,
                                             int batchCount);
MUBLAS_API mublasStatus_t mublasCgemmBatched(mublasHandle_t handle, mublasOperation_t transa,
                                             mublasOperation_t transb, int m, int n, int k,
                                             const muComplex* alpha,
                                             const muComplex* const Aarray[], int lda,
                                             const muComplex* const Barray[], int ldb,
                                             const muComplex* beta, muComplex* const Carray[],
                                             int ldc, int batchCount);
MUBLAS_API mublasStatus_t mublasZgemmBatched(
    mublasHandle_t handle, mublasOperation_t transa, mublasOperation_t transb, int m, int n, int k,
    const muDoubleComplex* alpha, const muDoubleComplex* const Aarray[], int lda,
    const muDoubleComplex* const Barray[], int ldb, const muDoubleComplex* beta,
    muDoubleComplex* const Carray[], int ldc, int batchCount);
MUBLAS_API mublasStatus_t mublasCgemm3mBatched(mublasHandle_t handle, mublasOperation_t transa,
                                               mublasOperation_t transb, int m, int n, int k,
                                               const muComplex* alpha,
                                               const muComplex* const Aarray[], int lda,
                                               const muComplex* const Barray[], int ldb,
                                               const muComplex* beta, muComplex* const Carray[],
                                               int ldc, int batchCount);
MUBLAS_API mublasStatus_t mublasSgemmStridedBatched(mublasHandle_t handle, mublasOperation_t transa,
                                                    mublasOperation_t transb, int m, int n, int k,
                                                    const float* alpha, const float* A, int lda,
                                                    long long strideA, const float* B, int ldb,
                                                    long long strideB, const float* beta, float* C,
                                                    int ldc, long long strideC, int batchCount);
MUBLAS_API mublasStatus_t mublasDgemmStridedBatched(
    mublasHandle_t handle, mublasOperation_t transa, mublasOperation_t transb, int m, int n, int k,
    const double* alpha, const double* A, int lda, long long strideA, const double* B, int ldb,
    long long strideB, const double* beta, double* C, int ldc, long long strideC, int batchCount);
MUBLAS_API mublasStatus_t mublasCgemmStridedBatched(mublasHandle_t handle, mublasOperation_t transa,
                                                    mublasOperation_t transb, int m, int n, int k,
                                                    const muComplex* alpha, const muComplex* A,
                                                    int lda, long long strideA, const muComplex* B,
                                                    int ldb, long long strideB,
                                                    const muComplex* beta, muComplex* C, int ldc,
                                                    long long strideC, int batchCount);
MUBLAS_API mublasStatus_t mublasZgemmStridedBatched(
    mublasHandle_t handle, mublasOperation_t transa, mublasOperation_t transb, int m, int n, int k,
    const muDoubleComplex* alpha, const muDoubleComplex* A, int lda, long long strideA,
    const muDoubleComplex* B, int ldb, long long strideB, const muDoubleComplex* beta,
    muDoubleComplex* C, int ldc, long long strideC, int batchCount);
MUBLAS_API mublasStatus_t mublasCgemm3mStridedBatched(
    mublasHandle_t handle, mublasOperation_t transa, mublasOperation_t transb, int m, int n, int k,
    const muComplex* alpha, const muComplex* A, int lda, long long strideA, const muComplex* B,
    int ldb, long long strideB, const muComplex* beta, muComplex* C, int ldc, long long strideC,
    int batchCount);
MUBLAS_API mublasStatus_t mublasSgemvBatched(mublasHandle_t handle, mublasOperation_t trans, int m,
                                             int n, const float* alpha, const float* const Aarray[],
                                             int lda, const float* const xarray[], int incx,
                                             const float* beta, float* const yarray[], int incy,
                                             int batchCount);
MUBLAS_API mublasStatus_t mublasDgemvBatched(mublasHandle_t handle, mublasOperation_t trans, int m,
                                             int n, const double* alpha,
                                             const double* const Aarray[], int lda,
                                             const double* const xarray[], int incx,
                                             const double* beta, double* const yarray[], int incy,
                                             int batchCount);
MUBLAS_API mublasStatus_t mublasCgemvBatched(mublasHandle_t handle, mublasOperation_t trans, int m,
                                             int n, const muComplex* alpha,
                                             const muComplex* const Aarray[], int lda,
                                             const muComplex* const xarray[], int incx,
                                             const muComplex* beta, muComplex* const yarray[],
                                             int incy, int batchCount);
MUBLAS_API mublasStatus_t mublasZgemvBatched(
    mublasHandle_t handle, mublasOperation_t trans, int m, int n, const muDoubleComplex* alpha,
    const muDoubleComplex* const Aarray[], int lda, const muDoubleComplex* const xarray[], int incx,
    const muDoubleComplex* beta, muDoubleComplex* const yarray[], int incy, int batchCount);
MUBLAS_API mublasStatus_t mublasSgemvStridedBatched(mublasHandle_t handle, mublasOperation_t trans,
                                                    int m, int n, const float* alpha,
                                                    const float* A, int lda, long long strideA,
                                                    const float* x, int incx, long long stridex,
                                                    const float* beta, float* y, int incy,
                                                    long long stridey, int batchCount);
MUBLAS_API mublasStatus_t mublasDgemvStridedBatched(mublasHandle_t handle, mublasOperation_t trans,
                                                    int m, int n, const double* alpha,
                                                    const double* A, int lda, long long strideA,
                                                    const double* x, int incx, long long stridex,
                                                    const double* beta, double* y, int incy,
                                                    long long stridey, int batchCount);
MUBLAS_API mublasStatus_t mublasCgemvStridedBatched(mublasHandle_t handle, mublasOperation_t trans,
                                                    int m, int n, const muComplex* alpha,
                                                    const muComplex* A, int lda, long long strideA,
                                                    const muComplex* x, int incx, long long stridex,
                                                    const muComplex* beta, muComplex* y, int incy,
                                                    long long stridey, int batchCount);
MUBLAS_API mublasStatus_t mublasZgemvStridedBatched(mublasHandle_t handle, mublasOperation_t trans,
                                                    int m, int n, const muDoubleComplex* alpha,
                                                    const muDoubleComplex* A, int lda,
                                                    long long strideA, const muDoubleComplex* x,
                                                    int incx, long long stridex,
                                                    const muDoubleComplex* beta, muDoubleComplex* y,
                                                    int incy, long long stridey, int batchCount);
MUBLAS_API mublasStatus_t mublasStrsmBatched(mublasHandle_t handle, mublasSideMode_t side,
                                             mublasFillMode_t uplo, mublasOperation_t trans,
                                             mublasDiagType_t diag, int m, int n,
                                             const float* alpha, const float* const A[], int lda,
                                             float* const B[], int ldb, int batchCount);
MUBLAS_API mublasStatus_t mublasDtrsmBatched(mublasHandle_t handle, mublasSideMode_t side,
                                             mublasFillMode_t uplo, mublasOperation_t trans,
                                             mublasDiagType_t diag, int m, int n,
                                             const double* alpha, const double* const A[], int lda,
                                             double* const B[], int ldb, int batchCount);
MUBLAS_API mublasStatus_t mublasCtrsmBatched(mublasHandle_t handle, mublasSideMode_t side,
                                             mublasFillMode_t uplo, mublasOperation_t trans,
                                             mublasDiagType_t diag, int m, int n,
                                             const muComplex* alpha, const muComplex* const A[],
                                             int lda, muComplex* const B[], int ldb,
                                             int batchCount);
MUBLAS_API mublasStatus_t mublasZtrsmBatched(mublasHandle_t handle, mublasSideMode_t side,
                                             mublasFillMode_t uplo, mublasOperation_t trans,
                                             mublasDiagType_t diag, int m, int n,
                                             const muDoubleComplex* alpha,
                                             const muDoubleComplex* const A[], int lda,
                                             muDoubleComplex* const B[], int ldb, int batchCount);

/* ---- Batched LAPACK-style factorisations and solves */
MUBLAS_API mublasStatus_t mublasSgetrfBatched(mublasHandle_t handle, int n, float* const A[],
                                              int lda, int* P, int* info, int batchSize);
MUBLAS_API mublasStatus_t mublasDgetrfBatched(mublasHandle_t handle, int n, double* const A[],
                                              int lda, int* P, int* info, int batchSize);
MUBLAS_API mublasStatus_t mublasCgetrfBatched(mublasHandle_t handle, int n, muComplex* const A[],
                                              int lda, int* P, int* info, int batchSize);
MUBLAS_API mublasStatus_t mublasZgetrfBatched(mublasHandle_t handle, int n,
                                              muDoubleComplex* const A[], int lda, int* P,
                                              int* info, int batchSize);
MUBLAS_API mublasStatus_t mublasSgetriBatched(mublasHandle_t handle, int n, const float* const A[],
                                              int lda, const int* P, float* const C[], int ldc,
                                              int* info, int batchSize);
MUBLAS_API mublasStatus_t mublasDgetriBatched(mublasHandle_t handle, int n, const double* const A[],
                                              int lda, const int* P, double* const C[], int ldc,
                                              int* info, int batchSize);
MUBLAS_API mublasStatus_t mublasCgetriBatched(mublasHandle_t handle, int n,
                                              const muComplex* const A[], int lda, const int* P,
                                              muComplex* const C[], int ldc, int* info,
                                              int batchSize);
MUBLAS_API mublasStatus_t mublasZgetriBatched(mublasHandle_t handle, int n,
                                              const muDoubleComplex* const A[], int lda,
                                              const int* P, muDoubleComplex* const C[], int ldc,
                                              int* info, int batchSize);
MUBLAS_API mublasStatus_t mublasSgetrsBatched(mublasHandle_t handle, mublasOperation_t trans, int n,
                                              int nrhs, const float* const Aarray[], int lda,
                                              const int* devIpiv, float* const Barray[], int ldb,
                                              int* info, int batchSize);
MUBLAS_API mublasStatus_t mublasDgetrsBatched(mublasHandle_t handle, mublasOperation_t trans, int n,
                                              int nrhs, const double* const Aarray[], int lda,
                                              const int* devIpiv, double* const Barray[], int ldb,
                                              int* info, int batchSize);
MUBLAS_API mublasStatus_t mublasCgetrsBatched(mublasHandle_t handle, mublasOperation_t trans, int n,
                                              int nrhs, const muComplex* const Aarray[], int lda,
                                              const int* devIpiv, muComplex* const Barray[],
                                              int ldb, int* info, int batchSize);
MUBLAS_API mublasStatus_t mublasZgetrsBatched(mublasHandle_t handle, mublasOperation_t trans, int n,
                                              int nrhs, const muDoubleComplex* const Aarray[],
                                              int lda, const int* devIpiv,
                                              muDoubleComplex* const Barray[], int ldb, int* info,
                                              int batchSize);
MUBLAS_API mublasStatus_t mublasSmatinvBatched(mublasHandle_t handle, int n, const float* const A[],
                                               int lda, float* const Ainv[], int lda_inv, int* info,
                                               int batchSize);
MUBLAS_API mublasStatus_t mublasDmatinvBatched(mublasHandle_t handle, int n,
                                               const double* const A[], int lda,
                                               double* const Ainv[], int lda_inv, int* info,
                                               int batchSize);
MUBLAS_API mublasStatus_t mublasCmatinvBatched(mublasHandle_t handle, int n,
                                               const muComplex* const A[], int lda,
                                               muComplex* const Ainv[], int lda_inv, int* info,
                                               int batchSize);
MUBLAS_API mublasStatus_t mublasZmatinvBatched(mublasHandle_t handle, int n,
                                               const muDoubleComplex* const A[], int lda,
                                               muDoubleComplex* const Ainv[], int lda_inv,
                                               int* info, int batchSize);
MUBLAS_API mublasStatus_t mublasSgeqrfBatched(mublasHandle_t handle, int m, int n,
                                              float* const Aarray[], int lda,
                                              float* const TauArray[], int* info, int batchSize);
MUBLAS_API mublasStatus_t mublasDgeqrfBatched(mublasHandle_t handle, int m, int n,
                                              double* const Aarray[], int lda,
                                              double* const TauArray[], int* info, int batchSize);
MUBLAS_API mublasStatus_t mublasCgeqrfBatched(mublasHandle_t handle, int m, int n,
                                              muComplex* const Aarray[], int lda,
                                              muComplex* const TauArray[], int* info,
                                              int batchSize);
MUBLAS_API mublasStatus_t mublasZgeqrfBatched(mublasHandle_t handle, int m, int n,
                                              muDoubleComplex* const Aarray[], int lda,
                                              muDoubleComplex* const TauArray[], int* info,
                                              int batchSize);
MUBLAS_API mublasStatus_t mublasSgelsBatched(mublasHandle_t handle, mublasOperation_t trans, int m,
                                             int n, int nrhs, float* const Aarray[], int lda,
                                             float* const Carray[], int ldc, int* info,
                                             int* devInfoArray, int batchSize);
MUBLAS_API mublasStatus_t mublasDgelsBatched(mublasHandle_t handle, mublasOperation_t trans, int m,
                                             int n, int nrhs, double* const Aarray[], int lda,
                                             double* const Carray[], int ldc, int* info,
                                             int* devInfoArray, int batchSize);
MUBLAS_API mublasStatus_t mublasCgelsBatched(mublasHandle_t handle, mublasOperation_t trans, int m,
                                             int n, int nrhs, muComplex* const Aarray[], int lda,
                                             muComplex* const Carray[], int ldc, int* info,
                                             int* devInfoArray, int batchSize);
MUBLAS_API mublasStatus_t mublasZgelsBatched(mublasHandle_t handle, mublasOperation_t trans, int m,
                                             int n, int nrhs, muDoubleComplex* const Aarray[],
                                             int lda, muDoubleComplex* const Carray[], int ldc,
                                             int* info, int* devInfoArray, int batchSize);

/* ---- Mixed / half precision */
MUBLAS_API mublasStatus_t mublasSgemmEx(mublasHandle_t handle, mublasOperation_t transa,
                                        mublasOperation_t transb, int m, int n, int k,
                                        const float* alpha, const void* A, musaDataType_t Atype,
                                        int lda, const void* B, musaDataType_t Btype, int ldb,
                                        const float* beta, void* C, musaDataType_t Ctype, int ldc);
MUBLAS_API mublasStatus_t mublasCgemmEx(mublasHandle_t handle, mublasOperation_t transa,
                                        mublasOperation_t transb, int m, int n, int k,
                                        const muComplex* alpha, const void* A, musaDataType_t Atype,
                                        int lda, const void* B, musaDataType_t Btype, int ldb,
                                        const muComplex* beta, void* C, musaDataType_t Ctype,
                                        int ldc);
MUBLAS_API mublasStatus_t mublasCgemm3mEx(mublasHandle_t handle, mublasOperation_t transa,
                                          mublasOperation_t transb, int m, int n, int k,
                                          const muComplex* alpha, const void* A,
                                          musaDataType_t Atype, int lda, const void* B,
                                          musaDataType_t Btype, int ldb, const muComplex* beta,
                                          void* C, musaDataType_t Ctype, int ldc);
MUBLAS_API mublasStatus_t mublasCsyrkEx(mublasHandle_t handle, mublasFillMode_t uplo,
                                        mublasOperation_t trans, int n, int k,
                                        const muComplex* alpha, const void* A, musaDataType_t Atype,
                                        int lda, const muComplex* beta, void* C,
                                        musaDataType_t Ctype, int ldc);
MUBLAS_API mublasStatus_t mublasCsyrk3mEx(mublasHandle_t handle, mublasFillMode_t uplo,
                                          mublasOperation_t trans, int n, int k,
                                          const muComplex* alpha, const void* A,
                                          musaDataType_t Atype, int lda, const muComplex* beta,
                                          void* C, musaDataType_t Ctype, int ldc);
MUBLAS_API mublasStatus_t mublasCherkEx(mublasHandle_t handle, mublasFillMode_t uplo,
                                        mublasOperation_t trans, int n, int k, const float* alpha,
                                        const void* A, musaDataType_t Atype, int lda,
                                        const float* beta, void* C, musaDataType_t Ctype, int ldc);
MUBLAS_API mublasStatus_t mublasCherk3mEx(mublasHandle_t handle, mublasFillMode_t uplo,
                                          mublasOperation_t trans, int n, int k, const float* alpha,
                                          const void* A, musaDataType_t Atype, int lda,
                                          const float* beta, void* C, musaDataType_t Ctype,
                                          int ldc);
MUBLAS_API mublasStatus_t mublasHgemm(mublasHandle_t handle, mublasOperation_t transa,
                                      mublasOperation_t transb, int m, int n, int k,
                                      const __half* alpha, const __half* A, int lda,
                                      const __half* B, int ldb, const __half* beta, __half* C,
                                      int ldc);
MUBLAS_API mublasStatus_t mublasHgemmBatched(mublasHandle_t handle, mublasOperation_t transa,
                                             mublasOperation_t transb, int m, int n, int k,
                                             const __half* alpha, const __half* const Aarray[],
                                             int lda, const __half* const Barray[], int ldb,
                                             const __half* beta, __half* const Carray[], int ldc,
                                             int batchCount);
MUBLAS_API mublasStatus_t mublasHgemmStridedBatched(
    mublasHandle_t handle, mublasOperation_t transa, mublasOperation_t transb, int m, int n, int k,
    const __half* alpha, const __half* A, int lda, long long strideA, const __half* B, int ldb,
    long long strideB, const __half* beta, __half* C, int ldc, long long strideC, int batchCount);
MUBLAS_API mublasStatus_t mublasHSHgemvBatched(mublasHandle_t handle, mublasOperation_t trans,
                                               int m, int n, const float* alpha,
                                               const __half* const Aarray[], int lda,
                                               const __half* const xarray[], int incx,
                                               const float* beta, __half* const yarray[], int incy,
                                               int batchCount);
MUBLAS_API mublasStatus_t mublasHSSgemvBatched(mublasHandle_t handle, mublasOperation_t trans,
                                               int m, int n, const float* alpha,
                                               const __half* const Aarray[], int lda,
                                               const __half* const xarray[], int incx,
                                               const float* beta, float* const yarray[], int incy,
                                               int batchCount);
MUBLAS_API mublasStatus_t mublasTSTgemvBatched(mublasHandle_t handle, mublasOperation_t trans,
                                               int m, int n, const float* alpha,
                                               const __mt_bfloat16* const Aarray[], int lda,
                                               const __mt_bfloat16* const xarray[], int incx,
                                               const float* beta, __mt_bfloat16* const yarray[],
                                               int incy, int batchCount);
MUBLAS_API mublasStatus_t mublasTSSgemvBatched(mublasHandle_t handle, mublasOperation_t trans,
                                               int m, int n, const float* alpha,
                                               const __mt_bfloat16* const Aarray[], int lda,
                                               const __mt_bfloat16* const xarray[], int incx,
                                               const float* beta, float* const yarray[], int incy,
                                               int batchCount);
MUBLAS_API mublasStatus_t mublasHSHgemvStridedBatched(
    mublasHandle_t handle, mublasOperation_t trans, int m, int n, const float* alpha,
    const __half* A, int lda, long long strideA, const __half* x, int incx, long long stridex,
    const float* beta, __half* y, int incy, long long stridey, int batchCount);
MUBLAS_API mublasStatus_t mublasHSSgemvStridedBatched(
    mublasHandle_t handle, mublasOperation_t trans, int m, int n, const float* alpha,
    const __half* A, int lda, long long strideA, const __half* x, int incx, long long stridex,
    const float* beta, float* y, int incy, long long stridey, int batchCount);
MUBLAS_API mublasStatus_t
mublasTSTgemvStridedBatched(mublasHandle_t handle, mublasOperation_t trans, int m, int n,
                            const float* alpha, const __mt_bfloat16* A, int lda, long long strideA,
                            const __mt_bfloat16* x, int incx, long long stridex, const float* beta,
                            __mt_bfloat16* y, int incy, long long stridey, int batchCount);
MUBLAS_API mublasStatus_t mublasTSSgemvStridedBatched(
    mublasHandle_t handle, mublasOperation_t trans, int m, int n, const float* alpha,
    const __mt_bfloat16* A, int lda, long long strideA, const __mt_bfloat16* x, int incx,
    long long stridex, const float* beta, float* y, int incy, long long stridey, int batchCount);

#ifdef __cplusplus
} /* extern "C" */

/* ---- GemmEx family: C++ linkage, exported with mangled names as in the real muBLAS. */
#ifndef MUBLAS_SIM_LEGACY_API
MUBLAS_API mublasStatus_t mublasGemmEx(mublasHandle_t handle, mublasOperation_t transa,
                                       mublasOperation_t transb, int m, int n, int k,
                                       const void* alpha, const void* A, musaDataType_t Atype,
                                       int lda, const void* B, musaDataType_t Btype, int ldb,
                                       const void* beta, void* C, musaDataType_t Ctype, int ldc,
                                       mublasComputeType_t computeType, mublasGemmAlgo_t algo);
MUBLAS_API mublasStatus_t
mublasGemmBatchedEx(mublasHandle_t handle, mublasOperation_t transa, mublasOperation_t transb,
                    int m, int n, int k, const void* alpha, const void* const Aarray[],
                    musaDataType_t Atype, int lda, const void* const Barray[], musaDataType_t Btype,
                    int ldb, const void* beta, void* const Carray[], musaDataType_t Ctype, int ldc,
                    int batchCount, mublasComputeType_t computeType, mublasGemmAlgo_t algo);
MUBLAS_API mublasStatus_t mublasGemmStridedBatchedEx(
    mublasHandle_t handle, mublasOperation_t transa, mublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, musaDataType_t Atype, int lda, long long strideA,
    const void* B, musaDataType_t Btype, int ldb, long long strideB, const void* beta, void* C,
    musaDataType_t Ctype, int ldc, long long strideC, int batchCount,
    mublasComputeType_t computeType, mublasGemmAlgo_t algo);
#endif

/* The older form: the compute type given as a data type (MUSA_R_16F, MUSA_R_32F, MUSA_R_64F,
 * MUSA_R_32I, MUSA_C_32F, MUSA_C_64F). */
MUBLAS_API mublasStatus_t mublasGemmEx(mublasHandle_t handle, mublasOperation_t transa,
                                       mublasOperation_t transb, int m, int n, int k,
                                       const void* alpha, const void* A, musaDataType_t Atype,
                                       int lda, const void* B, musaDataType_t Btype, int ldb,
                                       const void* beta, void* C, musaDataType_t Ctype, int ldc,
                                       musaDataType_t computeType, mublasGemmAlgo_t algo);
MUBLAS_API mublasStatus_t mublasGemmBatchedEx(mublasHandle_t handle, mublasOperation_t transa,
                                              mublasOperation_t transb, int m, int n, int k,
                                              const void* alpha, const void* const Aarray[],
                                              musaDataType_t Atype, int lda,
                                              const void* const Barray[], musaDataType_t Btype,
                                              int ldb, const void* beta, void* const Carray[],
                                              musaDataType_t Ctype, int ldc, int batchCount,
                                              musaDataType_t computeType, mublasGemmAlgo_t algo);
MUBLAS_API mublasStatus_t mublasGemmStridedBatchedEx(
    mublasHandle_t handle, mublasOperation_t transa, mublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, musaDataType_t Atype, int lda, long long strideA,
    const void* B, musaDataType_t Btype, int ldb, long long strideB, const void* beta, void* C,
    musaDataType_t Ctype, int ldc, long long strideC, int batchCount, musaDataType_t computeType,
    mublasGemmAlgo_t algo);
#endif /* __cplusplus */

#endif /* TORCHADA_SIM_MUBLAS_H */
