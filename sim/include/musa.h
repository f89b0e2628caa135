/* torchada: the project's own description of the MUSA driver API (libmusa.so.1, mu*).
 *
 * Written for the CPU simulator (sim/driver) and for building the shim without a MUSA SDK. It
 * covers the subset of the driver API that CUDA programs fetch through driver entry points (see
 * symbols/driver.txt). Names follow MUSA's mechanical rename of CUDA's cuda.h (shared/musa-abi.md):
 * cu* -> mu*, CU* -> MU*, CUDA_* -> MUSA_* (result codes keep the MUSA_ prefix), "CUDA" inside a
 * name -> "MUSA", NVLINK -> MTLINK. Values and layouts are assumed equal to CUDA 13's; the shim
 * proves the ones it relies on with static_asserts, against the real SDK's musa.h when one is
 * used. Usable from C and C++, and together with NVIDIA's headers and musa_runtime_api.h.
 */
#ifndef TORCHADA_SIM_MUSA_H
#define TORCHADA_SIM_MUSA_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define MUSA_DRV_API __attribute__((visibility("default")))
#else
#define MUSA_DRV_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Scalars and handles -------------------------------------------------------------------- */
typedef uint32_t muuint32_t;
typedef uint64_t muuint64_t;
typedef int MUdevice;
typedef unsigned long long MUdeviceptr;
typedef unsigned long long MUmemGenericAllocationHandle;
typedef struct MUctx_st* MUcontext;
typedef struct MUstream_st* MUstream; /* the runtime's musaStream_t is the same handle */
typedef struct MUevent_st* MUevent;   /* the runtime's musaEvent_t is the same handle */
typedef void (*MUhostFn)(void* userData);

/* Also defined by musa_types.h (the runtime's musaUUID_t): whichever header comes first. */
#ifndef MU_UUID_HAS_BEEN_DEFINED
#define MU_UUID_HAS_BEEN_DEFINED
struct MUuuid_st {
  char bytes[16];
};
#endif
typedef struct MUuuid_st MUuuid;

/* IPC handles: opaque bytes (CUDA's CUipcMemHandle / CUipcEventHandle). */
#define MU_IPC_HANDLE_SIZE 64
typedef struct MUipcMemHandle_st {
  char reserved[MU_IPC_HANDLE_SIZE];
} MUipcMemHandle_v1;
typedef MUipcMemHandle_v1 MUipcMemHandle;
typedef struct MUipcEventHandle_st {
  char reserved[MU_IPC_HANDLE_SIZE];
} MUipcEventHandle_v1;
typedef MUipcEventHandle_v1 MUipcEventHandle;
typedef enum MUipcMem_flags_enum { MU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 0x1 } MUipcMem_flags;

/* Special stream handles (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD). */
#define MU_STREAM_LEGACY ((MUstream)0x1)
#define MU_STREAM_PER_THREAD ((MUstream)0x2)

