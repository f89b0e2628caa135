// torchada's CUPTI activity API: records of the device work the shim and the ops library
// bracket (activity.h), handed to the client's buffers at cuptiActivityFlushAll.
//
// Records are built at the flush, not as the work runs: a record needs the device times of its
// events, which exist only once the stream reached them. Until then each piece of work is a
// Pending entry (its events, host times, correlation). The client must hold a buffer for Kineto to
// flush at all, so one is requested as soon as a kind is enabled.
//
// Clocks: every timestamp handed out is in the client's clock
// (cuptiActivityRegisterTimestampCallback; PyTorch's profiler registers the TSC) or else
// CLOCK_REALTIME in nanoseconds, as CUPTI's own. Host times are read from it directly. Device times
// are event times: milliseconds after a reference event of the device, whose host time was read
// when it completed, converted with the client clock's rate against CLOCK_MONOTONIC, measured from
// the session's start to the flush.
#include "cupti/activity.h"

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/backend.h"
#include "core/log.h"
#include "cupti/callbacks.h"
#include "cupti/records.h"
#include "cupti/session.h"
#include "gen/cupti_impl.h"

// The records torchada writes are the newest of this CUPTI; PyTorch's profiler reads older
// versions of them (Kernel9 before CUDA 13.1, Memcpy5), whose fields sit at the same offsets.
static_assert(offsetof(torchada::cupti::KernelRecord, name) ==
              offsetof(CUpti_ActivityKernel9, name));
static_assert(offsetof(torchada::cupti::KernelRecord, correlationId) ==
              offsetof(CUpti_ActivityKernel9, correlationId));
static_assert(offsetof(torchada::cupti::KernelRecord, graphId) ==
              offsetof(CUpti_ActivityKernel9, graphId));
static_assert(offsetof(torchada::cupti::KernelRecord, channelType) ==
              offsetof(CUpti_ActivityKernel9, channelType));
static_assert(offsetof(torchada::cupti::KernelRecord, start) ==
              offsetof(CUpti_ActivityKernel4, start));
static_assert(offsetof(torchada::cupti::MemcpyRecord, channelType) ==
              offsetof(CUpti_ActivityMemcpy5, channelType));
static_assert(offsetof(torchada::cupti::MemcpyRecord, graphNodeId) ==
              offsetof(CUpti_ActivityMemcpy5, graphNodeId));
static_assert(offsetof(torchada::cupti::OverheadRecord, end) ==
              offsetof(CUpti_ActivityOverhead, end));

