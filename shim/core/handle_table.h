// A table of the live handles a library handed out through the shim (cuBLAS/cuBLASLt handles,
// NCCL communicators), each with one word of data, checked on every call that takes a handle so
// that a destroyed, never-created or garbage handle is refused before the MUSA library
// dereferences it.
//
// Lookups are on the path of every such call: a seqlock-guarded open-addressing table, read with
// acquire loads and no read-modify-write (no shared cache line is written by readers). Writers
// (creations, destructions, data changes) are serialised by the table's mutex and bump the
// sequence around their stores; a reader that saw the sequence move gets kBusy and looks again
// under the mutex. So the fast path may fail to answer, never answer wrongly. Tables replaced when
// growing are kept (never freed) for readers still inside them; growth doubles, so they add up to
// less than the live table. Deletion shifts entries back (no tombstones), so the size follows the
// number of live handles, whatever the churn.
//
// A HandleTable is constant-initialised (constexpr constructor, trivially destructible): usable
// before any constructor and after every destructor of the process has run.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace torchada {

class HandleTable {
 public:
  struct Slot {
    std::atomic<std::uintptr_t> key{0};  // the handle the program holds; 0: empty
    std::atomic<std::uintptr_t> value{0};
  };
  struct Table {
    Slot* slots;
    std::size_t mask;  // capacity - 1 (a power of two)
    unsigned shift;    // 64 - log2(capacity)
  };
  enum class Lookup { kAbsent, kFound, kBusy };

  // `what` names the handles in log lines ("NCCL communicator").
  constexpr explicit HandleTable(const char* what)
      : initial_{initial_slots_, kInitialCapacity - 1, 64 - 4}, table_{&initial_}, what_(what) {}
  HandleTable(const HandleTable&) = delete;
  HandleTable& operator=(const HandleTable&) = delete;

  // Lock-free: kFound with *value, kAbsent, or kBusy when a writer was active (ask again under
  // the mutex: find()).
  Lookup find_fast(std::uintptr_t key, std::uintptr_t* value) const {
    const std::uint64_t seq = sequence_.load(std::memory_order_acquire);
    const Table* t = table_.load(std::memory_order_acquire);
    Lookup r = Lookup::kAbsent;
    for (std::size_t i = slot_of(key, t), n = 0; key != 0 && n <= t->mask;
         ++n, i = (i + 1) & t->mask) {
      const std::uintptr_t k = t->slots[i].key.load(std::memory_order_acquire);
      if (k == key) {
        *value = t->slots[i].value.load(std::memory_order_acquire);
        r = Lookup::kFound;
        break;
      }
      if (k == 0) break;
    }
    // The acquire loads above keep this load after them; a writer's release stores they read
    // from come after its odd sequence, which this load then sees.
    if ((seq & 1) != 0 || sequence_.load(std::memory_order_relaxed) != seq) return Lookup::kBusy;
    return r;
  }

  // Whether `key` is in the table: lock-free unless a writer is busy.
  bool contains(std::uintptr_t key) {
    std::uintptr_t value = 0;
    const Lookup r = find_fast(key, &value);
    if (r != Lookup::kBusy) return r == Lookup::kFound;
    std::lock_guard<std::mutex> lock(mutex_);
    return find(key) != nullptr;
  }

  // The writers' side: every call below needs mutex() held.
  std::mutex& mutex() { return mutex_; }
  // The slot holding `key`, or null.
  Slot* find(std::uintptr_t key);
  // Adds `key` (or gives an existing entry the new value). False when out of memory (logged).
  bool insert(std::uintptr_t key, std::uintptr_t value);
  // Removes the entry in `s` (from find()).
  void erase(Slot* s);
  // Gives the entry in `s` a new value.
  void set_value(Slot* s, std::uintptr_t value);

 private:
  static constexpr std::size_t kInitialCapacity = 16;  // 8 handles before the first growth

  static std::size_t slot_of(std::uintptr_t key, const Table* t) {
    // Fibonacci hashing: the high bits of the product (allocations differ in their middle bits).
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> t->shift) & t->mask;
  }
  Table* current() { return const_cast<Table*>(table_.load(std::memory_order_relaxed)); }
  bool grow();
  void begin_write() {
    sequence_.store(sequence_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  void end_write() {
    sequence_.store(sequence_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  Slot initial_slots_[kInitialCapacity];
  const Table initial_;
  std::atomic<std::uint64_t> sequence_{0};  // odd while a writer is changing the table
  std::atomic<const Table*> table_;
  std::size_t live_ = 0;  // entries in the current table; under the mutex
  std::mutex mutex_;
  const char* what_;
};

}  // namespace torchada