/* ---- Result codes (values equal to CUresult's) ---------------------------------------------- */
typedef enum musaError_enum {

  MUSA_SUCCESS = 0,
  MUSA_ERROR_INVALID_VALUE = 1,
  MUSA_ERROR_OUT_OF_MEMORY = 2,
  MUSA_ERROR_NOT_INITIALIZED = 3,
  MUSA_ERROR_DEINITIALIZED = 4,
  MUSA_ERROR_PROFILER_DISABLED = 5,
  MUSA_ERROR_PROFILER_NOT_INITIALIZED = 6,
  MUSA_ERROR_PROFILER_ALREADY_STARTED = 7,
  MUSA_ERROR_PROFILER_ALREADY_STOPPED = 8,
  MUSA_ERROR_STUB_LIBRARY = 34,
  MUSA_ERROR_CALL_REQUIRES_NEWER_DRIVER = 36,
  MUSA_ERROR_DEVICE_UNAVAILABLE = 46,
  MUSA_ERROR_NO_DEVICE = 100,
  MUSA_ERROR_INVALID_DEVICE = 101,
  MUSA_ERROR_DEVICE_NOT_LICENSED = 102,
  MUSA_ERROR_INVALID_IMAGE = 200,
  MUSA_ERROR_INVALID_CONTEXT = 201,
  MUSA_ERROR_CONTEXT_ALREADY_CURRENT = 202,
  MUSA_ERROR_MAP_FAILED = 205,
  MUSA_ERROR_UNMAP_FAILED = 206,
  MUSA_ERROR_ARRAY_IS_MAPPED = 207,
  MUSA_ERROR_ALREADY_MAPPED = 208,
  MUSA_ERROR_NO_BINARY_FOR_GPU = 209,
  MUSA_ERROR_ALREADY_ACQUIRED = 210,
  MUSA_ERROR_NOT_MAPPED = 211,
  MUSA_ERROR_NOT_MAPPED_AS_ARRAY = 212,
  MUSA_ERROR_NOT_MAPPED_AS_POINTER = 213,
  MUSA_ERROR_ECC_UNCORRECTABLE = 214,
  MUSA_ERROR_UNSUPPORTED_LIMIT = 215,
  MUSA_ERROR_CONTEXT_ALREADY_IN_USE = 216,
  MUSA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
  MUSA_ERROR_INVALID_PTX = 218,
  MUSA_ERROR_INVALID_GRAPHICS_CONTEXT = 219,
  MUSA_ERROR_MTLINK_UNCORRECTABLE = 220,
  MUSA_ERROR_JIT_COMPILER_NOT_FOUND = 221,
  MUSA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  MUSA_ERROR_JIT_COMPILATION_DISABLED = 223,
  MUSA_ERROR_UNSUPPORTED_EXEC_AFFINITY = 224,
  MUSA_ERROR_UNSUPPORTED_DEVSIDE_SYNC = 225,
  MUSA_ERROR_CONTAINED = 226,
  MUSA_ERROR_INVALID_SOURCE = 300,
  MUSA_ERROR_FILE_NOT_FOUND = 301,
  MUSA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND = 302,
  MUSA_ERROR_SHARED_OBJECT_INIT_FAILED = 303,
  MUSA_ERROR_OPERATING_SYSTEM = 304,
  MUSA_ERROR_INVALID_HANDLE = 400,
  MUSA_ERROR_ILLEGAL_STATE = 401,
  MUSA_ERROR_LOSSY_QUERY = 402,
  MUSA_ERROR_NOT_FOUND = 500,
  MUSA_ERROR_NOT_READY = 600,
  MUSA_ERROR_ILLEGAL_ADDRESS = 700,
  MUSA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  MUSA_ERROR_LAUNCH_TIMEOUT = 702,
  MUSA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING = 703,
  MUSA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
  MUSA_ERROR_PEER_ACCESS_NOT_ENABLED = 705,
  MUSA_ERROR_PRIMARY_CONTEXT_ACTIVE = 708,
  MUSA_ERROR_CONTEXT_IS_DESTROYED = 709,
  MUSA_ERROR_ASSERT = 710,
  MUSA_ERROR_TOO_MANY_PEERS = 711,
  MUSA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
  MUSA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713,
  MUSA_ERROR_HARDWARE_STACK_ERROR = 714,
  MUSA_ERROR_ILLEGAL_INSTRUCTION = 715,
  MUSA_ERROR_MISALIGNED_ADDRESS = 716,
  MUSA_ERROR_INVALID_ADDRESS_SPACE = 717,
  MUSA_ERROR_INVALID_PC = 718,
  MUSA_ERROR_LAUNCH_FAILED = 719,
  MUSA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
  MUSA_ERROR_TENSOR_MEMORY_LEAK = 721,
  MUSA_ERROR_NOT_PERMITTED = 800,
  MUSA_ERROR_NOT_SUPPORTED = 801,
  MUSA_ERROR_SYSTEM_NOT_READY = 802,
  MUSA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
  MUSA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
  MUSA_ERROR_MPS_CONNECTION_FAILED = 805,
  MUSA_ERROR_MPS_RPC_FAILURE = 806,
  MUSA_ERROR_MPS_SERVER_NOT_READY = 807,
  MUSA_ERROR_MPS_MAX_CLIENTS_REACHED = 808,
  MUSA_ERROR_MPS_MAX_CONNECTIONS_REACHED = 809,
  MUSA_ERROR_MPS_CLIENT_TERMINATED = 810,
  MUSA_ERROR_CDP_NOT_SUPPORTED = 811,
  MUSA_ERROR_CDP_VERSION_MISMATCH = 812,
  MUSA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  MUSA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
  MUSA_ERROR_STREAM_CAPTURE_MERGE = 902,
  MUSA_ERROR_STREAM_CAPTURE_UNMATCHED = 903,
  MUSA_ERROR_STREAM_CAPTURE_UNJOINED = 904,
  MUSA_ERROR_STREAM_CAPTURE_ISOLATION = 905,
  MUSA_ERROR_STREAM_CAPTURE_IMPLICIT = 906,
  MUSA_ERROR_CAPTURED_EVENT = 907,
  MUSA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,
  MUSA_ERROR_TIMEOUT = 909,
  MUSA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910,
  MUSA_ERROR_EXTERNAL_DEVICE = 911,
  MUSA_ERROR_INVALID_CLUSTER_SIZE = 912,
  MUSA_ERROR_FUNCTION_NOT_LOADED = 913,
  MUSA_ERROR_INVALID_RESOURCE_TYPE = 914,
  MUSA_ERROR_INVALID_RESOURCE_CONFIGURATION = 915,
  MUSA_ERROR_KEY_ROTATION = 916,
  MUSA_ERROR_STREAM_DETACHED = 917,
  MUSA_ERROR_UNKNOWN = 999
} MUresult;

