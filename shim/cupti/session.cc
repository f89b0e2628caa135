// torchada's CUPTI activity API (cuptiActivity*, timestamps, versions, results): the process's
// one Session, and the exported functions of symbols/cupti.txt's `shim` rows that concern it.
//
// Kinds served: CONCURRENT_KERNEL and KERNEL (device kernels of ops/, cuBLAS calls, the kernel
// bridge's CPU kernels, each shown for what it is), MEMCPY, MEMSET, RUNTIME (the runtime call
// that launched each of those), EXTERNAL_CORRELATION and OVERHEAD (torchada's flushes). Any other
// kind is refused with CUPTI_ERROR_NOT_SUPPORTED: torchada keeps no records of it, and enabling
// it must not look as if it did.
#include "cupti/session.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <bitset>
#include <cstring>
#include <mutex>
#include <vector>

#include "cupti/callback_names.h"
#include "cupti/records.h"
#include "gen/cupti_impl.h"

namespace torchada::cupti {
namespace {

constexpr unsigned kKinds =
    64;  // CUpti_ActivityKind values torchada tracks (all it serves are below)

struct State {
  std::mutex mutex;
  std::bitset<kKinds> kinds;
  std::bitset<CUPTI_RUNTIME_TRACE_CBID_SIZE> runtime_on, runtime_off;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  std::atomic<CUpti_TimestampCallbackFunc> clock{nullptr};
  std::atomic<std::uint32_t> correlation{0};
  std::atomic<std::size_t> dropped{0};
  std::atomic<int> thread_id_type{CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT};
  // The client's clock and CLOCK_MONOTONIC at the session's start (the rate's base).
  std::uint64_t client0 = 0, mono0 = 0;
  // Kineto flushes only while it has a buffer out: one is taken as soon as a kind is enabled.
  std::uint8_t* held = nullptr;
  std::size_t held_size = 0;
  // Values of the attributes that tune NVIDIA's device buffers, which torchada has none of: kept
  // and answered, they change nothing.
  std::uint64_t attributes[CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER + 1] = {};
};

State& state() {
  static State* s = new State;  // never destroyed: records may be flushed during exit
  return *s;
}

thread_local std::vector<std::uint64_t> t_external[2];  // CUSTOM0, CUSTOM1
thread_local CUptiResult t_last_error = CUPTI_SUCCESS;

CUptiResult result(CUptiResult r) {
  if (r != CUPTI_SUCCESS) t_last_error = r;
  return r;
}

std::uint64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

bool served(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMSET:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return true;
    default:
      return false;
  }
}

bool device_kind(unsigned k) {
  return k == CUPTI_ACTIVITY_KIND_KERNEL || k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
         k == CUPTI_ACTIVITY_KIND_MEMCPY || k == CUPTI_ACTIVITY_KIND_MEMSET;
}

bool any_device_kind(const State& s) {
  for (unsigned k = 0; k < kKinds; ++k)
    if (s.kinds[k] && device_kind(k)) return true;
  return false;
}

// Whether producers must bracket their work: for its device record, or for the record of the
// runtime call that launched it (kept with the device kinds off too, as NVIDIA's CUPTI keeps it).
bool records_work(const State& s) {
  return any_device_kind(s) || s.kinds[CUPTI_ACTIVITY_KIND_RUNTIME] || s.runtime_on.any();
}

// With s.mutex held: keeps one client buffer out while anything is recorded.
void hold_buffer(State& s) {
  if (s.held != nullptr || s.request == nullptr || s.kinds.none()) return;
  std::uint8_t* b = nullptr;
  std::size_t size = 0, max_records = 0;
  s.request(&b, &size, &max_records);
  s.held = b;
  s.held_size = b != nullptr ? size : 0;
}

}  // namespace

bool Session::enabled(CUpti_ActivityKind kind) const {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return static_cast<unsigned>(kind) < kKinds && s.kinds[kind];
}

bool Session::wants(activity::Work work) const {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.kinds[CUPTI_ACTIVITY_KIND_RUNTIME] || s.runtime_on.any()) return true;
  switch (work) {
    case activity::Work::kKernel:
    case activity::Work::kHost:
      return s.kinds[CUPTI_ACTIVITY_KIND_KERNEL] || s.kinds[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL];
    case activity::Work::kMemcpy:
      return s.kinds[CUPTI_ACTIVITY_KIND_MEMCPY];
    case activity::Work::kMemset:
      return s.kinds[CUPTI_ACTIVITY_KIND_MEMSET];
  }
  return false;
}

bool Session::records_runtime(std::uint32_t cbid) const {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (cbid == 0 || cbid >= CUPTI_RUNTIME_TRACE_CBID_SIZE) return false;
  return (s.kinds[CUPTI_ACTIVITY_KIND_RUNTIME] && !s.runtime_off[cbid]) || s.runtime_on[cbid];
}

