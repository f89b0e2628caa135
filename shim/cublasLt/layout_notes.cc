// The shim's notes on cuBLASLt layouts that muBLASLt's layout objects cannot hold (cublasLt.h,
// layout_notes): a small table keyed by the layout's address. Compiled once per CUDA ABI.
#include <atomic>
#include <cstdint>
#include <mutex>

#include "cublasLt/cublasLt.h"

namespace torchada {
inline namespace TORCHADA_ABI_NS {
namespace layout_notes {
namespace {

// Static storage without constructors: usable from any constructor and after atexit.
std::mutex g_mutex;
const void* g_layouts[kCapacity];  // [0, g_used), under g_mutex
Note g_notes[kCapacity];
int g_used = 0;
std::atomic<int> g_count{0};  // g_used, for any() without the lock

int find_locked(const void* layout) {
  for (int i = 0; i < g_used; ++i)
    if (g_layouts[i] == layout) return i;
  return -1;
}

void erase_locked(int i) {
  --g_used;
  g_layouts[i] = g_layouts[g_used];
  g_notes[i] = g_notes[g_used];
  g_count.store(g_used, std::memory_order_release);
}

// Applies `change` to the layout's note, adding or dropping its entry as the note becomes set or
// empty. false when a new entry does not fit.
template <class Change>
bool update(const void* layout, Change change) {
  std::lock_guard<std::mutex> lock(g_mutex);
  int i = find_locked(layout);
  Note n = i >= 0 ? g_notes[i] : Note{};
  change(n);
  const bool empty = !n.pointer_array && !n.reordered() && !n.fp4;
  if (i < 0) {
    if (empty) return true;
    if (g_used == kCapacity) return false;
    i = g_used++;
    g_layouts[i] = layout;
    g_count.store(g_used, std::memory_order_release);
  } else if (empty) {
    erase_locked(i);
    return true;
  }
  g_notes[i] = n;
  return true;
}

}  // namespace

bool any() { return g_count.load(std::memory_order_acquire) != 0; }

Note get(const void* layout) {
  if (!any()) return Note{};
  std::lock_guard<std::mutex> lock(g_mutex);
  const int i = find_locked(layout);
  return i >= 0 ? g_notes[i] : Note{};
}

bool set_pointer_array(const void* layout, bool on) {
  return update(layout, [on](Note& n) { n.pointer_array = on; });
}

bool set_imma_order(const void* layout, int32_t order) {
  return update(layout, [order](Note& n) { n.imma_order = order; });
}

bool set_fp4(const void* layout, bool on) {
  return update(layout, [on](Note& n) { n.fp4 = on; });
}

bool set_plane_offset(const void* layout, int64_t bytes) {
  return update(layout, [bytes](Note& n) { n.plane_offset = bytes; });
}

void forget(const void* layout) {
  if (!any()) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  const int i = find_locked(layout);
  if (i >= 0) erase_locked(i);
}

}  // namespace layout_notes
}  // namespace TORCHADA_ABI_NS
}  // namespace torchada
