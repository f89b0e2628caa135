/* torchada: the project's own declaration of MCCL, Moore Threads' collective communication library
 * (libmccl.so.2), as implemented by the CPU simulator in sim/ccl (ranks in threads or processes of
 * one machine, exchanging data through POSIX shared memory).
 *
 * Names follow the mechanical rename of NCCL 2.2x (nccl* -> mccl*, Cuda -> Musa), with these
 * differences, which the shim has to translate (see ../../shared/musa-abi.md):
 *   - mcclCommMuDevice, not mcclCommCuDevice, returns the communicator's device [A];
 *   - mcclCommFinalize and mcclCommDump are not provided (not implemented by MCCL) [A];
 *   - no FP8 data types (their MCCL codes are unknown): mcclNumTypes is 10;
 *   - mcclConfig_t is MCCL's own, shorter structure (below), not a renamed ncclConfig_t;
 *   - no ncclCommShrink/Revoke/WindowRegister/InitRankScalable/GroupSimulateEnd counterparts.
 * Values: mcclDataType_t and mcclRedOp_t equal NCCL's [A]; mcclUniqueId is 128 bytes [A].
 * mcclResult_t: only mcclSuccess = 0 is confirmed; the other codes are this simulator's choice and
 * happen to equal NCCL's (1..8) [C].
 * No default arguments, so it is usable from C.
 */
#ifndef TORCHADA_SIM_MCCL_H
#define TORCHADA_SIM_MCCL_H

#include <limits.h>
#include <stddef.h>

#include "musa_types.h"

#if defined(__GNUC__)
#define MCCL_API __attribute__((visibility("default")))
#else
#define MCCL_API
#endif

/* The simulator's own version [C]: MCCL's real numbering is not published. */
#define MCCL_MAJOR 2
#define MCCL_MINOR 20
#define MCCL_PATCH 0
#define MCCL_SUFFIX "sim"
#define MCCL_VERSION(X, Y, Z) \
  (((X) <= 2 && (Y) <= 8) ? (X)*1000 + (Y)*100 + (Z) : (X)*10000 + (Y)*100 + (Z))
#define MCCL_VERSION_CODE MCCL_VERSION(MCCL_MAJOR, MCCL_MINOR, MCCL_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Handles and identifiers ---------------------------------------------------------------- */
typedef struct mcclComm* mcclComm_t;
#define MCCL_COMM_NULL NULL

#define MCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[MCCL_UNIQUE_ID_BYTES];
} mcclUniqueId;

/* ---- Results [C: values chosen here, equal to NCCL's] ---------------------------------------- */
typedef enum {
  mcclSuccess = 0,
  mcclUnhandledMusaError = 1, /* a MUSA runtime call failed */
  mcclSystemError = 2,        /* a system call failed (shm_open, mmap, futex...) */
  mcclInternalError = 3,
  mcclInvalidArgument = 4, /* NULL/unknown handle or pointer, bad count, type, op, rank */
  mcclInvalidUsage = 5,    /* calls in the wrong order or state, mismatched peers */
  mcclRemoteError = 6,     /* a peer died, aborted, failed or timed out */
  mcclInProgress = 7,
  mcclNumResults = 8
} mcclResult_t;

/* ---- Communicator configuration ---------------------------------------------------------------
 * MCCL's own structure: fewer fields than ncclConfig_t and in another order; its own magic. The
 * shim copies ncclConfig_t into it field by field. `size` tells which fields a caller knows;
 * fields a caller leaves at MCCL_CONFIG_UNDEF_* take the library's default. In the simulator only
 * `blocking` and `commName` have an effect (see sim/ccl/README.md); the others are validated. */
#define MCCL_CONFIG_UNDEF_INT INT_MIN
#define MCCL_CONFIG_UNDEF_PTR NULL
#define MCCL_CONFIG_MAGIC 0x4d43434cu /* "MCCL" */
#define MCCL_SPLIT_NOCOLOR -1

typedef struct mcclConfig_v22000 {
  size_t size;          /* sizeof(mcclConfig_t) as the caller compiled it */
  unsigned int magic;   /* MCCL_CONFIG_MAGIC */
  unsigned int version; /* MCCL_VERSION_CODE of the caller's header */
  int blocking;         /* 1 (default); 0: init may return mcclInProgress (poll GetAsyncError) */
  int splitShare;       /* accepted, no effect */
  int maxCTAs;          /* accepted, no effect (> 0 when set) */
  int minCTAs;          /* accepted, no effect (> 0, <= maxCTAs when set) */
  const char* commName; /* copied; reported in error messages */
  int cgaClusterSize;   /* accepted, no effect (0..8 when set) */
} mcclConfig_t;

#define MCCL_CONFIG_INITIALIZER                                                                \
  {                                                                                            \
    sizeof(mcclConfig_t), MCCL_CONFIG_MAGIC, MCCL_VERSION(MCCL_MAJOR, MCCL_MINOR, MCCL_PATCH), \
        MCCL_CONFIG_UNDEF_INT, MCCL_CONFIG_UNDEF_INT, MCCL_CONFIG_UNDEF_INT,                   \
        MCCL_CONFIG_UNDEF_INT, MCCL_CONFIG_UNDEF_PTR, MCCL_CONFIG_UNDEF_INT                    \
  }

/* ---- Reduction operators and data types [A: values equal NCCL's] ---------------------------- */
typedef enum { mcclNumOps_dummy = 5 } mcclRedOp_dummy_t;
typedef enum {
  mcclSum = 0,
  mcclProd = 1,
  mcclMax = 2,
  mcclMin = 3,
  mcclAvg = 4,
  mcclNumOps = 5, /* first value handed out by mcclRedOpCreatePreMulSum */
  mcclMaxRedOp = 0x7fffffff >> (32 - 8 * sizeof(mcclRedOp_dummy_t))
} mcclRedOp_t;

