// cuBLASLt algorithms as data (cublasLt.h, namespace algos).
//
// cuBLASLt programs search algorithms: they enumerate ids (cublasLtMatmulAlgoGetIds), initialise
// each (cublasLtMatmulAlgoInit), read its capabilities (tiles, stages, split-K, reduction schemes,
// CTA swizzling), set a configuration (cublasLtMatmulAlgoConfigSetAttribute), check it
// (cublasLtMatmulAlgoCheck), time it and keep the fastest; others run a preset configuration.
// muBLASLt's algorithms and configurations are its own (the simulator has one algorithm with one
// configuration), and none of these settings changes the mathematical result: a tile, a stage
// count, a split of K, a reduction scheme, a swizzle or a cluster shape only changes how the same
// product is scheduled. So the shim's cublasLtMatmulAlgo_t is a record of its own, inside the
// caller's 64 bytes (copied freely by the caller, so everything lives in them):
//
// - the muBLASLt algorithm it was made from (cublasLtMatmulAlgoInit's, or a heuristic's), and the
//   one it runs on: the same with every setting muBLASLt takes applied (values translated by
//   name; a value muBLASLt refuses or cannot name leaves muBLASLt's own: the nearest algorithm).
//   Both are 64-byte muBLASLt structures, interned in a process-wide append-only table (few
//   distinct ones exist: one per algorithm and configuration muBLASLt was given) and named by
//   index;
// - the configuration as the program set it (or as muBLASLt's algorithm reports it, translated),
//   which cublasLtMatmulAlgoConfigGetAttribute reads back.
//
// cublasLtMatmul and cublasLtMatmulAlgoCheck run on the configured muBLASLt algorithm, and on the
// one it was made from should muBLASLt refuse that one for the problem. Compiled once per CUDA ABI.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/lt_algos.h"
#include "cublasLt/cublasLt.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace algos {
namespace {

const MublasLtTable& lt() { return mublasLt_backend().table; }

// ---- The interned muBLASLt algorithms (core/lt_algos.h, shared by both ABIs).
static_assert(sizeof(mublasLtMatmulAlgo_t) == sizeof(lt_algos::Blob));
static_assert(std::is_trivially_copyable_v<mublasLtMatmulAlgo_t>);

bool known(uint32_t i) { return lt_algos::entry(i) != nullptr; }

// The algorithm at a known index, copied out.
mublasLtMatmulAlgo_t algo_at(uint32_t i) {
  mublasLtMatmulAlgo_t m{};
  if (const lt_algos::Blob* b = lt_algos::entry(i)) std::memcpy(&m, b, sizeof(m));
  return m;
}

bool intern(const mublasLtMatmulAlgo_t& m, uint32_t& index) {
  lt_algos::Blob b;
  std::memcpy(&b, &m, sizeof(b));
  return lt_algos::intern(b, index);
}

// ---- The record in the caller's cublasLtMatmulAlgo_t.
struct Record {
  uint32_t magic;
  uint32_t base;        // interned: the muBLASLt algorithm it was made from
  uint32_t configured;  // interned: base with the settings muBLASLt takes
  int32_t id;           // CUBLASLT_ALGO_CONFIG_ID
  uint32_t tile;        // the configuration, in cuBLASLt's values
  uint32_t stages;
  int32_t splitk;
  uint32_t reduction;
  uint32_t swizzle;
  uint32_t custom;
  uint16_t inner_shape;
  uint16_t cluster_shape;
  uint32_t set_mask;  // bit (attribute): set by the program, applied to muBLASLt's algorithm
  uint32_t check;     // a checksum of the above: garbage is no record
};
static_assert(sizeof(Record) <= sizeof(cublasLtMatmulAlgo_t));
static_assert(std::is_trivially_copyable_v<Record>);
// The same for both ABIs: the table is shared, the configuration holds cuBLASLt's values, which
// both headers number alike.
constexpr uint32_t kMagic = 0x4c544130u;  // "LTA0"

uint32_t checksum(const Record& r) {
  uint32_t words[sizeof(Record) / 4 - 1];
  std::memcpy(words, &r, sizeof(words));
  uint32_t h = 0x811c9dc5u;
  for (uint32_t w : words) h = (h ^ w) * 0x01000193u;
  return h;
}

bool load(const cublasLtMatmulAlgo_t& a, Record& r) {
  std::memcpy(&r, a.data, sizeof(r));
  return r.magic == kMagic && r.check == checksum(r) && known(r.base) && known(r.configured);
}

void store(const Record& in, cublasLtMatmulAlgo_t& a) {
  Record r = in;
  r.magic = kMagic;
  r.check = checksum(r);
  std::memset(a.data, 0, sizeof(a.data));
  std::memcpy(a.data, &r, sizeof(r));
}

// ---- Values by name between the two libraries' enums (the generated pairs' tables).
template <class E>
bool to_cuda(int64_t musa, int64_t& cuda) {
  for (const EnumEntry& e : Pair<E>::kTable) {
    if (e.musa == musa) {
      cuda = e.cuda;
      return true;
    }
  }
  return false;
}
template <class E>
bool to_musa(int64_t cuda, int64_t& musa) {
  for (const EnumEntry& e : Pair<E>::kTable) {
    if (e.cuda == cuda) {
      musa = e.musa;
      return true;
    }
  }
  return false;
}
// A cuBLASLt enumerator of E other than its _END marker (`end`).
template <class E>
bool is_enumerator(int64_t v, int end) {
  if (v == end) return false;
  for (int c : Pair<E>::kCudaValues)
    if (c == v) return true;
  return false;
}

// How each configuration attribute travels.
enum class Kind : uint8_t { kNumber, kTile, kStages, kReduction, kInnerShape, kClusterShape };
struct ConfigAttr {
  cublasLtMatmulAlgoConfigAttributes_t attr;
  const char* name;
  Kind kind;
  uint8_t size;
};
constexpr ConfigAttr kConfig[] = {
    {CUBLASLT_ALGO_CONFIG_TILE_ID, "CUBLASLT_ALGO_CONFIG_TILE_ID", Kind::kTile, 4},
    {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, "CUBLASLT_ALGO_CONFIG_SPLITK_NUM", Kind::kNumber, 4},
    {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, "CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME",
     Kind::kReduction, 4},
    {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, "CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING", Kind::kNumber, 4},
    {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, "CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION", Kind::kNumber, 4},
    {CUBLASLT_ALGO_CONFIG_STAGES_ID, "CUBLASLT_ALGO_CONFIG_STAGES_ID", Kind::kStages, 4},
    {CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, "CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID", Kind::kInnerShape,
     2},
    {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, "CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID",
     Kind::kClusterShape, 2},
};

constexpr const ConfigAttr* config_attr(int attr) {
  for (const ConfigAttr& c : kConfig)
    if (c.attr == attr) return &c;
  return nullptr;
}

// Every configuration attribute of the caller's header but the id has its entry (a newer header
// with one nobody classified fails to compile here), and each fits the set mask.
constexpr bool lists_every_config_attribute() {
  for (int v : Pair<cublasLtMatmulAlgoConfigAttributes_t>::kCudaValues)
    if (v != CUBLASLT_ALGO_CONFIG_ID && (config_attr(v) == nullptr || v >= 32)) return false;
  return true;
}
static_assert(lists_every_config_attribute());

// The record's field for an attribute, as a number.
int64_t field(const Record& r, cublasLtMatmulAlgoConfigAttributes_t attr) {
  switch (attr) {
    case CUBLASLT_ALGO_CONFIG_TILE_ID:
      return r.tile;
    case CUBLASLT_ALGO_CONFIG_SPLITK_NUM:
      return r.splitk;
    case CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME:
      return r.reduction;
    case CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING:
      return r.swizzle;
    case CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION:
      return r.custom;
    case CUBLASLT_ALGO_CONFIG_STAGES_ID:
      return r.stages;
    case CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID:
      return r.inner_shape;
    case CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID:
      return r.cluster_shape;
    default:
      return r.id;
  }
}

void set_field(Record& r, cublasLtMatmulAlgoConfigAttributes_t attr, int64_t v) {
  switch (attr) {
    case CUBLASLT_ALGO_CONFIG_TILE_ID:
      r.tile = static_cast<uint32_t>(v);
      break;
    case CUBLASLT_ALGO_CONFIG_SPLITK_NUM:
      r.splitk = static_cast<int32_t>(v);
      break;
    case CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME:
      r.reduction = static_cast<uint32_t>(v);
      break;
    case CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING:
      r.swizzle = static_cast<uint32_t>(v);
      break;
    case CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION:
      r.custom = static_cast<uint32_t>(v);
      break;
    case CUBLASLT_ALGO_CONFIG_STAGES_ID:
      r.stages = static_cast<uint32_t>(v);
      break;
    case CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID:
      r.inner_shape = static_cast<uint16_t>(v);
      break;
    case CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID:
      r.cluster_shape = static_cast<uint16_t>(v);
      break;
    default:
      break;
  }
}

// A cuBLASLt value of `kind` as muBLASLt's (numbers as they are); false: muBLASLt cannot name it.
bool value_to_musa(Kind kind, int64_t v, int64_t& out) {
  switch (kind) {
    case Kind::kNumber:
      out = v;
      return true;
    case Kind::kTile:
      return to_musa<cublasLtMatmulTile_t>(v, out);
    case Kind::kStages:
      return to_musa<cublasLtMatmulStages_t>(v, out);
    case Kind::kReduction:
      return to_musa<cublasLtReductionScheme_t>(v, out);
    case Kind::kInnerShape:
      return to_musa<cublasLtMatmulInnerShape_t>(v, out);
    case Kind::kClusterShape:
      return to_musa<cublasLtClusterShape_t>(v, out);
  }
  return false;
}

bool value_to_cuda(Kind kind, int64_t v, int64_t& out) {
  switch (kind) {
    case Kind::kNumber:
      out = v;
      return true;
    case Kind::kTile:
      return to_cuda<cublasLtMatmulTile_t>(v, out);
    case Kind::kStages:
      return to_cuda<cublasLtMatmulStages_t>(v, out);
    case Kind::kReduction:
      return to_cuda<cublasLtReductionScheme_t>(v, out);
    case Kind::kInnerShape:
      return to_cuda<cublasLtMatmulInnerShape_t>(v, out);
    case Kind::kClusterShape:
      return to_cuda<cublasLtClusterShape_t>(v, out);
  }
  return false;
}

// A valid cuBLASLt value for the attribute (what the configuration layer accepts).
bool valid_value(Kind kind, cublasLtMatmulAlgoConfigAttributes_t attr, int64_t v) {
  switch (kind) {
    case Kind::kNumber:
      return attr != CUBLASLT_ALGO_CONFIG_SPLITK_NUM || v >= 0;  // 0 and 1: no split
    case Kind::kTile:
      return is_enumerator<cublasLtMatmulTile_t>(v, CUBLASLT_MATMUL_TILE_END);
    case Kind::kStages:
      return is_enumerator<cublasLtMatmulStages_t>(v, CUBLASLT_MATMUL_STAGES_END);
    case Kind::kReduction:  // one scheme, not a mask
      return v == CUBLASLT_REDUCTION_SCHEME_NONE || v == CUBLASLT_REDUCTION_SCHEME_INPLACE ||
             v == CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE ||
             v == CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE;
    case Kind::kInnerShape:
      return is_enumerator<cublasLtMatmulInnerShape_t>(v, CUBLASLT_MATMUL_INNER_SHAPE_END);
    case Kind::kClusterShape:
      return is_enumerator<cublasLtClusterShape_t>(v, CUBLASLT_CLUSTER_SHAPE_END);
  }
  return false;
}

int64_t read_number(const void* buf, size_t size) {
  if (size == sizeof(uint16_t)) {
    uint16_t v;
    std::memcpy(&v, buf, sizeof(v));
    return v;
  }
  int32_t v;
  std::memcpy(&v, buf, sizeof(v));
  return v;
}

// One muBLASLt configuration value of `m`, in cuBLASLt's values; false when muBLASLt cannot answer
// or cuBLASLt cannot name it.
bool musa_config(const mublasLtMatmulAlgo_t& m, const ConfigAttr& c, int64_t& out) {
  const auto get = lt().mublasLtMatmulAlgoConfigGetAttribute;
  int64_t musa_attr = 0;
  if (get == nullptr || !to_musa<cublasLtMatmulAlgoConfigAttributes_t>(c.attr, musa_attr))
    return false;
  unsigned char buf[4] = {};
  size_t written = 0;
  if (get(&m, static_cast<mublasLtMatmulAlgoConfigAttributes_t>(musa_attr), buf, c.size,
          &written) != MUBLAS_STATUS_SUCCESS ||
      written != c.size)
    return false;
  return value_to_cuda(c.kind, read_number(buf, c.size), out);
}

// base with every attribute the program set applied, as far as muBLASLt takes them.
mublasLtMatmulAlgo_t configure(const mublasLtMatmulAlgo_t& base, const Record& r) {
  mublasLtMatmulAlgo_t m = base;
  const auto set = lt().mublasLtMatmulAlgoConfigSetAttribute;
  if (set == nullptr) return m;
  for (const ConfigAttr& c : kConfig) {
    if ((r.set_mask & (1u << c.attr)) == 0) continue;
    int64_t musa_attr = 0, v = 0;
    const bool named = to_musa<cublasLtMatmulAlgoConfigAttributes_t>(c.attr, musa_attr) &&
                       value_to_musa(c.kind, field(r, c.attr), v);
    unsigned char buf[4] = {};
    if (c.size == sizeof(uint16_t)) {
      const auto u = static_cast<uint16_t>(v);
      std::memcpy(buf, &u, sizeof(u));
    } else {
      const auto u = static_cast<uint32_t>(v);
      std::memcpy(buf, &u, sizeof(u));
    }
    mublasLtMatmulAlgo_t trial = m;
    if (named && set(&trial, static_cast<mublasLtMatmulAlgoConfigAttributes_t>(musa_attr), buf,
                     c.size) == MUBLAS_STATUS_SUCCESS) {
      m = trial;
      continue;
    }
    static std::atomic<uint32_t> logged{0};
    const uint32_t bit = 1u << c.attr;
    if ((logged.fetch_or(bit, std::memory_order_relaxed) & bit) == 0)
      TORCHADA_LOG(kInfo,
                   "cublasLtMatmulAlgoConfigSetAttribute: %s = %lld is recorded; muBLASLt's "
                   "algorithm keeps its own (a schedule, not a result: the product is the same) "
                   "(logged once)",
                   c.name, static_cast<long long>(field(r, c.attr)));
  }
  return m;
}

cublasStatus_t invalid(Fn id, const char* what, long long v) {
  TORCHADA_LOG(kWarn, "%s: %s (%lld): CUBLAS_STATUS_INVALID_VALUE", kFnNames[static_cast<int>(id)],
               what, v);
  note_error(id);
  return CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t table_full(Fn id) {
  note_unsupported(id, "more distinct muBLASLt algorithms than the shim's table holds");
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

// The exact-size protocol of a scalar answer (a size query with sizeInBytes 0).
cublasStatus_t answer(Fn id, const char* name, const void* value, size_t size, void* buf,
                      size_t sizeInBytes, size_t* sizeWritten) {
  if (sizeInBytes == 0 && sizeWritten != nullptr) {
    *sizeWritten = size;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (buf == nullptr || sizeInBytes != size) return invalid(id, name, static_cast<long long>(size));
  std::memcpy(buf, value, size);
  if (sizeWritten != nullptr) *sizeWritten = size;
  return CUBLAS_STATUS_SUCCESS;
}

// The tiles and stages advertised beyond muBLASLt's own: a few shapes every GPU GEMM library has.
// Any valid one is accepted; these give a search loop real candidates to time.
constexpr uint32_t kTiles[] = {CUBLASLT_MATMUL_TILE_64x64, CUBLASLT_MATMUL_TILE_64x128,
                               CUBLASLT_MATMUL_TILE_128x64, CUBLASLT_MATMUL_TILE_128x128};
constexpr uint32_t kStages[] = {CUBLASLT_MATMUL_STAGES_32x3, CUBLASLT_MATMUL_STAGES_64x3};

}  // namespace

bool is_record(const cublasLtMatmulAlgo_t& a) {
  Record r;
  return load(a, r);
}

bool musa_of(const cublasLtMatmulAlgo_t& a, mublasLtMatmulAlgo_t& out, bool configured) {
  Record r;
  if (!load(a, r)) return false;
  out = algo_at(configured ? r.configured : r.base);
  return true;
}

bool configured_differs(const cublasLtMatmulAlgo_t& a) {
  Record r;
  return load(a, r) && r.configured != r.base;
}

cublasStatus_t wrap(Fn id, const mublasLtMatmulAlgo_t& m, int32_t algo_id, bool id_from_musa,
                    cublasLtMatmulAlgo_t& out) {
  Record r{};
  if (!intern(m, r.base)) return table_full(id);
  r.configured = r.base;
  r.splitk = 1;
  for (const ConfigAttr& c : kConfig) {
    int64_t v = 0;
    if (musa_config(m, c, v) && valid_value(c.kind, c.attr, v)) set_field(r, c.attr, v);
  }
  r.id = algo_id;
  if (id_from_musa) {
    int32_t musa_id = 0;
    size_t written = 0;
    int64_t musa_attr = 0;
    if (lt().mublasLtMatmulAlgoConfigGetAttribute != nullptr &&
        to_musa<cublasLtMatmulAlgoConfigAttributes_t>(CUBLASLT_ALGO_CONFIG_ID, musa_attr) &&
        lt().mublasLtMatmulAlgoConfigGetAttribute(
            &m, static_cast<mublasLtMatmulAlgoConfigAttributes_t>(musa_attr), &musa_id,
            sizeof(musa_id), &written) == MUBLAS_STATUS_SUCCESS &&
        written == sizeof(musa_id))
      r.id = musa_id;
  }
  store(r, out);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t config_set(cublasLtMatmulAlgo_t* algo, cublasLtMatmulAlgoConfigAttributes_t attr,
                          const void* buf, size_t sizeInBytes) {
  constexpr Fn id = Fn::k_cublasLtMatmulAlgoConfigSetAttribute;
  Record r;
  if (algo == nullptr || !load(*algo, r))
    return invalid(id,
                   "not an algorithm cublasLtMatmulAlgoInit or cublasLtMatmulAlgoGetHeuristic "
                   "returned",
                   0);
  if (attr == CUBLASLT_ALGO_CONFIG_ID)
    return invalid(id, "CUBLASLT_ALGO_CONFIG_ID is set by cublasLtMatmulAlgoInit only", attr);
  const ConfigAttr* c = config_attr(attr);
  if (c == nullptr) return invalid(id, "not a cublasLtMatmulAlgoConfigAttributes_t", attr);
  if (buf == nullptr || sizeInBytes != c->size)
    return invalid(id, c->name, static_cast<long long>(sizeInBytes));
  const int64_t v = read_number(buf, c->size);
  if (!valid_value(c->kind, attr, v)) {
    TORCHADA_LOG(kWarn,
                 "%s: %s = %lld is not a value cuBLASLt defines: CUBLAS_STATUS_INVALID_VALUE",
                 kFnNames[static_cast<int>(id)], c->name, static_cast<long long>(v));
    note_error(id);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  set_field(r, attr, v);
  r.set_mask |= 1u << attr;
  if (!intern(configure(algo_at(r.base), r), r.configured)) return table_full(id);
  store(r, *algo);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t config_get(const cublasLtMatmulAlgo_t* algo,
                          cublasLtMatmulAlgoConfigAttributes_t attr, void* buf, size_t sizeInBytes,
                          size_t* sizeWritten) {
  constexpr Fn id = Fn::k_cublasLtMatmulAlgoConfigGetAttribute;
  Record r;
  if (algo == nullptr || !load(*algo, r))
    return invalid(id,
                   "not an algorithm cublasLtMatmulAlgoInit or cublasLtMatmulAlgoGetHeuristic "
                   "returned",
                   0);
  if (attr == CUBLASLT_ALGO_CONFIG_ID)
    return answer(id, "CUBLASLT_ALGO_CONFIG_ID needs exactly 4 bytes", &r.id, sizeof(r.id), buf,
                  sizeInBytes, sizeWritten);
  const ConfigAttr* c = config_attr(attr);
  if (c == nullptr) return invalid(id, "not a cublasLtMatmulAlgoConfigAttributes_t", attr);
  const int64_t v = field(r, attr);
  unsigned char value[4] = {};
  if (c->size == sizeof(uint16_t)) {
    const auto u = static_cast<uint16_t>(v);
    std::memcpy(value, &u, sizeof(u));
  } else {
    const auto u = static_cast<uint32_t>(v);
    std::memcpy(value, &u, sizeof(u));
  }
  return answer(id, c->name, value, c->size, buf, sizeInBytes, sizeWritten);
}

bool cap_answer(const cublasLtMatmulAlgo_t* algo, cublasLtMatmulAlgoCapAttributes_t attr, void* buf,
                size_t sizeInBytes, size_t* sizeWritten, cublasStatus_t& status) {
  constexpr Fn id = Fn::k_cublasLtMatmulAlgoCapGetAttribute;
  Record r;
  if (algo == nullptr || !load(*algo, r)) return false;
  int32_t i32 = 0;
  uint32_t u32 = 0;
  switch (attr) {
    case CUBLASLT_ALGO_CAP_SPLITK_SUPPORT:
      i32 = 1;
      status = answer(id, "CUBLASLT_ALGO_CAP_SPLITK_SUPPORT needs exactly 4 bytes", &i32,
                      sizeof(i32), buf, sizeInBytes, sizeWritten);
      return true;
    case CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK:
      u32 = CUBLASLT_REDUCTION_SCHEME_INPLACE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE |
            CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE;
      status = answer(id, "CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK needs exactly 4 bytes", &u32,
                      sizeof(u32), buf, sizeInBytes, sizeWritten);
      return true;
    case CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT:
      u32 = 1;
      status = answer(id, "CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT needs exactly 4 bytes", &u32,
                      sizeof(u32), buf, sizeInBytes, sizeWritten);
      return true;
    case CUBLASLT_ALGO_CAP_TILE_IDS:
    case CUBLASLT_ALGO_CAP_STAGES_IDS:
      break;
    default:
      return false;
  }
  // The id arrays: muBLASLt's own (translated; UNDEFINED left out, as cuBLASLt lists real ones),
  // then the shim's, without repeats.
  const bool tiles = attr == CUBLASLT_ALGO_CAP_TILE_IDS;
  std::vector<uint32_t> ids;
  const auto get = lt().mublasLtMatmulAlgoCapGetAttribute;
  int64_t musa_attr = 0;
  if (get != nullptr && to_musa<cublasLtMatmulAlgoCapAttributes_t>(attr, musa_attr)) {
    uint32_t musa_ids[256];
    size_t written = 0;
    const mublasLtMatmulAlgo_t base = algo_at(r.base);
    if (get(&base, static_cast<mublasLtMatmulAlgoCapAttributes_t>(musa_attr), musa_ids,
            sizeof(musa_ids), &written) == MUBLAS_STATUS_SUCCESS) {
      const size_t n = (written < sizeof(musa_ids) ? written : sizeof(musa_ids)) / sizeof(uint32_t);
      for (size_t i = 0; i < n; ++i) {
        int64_t c = 0;
        if (value_to_cuda(tiles ? Kind::kTile : Kind::kStages, musa_ids[i], c) && c != 0)
          ids.push_back(static_cast<uint32_t>(c));
      }
    }
  }
  auto add = [&](uint32_t v) {
    for (uint32_t x : ids)
      if (x == v) return;
    ids.push_back(v);
  };
  if (tiles)
    for (uint32_t t : kTiles) add(t);
  else
    for (uint32_t s : kStages) add(s);
  const size_t bytes = ids.size() * sizeof(uint32_t);
  if (buf == nullptr || sizeInBytes == 0) {  // a size query: the whole array
    if (sizeWritten == nullptr) {
      status = invalid(id, "an id array query needs sizeWritten", 0);
      return true;
    }
    *sizeWritten = bytes;
    status = CUBLAS_STATUS_SUCCESS;
    return true;
  }
  if (sizeInBytes < sizeof(uint32_t)) {
    status = invalid(id,
                     tiles ? "CUBLASLT_ALGO_CAP_TILE_IDS needs at least 4 bytes"
                           : "CUBLASLT_ALGO_CAP_STAGES_IDS needs at least 4 bytes",
                     static_cast<long long>(sizeInBytes));
    return true;
  }
  const size_t n =
      sizeInBytes / sizeof(uint32_t) < ids.size() ? sizeInBytes / sizeof(uint32_t) : ids.size();
  std::memcpy(buf, ids.data(), n * sizeof(uint32_t));
  if (sizeWritten != nullptr) *sizeWritten = n * sizeof(uint32_t);
  status = CUBLAS_STATUS_SUCCESS;
  return true;
}

}  // namespace algos
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