/* ---- Device attributes (values equal to CUdevice_attribute's) ------------------------------- */
typedef enum MUdevice_attribute_enum {

  MU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  MU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  MU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
  MU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
  MU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  MU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  MU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  MU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  MU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK = 8,
  MU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY = 9,
  MU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  MU_DEVICE_ATTRIBUTE_MAX_PITCH = 11,
  MU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,
  MU_DEVICE_ATTRIBUTE_REGISTERS_PER_BLOCK = 12,
  MU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  MU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT = 14,
  MU_DEVICE_ATTRIBUTE_GPU_OVERLAP = 15,
  MU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  MU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT = 17,
  MU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
  MU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
  MU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 20,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH = 21,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH = 22,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT = 23,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH = 24,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT = 25,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH = 26,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH = 27,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT = 28,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS = 29,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_WIDTH = 27,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_HEIGHT = 28,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_NUMSLICES = 29,
  MU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT = 30,
  MU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS = 31,
  MU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
  MU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  MU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
  MU_DEVICE_ATTRIBUTE_TCC_DRIVER = 35,
  MU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
  MU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  MU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  MU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  MU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40,
  MU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH = 42,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS = 43,
  MU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER = 44,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH = 45,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT = 46,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE = 47,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE = 48,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE = 49,
  MU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
  MU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT = 51,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH = 52,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH = 53,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS = 54,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH = 55,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH = 56,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT = 57,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH = 58,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT = 59,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH = 60,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH = 61,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS = 62,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH = 63,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT = 64,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS = 65,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH = 66,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH = 67,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS = 68,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH = 69,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH = 70,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT = 71,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH = 72,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH = 73,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT = 74,
  MU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  MU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  MU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH = 77,
  MU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED = 78,
  MU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED = 79,
  MU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED = 80,
  MU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  MU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
  MU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
  MU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD = 84,
  MU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID = 85,
  MU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED = 86,
  MU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO = 87,
  MU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 88,
  MU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
  MU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED = 90,
  MU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 91,
  MU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 = 92,
  MU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1 = 93,
  MU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1 = 94,
  MU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
  MU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH = 96,
  MU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  MU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES = 98,
  MU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED = 99,
  MU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES = 100,
  MU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST = 101,
  MU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED = 102,
  MU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102,
  MU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 103,
  MU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED = 104,
  MU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED = 105,
  MU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
  MU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED = 107,
  MU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 108,
  MU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE = 109,
  MU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_MUSA_VMM_SUPPORTED = 110,
  MU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK = 111,
  MU_DEVICE_ATTRIBUTE_SPARSE_MUSA_ARRAY_SUPPORTED = 112,
  MU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED = 113,
  MU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED = 114,
  MU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
  MU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 116,
  MU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS = 117,
  MU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING = 118,
  MU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES = 119,
  MU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 120,
  MU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_MUSA_ARRAY_SUPPORTED = 121,
  MU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS = 122,
  MU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR = 123,
  MU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124,
  MU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED = 125,
  MU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT = 126,
  MU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED = 127,
  MU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 128,
  MU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS = 129,
  MU_DEVICE_ATTRIBUTE_NUMA_CONFIG = 130,
  MU_DEVICE_ATTRIBUTE_NUMA_ID = 131,
  MU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED = 132,
  MU_DEVICE_ATTRIBUTE_MPS_ENABLED = 133,
  MU_DEVICE_ATTRIBUTE_HOST_NUMA_ID = 134,
  MU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED = 135,
  MU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK = 136,
  MU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH = 137,
  MU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED = 138,
  MU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID = 139,
  MU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID = 140,
  MU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 141,
  MU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED = 142,
  MU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED = 143,
  MU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED = 144,
  MU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 145,
  MU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED = 146,
  MU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED = 147,
  MU_DEVICE_ATTRIBUTE_ATOMIC_REDUCTION_SUPPORTED = 148,
  MU_DEVICE_ATTRIBUTE_MAX = 149
} MUdevice_attribute;