namespace torchada::activity {
namespace detail {
std::atomic<bool> g_recording{false};
}

namespace {

using cupti::Session;

struct Pending {
  Launch launch{};
  std::uint8_t copy_kind = 0, src_kind = 0, dst_kind = 0;  // CUPTI's memcpy and memory kinds
  std::string name;
  int device = 0;
  std::uint32_t stream_id = 0;
  std::uint32_t correlation = 0;
  std::uint64_t external[2] = {};  // CUSTOM0, CUSTOM1 (0: none)
  std::uint32_t thread_id = 0;
  std::uint64_t api_start = 0, api_end = 0;  // client clock
  Session::Instant anchor{};  // when the work began: its device times are converted from here
  musaEvent_t start_event = nullptr, end_event = nullptr;
  std::uint64_t host_start = 0, host_end = 0;  // kHost: client clock
  // What to write, decided when the work began: a client disables the kinds before it flushes.
  bool external_record = false, runtime_record = false, overhead_record = false;
  CUpti_ActivityKind device_record = CUPTI_ACTIVITY_KIND_INVALID;  // INVALID: none
};

struct DeviceClock {
  musaEvent_t reference = nullptr;
  std::uint64_t reference_mono = 0;  // CLOCK_MONOTONIC when the reference completed
};

thread_local int t_depth = 0;

std::mutex g_mutex;
std::vector<std::unique_ptr<Pending>> g_done;           // ended, waiting for a flush
std::map<int, std::vector<musaEvent_t>> g_free_events;  // by device
std::map<int, DeviceClock> g_clocks;                    // by device, this session
std::unordered_map<void*, std::uint32_t> g_stream_ids;
std::set<std::string> g_names;  // kernel names: the records point into them for the process's life

musaEvent_t take_event(const MusartTable& m, int device) {
  auto& pool = g_free_events[device];
  if (!pool.empty()) {
    musaEvent_t e = pool.back();
    pool.pop_back();
    return e;
  }
  musaEvent_t e = nullptr;
  return m.musaEventCreate(&e) == musaSuccess ? e : nullptr;
}

void give_event(int device, musaEvent_t e) {
  if (e != nullptr) g_free_events[device].push_back(e);
}

std::uint32_t stream_id(void* stream) {
  // CUDA's legacy default stream is 7 in NVIDIA's records; torchada's ids start after it.
  if (stream == nullptr || stream == reinterpret_cast<void*>(1)) return 7;
  auto [it, fresh] = g_stream_ids.emplace(stream, 0);
  if (fresh) it->second = 8 + static_cast<std::uint32_t>(g_stream_ids.size());
  return it->second;
}

// The device's reference event for this session: recorded on `stream` and waited for, so its
// host time is known. Called with g_mutex held, on the producer's thread, once per device.
bool ensure_clock(const MusartTable& m, int device, musaStream_t stream) {
  DeviceClock& c = g_clocks[device];
  if (c.reference != nullptr) return true;
  musaEvent_t e = take_event(m, device);
  if (e == nullptr) return false;
  if (m.musaEventRecord(e, stream) != musaSuccess || m.musaEventSynchronize(e) != musaSuccess) {
    give_event(device, e);
    return false;
  }
  c.reference = e;
  c.reference_mono = Session::mono();
  return true;
}

std::uint32_t runtime_cbid(Api api) {
  switch (api) {
    case Api::kLaunchKernel:
      return CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    case Api::kMemcpy:
      return CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020;
    case Api::kMemcpyAsync:
      return CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
    case Api::kMemset:
      return CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020;
    case Api::kMemsetAsync:
      return CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020;
  }
  return 0;
}

static_assert(cudaMemcpyHostToHost == 0 && cudaMemcpyHostToDevice == 1 &&
                  cudaMemcpyDeviceToHost == 2 && cudaMemcpyDeviceToDevice == 3,
              "cudaMemcpyKind's values are the same in every CUDA ABI torchada serves");

std::uint8_t copy_kind(int cuda_kind, std::uint8_t src, std::uint8_t dst) {
  switch (cuda_kind) {
    case cudaMemcpyHostToDevice:
      return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    case cudaMemcpyDeviceToHost:
      return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    case cudaMemcpyDeviceToDevice:
      return CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    case cudaMemcpyHostToHost:
      return CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
    default: {  // cudaMemcpyDefault: the pointers say
      const bool s = src == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                 d = dst == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
      return s ? (d ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOD : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH)
               : (d ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD : CUPTI_ACTIVITY_MEMCPY_KIND_HTOH);
    }
  }
}

// The memory kind CUPTI reports for `ptr`: device, pinned or pageable host memory.
std::uint8_t memory_kind(const void* ptr) {
  if (ptr == nullptr) return CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
  const Runtime& rt = runtime();
  if (rt.musa.musaPointerGetAttributes == nullptr) return CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
  musaPointerAttributes a{};
  if (rt.musa.musaPointerGetAttributes(&a, ptr) != musaSuccess) {
    (void)rt.musa.musaGetLastError();
    return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  }
  switch (a.type) {
    case musaMemoryTypeDevice:
      return CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    case musaMemoryTypeHost:
      return CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    case musaMemoryTypeManaged:
      return CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
    default:
      return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  }
}

}  // namespace

std::uint64_t begin(const Launch& launch) {
  if (!recording() || t_depth > 0) return 0;
  Session& s = cupti::session();
  if (!s.wants(launch.work)) return 0;
  const Runtime& rt = runtime();
  if (rt.passthrough || rt.musa.musaEventRecord == nullptr) return 0;
  const MusartTable& m = rt.musa;
  auto stream = static_cast<musaStream_t>(launch.stream);
  musaStreamCaptureStatus capturing = musaStreamCaptureStatusNone;
  if (m.musaStreamIsCapturing(stream, &capturing) != musaSuccess ||
      capturing != musaStreamCaptureStatusNone) {
    (void)m.musaGetLastError();
    return 0;
  }
  int device = 0;
  if (m.musaGetDevice(&device) != musaSuccess) return 0;
  cupti::announce_device(device);
  auto p = std::make_unique<Pending>();
  p->launch = launch;
  p->name = launch.name != nullptr ? launch.name : "";
  p->launch.name = nullptr;                 // the caller's: copied above
  p->launch.dst = p->launch.src = nullptr;  // only their memory kinds are kept (below)
  if (launch.work == Work::kMemcpy || launch.work == Work::kMemset) {
    p->dst_kind = memory_kind(launch.dst);
    if (launch.work == Work::kMemcpy) {
      p->src_kind = memory_kind(launch.src);
      p->copy_kind = copy_kind(launch.copy_kind, p->src_kind, p->dst_kind);
    }
  }
  p->device = device;
  p->anchor = s.instant();
  p->api_start = p->anchor.client;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    p->stream_id = stream_id(launch.stream);
    if (launch.work != Work::kHost) {
      if (!ensure_clock(m, device, stream)) return 0;
      p->start_event = take_event(m, device);
      p->end_event = take_event(m, device);
    }
  }
  if (launch.work != Work::kHost) {
    if (p->start_event == nullptr || p->end_event == nullptr ||
        m.musaEventRecord(p->start_event, stream) != musaSuccess) {
      std::lock_guard<std::mutex> lock(g_mutex);
      give_event(device, p->start_event);
      give_event(device, p->end_event);
      return 0;
    }
  }
  p->external_record = s.enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  p->runtime_record = s.records_runtime(runtime_cbid(launch.api));
  p->overhead_record = s.enabled(CUPTI_ACTIVITY_KIND_OVERHEAD);
  switch (launch.work) {
    case Work::kKernel:
    case Work::kHost:
      p->device_record = s.enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
                             ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                         : s.enabled(CUPTI_ACTIVITY_KIND_KERNEL) ? CUPTI_ACTIVITY_KIND_KERNEL
                                                                 : CUPTI_ACTIVITY_KIND_INVALID;
      break;
    case Work::kMemcpy:
      if (s.enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) p->device_record = CUPTI_ACTIVITY_KIND_MEMCPY;
      break;
    case Work::kMemset:
      if (s.enabled(CUPTI_ACTIVITY_KIND_MEMSET)) p->device_record = CUPTI_ACTIVITY_KIND_MEMSET;
      break;
  }
  p->correlation = s.next_correlation();
  s.current_external(p->external);
  p->thread_id = s.thread_id();
  p->host_start = p->launch.work == Work::kHost ? s.now() : 0;
  ++t_depth;
  return reinterpret_cast<std::uint64_t>(p.release());
}

