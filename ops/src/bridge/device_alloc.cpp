// Direct mode: host memory that a CPU kernel allocates during a bridged call comes from the CUDA
// caching allocator, so a fresh result is already CUDA memory and becomes a CUDA tensor without a
// copy (on the simulator device memory is host memory; direct mode relies on that already).
//
// The process's CPU allocator is wrapped once, at installation. Outside a bridged call, and on
// every thread other than the one running the call (DataLoader workers, the pin-memory thread,
// OpenMP helpers), allocations go to the allocator it replaced, unchanged. Inside, a block of the
// CUDA caching allocator is taken on the current device and stream and handed to the CPU kernel
// as CPU memory: a simple DataPtr (context == pointer, as raw_allocate() requires: the native
// convolution uses it) whose device says CPU, so the tensor stays a CPU tensor for the CPU
// kernel's device checks. The blocks handed out are registered, so that raw_deleter() can tell
// them from the base allocator's memory whenever it is called. take_device_block() turns such a
// block into the caching allocator's own CUDA DataPtr for the result's storage; a block nobody
// takes (a temporary) goes back to the caching allocator when its CPU storage dies.
#include <c10/core/CPUAllocator.h>
#include <c10/cuda/CUDACachingAllocator.h>

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "bridge.h"

namespace torchada::ops::bridge {
namespace {

namespace cca = c10::cuda::CUDACachingAllocator;

thread_local bool t_device_allocation = false;
std::atomic<bool> g_installed{false};

// Device blocks handed out as CPU memory and not yet freed or taken: pointer -> device index.
std::mutex& blocks_mutex() {
  static auto* m = new std::mutex;  // never destroyed: CPU storages die in atexit handlers too
  return *m;
}
std::unordered_map<void*, c10::DeviceIndex>& blocks() {
  static auto* b = new std::unordered_map<void*, c10::DeviceIndex>;
  return *b;
}

// Frees p if it is a registered device block; false when it is not one.
bool free_if_device_block(void* p) {
  {
    std::lock_guard<std::mutex> lock(blocks_mutex());
    if (blocks().erase(p) == 0) return false;
  }
  cca::raw_delete(p);
  return true;
}

void delete_device_block(void* p) { free_if_device_block(p); }
void noop_delete(void*) {}

class BridgeCpuAllocator final : public c10::Allocator {
 public:
  explicit BridgeCpuAllocator(c10::Allocator* base) : base_(base), base_raw_(base->raw_deleter()) {
    s_base_raw = base_raw_;
  }

  c10::DataPtr allocate(size_t n) override {
    if (!t_device_allocation || n == 0) return base_->allocate(n);
    void* p = cca::raw_alloc(n);  // the current device and stream
    {
      std::lock_guard<std::mutex> lock(blocks_mutex());
      blocks()[p] = c10::cuda::current_device();
    }
    return {p, p, &delete_device_block, c10::Device(c10::kCPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override {
    return base_raw_ == nullptr ? nullptr : &raw_delete_any;
  }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    base_->copy_data(dest, src, count);
  }

 private:
  // raw_deallocate() may come long after raw_allocate(), in or out of a bridged call.
  static void raw_delete_any(void* p) {
    if (!free_if_device_block(p)) s_base_raw(p);
  }
  static inline c10::DeleterFnPtr s_base_raw = nullptr;

  c10::Allocator* base_;
  c10::DeleterFnPtr base_raw_;
};

}  // namespace

DeviceAllocationScope::DeviceAllocationScope(bool on) : previous_(t_device_allocation) {
  t_device_allocation = on && g_installed.load(std::memory_order_relaxed);
}
DeviceAllocationScope::~DeviceAllocationScope() { t_device_allocation = previous_; }

bool install_device_allocation() {
  c10::Allocator* base = c10::GetCPUAllocator();
  static BridgeCpuAllocator* wrapper = new BridgeCpuAllocator(base);  // lives for the process
  // The highest priority: no later registration at a lower one can take the CPU slot back and
  // strand blocks this allocator handed out.
  c10::SetCPUAllocator(wrapper, /*priority=*/UINT8_MAX);
  g_installed = c10::GetCPUAllocator() == wrapper;
  return g_installed;
}

c10::DataPtr take_device_block(c10::StorageImpl* s, c10::Device device) {
  c10::DataPtr& dp = s->mutable_data_ptr();
  void* p = dp.get();
  if (dp.get_deleter() != &delete_device_block || dp.get_context() != p) return {};
  // The CPU storage keeps the pointer but no longer frees it; the CUDA DataPtr is the one the
  // caching allocator itself makes (its deleter: record_stream and the allocator's checks know it).
  {
    std::lock_guard<std::mutex> lock(blocks_mutex());
    auto it = blocks().find(p);
    if (it == blocks().end() || it->second != device.index()) return {};
    if (!dp.compare_exchange_deleter(&delete_device_block, &noop_delete)) return {};
    blocks().erase(it);
  }
  return {p, p, cca::get()->raw_deleter(), device};
}

}  // namespace torchada::ops::bridge
