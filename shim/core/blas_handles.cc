// The cuBLAS / cuBLASLt handle table (blas_handles.h): writers under one mutex, around a seqlock.
#include "core/blas_handles.h"

#include <mutex>
#include <new>
#include <unordered_map>

#include "core/library_tables.h"
#include "core/log.h"

namespace torchada {
namespace blas_handles {
namespace {

// Room for 8 handles before the first growth; constant-initialised, so lookups work before (and
// after) any constructor runs.
constexpr std::size_t kInitialCapacity = 16;
Slot g_initial_slots[kInitialCapacity];
const Table g_initial{g_initial_slots, kInitialCapacity - 1, 64 - 4};

std::mutex& writers() {
  static std::mutex* m = new std::mutex;  // never destroyed: usable from exit-time destructors
  return *m;
}

std::size_t g_live = 0;  // entries in the current table; under the mutex

// Handle settings that differ from the defaults (Settings); under the mutex. Never destroyed,
// like the mutex.
std::unordered_map<std::uintptr_t, Settings>& settings() {
  static auto* m = new std::unordered_map<std::uintptr_t, Settings>;
  return *m;
}

// A writer's section: the sequence is odd from the first store to the last.
class Writing {
 public:
  Writing() : seq_(g_sequence.load(std::memory_order_relaxed)) {
    g_sequence.store(seq_ + 1, std::memory_order_relaxed);
  }
  ~Writing() { g_sequence.store(seq_ + 2, std::memory_order_release); }
  Writing(const Writing&) = delete;
  Writing& operator=(const Writing&) = delete;