void end(std::uint64_t token, bool keep) {
  if (token == 0) return;
  --t_depth;
  std::unique_ptr<Pending> p(reinterpret_cast<Pending*>(token));
  if (!keep) {
    std::lock_guard<std::mutex> lock(g_mutex);
    give_event(p->device, p->start_event);
    give_event(p->device, p->end_event);
    return;
  }
  Session& s = cupti::session();
  if (p->launch.work == Work::kHost) {
    p->host_end = s.now();
  } else {
    const MusartTable& m = runtime().musa;
    if (m.musaEventRecord(p->end_event, static_cast<musaStream_t>(p->launch.stream)) !=
        musaSuccess) {
      std::lock_guard<std::mutex> lock(g_mutex);
      give_event(p->device, p->start_event);
      give_event(p->device, p->end_event);
      return;
    }
  }
  p->api_end = s.now();
  std::lock_guard<std::mutex> lock(g_mutex);
  g_done.push_back(std::move(p));
}

namespace {

// Writes records into the client's buffers; hands each full one back.
class Writer {
 public:
  explicit Writer(Session& s) : s_(s) {}
  ~Writer() { finish(); }

  // The next record of `kind`, zeroed, its kind set; null when the client gave no room.
  template <typename Record>
  Record* next(CUpti_ActivityKind kind) {
    const std::size_t size = cupti::record_size(kind);
    if (buffer_ == nullptr || size_ - used_ < size) {
      finish();
      buffer_ = s_.take_buffer(&size_);
      used_ = 0;
      if (buffer_ == nullptr || size_ < size) {
        s_.dropped(1);
        return nullptr;
      }
    }
    auto* r = reinterpret_cast<Record*>(buffer_ + used_);
    std::memset(static_cast<void*>(r), 0, size);
    r->kind = kind;
    used_ += size;
    return r;
  }