/* ---- Virtual memory management -------------------------------------------------------------- */
typedef enum MUmemAllocationHandleType_enum {
  MU_MEM_HANDLE_TYPE_NONE = 0x0,
  MU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 0x1,
  MU_MEM_HANDLE_TYPE_WIN32 = 0x2,
  MU_MEM_HANDLE_TYPE_WIN32_KMT = 0x4,
  MU_MEM_HANDLE_TYPE_FABRIC = 0x8,
  MU_MEM_HANDLE_TYPE_MAX = 0x7FFFFFFF
} MUmemAllocationHandleType;

typedef enum MUmemAccess_flags_enum {
  MU_MEM_ACCESS_FLAGS_PROT_NONE = 0x0,
  MU_MEM_ACCESS_FLAGS_PROT_READ = 0x1,
  MU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3,
  MU_MEM_ACCESS_FLAGS_PROT_MAX = 0x7FFFFFFF
} MUmemAccess_flags;

typedef enum MUmemLocationType_enum {
  MU_MEM_LOCATION_TYPE_INVALID = 0x0,
  MU_MEM_LOCATION_TYPE_NONE = 0x0,
  MU_MEM_LOCATION_TYPE_DEVICE = 0x1,
  MU_MEM_LOCATION_TYPE_HOST = 0x2,
  MU_MEM_LOCATION_TYPE_HOST_NUMA = 0x3,
  MU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT = 0x4,
  MU_MEM_LOCATION_TYPE_INVISIBLE = 0x5,
  MU_MEM_LOCATION_TYPE_MAX = 0x7FFFFFFF
} MUmemLocationType;

typedef enum MUmemAllocationType_enum {
  MU_MEM_ALLOCATION_TYPE_INVALID = 0x0,
  MU_MEM_ALLOCATION_TYPE_PINNED = 0x1,
  MU_MEM_ALLOCATION_TYPE_MANAGED = 0x2,
  MU_MEM_ALLOCATION_TYPE_MAX = 0x7FFFFFFF
} MUmemAllocationType;

