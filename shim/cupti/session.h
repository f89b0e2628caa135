// The state of torchada's CUPTI: enabled kinds, the client's buffer and timestamp callbacks,
// external correlation ids, counters. One per process (CUPTI's activity API is process-wide).
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>

#include "cupti/activity.h"

namespace torchada::activity {
// Builds and delivers the records of ended work (activity.cc); forced: waits for the device.
void flush(bool forced);
}  // namespace torchada::activity

namespace torchada::cupti {

class Session {
 public:
  bool enabled(CUpti_ActivityKind kind) const;
  // Whether work of this kind is bracketed: its device record or its runtime record is kept.
  bool wants(activity::Work work) const;
  // Whether a runtime API record with this callback id is kept (cuptiActivityEnableRuntimeApi).
  bool records_runtime(std::uint32_t cbid) const;

  // The client's clock (its timestamp callback), else CLOCK_REALTIME in nanoseconds.
  std::uint64_t now() const;
  // CLOCK_MONOTONIC (nanoseconds), what device times are converted from.
  static std::uint64_t mono();
  // One instant in both clocks: the tightest of a few (monotonic, client, monotonic) brackets, so
  // that a thread preempted between two reads does not pair two different instants.
  struct Instant {
    std::uint64_t mono, client;
  };
  Instant instant() const;
  // The client clock's units per CLOCK_MONOTONIC nanosecond, measured since the session began.
  double client_per_mono(const Instant& now) const;

  std::uint32_t next_correlation();
  // The calling thread's innermost CUSTOM0 and CUSTOM1 external ids (0 where none).
  void current_external(std::uint64_t out[2]) const;
  // This thread's id as the client asked for it (cuptiSetThreadIdType).
  std::uint32_t thread_id() const;

  // A buffer from the client (null: it gave none; the records are dropped and counted).
  std::uint8_t* take_buffer(std::size_t* size);
  void complete_buffer(std::uint8_t* buffer, std::size_t size, std::size_t valid);
  void dropped(std::size_t records);
};

Session& session();

}  // namespace torchada::cupti