std::uint64_t Session::now() const {
  if (CUpti_TimestampCallbackFunc f = state().clock.load(std::memory_order_acquire)) return f();
  return clock_ns(CLOCK_REALTIME);
}

std::uint64_t Session::mono() { return clock_ns(CLOCK_MONOTONIC); }

Session::Instant Session::instant() const {
  Instant best{};
  std::uint64_t best_gap = ~std::uint64_t{0};
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t m0 = mono();
    const std::uint64_t c = now();
    const std::uint64_t m1 = mono();
    if (m1 - m0 < best_gap) {
      best_gap = m1 - m0;
      best = {m0 + (m1 - m0) / 2, c};
    }
  }
  return best;
}

double Session::client_per_mono(const Instant& t) const {
  State& s = state();
  if (s.clock.load(std::memory_order_acquire) == nullptr) return 1.0;
  std::lock_guard<std::mutex> lock(s.mutex);
  if (t.mono <= s.mono0 || t.client <= s.client0) return 1.0;
  return static_cast<double>(t.client - s.client0) / static_cast<double>(t.mono - s.mono0);
}

std::uint32_t Session::next_correlation() {
  return state().correlation.fetch_add(1, std::memory_order_relaxed) + 1;
}

void Session::current_external(std::uint64_t out[2]) const {
  for (int i = 0; i < 2; ++i) out[i] = t_external[i].empty() ? 0 : t_external[i].back();
}

std::uint32_t Session::thread_id() const {
  if (state().thread_id_type.load(std::memory_order_relaxed) ==
      CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
    return static_cast<std::uint32_t>(syscall(SYS_gettid));
  return static_cast<std::uint32_t>(pthread_self());
}

std::uint8_t* Session::take_buffer(std::size_t* size) {
  State& s = state();
  std::uint8_t* b = nullptr;
  CUpti_BuffersCallbackRequestFunc request;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.held != nullptr) {
      b = s.held;
      *size = s.held_size;
      s.held = nullptr;
      return b;
    }
    request = s.request;
  }
  if (request == nullptr) return nullptr;
  std::size_t max_records = 0;
  *size = 0;
  request(&b, size, &max_records);
  return b;
}

void Session::complete_buffer(std::uint8_t* buffer, std::size_t size, std::size_t valid) {
  CUpti_BuffersCallbackCompleteFunc complete;
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    complete = s.complete;
  }
  if (complete != nullptr) complete(nullptr, 0, buffer, size, valid);
}

void Session::dropped(std::size_t records) {
  state().dropped.fetch_add(records, std::memory_order_relaxed);
}

Session& session() {
  static Session s;
  return s;
}