 private:
  std::uint64_t seq_;
};

// Every store a reader may see is a release store (blas_handles.h: how readers detect writers).
void put(Slot& s, std::uintptr_t key, std::uintptr_t lt) {
  s.lt.store(lt, std::memory_order_release);
  s.key.store(key, std::memory_order_release);
}

Table* current() { return const_cast<Table*>(g_table.load(std::memory_order_relaxed)); }

// The slot holding `key` in the current table, or null. Mutex held.
Slot* find(std::uintptr_t key) {
  Table* t = current();
  for (std::size_t i = slot_of(key, t);; i = (i + 1) & t->mask) {
    const std::uintptr_t k = t->slots[i].key.load(std::memory_order_relaxed);
    if (k == key) return &t->slots[i];
    if (k == 0) return nullptr;
  }
}

// True when `key` is a handle cublasCreate returned. Mutex held.
bool is_cublas(std::uintptr_t key) {
  const Slot* s = find(key);
  return s != nullptr && s->lt.load(std::memory_order_relaxed) != key;
}

// A copy of the current table with twice the room, published; the old one is kept for readers
// still inside it. Mutex held, inside a Writing section. False when out of memory.
bool grow() {
  const Table* old = current();
  const std::size_t capacity = (old->mask + 1) * 2;
  auto* slots = new (std::nothrow) Slot[capacity];
  auto* t = new (std::nothrow) Table{slots, capacity - 1, old->shift - 1};
  if (slots == nullptr || t == nullptr) {
    delete[] slots;
    delete t;
    return false;
  }
  for (std::size_t j = 0; j <= old->mask; ++j) {
    const std::uintptr_t k = old->slots[j].key.load(std::memory_order_relaxed);
    if (k == 0) continue;
    std::size_t i = slot_of(k, t);
    while (t->slots[i].key.load(std::memory_order_relaxed) != 0) i = (i + 1) & t->mask;
    t->slots[i].key.store(k, std::memory_order_relaxed);
    t->slots[i].lt.store(old->slots[j].lt.load(std::memory_order_relaxed),
                         std::memory_order_relaxed);
  }
  g_table.store(t, std::memory_order_release);
  TORCHADA_LOG(kDebug, "cuBLAS/cuBLASLt handle table: %zu slots", capacity);
  return true;
}

// Removes the entry in `s` (linear probing's backward shift: the entries after it that would no
// longer be found move back). Mutex held, inside a Writing section.
void erase(Slot* s) {
  Table* t = current();
  std::size_t hole = static_cast<std::size_t>(s - t->slots);
  for (std::size_t i = (hole + 1) & t->mask;; i = (i + 1) & t->mask) {
    const std::uintptr_t k = t->slots[i].key.load(std::memory_order_relaxed);
    if (k == 0) break;
    const std::size_t home = slot_of(k, t);
    // The entry at i may fill the hole when its home is not cyclically within (hole, i].
    const bool stays = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
    if (stays) continue;
    put(t->slots[hole], k, t->slots[i].lt.load(std::memory_order_relaxed));
    hole = i;
  }
  put(t->slots[hole], 0, 0);
  --g_live;
}

}  // namespace

std::atomic<std::uint64_t> g_sequence{0};
std::atomic<const Table*> g_table{&g_initial};

void add(const void* h, Kind kind) {
  if (h == nullptr || kind == Kind::kUnknown) return;
  const auto key = reinterpret_cast<std::uintptr_t>(h);
  const std::uintptr_t lt = kind == Kind::kLt ? key : 0;
  std::lock_guard<std::mutex> lock(writers());
  settings().erase(key);  // a new handle starts from the defaults
  Writing w;
  if (Slot* s = find(key)) {
    // Only a handle whose destruction the shim never saw (a library's own create/destroy pair
    // bypassing it): the new one replaces it.
    put(*s, key, lt);
  } else {
    // At most half full, so that probes stay short and always end at an empty slot.
    if ((g_live + 1) * 2 > current()->mask + 1 && !grow()) {
      TORCHADA_LOG(kError, "out of memory growing the cuBLAS handle table: handle %p not kept", h);
      return;
    }
    Table* t = current();
    std::size_t i = slot_of(key, t);
    while (t->slots[i].key.load(std::memory_order_relaxed) != 0) i = (i + 1) & t->mask;
    put(t->slots[i], key, lt);
    ++g_live;
  }
}

bool known_cublas_slow(const void* h) {
  if (h == nullptr) return false;
  std::lock_guard<std::mutex> lock(writers());
  return is_cublas(reinterpret_cast<std::uintptr_t>(h));
}

Resolved resolve(const void* h) {
  Resolved r;
  if (h == nullptr) return r;
  const auto key = reinterpret_cast<std::uintptr_t>(h);
  std::lock_guard<std::mutex> lock(writers());
  Slot* s = find(key);
  if (s == nullptr) return r;
  const std::uintptr_t lt = s->lt.load(std::memory_order_relaxed);
  r.kind = lt == key ? Kind::kLt : Kind::kCublas;
  if (lt != 0) {
    r.lt = reinterpret_cast<void*>(lt);
    return r;
  }
  // A cuBLAS handle's first use as a cuBLASLt handle. cuBLASLt handles carry no stream (each call
  // takes one) and no device binding, so a plain mublasLtCreate is the whole of it.
  const auto create = mublasLt_backend().table.mublasLtCreate;
  if (create == nullptr) {
    r.no_create = true;
    return r;
  }
  mublasLtHandle_t made = nullptr;
  const mublasStatus_t st = create(&made);
  if (st != MUBLAS_STATUS_SUCCESS || made == nullptr) {
    r.musa_status = static_cast<int>(st);
    return r;
  }
  {
    Writing w;
    s->lt.store(reinterpret_cast<std::uintptr_t>(made), std::memory_order_release);
  }
  r.lt = made;
  r.created = true;
  return r;
}

void* remove_cublas(const void* h) {
  if (h == nullptr) return nullptr;
  const auto key = reinterpret_cast<std::uintptr_t>(h);
  std::lock_guard<std::mutex> lock(writers());
  Slot* s = find(key);
  if (s == nullptr) return nullptr;
  const std::uintptr_t lt = s->lt.load(std::memory_order_relaxed);
  if (lt == key) return nullptr;  // a cuBLASLt handle: not cublasDestroy's
  {
    Writing w;
    erase(s);
  }
  settings().erase(key);
  return reinterpret_cast<void*>(lt);
}

Kind release_lt(const void* h, void** lt_out) {
  *lt_out = nullptr;
  if (h == nullptr) return Kind::kUnknown;
  const auto key = reinterpret_cast<std::uintptr_t>(h);
  std::lock_guard<std::mutex> lock(writers());
  Slot* s = find(key);
  if (s == nullptr) return Kind::kUnknown;
  const std::uintptr_t lt = s->lt.load(std::memory_order_relaxed);
  Writing w;
  if (lt == key) {
    erase(s);
    *lt_out = reinterpret_cast<void*>(lt);
    return Kind::kLt;
  }
  if (lt != 0) s->lt.store(0, std::memory_order_release);
  *lt_out = reinterpret_cast<void*>(lt);
  return Kind::kCublas;
}

bool get_settings(const void* h, Settings* out) {
  const auto key = reinterpret_cast<std::uintptr_t>(h);
  std::lock_guard<std::mutex> lock(writers());
  if (h == nullptr || !is_cublas(key)) return false;
  const auto& m = settings();
  const auto it = m.find(key);
  *out = it == m.end() ? Settings{} : it->second;
  return true;
}

bool change_settings(const void* h, void (*apply)(Settings&, std::intptr_t), std::intptr_t value) {
  const auto key = reinterpret_cast<std::uintptr_t>(h);
  std::lock_guard<std::mutex> lock(writers());
  if (h == nullptr || !is_cublas(key)) return false;
  apply(settings()[key], value);
  return true;
}

int destroy_lt(void* lt) {
  const auto destroy = mublasLt_backend().table.mublasLtDestroy;
  if (destroy == nullptr) return -1;
  return static_cast<int>(destroy(static_cast<mublasLtHandle_t>(lt)));
}

}  // namespace blas_handles
}  // namespace torchada