typedef enum MUmemAllocationGranularity_flags_enum {
  MU_MEM_ALLOC_GRANULARITY_MINIMUM = 0x0,
  MU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 0x1
} MUmemAllocationGranularity_flags;

typedef enum MUmemAllocationCompType_enum {
  MU_MEM_ALLOCATION_COMP_NONE = 0x0,
  MU_MEM_ALLOCATION_COMP_GENERIC = 0x1
} MUmemAllocationCompType;

typedef struct MUmemLocation_st {
  MUmemLocationType type;
  int id;
} MUmemLocation;

typedef struct MUmemAllocationProp_st {
  MUmemAllocationType type;
  MUmemAllocationHandleType requestedHandleTypes;
  MUmemLocation location;
  void* win32HandleMetaData; /* must be NULL except for MU_MEM_HANDLE_TYPE_WIN32 */
  struct {
    unsigned char compressionType; /* MUmemAllocationCompType */
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
} MUmemAllocationProp;

typedef struct MUmemAccessDesc_st {
  MUmemLocation location;
  MUmemAccess_flags flags;
} MUmemAccessDesc;

/* ---- Pointer attributes -------------------------------------------------------------------- */
typedef enum MUpointer_attribute_enum {
  MU_POINTER_ATTRIBUTE_CONTEXT = 1,
  MU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  MU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3,
  MU_POINTER_ATTRIBUTE_HOST_POINTER = 4,
  MU_POINTER_ATTRIBUTE_P2P_TOKENS = 5,
  MU_POINTER_ATTRIBUTE_SYNC_MEMOPS = 6,
  MU_POINTER_ATTRIBUTE_BUFFER_ID = 7,
  MU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
  MU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
  MU_POINTER_ATTRIBUTE_IS_LEGACY_MUSA_IPC_CAPABLE = 10,
  MU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
  MU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
  MU_POINTER_ATTRIBUTE_MAPPED = 13,
  MU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES = 14,
  MU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE = 15,
  MU_POINTER_ATTRIBUTE_ACCESS_FLAGS = 16,
  MU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE = 17,
  MU_POINTER_ATTRIBUTE_MAPPING_SIZE = 18,
  MU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR = 19,
  MU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID = 20,
  MU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE = 21
} MUpointer_attribute;

/* The value of MU_POINTER_ATTRIBUTE_MEMORY_TYPE. */
typedef enum MUmemorytype_enum {
  MU_MEMORYTYPE_HOST = 0x01,
  MU_MEMORYTYPE_DEVICE = 0x02,
  MU_MEMORYTYPE_ARRAY = 0x03,
  MU_MEMORYTYPE_UNIFIED = 0x04
} MUmemorytype;

/* Context flags (muDevicePrimaryCtxSetFlags, muCtxGetFlags). */
#define MU_CTX_SCHED_AUTO 0x00
#define MU_CTX_SCHED_SPIN 0x01
#define MU_CTX_SCHED_YIELD 0x02
#define MU_CTX_SCHED_BLOCKING_SYNC 0x04
#define MU_CTX_SCHED_MASK 0x07
#define MU_CTX_MAP_HOST 0x08
#define MU_CTX_LMEM_RESIZE_TO_MAX 0x10
#define MU_CTX_COREDUMP_ENABLE 0x20
#define MU_CTX_USER_COREDUMP_ENABLE 0x40
#define MU_CTX_SYNC_MEMOPS 0x80
#define MU_CTX_FLAGS_MASK 0xFF

/* ---- Stream memory operations --------------------------------------------------------------- */
typedef enum MUstreamWriteValue_flags_enum {
  MU_STREAM_WRITE_VALUE_DEFAULT = 0x0,
  MU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER = 0x1
} MUstreamWriteValue_flags;

/* ---- Functions ------------------------------------------------------------------------------ */
/* Errors, initialisation, version. */
MUSA_DRV_API MUresult muGetErrorString(MUresult error, const char** pStr);
MUSA_DRV_API MUresult muGetErrorName(MUresult error, const char** pStr);
MUSA_DRV_API MUresult muInit(unsigned int Flags);
MUSA_DRV_API MUresult muDriverGetVersion(int* driverVersion);

/* Devices and contexts. */
MUSA_DRV_API MUresult muDeviceGet(MUdevice* device, int ordinal);
MUSA_DRV_API MUresult muDeviceGetCount(int* count);
MUSA_DRV_API MUresult muDeviceGetAttribute(int* pi, MUdevice_attribute attrib, MUdevice dev);
MUSA_DRV_API MUresult muCtxGetCurrent(MUcontext* pctx);

/* Devices, primary contexts and the current context, memory, copies, streams and events: what a
 * CUDA program calls through the driver (PyTorch's lazy NVRTC stub, NVIDIA's libraries). */
MUSA_DRV_API MUresult muDeviceGetName(char* name, int len, MUdevice dev);
MUSA_DRV_API MUresult muDeviceGetUuid(MUuuid* uuid, MUdevice dev);
MUSA_DRV_API MUresult muDeviceGetUuid_v2(MUuuid* uuid, MUdevice dev);
MUSA_DRV_API MUresult muDeviceTotalMem_v2(size_t* bytes, MUdevice dev);
MUSA_DRV_API MUresult muDeviceGetPCIBusId(char* pciBusId, int len, MUdevice dev);
MUSA_DRV_API MUresult muDeviceGetByPCIBusId(MUdevice* dev, const char* pciBusId);
MUSA_DRV_API MUresult muDeviceCanAccessPeer(int* canAccessPeer, MUdevice dev, MUdevice peerDev);
MUSA_DRV_API MUresult muDevicePrimaryCtxRetain(MUcontext* pctx, MUdevice dev);
MUSA_DRV_API MUresult muDevicePrimaryCtxRelease_v2(MUdevice dev);
MUSA_DRV_API MUresult muDevicePrimaryCtxGetState(MUdevice dev, unsigned int* flags, int* active);
MUSA_DRV_API MUresult muDevicePrimaryCtxSetFlags_v2(MUdevice dev, unsigned int flags);
MUSA_DRV_API MUresult muDevicePrimaryCtxReset_v2(MUdevice dev);
MUSA_DRV_API MUresult muCtxSetCurrent(MUcontext ctx);
MUSA_DRV_API MUresult muCtxPushCurrent_v2(MUcontext ctx);
MUSA_DRV_API MUresult muCtxPopCurrent_v2(MUcontext* pctx);
MUSA_DRV_API MUresult muCtxGetDevice(MUdevice* device);
MUSA_DRV_API MUresult muCtxSynchronize(void);
MUSA_DRV_API MUresult muCtxGetFlags(unsigned int* flags);
MUSA_DRV_API MUresult muCtxGetApiVersion(MUcontext ctx, unsigned int* version);
MUSA_DRV_API MUresult muCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority);
MUSA_DRV_API MUresult muMemGetInfo_v2(size_t* free, size_t* total);
MUSA_DRV_API MUresult muMemAlloc_v2(MUdeviceptr* dptr, size_t bytesize);
MUSA_DRV_API MUresult muMemFree_v2(MUdeviceptr dptr);
MUSA_DRV_API MUresult muMemAllocHost_v2(void** pp, size_t bytesize);
MUSA_DRV_API MUresult muMemFreeHost(void* p);
MUSA_DRV_API MUresult muMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags);
MUSA_DRV_API MUresult muMemHostGetDevicePointer_v2(MUdeviceptr* pdptr, void* p, unsigned int Flags);
MUSA_DRV_API MUresult muMemHostRegister_v2(void* p, size_t bytesize, unsigned int Flags);
MUSA_DRV_API MUresult muMemHostUnregister(void* p);
MUSA_DRV_API MUresult muMemAllocManaged(MUdeviceptr* dptr, size_t bytesize, unsigned int flags);
MUSA_DRV_API MUresult muMemcpy(MUdeviceptr dst, MUdeviceptr src, size_t ByteCount);
MUSA_DRV_API MUresult muMemcpyAsync(MUdeviceptr dst, MUdeviceptr src, size_t ByteCount,
                                    MUstream hStream);
