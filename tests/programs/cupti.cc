// CUPTI's activity and callback APIs, used the way a profiler uses them (PyTorch's Kineto: a
// subscriber with the resource callback, client buffers, a timestamp callback of its own, external
// correlation ids pushed around each operator, a forced flush at the end):
//
//   records   a host-to-device copy, a device-to-host copy and a fill, each with its runtime API
//             record and the external ids pushed around it, sharing one correlation id; their
//             times in the client's clock, inside the window the program measured, in order
//   filters   a runtime record switched off (cuptiActivityEnableRuntimeApi) is not delivered;
//             a disabled kind records nothing
//   refusals  a second subscriber, kinds and domains torchada keeps no records of, the hardware
//             counter API: refused, never success
//   names     cuptiGetCallbackName and cuptiGetResultString
//
// Linked like a user's program (NVIDIA's libcupti.so.13 and libcudart.so.13); prints
// "cupti: all checks passed".
#include <cuda_runtime.h>
#include <cupti.h>
#include <x86intrin.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.h"

namespace {

constexpr size_t kBufferSize = 1 << 20;
std::vector<std::vector<uint8_t>> g_completed;  // delivered buffers, cut to their valid size
int g_requested = 0, g_context_callbacks = 0;

void CUPTIAPI request(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferSize));
  *size = kBufferSize;
  *max_records = 0;
  ++g_requested;
}

void CUPTIAPI complete(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  g_completed.emplace_back(buffer, buffer + valid);
  std::free(buffer);
}

uint64_t CUPTIAPI tsc() { return __rdtsc(); }

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void*) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
    ++g_context_callbacks;
}

#define CUPTI_OK(expr) EXPECT((expr) == CUPTI_SUCCESS)
#define CUPTI_IS(expr, want) EXPECT((expr) == (want))

struct Records {
  std::vector<CUpti_ActivityMemcpy6> copies;
  std::vector<CUpti_ActivityMemset4> fills;
  std::vector<CUpti_ActivityAPI> calls;
  std::vector<CUpti_ActivityExternalCorrelation> external;
  int unexpected = 0;
};

Records walk() {
  Records r;
  for (auto& b : g_completed) {
    CUpti_Activity* rec = nullptr;
    CUptiResult st;
    while ((st = cuptiActivityGetNextRecord(b.data(), b.size(), &rec)) == CUPTI_SUCCESS) {
      switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_MEMCPY:
          r.copies.push_back(*reinterpret_cast<CUpti_ActivityMemcpy6*>(rec));
          break;
        case CUPTI_ACTIVITY_KIND_MEMSET:
          r.fills.push_back(*reinterpret_cast<CUpti_ActivityMemset4*>(rec));
          break;
        case CUPTI_ACTIVITY_KIND_RUNTIME:
          r.calls.push_back(*reinterpret_cast<CUpti_ActivityAPI*>(rec));
          break;
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
          r.external.push_back(*reinterpret_cast<CUpti_ActivityExternalCorrelation*>(rec));
          break;
        case CUPTI_ACTIVITY_KIND_OVERHEAD:
          break;
        default:
          ++r.unexpected;
      }
    }
    EXPECT(st == CUPTI_ERROR_MAX_LIMIT_REACHED);
  }
  g_completed.clear();
  return r;
}

const CUpti_ActivityAPI* call_for(const Records& r, uint32_t correlation) {
  for (const auto& c : r.calls)
    if (c.correlationId == correlation) return &c;
  return nullptr;
}

uint64_t external_for(const Records& r, uint32_t correlation, CUpti_ExternalCorrelationKind kind) {
  for (const auto& e : r.external)
    if (e.correlationId == correlation && e.externalKind == kind) return e.externalId;
  return 0;
}

}  // namespace

