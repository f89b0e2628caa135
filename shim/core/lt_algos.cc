// The interned muBLASLt algorithms (lt_algos.h): chunks published with release stores, never
// freed; writers serialised by a mutex.
#include "core/lt_algos.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>

namespace torchada {
namespace lt_algos {
namespace {

constexpr uint32_t kChunk = 256;
constexpr uint32_t kChunks = 1024;  // 262144 distinct algorithms at most
// Static storage without constructors: usable from any constructor and after atexit.
std::atomic<Blob*> g_chunks[kChunks];
std::atomic<uint32_t> g_count{0};
std::mutex g_mutex;

uint64_t hash_of(const Blob& b) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t w : b.data) h = (h ^ w) * 0x100000001b3ull;
  return h;
}

}  // namespace

const Blob* entry(uint32_t i) {
  if (i >= g_count.load(std::memory_order_acquire)) return nullptr;
  return g_chunks[i / kChunk].load(std::memory_order_acquire) + i % kChunk;
}

bool intern(const Blob& b, uint32_t& index) {
  std::lock_guard<std::mutex> lock(g_mutex);
  // Made at the first use, under the lock; never destroyed.
  static auto* by_hash = new std::unordered_multimap<uint64_t, uint32_t>();
  const uint64_t h = hash_of(b);
  for (auto [it, end] = by_hash->equal_range(h); it != end; ++it) {
    if (std::memcmp(entry(it->second), &b, sizeof(b)) == 0) {
      index = it->second;
      return true;
    }
  }
  const uint32_t n = g_count.load(std::memory_order_relaxed);
  if (n == kChunk * kChunks) return false;
  Blob* chunk = g_chunks[n / kChunk].load(std::memory_order_relaxed);
  if (chunk == nullptr) {
    chunk = new (std::nothrow) Blob[kChunk];
    if (chunk == nullptr) return false;
    g_chunks[n / kChunk].store(chunk, std::memory_order_release);
  }
  chunk[n % kChunk] = b;
  g_count.store(n + 1, std::memory_order_release);
  by_hash->emplace(h, n);
  index = n;
  return true;
}

}  // namespace lt_algos
}  // namespace torchada