MUSA_DRV_API MUresult muMemcpyHtoD_v2(MUdeviceptr dstDevice, const void* srcHost, size_t ByteCount);
MUSA_DRV_API MUresult muMemcpyDtoH_v2(void* dstHost, MUdeviceptr srcDevice, size_t ByteCount);
MUSA_DRV_API MUresult muMemcpyDtoD_v2(MUdeviceptr dstDevice, MUdeviceptr srcDevice,
                                      size_t ByteCount);
MUSA_DRV_API MUresult muMemcpyHtoDAsync_v2(MUdeviceptr dstDevice, const void* srcHost,
                                           size_t ByteCount, MUstream hStream);
MUSA_DRV_API MUresult muMemcpyDtoHAsync_v2(void* dstHost, MUdeviceptr srcDevice, size_t ByteCount,
                                           MUstream hStream);
MUSA_DRV_API MUresult muMemcpyDtoDAsync_v2(MUdeviceptr dstDevice, MUdeviceptr srcDevice,
                                           size_t ByteCount, MUstream hStream);
MUSA_DRV_API MUresult muMemcpyPeer(MUdeviceptr dstDevice, MUcontext dstContext,
                                   MUdeviceptr srcDevice, MUcontext srcContext, size_t ByteCount);
MUSA_DRV_API MUresult muMemcpyPeerAsync(MUdeviceptr dstDevice, MUcontext dstContext,
                                        MUdeviceptr srcDevice, MUcontext srcContext,
                                        size_t ByteCount, MUstream hStream);
