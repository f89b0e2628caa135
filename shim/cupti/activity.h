// Device activity for torchada's CUPTI (torch.profiler's GPU rows): what the shim and the ops
// library tell it about the work they put on streams.
//
// A producer brackets one piece of work with begin()/end(). While a CUPTI client records device
// activity (cuptiActivityEnable of CONCURRENT_KERNEL, KERNEL, MEMCPY or MEMSET), begin() records
// an event on the work's stream before it and end() one after it; the times come from those
// events when the client flushes (cuptiActivityFlushAll), so they are the device's times on a
// MUSA GPU and the simulator's stream times on `sim`. Work the host itself runs for a stream (the
// kernel bridge's CPU kernels, which run after the stream drained) is timed on the host
// (Work::kHost). Each piece of work also gets a correlation id, the calling thread's external
// correlation ids (what PyTorch's profiler links device work to its operators with) and a
// runtime API record of the call that launched it.
//
// Nested work (a device kernel operator that calls cuBLAS) is recorded once, by the outermost
// begin(): the inner producers see a token of 0 and record nothing.
//
// Costs nothing but one relaxed load while nobody records (recording()). Not during CUDA graph
// capture: an event recorded there would become a node of the graph.
#pragma once

#include <atomic>
#include <cstdint>

namespace torchada::activity {

namespace detail {
extern std::atomic<bool> g_recording __attribute__((visibility("hidden")));
}
inline bool recording() { return detail::g_recording.load(std::memory_order_relaxed); }

enum class Work : std::uint8_t { kKernel, kMemcpy, kMemset, kHost };
// The runtime call a piece of work came from (its runtime API record).
enum class Api : std::uint8_t { kLaunchKernel, kMemcpy, kMemcpyAsync, kMemset, kMemsetAsync };

struct Launch {
  Work work = Work::kKernel;
  Api api = Api::kLaunchKernel;
  const char* name = nullptr;  // kernel and host work: what the row shows (copied)
  void* stream = nullptr;      // the MUSA stream (the CUDA handle's value; 0 = legacy default)
  std::uint64_t bytes = 0;     // memcpy / memset
  const void* dst = nullptr;   // memcpy / memset: the memory written
  const void* src = nullptr;   // memcpy
  int copy_kind = 0;  // memcpy: the cudaMemcpyKind passed (cudaMemcpyDefault: the pointers say)
};

// 0 when nothing is recorded (off, nested, capturing, no device).
std::uint64_t begin(const Launch& launch);
// keep = false: the work did not happen after all (a kernel that declined the call): no record.
void end(std::uint64_t token, bool keep = true);

class Scope {
 public:
  explicit Scope(const Launch& launch) : token_(recording() ? begin(launch) : 0) {}
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  ~Scope() {
    if (token_ != 0) end(token_);
  }

 private:
  std::uint64_t token_;
};

}  // namespace torchada::activity
