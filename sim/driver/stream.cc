// The simulated driver's streams and events: the simulated runtime's (MUstream is musaStream_t,
// MUevent is musaEvent_t), so work queued through either API is ordered on the same stream.
#include "driver.h"

namespace {
musaStream_t rt(MUstream s) { return reinterpret_cast<musaStream_t>(s); }
musaEvent_t rt(MUevent e) { return reinterpret_cast<musaEvent_t>(e); }

// Streams and events are created in the current context: none current is an error, as in CUDA.
MUresult need_context() {
  int d = 0;
  return simdrv::current_context_device(&d);
}
}  // namespace

using namespace simdrv;

extern "C" {

MUresult muStreamCreate(MUstream* phStream, unsigned int Flags) {
  return api([&] {
    if (phStream == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
    musaStream_t s = nullptr;
    const MUresult r = from_runtime(musaStreamCreateWithFlags(&s, Flags));
    if (r == MUSA_SUCCESS) *phStream = reinterpret_cast<MUstream>(s);
    return r;
  });
}

MUresult muStreamCreateWithPriority(MUstream* phStream, unsigned int flags, int priority) {
  return api([&] {
    if (phStream == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
    musaStream_t s = nullptr;
    const MUresult r = from_runtime(musaStreamCreateWithPriority(&s, flags, priority));
    if (r == MUSA_SUCCESS) *phStream = reinterpret_cast<MUstream>(s);
    return r;
  });
}

MUresult muStreamDestroy_v2(MUstream hStream) {
  return api([&] {
    if (hStream == nullptr) return MUSA_ERROR_INVALID_HANDLE;
    return from_runtime(musaStreamDestroy(rt(hStream)));
  });
}

MUresult muStreamSynchronize(MUstream hStream) {
  return api([&] { return from_runtime(musaStreamSynchronize(rt(hStream))); });
}

MUresult muStreamQuery(MUstream hStream) {
  return api([&] { return from_runtime(musaStreamQuery(rt(hStream))); });
}

MUresult muStreamWaitEvent(MUstream hStream, MUevent hEvent, unsigned int Flags) {
  return api([&] { return from_runtime(musaStreamWaitEvent(rt(hStream), rt(hEvent), Flags)); });
}

MUresult muStreamGetPriority(MUstream hStream, int* priority) {
  return api([&] {
    if (priority == nullptr) return MUSA_ERROR_INVALID_VALUE;
    return from_runtime(musaStreamGetPriority(rt(hStream), priority));
  });
}

MUresult muStreamGetFlags(MUstream hStream, unsigned int* flags) {
  return api([&] {
    if (flags == nullptr) return MUSA_ERROR_INVALID_VALUE;
    return from_runtime(musaStreamGetFlags(rt(hStream), flags));
  });
}

MUresult muLaunchHostFunc(MUstream hStream, MUhostFn fn, void* userData) {
  return api([&] {
    if (fn == nullptr) return MUSA_ERROR_INVALID_VALUE;
    return from_runtime(musaLaunchHostFunc(rt(hStream), fn, userData));
  });
}

MUresult muEventCreate(MUevent* phEvent, unsigned int Flags) {
  return api([&] {
    if (phEvent == nullptr) return MUSA_ERROR_INVALID_VALUE;
    if (const MUresult c = need_context(); c != MUSA_SUCCESS) return c;
    musaEvent_t e = nullptr;
    const MUresult r = from_runtime(musaEventCreateWithFlags(&e, Flags));
    if (r == MUSA_SUCCESS) *phEvent = reinterpret_cast<MUevent>(e);
    return r;
  });
}

MUresult muEventRecord(MUevent hEvent, MUstream hStream) {
  return api([&] { return from_runtime(musaEventRecord(rt(hEvent), rt(hStream))); });
}

MUresult muEventSynchronize(MUevent hEvent) {
  return api([&] { return from_runtime(musaEventSynchronize(rt(hEvent))); });
}

MUresult muEventQuery(MUevent hEvent) {
  return api([&] { return from_runtime(musaEventQuery(rt(hEvent))); });
}

MUresult muEventDestroy_v2(MUevent hEvent) {
  return api([&] {
    if (hEvent == nullptr) return MUSA_ERROR_INVALID_HANDLE;
    return from_runtime(musaEventDestroy(rt(hEvent)));
  });
}

MUresult muEventElapsedTime_v2(float* pMilliseconds, MUevent hStart, MUevent hEnd) {
  return api([&] {
    if (pMilliseconds == nullptr) return MUSA_ERROR_INVALID_VALUE;
    return from_runtime(musaEventElapsedTime(pMilliseconds, rt(hStart), rt(hEnd)));
  });
}

}  // extern "C"
