// The cuBLAS / cuBLASLt handle table (blas_handles.h): writers under one mutex, around a seqlock.
#include "core/blas_handles.h"

#include <mutex>
#include <unordered_map>

#include "core/library_tables.h"
#include "core/log.h"

namespace torchada {
namespace blas_handles {
namespace {

std::mutex& writers() { return g_handles.mutex(); }

// Handle settings that differ from the defaults (Settings); under the mutex. Never destroyed:
// usable from exit-time destructors, like the table.
std::unordered_map<std::uintptr_t, Settings>& settings() {
  static auto* m = new std::unordered_map<std::uintptr_t, Settings>;
  return *m;
}

// True when `key` is a handle cublasCreate returned. Mutex held.
bool is_cublas(std::uintptr_t key) {
  const HandleTable::Slot* s = g_handles.find(key);
  return s != nullptr && s->value.load(std::memory_order_relaxed) != key;
}

}  // namespace

HandleTable g_handles{"cuBLAS/cuBLASLt handle"};

void add(const void* h, Kind kind) {
  if (h == nullptr || kind == Kind::kUnknown) return;
  const auto key = reinterpret_cast<std::uintptr_t>(h);
  std::lock_guard<std::mutex> lock(writers());
  settings().erase(key);  // a new handle starts from the defaults
  g_handles.insert(key, kind == Kind::kLt ? key : 0);
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
  HandleTable::Slot* s = g_handles.find(key);
  if (s == nullptr) return r;
  const std::uintptr_t lt = s->value.load(std::memory_order_relaxed);
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
  g_handles.set_value(s, reinterpret_cast<std::uintptr_t>(made));
  r.lt = made;
  r.created = true;
  return r;
}

void* remove_cublas(const void* h) {
  if (h == nullptr) return nullptr;
  const auto key = reinterpret_cast<std::uintptr_t>(h);
  std::lock_guard<std::mutex> lock(writers());
  HandleTable::Slot* s = g_handles.find(key);
  if (s == nullptr) return nullptr;
  const std::uintptr_t lt = s->value.load(std::memory_order_relaxed);
  if (lt == key) return nullptr;  // a cuBLASLt handle: not cublasDestroy's
  g_handles.erase(s);
  settings().erase(key);
  return reinterpret_cast<void*>(lt);
}

Kind release_lt(const void* h, void** lt_out) {
  *lt_out = nullptr;
  if (h == nullptr) return Kind::kUnknown;
  const auto key = reinterpret_cast<std::uintptr_t>(h);
  std::lock_guard<std::mutex> lock(writers());
  HandleTable::Slot* s = g_handles.find(key);
  if (s == nullptr) return Kind::kUnknown;
  const std::uintptr_t lt = s->value.load(std::memory_order_relaxed);
  if (lt == key) {
    g_handles.erase(s);
    *lt_out = reinterpret_cast<void*>(lt);
    return Kind::kLt;
  }
  if (lt != 0) g_handles.set_value(s, 0);
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