MUSA_DRV_API MUresult muMemsetD8_v2(MUdeviceptr dstDevice, unsigned char uc, size_t N);
MUSA_DRV_API MUresult muMemsetD16_v2(MUdeviceptr dstDevice, unsigned short us, size_t N);
MUSA_DRV_API MUresult muMemsetD32_v2(MUdeviceptr dstDevice, unsigned int ui, size_t N);
MUSA_DRV_API MUresult muMemsetD8Async(MUdeviceptr dstDevice, unsigned char uc, size_t N,
                                      MUstream hStream);
MUSA_DRV_API MUresult muMemsetD16Async(MUdeviceptr dstDevice, unsigned short us, size_t N,
                                       MUstream hStream);
MUSA_DRV_API MUresult muPointerGetAttribute(void* data, MUpointer_attribute attribute,
                                            MUdeviceptr ptr);
MUSA_DRV_API MUresult muPointerGetAttributes(unsigned int numAttributes,
                                             MUpointer_attribute* attributes, void** data,
                                             MUdeviceptr ptr);
MUSA_DRV_API MUresult muStreamCreate(MUstream* phStream, unsigned int Flags);
MUSA_DRV_API MUresult muStreamCreateWithPriority(MUstream* phStream, unsigned int flags,
                                                 int priority);
MUSA_DRV_API MUresult muStreamDestroy_v2(MUstream hStream);
MUSA_DRV_API MUresult muStreamSynchronize(MUstream hStream);
MUSA_DRV_API MUresult muStreamQuery(MUstream hStream);
MUSA_DRV_API MUresult muStreamWaitEvent(MUstream hStream, MUevent hEvent, unsigned int Flags);
MUSA_DRV_API MUresult muStreamGetPriority(MUstream hStream, int* priority);
MUSA_DRV_API MUresult muStreamGetFlags(MUstream hStream, unsigned int* flags);
MUSA_DRV_API MUresult muLaunchHostFunc(MUstream hStream, MUhostFn fn, void* userData);
MUSA_DRV_API MUresult muEventCreate(MUevent* phEvent, unsigned int Flags);
MUSA_DRV_API MUresult muEventRecord(MUevent hEvent, MUstream hStream);
MUSA_DRV_API MUresult muEventSynchronize(MUevent hEvent);
MUSA_DRV_API MUresult muEventQuery(MUevent hEvent);
MUSA_DRV_API MUresult muEventDestroy_v2(MUevent hEvent);
MUSA_DRV_API MUresult muEventElapsedTime_v2(float* pMilliseconds, MUevent hStart, MUevent hEnd);

