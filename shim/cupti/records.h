// The record each activity kind torchada writes is, in one place: activity.cc writes them,
// cuptiActivityGetNextRecord (session.cc) walks them by the same sizes. The newest of this CUPTI;
// PyTorch's profiler reads older versions whose fields sit at the same offsets (activity.cc).
#pragma once

#include <cupti.h>

#include <cstddef>

namespace torchada::cupti {

using KernelRecord = CUpti_ActivityKernel11;  // KERNEL, CONCURRENT_KERNEL
using MemcpyRecord = CUpti_ActivityMemcpy6;
using MemsetRecord = CUpti_ActivityMemset4;
using ApiRecord = CUpti_ActivityAPI;  // RUNTIME
using ExternalCorrelationRecord = CUpti_ActivityExternalCorrelation;
using OverheadRecord = CUpti_ActivityOverhead3;

// A record's size in a buffer (8-byte aligned), or 0 for a kind torchada never writes.
constexpr std::size_t record_size(CUpti_ActivityKind kind) {
  std::size_t size = 0;
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      size = sizeof(KernelRecord);
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      size = sizeof(MemcpyRecord);
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      size = sizeof(MemsetRecord);
      break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      size = sizeof(ApiRecord);
      break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      size = sizeof(ExternalCorrelationRecord);
      break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      size = sizeof(OverheadRecord);
      break;
    default:
      break;
  }
  return (size + 7) & ~std::size_t{7};
}

}  // namespace torchada::cupti