  void finish() {
    if (buffer_ != nullptr) s_.complete_buffer(buffer_, size_, used_);
    buffer_ = nullptr;
  }

 private:
  Session& s_;
  std::uint8_t* buffer_ = nullptr;
  std::size_t size_ = 0, used_ = 0;
};

// Device time of `e` in the client's clock, or 0 when it cannot be read.
// Converted from the anchor of the work it belongs to (microseconds to milliseconds away), so
// that an error in the rate moves it by nothing that shows.
std::uint64_t device_time(const MusartTable& m, const DeviceClock& c, musaEvent_t e,
                          double client_per_mono, const Session::Instant& anchor) {
  float ms = 0;
  if (c.reference == nullptr || m.musaEventElapsedTime(&ms, c.reference, e) != musaSuccess)
    return 0;
  const double mono = static_cast<double>(c.reference_mono) + static_cast<double>(ms) * 1e6;
  return static_cast<std::uint64_t>(static_cast<double>(anchor.client) +
                                    (mono - static_cast<double>(anchor.mono)) * client_per_mono);
}

// A device record's fields that kernels, copies and fills share (the same names in each struct).
template <typename Record>
Record* device_record(Writer& w, const Pending& p, CUpti_ActivityKind kind, std::uint64_t start,
                      std::uint64_t end) {
  auto* r = w.next<Record>(kind);
  if (r == nullptr) return nullptr;
  r->start = start;
  r->end = end;
  r->deviceId = static_cast<std::uint32_t>(p.device);
  r->contextId = static_cast<std::uint32_t>(p.device) + 1;
  r->streamId = p.stream_id;
  r->correlationId = p.correlation;
  r->channelType = CUPTI_CHANNEL_TYPE_INVALID;
  return r;
}

void write(Writer& w, const Pending& p, std::uint64_t start, std::uint64_t end) {
  for (int i = 0; i < 2; ++i) {
    if (p.external[i] == 0 || !p.external_record) continue;
    if (auto* r =
            w.next<cupti::ExternalCorrelationRecord>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) {
      r->externalKind = i == 0 ? CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0
                               : CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
      r->externalId = p.external[i];
      r->correlationId = p.correlation;
    }
  }
  if (p.runtime_record) {
    if (auto* r = w.next<cupti::ApiRecord>(CUPTI_ACTIVITY_KIND_RUNTIME)) {
      r->cbid = runtime_cbid(p.launch.api);
      r->start = p.api_start;
      r->end = p.api_end;
      r->processId = static_cast<std::uint32_t>(getpid());
      r->threadId = p.thread_id;
      r->correlationId = p.correlation;
      r->returnValue = 0;
    }
  }
  switch (p.launch.work) {
    case Work::kKernel:
    case Work::kHost: {
      if (p.device_record == CUPTI_ACTIVITY_KIND_INVALID) return;
      auto* r = device_record<cupti::KernelRecord>(w, p, p.device_record, start, end);
      if (r == nullptr) return;
      r->completed = end;
      r->gridId = p.correlation;
      r->name = g_names.insert(p.name).first->c_str();
      r->queued = CUPTI_TIMESTAMP_UNKNOWN;
      r->submitted = CUPTI_TIMESTAMP_UNKNOWN;
      r->launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
      return;
    }
    case Work::kMemcpy: {
      if (p.device_record != CUPTI_ACTIVITY_KIND_MEMCPY) return;
      auto* r = device_record<cupti::MemcpyRecord>(w, p, CUPTI_ACTIVITY_KIND_MEMCPY, start, end);
      if (r == nullptr) return;
      r->copyKind = p.copy_kind;
      r->srcKind = p.src_kind;
      r->dstKind = p.dst_kind;
      r->bytes = p.launch.bytes;
      r->runtimeCorrelationId = p.correlation;
      r->copyCount = 1;
      return;
    }
    case Work::kMemset: {
      if (p.device_record != CUPTI_ACTIVITY_KIND_MEMSET) return;
      auto* r = device_record<cupti::MemsetRecord>(w, p, CUPTI_ACTIVITY_KIND_MEMSET, start, end);
      if (r == nullptr) return;
      r->bytes = p.launch.bytes;
      r->memoryKind = p.dst_kind;
      return;
    }
  }
}

}  // namespace