int main() {
  // ---- subscribing, as Kineto does before anything else
  CUpti_SubscriberHandle sub = nullptr, second = nullptr;
  CUPTI_OK(cuptiSubscribe(&sub, on_callback, nullptr));
  CUPTI_IS(cuptiSubscribe(&second, on_callback, nullptr),
           CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  CUPTI_OK(
      cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED));
  uint32_t version = 0;
  CUPTI_OK(cuptiGetVersion(&version));
  EXPECT(version >= 27);

  // ---- recording
  CUPTI_OK(cuptiActivityRegisterTimestampCallback(tsc));
  CUPTI_OK(cuptiActivityRegisterCallbacks(request, complete));
  CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
  CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
  CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
  CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_OVERHEAD));
  EXPECT(g_requested >= 1);  // a buffer is out, so a profiler's flush is not skipped

  constexpr size_t kBytes = 1 << 20;
  std::vector<unsigned char> host(kBytes, 7), back(kBytes, 0);
  void* dev = nullptr;
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaMalloc(&dev, kBytes));
  CUDA_CHECK(cudaStreamCreate(&stream));
  const uint64_t before = __rdtsc();
  CUPTI_OK(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 41));
  CUDA_CHECK(cudaMemcpyAsync(dev, host.data(), kBytes, cudaMemcpyHostToDevice, stream));
  CUPTI_OK(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 99));
  CUDA_CHECK(cudaMemsetAsync(dev, 3, kBytes / 2, stream));
  uint64_t popped = 0;
  CUPTI_OK(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &popped));
  EXPECT(popped == 99);
  CUPTI_OK(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped));
  EXPECT(popped == 41);
  CUPTI_IS(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, nullptr),
           CUPTI_ERROR_QUEUE_EMPTY);
  CUDA_CHECK(cudaMemcpy(back.data(), dev, kBytes, cudaMemcpyDefault));
  CUDA_CHECK(cudaDeviceSynchronize());  // the events after the work have been reached too
  const uint64_t after = __rdtsc();
  EXPECT(back[0] == 3 && back[kBytes - 1] == 7);
  EXPECT(g_context_callbacks == 1);  // the device's context, announced once

  CUPTI_OK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  Records r = walk();
  EXPECT(r.unexpected == 0);
  EXPECT(r.copies.size() == 2);
  EXPECT(r.fills.size() == 1);
  EXPECT(r.calls.size() == 3);
  if (r.copies.size() == 2 && r.fills.size() == 1) {
    const auto& h2d = r.copies[0];
    const auto& d2h = r.copies[1];
    const auto& fill = r.fills[0];
    EXPECT(h2d.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    EXPECT(h2d.srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
    EXPECT(h2d.dstKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    EXPECT(h2d.bytes == kBytes);
    EXPECT(d2h.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);  // cudaMemcpyDefault, by pointer
    EXPECT(fill.bytes == kBytes / 2 && fill.memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    EXPECT(h2d.streamId == fill.streamId && h2d.streamId != d2h.streamId);
    // The client's clock, inside the window, in stream order.
    EXPECT(before <= h2d.start && h2d.start <= h2d.end);
    EXPECT(h2d.end <= fill.start + (fill.start >> 20) && fill.start <= fill.end);
    EXPECT(fill.end <= d2h.start + (d2h.start >> 20) && d2h.end <= after);
    if (!(d2h.end <= after))
      std::printf("    (h2d %llu..%llu fill %llu..%llu d2h %llu..%llu, window %llu..%llu)\n",
                  (unsigned long long)h2d.start, (unsigned long long)h2d.end,
                  (unsigned long long)fill.start, (unsigned long long)fill.end,
                  (unsigned long long)d2h.start, (unsigned long long)d2h.end,
                  (unsigned long long)before, (unsigned long long)after);
    // Each launch: its runtime record and its external ids, through one correlation id.
    const CUpti_ActivityAPI* c = call_for(r, h2d.correlationId);
    EXPECT(c != nullptr && c->cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
    EXPECT(c != nullptr && before <= c->start && c->start <= c->end && c->end <= after);
    EXPECT(external_for(r, h2d.correlationId, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) == 41);
    EXPECT(external_for(r, h2d.correlationId, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1) == 0);
    EXPECT(external_for(r, fill.correlationId, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) == 41);
    EXPECT(external_for(r, fill.correlationId, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1) == 99);
    EXPECT(external_for(r, d2h.correlationId, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) == 0);
    c = call_for(r, d2h.correlationId);
    EXPECT(c != nullptr && c->cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020);
    EXPECT(h2d.correlationId != fill.correlationId && fill.correlationId != d2h.correlationId);
  }

  // ---- filters: one runtime record switched off; a disabled kind
  CUPTI_OK(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, 0));
  CUPTI_OK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY));
  CUDA_CHECK(cudaMemsetAsync(dev, 1, 64, stream));
  CUDA_CHECK(cudaMemcpyAsync(back.data(), dev, 64, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUPTI_OK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  r = walk();
  EXPECT(r.fills.size() == 1 && r.copies.empty());
  EXPECT(r.calls.size() == 1 && r.calls[0].cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);

  // ---- refusals: never success for what torchada keeps no records of
  CUPTI_IS(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER), CUPTI_ERROR_NOT_SUPPORTED);
  CUPTI_IS(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION), CUPTI_ERROR_NOT_SUPPORTED);
  CUPTI_IS(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_ERROR_NOT_SUPPORTED);
  CUPTI_OK(cuptiEnableDomain(0, sub, CUPTI_CB_DOMAIN_RUNTIME_API));
  CUPTI_IS(cuptiActivityEnableRuntimeApi(0, 1), CUPTI_ERROR_INVALID_PARAMETER);
  CUpti_EventGroup group = nullptr;
  CUPTI_IS(cuptiEventGroupCreate(nullptr, &group, 0), CUPTI_ERROR_NOT_SUPPORTED);

  // ---- names
  const char* name = nullptr;
  CUPTI_OK(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &name));
  EXPECT(name != nullptr && std::strcmp(name, "cudaLaunchKernel_v7000") == 0);
  CUPTI_OK(cuptiGetResultString(CUPTI_ERROR_NOT_SUPPORTED, &name));
  EXPECT(name != nullptr && std::strcmp(name, "CUPTI_ERROR_NOT_SUPPORTED") == 0);

  CUPTI_OK(cuptiUnsubscribe(sub));
  CUPTI_OK(cuptiSubscribe(&second, on_callback, nullptr));
  CUPTI_OK(cuptiUnsubscribe(second));
  CUPTI_OK(cuptiFinalize());
  CUDA_CHECK(cudaFree(dev));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return check::Report("cupti");
}
