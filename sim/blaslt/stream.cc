// Running the library's work on the simulated runtime's streams, in stream order.
#include "internal.h"

#include "../runtime/sim_ext.h"

namespace lt {
namespace {

void run_once(void* p) {
  std::unique_ptr<Work> work(static_cast<Work*>(p));
  std::lock_guard<std::mutex> lock(work->run_mu);
  work->execute();
}

void run_captured(void* p) {
  auto* work = static_cast<Work*>(p);
  std::lock_guard<std::mutex> lock(work->run_mu);
  work->execute();
}

void destroy_work(void* p) { delete static_cast<Work*>(p); }

mublasStatus_t from_musa(musaError_t e) {
  if (e == musaSuccess) return MUBLAS_STATUS_SUCCESS;
  if (e == musaErrorInvalidResourceHandle || e == musaErrorInvalidValue) {
    return MUBLAS_STATUS_INVALID_VALUE;
  }
  return MUBLAS_STATUS_INTERNAL_ERROR;
}

}  // namespace

mublasStatus_t enqueue(std::unique_ptr<Work> work, musaStream_t stream) {
  musaStreamCaptureStatus cs = musaStreamCaptureStatusNone;
  musaGraph_t graph = nullptr;
  if (musaStreamGetCaptureInfo_v2(stream, &cs, nullptr, &graph, nullptr, nullptr) != musaSuccess) {
    cs = musaStreamCaptureStatusNone;  // the launch below reports the stream's error
  }
  if (cs != musaStreamCaptureStatusActive) {
    Work* raw = work.release();
    const musaError_t e = musaSimLaunchHostFuncOrRun(stream, run_once, raw);  // idle: runs here
    if (e != musaSuccess) delete raw;                                         // not enqueued
    return from_musa(e);
  }
  // Captured: the graph (and every executable graph made from it) owns the work through a user
  // object, since its host node runs once per launch.
  musaUserObject_t obj = nullptr;
  Work* raw = work.get();
  if (musaUserObjectCreate(&obj, raw, destroy_work, 1, musaUserObjectNoDestructorSync) !=
      musaSuccess) {
    return MUBLAS_STATUS_INTERNAL_ERROR;
  }
  work.release();  // owned by the user object now
  if (musaGraphRetainUserObject(graph, obj, 1, musaGraphUserObjectMove) != musaSuccess) {
    musaUserObjectRelease(obj, 1);
    return MUBLAS_STATUS_INTERNAL_ERROR;
  }
  return from_musa(musaLaunchHostFunc(stream, run_captured, raw));
}

}  // namespace lt