// Builds the records of the ended work and hands them to the client. `forced`: wait for work the
// device has not finished (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); otherwise such work waits for a
// later flush.
void flush(bool forced) {
  Session& s = cupti::session();
  const std::uint64_t t0 = s.now();
  std::vector<std::unique_ptr<Pending>> ready;
  std::vector<std::unique_ptr<Pending>> later;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    ready.swap(g_done);
  }
  const Runtime& rt = runtime();
  const MusartTable& m = rt.musa;
  const double rate = s.client_per_mono(s.instant());
  {
    Writer w(s);
    std::lock_guard<std::mutex> lock(g_mutex);
    for (auto& p : ready) {
      std::uint64_t start = p->host_start, end = p->host_end;
      if (p->launch.work != Work::kHost) {
        if (m.musaEventQuery(p->end_event) != musaSuccess) {
          (void)m.musaGetLastError();
          if (!forced) {
            later.push_back(std::move(p));
            continue;
          }
          (void)m.musaEventSynchronize(p->end_event);
        }
        const DeviceClock& c = g_clocks[p->device];
        start = device_time(m, c, p->start_event, rate, p->anchor);
        end = device_time(m, c, p->end_event, rate, p->anchor);
        give_event(p->device, p->start_event);
        give_event(p->device, p->end_event);
        if (start == 0 || end < start) {
          s.dropped(1);
          continue;
        }
      }
      write(w, *p, start, end);
    }
    const bool overhead = std::any_of(ready.begin(), ready.end(),
                                      [](const auto& p) { return p && p->overhead_record; });
    if (overhead) {
      if (auto* r = w.next<cupti::OverheadRecord>(CUPTI_ACTIVITY_KIND_OVERHEAD)) {
        r->overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
        r->objectKind = CUPTI_ACTIVITY_OBJECT_PROCESS;
        r->objectId.pt.processId = static_cast<std::uint32_t>(getpid());
        r->start = t0;
        r->end = s.now();
      }
    }
    for (auto& p : later) g_done.push_back(std::move(p));
    // The session is over (Kineto disables the kinds before it flushes) and nothing waits for
    // the references: the next session measures its own.
    if (!recording() && g_done.empty()) {
      for (auto& [device, c] : g_clocks) give_event(device, c.reference);
      g_clocks.clear();
    }
  }
}

}  // namespace torchada::activity
