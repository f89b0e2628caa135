// cuBLASLt's floating-point emulation (CUDA 13), which muBLASLt lacks, and the notes the shim keeps
// on matmul descriptors for it:
//
// - The CUDA 13 emulated compute types (CUBLAS_COMPUTE_32F_EMULATED_16BFX9,
//   CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT) reach muBLASLt as its native 32F / 64F ones
//   (symbols/enum_map.txt): at least as accurate as the emulation promises. muBLASLt's descriptor
//   then says 32F / 64F, so the shim notes the caller's compute type, and
//   CUBLASLT_MATMUL_DESC_COMPUTE_TYPE reads back what was set.
// - Emulation descriptors (cublasLtEmulationDesc*) are the shim's own objects: the settings are
//   checked as cuBLASLt checks them, kept in the caller's 64-byte opaque structure and read back;
//   CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR is noted per matmul descriptor and read back. They
//   change no result: muBLASLt computes natively.
//
// Creating, initialising or destroying a matmul descriptor forgets its notes. Compiled once per
// CUDA ABI.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <type_traits>

#include "cublasLt/cublasLt.h"
#if TORCHADA_CUDA_ABI == 12
#include "gen/cublasLt12_impl.h"
#else
#include "gen/cublasLt13_impl.h"
#endif

namespace torchada {
inline namespace TORCHADA_ABI_NS {

// ---- Matmul descriptor notes: a small table keyed by the descriptor's address.
namespace desc_notes {
namespace {

// Static storage without constructors: usable from any constructor and after atexit.
std::mutex g_mutex;
const void* g_descs[kCapacity];  // [0, g_used), under g_mutex
Note g_notes[kCapacity];
int g_used = 0;
std::atomic<int> g_count{0};  // g_used, for get() without the lock

int find_locked(const void* desc) {
  for (int i = 0; i < g_used; ++i)
    if (g_descs[i] == desc) return i;
  return -1;
}

template <class Change>
bool update(const void* desc, Change change) {
  std::lock_guard<std::mutex> lock(g_mutex);
  int i = find_locked(desc);
  Note n = i >= 0 ? g_notes[i] : Note{};
  change(n);
  const bool empty = n.empty();
  if (i < 0) {
    if (empty) return true;
    if (g_used == kCapacity) return false;
    i = g_used++;
    g_descs[i] = desc;
    g_count.store(g_used, std::memory_order_release);
  } else if (empty) {
    --g_used;
    g_descs[i] = g_descs[g_used];
    g_notes[i] = g_notes[g_used];
    g_count.store(g_used, std::memory_order_release);
    return true;
  }
  g_notes[i] = n;
  return true;
}

}  // namespace

Note get(const void* desc) {
  if (g_count.load(std::memory_order_acquire) == 0) return Note{};
  std::lock_guard<std::mutex> lock(g_mutex);
  const int i = find_locked(desc);
  return i >= 0 ? g_notes[i] : Note{};
}

bool set_compute_type(const void* desc, int32_t compute_type) {
  const int32_t noted = is_emulated_compute(compute_type) ? compute_type : -1;
  return update(desc, [noted](Note& n) { n.compute_type = noted; });
}

bool set_emulation(const void* desc, void* emulation) {
  return update(desc, [emulation](Note& n) { n.emulation = emulation; });
}

bool set_d_out_mode(const void* desc, int32_t mode) {
  return update(desc, [mode](Note& n) { n.d_out_mode = mode; });
}

bool set_d_out_scale(const void* desc, void* scale) {
  return update(desc, [scale](Note& n) { n.d_out_scale = scale; });
}

bool set_ab_mode(const void* desc, int which, int32_t mode) {
  return update(desc, [which, mode](Note& n) { n.ab_mode[which] = mode; });
}

void forget(const void* desc) {
  update(desc, [](Note& n) { n = Note{}; });
}

}  // namespace desc_notes

bool is_emulated_compute(int32_t compute_type) {
  switch (compute_type) {
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
#if CUBLAS_VER_MAJOR >= 13
    case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
#endif
      return true;
    default:
      return false;
  }
}

namespace {

const MublasLtTable& lt() { return mublasLt_backend().table; }

cublasStatus_t invalid(Fn id, const char* what, long long value) {
  TORCHADA_LOG(kWarn, "%s: %s (%lld): CUBLAS_STATUS_INVALID_VALUE", kFnNames[static_cast<int>(id)],
               what, value);
  note_error(id);
  return CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t notes_full(Fn id) {
  note_unsupported(id,
                   "more matmul descriptors with emulation settings at once than the shim notes");
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

}  // namespace

#if CUBLAS_VER_MAJOR >= 13
namespace {

// The shim's emulation descriptor, inside cuBLASLt's 64-byte opaque structure. Defaults are
// cuBLASLt's (cublasLt.h): strategy 0 (DEFAULT), special values 0xFFFF, mantissa control 0
// (DYNAMIC), maximum bit count 0, offset 0, no bit count pointer.
struct EmulationDesc {
  uint32_t magic;
  int32_t strategy;
  int32_t special_values;
  int32_t mantissa_control;
  int32_t max_mantissa_bits;
  int32_t mantissa_bit_offset;
  int32_t* mantissa_bit_count;
};
static_assert(sizeof(EmulationDesc) <= sizeof(cublasLtEmulationDescOpaque_t));
static_assert(std::is_trivially_copyable_v<EmulationDesc>);
constexpr uint32_t kEmulationMagic = 0x454d554cu;  // "EMUL"

void init(cublasLtEmulationDesc_t d) {
  EmulationDesc e{};
  e.magic = kEmulationMagic;
  e.special_values = 0xFFFF;
  std::memset(d, 0, sizeof(*d));
  std::memcpy(d, &e, sizeof(e));
}

bool load(cublasLtEmulationDesc_t d, EmulationDesc& e) {
  if (d == nullptr) return false;
  std::memcpy(&e, d, sizeof(e));
  return e.magic == kEmulationMagic;
}

}  // namespace
#endif

namespace impl {

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* matmulDesc,
                                        cublasComputeType_t computeType, cudaDataType_t scaleType) {
  constexpr Fn id = Fn::k_cublasLtMatmulDescCreate;
  const cublasStatus_t s =
      lib_call<CublasLtLib>(id, lt().mublasLtMatmulDescCreate, matmulDesc, computeType, scaleType);
  if (s != CUBLAS_STATUS_SUCCESS || matmulDesc == nullptr) return s;
  desc_notes::forget(*matmulDesc);
  if (!desc_notes::set_compute_type(*matmulDesc, computeType)) {
    lt().mublasLtMatmulDescDestroy(convert<mublasLtMatmulDesc_t>(*matmulDesc));
    *matmulDesc = nullptr;
    return notes_full(id);
  }
  return s;
}

cublasStatus_t cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t matmulDesc, size_t size,
                                               cublasComputeType_t computeType,
                                               cudaDataType_t scaleType) {
  constexpr Fn id = Fn::k_cublasLtMatmulDescInit_internal;
  desc_notes::forget(matmulDesc);
  const cublasStatus_t s = lib_call<CublasLtLib>(id, lt().mublasLtMatmulDescInit_internal,
                                                 matmulDesc, size, computeType, scaleType);
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  if (!desc_notes::set_compute_type(matmulDesc, computeType)) return notes_full(id);
  return s;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc) {
  desc_notes::forget(matmulDesc);
  return lib_call<CublasLtLib>(Fn::k_cublasLtMatmulDescDestroy, lt().mublasLtMatmulDescDestroy,
                               matmulDesc);
}

#if CUBLAS_VER_MAJOR >= 13

cublasStatus_t cublasLtEmulationDescCreate(cublasLtEmulationDesc_t* emulationDesc) {
  constexpr Fn id = Fn::k_cublasLtEmulationDescCreate;
  if (emulationDesc == nullptr) return invalid(id, "emulationDesc is NULL", 0);
  auto* d = new (std::nothrow) cublasLtEmulationDescOpaque_t;
  if (d == nullptr) {
    *emulationDesc = nullptr;
    note_error(id);
    return CUBLAS_STATUS_ALLOC_FAILED;
  }
  init(d);
  *emulationDesc = d;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtEmulationDescDestroy(cublasLtEmulationDesc_t emulationDesc) {
  if (emulationDesc == nullptr) return CUBLAS_STATUS_SUCCESS;  // as free(NULL)
  EmulationDesc e{};
  if (!load(emulationDesc, e))
    return invalid(Fn::k_cublasLtEmulationDescDestroy,
                   "not an emulation descriptor cublasLtEmulationDescCreate returned", 0);
  std::memset(emulationDesc, 0, sizeof(*emulationDesc));  // a second destroy is refused
  delete emulationDesc;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtEmulationDescInit_internal(cublasLtEmulationDesc_t emulationDesc,
                                                  size_t size) {
  constexpr Fn id = Fn::k_cublasLtEmulationDescInit_internal;
  if (emulationDesc == nullptr) return invalid(id, "emulationDesc is NULL", 0);
  if (size < sizeof(cublasLtEmulationDescOpaque_t))
    return invalid(id, "size is smaller than cublasLtEmulationDescOpaque_t",
                   static_cast<long long>(size));
  init(emulationDesc);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtEmulationDescSetAttribute(cublasLtEmulationDesc_t emulationDesc,
                                                 cublasLtEmulationDescAttributes_t attr,
                                                 const void* buf, size_t sizeInBytes) {
  constexpr Fn id = Fn::k_cublasLtEmulationDescSetAttribute;
  EmulationDesc e{};
  if (!load(emulationDesc, e)) return invalid(id, "not an initialised emulation descriptor", 0);
  const size_t size = attr == CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER
                          ? sizeof(int32_t*)
                          : sizeof(int32_t);
  if (buf == nullptr || sizeInBytes != size)
    return invalid(id, "the buffer must hold exactly the attribute's size",
                   static_cast<long long>(sizeInBytes));
  int32_t v = 0;
  if (size == sizeof(int32_t)) std::memcpy(&v, buf, sizeof(v));
  switch (attr) {
    case CUBLASLT_EMULATION_DESC_STRATEGY:
      if (v != CUBLAS_EMULATION_STRATEGY_DEFAULT && v != CUBLAS_EMULATION_STRATEGY_PERFORMANT &&
          v != CUBLAS_EMULATION_STRATEGY_EAGER)
        return invalid(id, "CUBLASLT_EMULATION_DESC_STRATEGY: not a cublasEmulationStrategy_t", v);
      e.strategy = v;
      break;
    case CUBLASLT_EMULATION_DESC_SPECIAL_VALUES_SUPPORT:
      e.special_values = v;  // any mask, as cuBLAS takes it (shim/cublas/emulation.cc)
      break;
    case CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_CONTROL:
      if (v != CUDA_EMULATION_MANTISSA_CONTROL_DYNAMIC &&
          v != CUDA_EMULATION_MANTISSA_CONTROL_FIXED)
        return invalid(id,
                       "CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_CONTROL: not a "
                       "cudaEmulationMantissaControl",
                       v);
      e.mantissa_control = v;
      break;
    case CUBLASLT_EMULATION_DESC_FIXEDPOINT_MAX_MANTISSA_BIT_COUNT:
      if (v < 0)
        return invalid(id, "CUBLASLT_EMULATION_DESC_FIXEDPOINT_MAX_MANTISSA_BIT_COUNT is negative",
                       v);
      e.max_mantissa_bits = v;
      break;
    case CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_OFFSET:
      e.mantissa_bit_offset = v;
      break;
    case CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER:
      std::memcpy(&e.mantissa_bit_count, buf, sizeof(e.mantissa_bit_count));
      break;
    default:
      return invalid(id, "not a cublasLtEmulationDescAttributes_t", static_cast<int>(attr));
  }
  std::memcpy(emulationDesc, &e, sizeof(e));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtEmulationDescGetAttribute(cublasLtEmulationDesc_t emulationDesc,
                                                 cublasLtEmulationDescAttributes_t attr, void* buf,
                                                 size_t sizeInBytes, size_t* sizeWritten) {
  constexpr Fn id = Fn::k_cublasLtEmulationDescGetAttribute;
  EmulationDesc e{};
  if (!load(emulationDesc, e)) return invalid(id, "not an initialised emulation descriptor", 0);
  int32_t v = 0;
  const void* src = &v;
  size_t size = sizeof(v);
  switch (attr) {
    case CUBLASLT_EMULATION_DESC_STRATEGY:
      v = e.strategy;
      break;
    case CUBLASLT_EMULATION_DESC_SPECIAL_VALUES_SUPPORT:
      v = e.special_values;
      break;
    case CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_CONTROL:
      v = e.mantissa_control;
      break;
    case CUBLASLT_EMULATION_DESC_FIXEDPOINT_MAX_MANTISSA_BIT_COUNT:
      v = e.max_mantissa_bits;
      break;
    case CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_OFFSET:
      v = e.mantissa_bit_offset;
      break;
    case CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER:
      src = &e.mantissa_bit_count;
      size = sizeof(e.mantissa_bit_count);
      break;
    default:
      return invalid(id, "not a cublasLtEmulationDescAttributes_t", static_cast<int>(attr));
  }
  if (sizeInBytes == 0 && sizeWritten != nullptr) {  // a size query
    *sizeWritten = size;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (buf == nullptr || sizeInBytes != size)
    return invalid(id, "the buffer must hold exactly the attribute's size",
                   static_cast<long long>(sizeInBytes));
  std::memcpy(buf, src, size);
  if (sizeWritten != nullptr) *sizeWritten = size;
  return CUBLAS_STATUS_SUCCESS;
}

#endif  // CUBLAS_VER_MAJOR >= 13

}  // namespace impl
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