typedef enum {
  mcclInt8 = 0,
  mcclChar = 0,
  mcclUint8 = 1,
  mcclInt32 = 2,
  mcclInt = 2,
  mcclUint32 = 3,
  mcclInt64 = 4,
  mcclUint64 = 5,
  mcclFloat16 = 6,
  mcclHalf = 6,
  mcclFloat32 = 7,
  mcclFloat = 7,
  mcclFloat64 = 8,
  mcclDouble = 8,
  mcclBfloat16 = 9,
  mcclNumTypes = 10
} mcclDataType_t;

typedef enum {
  mcclScalarDevice = 0,       /* read when the collective runs */
  mcclScalarHostImmediate = 1 /* read before mcclRedOpCreatePreMulSum returns */
} mcclScalarResidence_t;

/* ---- Library, ids, communicators ------------------------------------------------------------ */
MCCL_API mcclResult_t mcclGetVersion(int* version);
MCCL_API mcclResult_t mcclGetUniqueId(mcclUniqueId* uniqueId);
MCCL_API mcclResult_t mcclCommInitRank(mcclComm_t* comm, int nranks, mcclUniqueId commId, int rank);
MCCL_API mcclResult_t mcclCommInitRankConfig(mcclComm_t* comm, int nranks, mcclUniqueId commId,
                                             int rank, mcclConfig_t* config);
MCCL_API mcclResult_t mcclCommInitAll(mcclComm_t* comm, int ndev, const int* devlist);
MCCL_API mcclResult_t mcclCommSplit(mcclComm_t comm, int color, int key, mcclComm_t* newcomm,
                                    mcclConfig_t* config);
MCCL_API mcclResult_t mcclCommDestroy(mcclComm_t comm);
MCCL_API mcclResult_t mcclCommAbort(mcclComm_t comm);
MCCL_API mcclResult_t mcclCommGetAsyncError(mcclComm_t comm, mcclResult_t* asyncError);
MCCL_API mcclResult_t mcclCommCount(const mcclComm_t comm, int* count);
MCCL_API mcclResult_t mcclCommMuDevice(const mcclComm_t comm, int* device);
MCCL_API mcclResult_t mcclCommUserRank(const mcclComm_t comm, int* rank);
MCCL_API const char* mcclGetErrorString(mcclResult_t result);
MCCL_API const char* mcclGetLastError(mcclComm_t comm);

/* ---- Memory ---------------------------------------------------------------------------------- */
MCCL_API mcclResult_t mcclMemAlloc(void** ptr, size_t size);
MCCL_API mcclResult_t mcclMemFree(void* ptr);
MCCL_API mcclResult_t mcclCommRegister(const mcclComm_t comm, void* buff, size_t size,
                                       void** handle);
MCCL_API mcclResult_t mcclCommDeregister(const mcclComm_t comm, void* handle);

/* ---- Custom reduction operators ---------------------------------------------------------------
 */
MCCL_API mcclResult_t mcclRedOpCreatePreMulSum(mcclRedOp_t* op, void* scalar,
                                               mcclDataType_t datatype,
                                               mcclScalarResidence_t residence, mcclComm_t comm);
MCCL_API mcclResult_t mcclRedOpDestroy(mcclRedOp_t op, mcclComm_t comm);

/* ---- Collectives (enqueued on `stream`; return once enqueued) -------------------------------- */
MCCL_API mcclResult_t mcclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                 mcclDataType_t datatype, mcclRedOp_t op, int root, mcclComm_t comm,
                                 musaStream_t stream);
MCCL_API mcclResult_t mcclBcast(void* buff, size_t count, mcclDataType_t datatype, int root,
                                mcclComm_t comm, musaStream_t stream);
MCCL_API mcclResult_t mcclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                    mcclDataType_t datatype, int root, mcclComm_t comm,
                                    musaStream_t stream);
MCCL_API mcclResult_t mcclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                    mcclDataType_t datatype, mcclRedOp_t op, mcclComm_t comm,
                                    musaStream_t stream);
MCCL_API mcclResult_t mcclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                        mcclDataType_t datatype, mcclRedOp_t op, mcclComm_t comm,
                                        musaStream_t stream);
MCCL_API mcclResult_t mcclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                    mcclDataType_t datatype, mcclComm_t comm, musaStream_t stream);
MCCL_API mcclResult_t mcclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                   mcclDataType_t datatype, mcclComm_t comm, musaStream_t stream);
MCCL_API mcclResult_t mcclGather(const void* sendbuff, void* recvbuff, size_t count,
                                 mcclDataType_t datatype, int root, mcclComm_t comm,
                                 musaStream_t stream);
MCCL_API mcclResult_t mcclScatter(const void* sendbuff, void* recvbuff, size_t count,
                                  mcclDataType_t datatype, int root, mcclComm_t comm,
                                  musaStream_t stream);

/* ---- Point to point ---------------------------------------------------------------------------
 */
MCCL_API mcclResult_t mcclSend(const void* sendbuff, size_t count, mcclDataType_t datatype,
                               int peer, mcclComm_t comm, musaStream_t stream);
MCCL_API mcclResult_t mcclRecv(void* recvbuff, size_t count, mcclDataType_t datatype, int peer,
                               mcclComm_t comm, musaStream_t stream);

/* ---- Groups -----------------------------------------------------------------------------------
 */
MCCL_API mcclResult_t mcclGroupStart(void);
MCCL_API mcclResult_t mcclGroupEnd(void);

#ifdef __cplusplus
}
#endif

#endif /* TORCHADA_SIM_MCCL_H */
