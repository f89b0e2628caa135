// The shared-memory segment one communicator's ranks meet in (POSIX shm_open + mmap), its
// layout, and the wake-up word waiters sleep on (a process-shared futex).
//
// Layout (offsets in the header, all 64-byte aligned; sizes fixed by the creating rank):
//   SegHeader | RankSlot[nranks] | Channel[nranks*nranks] | stage: nranks x 2 buffers of
//   stage_bytes | rings: nranks*nranks p2p rings of ring_bytes (ring src*nranks+dst: src -> dst).
// Every counter lives in its own cache line and has a single writer.
#ifndef TORCHADA_SIM_CCL_SHM_H
#define TORCHADA_SIM_CCL_SHM_H

#include <mccl.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace mccl_sim {

static_assert(std::atomic<uint32_t>::is_always_lock_free, "shared atomics must be address-free");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared atomics must be address-free");

constexpr uint64_t kSegMagic = 0x314d49534c43434dull;  // "MCCLSIM1"
constexpr uint32_t kSegVersion = 1;

// A rank's slot state. Empty -> Claiming -> Joined, then Destroyed, Aborted or Failed for good.
enum SlotState : uint32_t {
  kSlotEmpty = 0,
  kSlotClaiming = 1,
  kSlotJoined = 2,
  kSlotDestroyed = 3,
  kSlotAborted = 4,
  kSlotFailed = 5,
};

// What a rank is about to run, compared across ranks at the first step of every collective.
struct OpDesc {
  uint64_t seq;
  uint64_t count;
  uint32_t kind;
  uint32_t dtype;
  uint32_t red;
  int32_t root;
};

struct alignas(64) RankSlot {
  std::atomic<uint32_t> state;
  int32_t pid;
  uint64_t start_time;  // /proc/<pid>/stat field 22: tells a reused pid apart
  uint64_t pid_ns;      // inode of /proc/self/ns/pid: pids are comparable only within one
  int32_t device;
  alignas(64) std::atomic<uint64_t> step;  // data path: last step published (stream thread)
  alignas(64) std::atomic<uint64_t> ctl;   // control path: last control step (mcclCommSplit)
  int32_t color;                           // written before `ctl` is published
  int32_t key;
  // Written before the first step of a collective is published; indexed by the chunk's stage
  // parity, so a fast rank starting the next collective does not overwrite what peers compare.
  alignas(64) OpDesc desc[2];
};

struct alignas(64) Channel {
  std::atomic<uint64_t> head;              // bytes written by the sender
  alignas(64) std::atomic<uint64_t> tail;  // bytes consumed by the receiver
};

struct alignas(64) SegHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t nranks;
  uint64_t total_bytes;
  uint64_t stage_bytes;  // one stage buffer (each rank has two)
  uint64_t ring_bytes;   // one p2p ring
  uint64_t slots_off, chans_off, stage_off, rings_off;
  int32_t creator_pid;
  std::atomic<uint32_t> ready;  // 1 once the creator has written the fields above
  alignas(64) std::atomic<uint32_t> joined;
  alignas(64) std::atomic<uint32_t> wake;  // futex word: bumped on every publication
  std::atomic<uint32_t> sleepers;          // waiters inside futex_wait
};

struct SegParams {
  int nranks = 0;
  size_t stage_bytes = 0;
  size_t ring_bytes = 0;
};

class Segment {
 public:
  // Opens (creating if first) the segment `name` for `p.nranks` ranks. Ranks of one process share
  // one mapping. Waits at most `timeout_ms` (0: no limit) for another process creating it.
  static mcclResult_t open(const std::string& name, const SegParams& p, long timeout_ms,
                           std::shared_ptr<Segment>* out);
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  SegHeader* hdr() const { return hdr_; }
  int nranks() const { return static_cast<int>(hdr_->nranks); }
  RankSlot* slot(int r) const { return reinterpret_cast<RankSlot*>(base_ + hdr_->slots_off) + r; }
  Channel* chan(int src, int dst) const {
    return reinterpret_cast<Channel*>(base_ + hdr_->chans_off) + (src * nranks() + dst);
  }
  char* stage(int r, unsigned parity) const {
    return base_ + hdr_->stage_off +
           (static_cast<size_t>(r) * 2 + (parity & 1)) * hdr_->stage_bytes;
  }
  char* ring(int src, int dst) const {
    return base_ + hdr_->rings_off + static_cast<size_t>(src * nranks() + dst) * hdr_->ring_bytes;
  }
  size_t stage_bytes() const { return hdr_->stage_bytes; }
  size_t ring_bytes() const { return hdr_->ring_bytes; }
  const std::string& name() const { return name_; }

  // Removes the name from /dev/shm (once all ranks have it mapped, or on failure). Idempotent.
  void unlink_name();
  // Wakes every waiter of this segment (after publishing a counter).
  void notify();
  // Sleeps until `wake` differs from `seen`, a notify, or `timeout_us` passes.
  void sleep(uint32_t seen, long timeout_us);

 private:
  Segment() = default;
  std::string name_;
  char* base_ = nullptr;
  size_t size_ = 0;
  SegHeader* hdr_ = nullptr;
  std::atomic<bool> unlinked_{false};
};

// Process liveness: alive when /proc/<pid>/stat exists, is not a zombie, and has this start time.
uint64_t process_start_time(int pid);  // 0 if unknown
bool process_alive(int pid, uint64_t start_time);
uint64_t pid_namespace();  // 0 if unknown

}  // namespace mccl_sim

#endif  // TORCHADA_SIM_CCL_SHM_H
