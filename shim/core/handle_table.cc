// The writers' side of HandleTable (handle_table.h). Every store a reader may see is a release
// store, made between begin_write() and end_write().
#include "core/handle_table.h"

#include <new>
#include <type_traits>

#include "core/log.h"

namespace torchada {

// No destructor runs at exit: exit-time code (a library's destructor destroying its handles) may
// still use a table.
static_assert(std::is_trivially_destructible_v<HandleTable>);

namespace {

void put(HandleTable::Slot& s, std::uintptr_t key, std::uintptr_t value) {
  s.value.store(value, std::memory_order_release);
  s.key.store(key, std::memory_order_release);
}

}  // namespace

HandleTable::Slot* HandleTable::find(std::uintptr_t key) {
  if (key == 0) return nullptr;
  Table* t = current();
  for (std::size_t i = slot_of(key, t);; i = (i + 1) & t->mask) {
    const std::uintptr_t k = t->slots[i].key.load(std::memory_order_relaxed);
    if (k == key) return &t->slots[i];
    if (k == 0) return nullptr;
  }
}

// A copy of the current table with twice the room, published; the old one is kept for readers
// still inside it. Inside a write.
bool HandleTable::grow() {
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
    t->slots[i].value.store(old->slots[j].value.load(std::memory_order_relaxed),
                            std::memory_order_relaxed);
  }
  table_.store(t, std::memory_order_release);
  TORCHADA_LOG(kDebug, "%s table: %zu slots", what_, capacity);
  return true;
}

bool HandleTable::insert(std::uintptr_t key, std::uintptr_t value) {
  if (key == 0) return false;
  begin_write();
  bool ok = true;
  if (Slot* s = find(key)) {
    // Only a handle whose destruction the shim never saw (a library's own create/destroy pair
    // bypassing it): the new one replaces it.
    put(*s, key, value);
  } else if ((live_ + 1) * 2 > current()->mask + 1 && !grow()) {
    // At most half full, so that probes stay short and always end at an empty slot.
    TORCHADA_LOG(kError, "out of memory growing the %s table: %p not kept", what_,
                 reinterpret_cast<void*>(key));
    ok = false;
  } else {
    Table* t = current();
    std::size_t i = slot_of(key, t);
    while (t->slots[i].key.load(std::memory_order_relaxed) != 0) i = (i + 1) & t->mask;
    put(t->slots[i], key, value);
    ++live_;
  }
  end_write();
  return ok;
}

// Linear probing's backward shift: the entries after the hole that would no longer be found move
// back.
void HandleTable::erase(Slot* s) {
  begin_write();
  Table* t = current();
  std::size_t hole = static_cast<std::size_t>(s - t->slots);
  for (std::size_t i = (hole + 1) & t->mask;; i = (i + 1) & t->mask) {
    const std::uintptr_t k = t->slots[i].key.load(std::memory_order_relaxed);
    if (k == 0) break;
    const std::size_t home = slot_of(k, t);
    // The entry at i may fill the hole when its home is not cyclically within (hole, i].
    const bool stays = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
    if (stays) continue;
    put(t->slots[hole], k, t->slots[i].value.load(std::memory_order_relaxed));
    hole = i;
  }
  put(t->slots[hole], 0, 0);
  --live_;
  end_write();
}

void HandleTable::set_value(Slot* s, std::uintptr_t value) {
  begin_write();
  s->value.store(value, std::memory_order_release);
  end_write();
}

}  // namespace torchada