namespace impl {

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                           CUpti_BuffersCallbackCompleteFunc complete) {
  if (request == nullptr || complete == nullptr) return result(CUPTI_ERROR_INVALID_PARAMETER);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.request = request;
  s.complete = complete;
  hold_buffer(s);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc callback) {
  if (callback == nullptr) return result(CUPTI_ERROR_INVALID_PARAMETER);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.clock.store(callback, std::memory_order_release);
  const Session::Instant t = session().instant();
  s.client0 = t.client;
  s.mono0 = t.mono;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (!served(kind)) return result(CUPTI_ERROR_NOT_SUPPORTED);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.kinds.none()) {
    const Session::Instant t = session().instant();
    s.client0 = t.client;
    s.mono0 = t.mono;
  }
  s.kinds.set(kind);
  // Enabling the kind again forgets the per-function choices, as NVIDIA's CUPTI does.
  if (kind == CUPTI_ACTIVITY_KIND_RUNTIME) s.runtime_on.reset(), s.runtime_off.reset();
  hold_buffer(s);
  activity::detail::g_recording.store(records_work(s), std::memory_order_relaxed);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  if (static_cast<unsigned>(kind) >= kKinds) return result(CUPTI_ERROR_INVALID_KIND);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.kinds.reset(kind);
  activity::detail::g_recording.store(records_work(s), std::memory_order_relaxed);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
  if (cbid == 0 || cbid >= CUPTI_RUNTIME_TRACE_CBID_SIZE)
    return result(CUPTI_ERROR_INVALID_PARAMETER);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.runtime_on[cbid] = enable != 0;
  s.runtime_off[cbid] = enable == 0;
  activity::detail::g_recording.store(records_work(s), std::memory_order_relaxed);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
  if (cbid == 0 || cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE)
    return result(CUPTI_ERROR_INVALID_PARAMETER);
  // Driver API records are not kept (the DRIVER kind is refused): switching one off is already
  // true, switching one on cannot be.
  return enable != 0 ? result(CUPTI_ERROR_NOT_SUPPORTED) : CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  activity::flush((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  hold_buffer(s);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlush(CUcontext, uint32_t, uint32_t flag) {
  return cuptiActivityFlushAll(flag);
}

CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return result(CUPTI_ERROR_INVALID_PARAMETER);
  std::size_t at = 0;
  if (*record != nullptr) {
    const auto* cur = reinterpret_cast<const std::uint8_t*>(*record);
    if (cur < buffer || cur >= buffer + valid) return result(CUPTI_ERROR_INVALID_PARAMETER);
    const std::size_t size = record_size((*record)->kind);
    if (size == 0) return result(CUPTI_ERROR_INVALID_KIND);
    at = static_cast<std::size_t>(cur - buffer) + size;
  }
  if (at + sizeof(CUpti_Activity) > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  auto* next = reinterpret_cast<CUpti_Activity*>(buffer + at);
  if (record_size(next->kind) == 0) return result(CUPTI_ERROR_INVALID_KIND);
  *record = next;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  if (dropped == nullptr) return result(CUPTI_ERROR_INVALID_PARAMETER);
  *dropped = state().dropped.exchange(0, std::memory_order_relaxed);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                   uint64_t id) {
  if (kind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 ||
      kind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1) {
    t_external[kind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1].push_back(id);
    return CUPTI_SUCCESS;
  }
  // OpenACC and the other kinds: no producer of theirs exists here.
  return result(kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
                        kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE
                    ? CUPTI_ERROR_INVALID_PARAMETER
                    : CUPTI_ERROR_NOT_SUPPORTED);
}

CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                  uint64_t* last) {
  if (kind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 &&
      kind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1)
    return result(CUPTI_ERROR_INVALID_PARAMETER);
  auto& stack = t_external[kind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1];
  if (stack.empty()) return result(CUPTI_ERROR_QUEUE_EMPTY);
  if (last != nullptr) *last = stack.back();
  stack.pop_back();
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t* size, void* value) {
  if (size == nullptr || value == nullptr) return result(CUPTI_ERROR_INVALID_PARAMETER);
  if (attr > CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER)
    return result(CUPTI_ERROR_NOT_SUPPORTED);
  std::uint64_t v = 0;
  if (*size == sizeof(std::uint8_t) || *size == sizeof(std::uint32_t) ||
      *size == sizeof(std::uint64_t))
    std::memcpy(&v, value, *size);
  else
    return result(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.attributes[attr] = v;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t* size, void* value) {
  if (size == nullptr || value == nullptr) return result(CUPTI_ERROR_INVALID_PARAMETER);
  if (attr > CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER)
    return result(CUPTI_ERROR_NOT_SUPPORTED);
  if (*size != sizeof(std::uint8_t) && *size != sizeof(std::uint32_t) &&
      *size != sizeof(std::uint64_t))
    return result(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::memcpy(value, &s.attributes[attr], *size);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
  if (timestamp == nullptr) return result(CUPTI_ERROR_INVALID_PARAMETER);
  *timestamp = session().now();
  return CUPTI_SUCCESS;
}

CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
    return result(CUPTI_ERROR_INVALID_PARAMETER);
  state().thread_id_type.store(type, std::memory_order_relaxed);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetThreadIdType(CUpti_ActivityThreadIdType* type) {
  if (type == nullptr) return result(CUPTI_ERROR_INVALID_PARAMETER);
  *type = static_cast<CUpti_ActivityThreadIdType>(
      state().thread_id_type.load(std::memory_order_relaxed));
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetLastError(void) {
  const CUptiResult r = t_last_error;
  t_last_error = CUPTI_SUCCESS;
  return r;
}

CUptiResult cuptiGetVersion(uint32_t* version) {
  if (version == nullptr) return result(CUPTI_ERROR_INVALID_PARAMETER);
  *version = CUPTI_API_VERSION;  // the headers torchada implements
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult r, const char** str) {
  if (str == nullptr) return result(CUPTI_ERROR_INVALID_PARAMETER);
  const char* name = find_name(kResultNames, kResultNamesCount, static_cast<unsigned>(r));
  *str = name != nullptr ? name : "CUPTI_ERROR_UNKNOWN";
  return name != nullptr ? CUPTI_SUCCESS : result(CUPTI_ERROR_INVALID_PARAMETER);
}

CUptiResult cuptiFinalize(void) {
  activity::flush(true);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.held != nullptr && s.complete != nullptr) s.complete(nullptr, 0, s.held, s.held_size, 0);
  s.held = nullptr;
  s.kinds.reset();
  s.runtime_on.reset();
  s.runtime_off.reset();
  s.request = nullptr;
  s.complete = nullptr;
  activity::detail::g_recording.store(false, std::memory_order_relaxed);
  return CUPTI_SUCCESS;
}

}  // namespace impl
}  // namespace torchada::cupti