/* Memory. */
MUSA_DRV_API MUresult muIpcGetMemHandle(MUipcMemHandle* pHandle, MUdeviceptr dptr);
MUSA_DRV_API MUresult muIpcOpenMemHandle_v2(MUdeviceptr* pdptr, MUipcMemHandle handle,
                                            unsigned int Flags);
MUSA_DRV_API MUresult muIpcCloseMemHandle(MUdeviceptr dptr);
MUSA_DRV_API MUresult muIpcGetEventHandle(MUipcEventHandle* pHandle, MUevent event);
MUSA_DRV_API MUresult muIpcOpenEventHandle(MUevent* phEvent, MUipcEventHandle handle);
MUSA_DRV_API MUresult muMemGetAddressRange_v2(MUdeviceptr* pbase, size_t* psize, MUdeviceptr dptr);
MUSA_DRV_API MUresult muMemsetD32Async(MUdeviceptr dstDevice, unsigned int ui, size_t N,
                                       MUstream hStream);

/* Virtual memory management (MUSA SDK >= 4.0). */
MUSA_DRV_API MUresult muMemAddressReserve(MUdeviceptr* ptr, size_t size, size_t alignment,
                                          MUdeviceptr addr, unsigned long long flags);
MUSA_DRV_API MUresult muMemAddressFree(MUdeviceptr ptr, size_t size);
MUSA_DRV_API MUresult muMemCreate(MUmemGenericAllocationHandle* handle, size_t size,
                                  const MUmemAllocationProp* prop, unsigned long long flags);
MUSA_DRV_API MUresult muMemRelease(MUmemGenericAllocationHandle handle);
MUSA_DRV_API MUresult muMemMap(MUdeviceptr ptr, size_t size, size_t offset,
                               MUmemGenericAllocationHandle handle, unsigned long long flags);
MUSA_DRV_API MUresult muMemUnmap(MUdeviceptr ptr, size_t size);
MUSA_DRV_API MUresult muMemSetAccess(MUdeviceptr ptr, size_t size, const MUmemAccessDesc* desc,
                                     size_t count);
MUSA_DRV_API MUresult muMemGetAllocationGranularity(size_t* granularity,
                                                    const MUmemAllocationProp* prop,
                                                    MUmemAllocationGranularity_flags option);
MUSA_DRV_API MUresult muMemExportToShareableHandle(void* shareableHandle,
                                                   MUmemGenericAllocationHandle handle,
                                                   MUmemAllocationHandleType handleType,
                                                   unsigned long long flags);
MUSA_DRV_API MUresult muMemImportFromShareableHandle(MUmemGenericAllocationHandle* handle,
                                                     void* osHandle,
                                                     MUmemAllocationHandleType shHandleType);
MUSA_DRV_API MUresult muMemRetainAllocationHandle(MUmemGenericAllocationHandle* handle, void* addr);
MUSA_DRV_API MUresult muMemGetAllocationPropertiesFromHandle(MUmemAllocationProp* prop,
                                                             MUmemGenericAllocationHandle handle);

/* Stream memory operations: the CUDA 8.0 ABI and the CUDA 11.7 "_v2" one (same signature). */
MUSA_DRV_API MUresult muStreamWriteValue32(MUstream stream, MUdeviceptr addr, muuint32_t value,
                                           unsigned int flags);
MUSA_DRV_API MUresult muStreamWriteValue32_v2(MUstream stream, MUdeviceptr addr, muuint32_t value,
                                              unsigned int flags);

#ifdef __cplusplus
}
#endif

#endif /* TORCHADA_SIM_MUSA_H */
