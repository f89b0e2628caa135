// Point to point: mcclSend/mcclRecv through one single-producer single-consumer byte ring per
// ordered pair of ranks (the sender advances `head`, the receiver `tail`). A message is a 16-byte
// header (its size and sequence number, so a size mismatch is reported instead of corrupting the
// stream) followed by the payload padded to 16 bytes. All sends and receives of a task progress
// together, each as far as the rings allow, so messages larger than a ring cannot deadlock a group
// in which every rank sends before it receives.
#include <algorithm>
#include <cstring>

#include "internal.h"

namespace mccl_sim {
namespace {

constexpr uint64_t kHeader = 16;

struct Header {
  uint64_t bytes;
  uint64_t seq;
};
static_assert(sizeof(Header) == kHeader, "header size");

uint64_t padded(uint64_t bytes) { return (bytes + kHeader - 1) / kHeader * kHeader; }

struct Progress {
  const P2POp* op = nullptr;
  bool header = false;  // header written / read
  uint64_t done = 0;    // payload bytes (padded) written / read
  bool complete = false;
};

// Copies into/out of the ring at byte position `pos` (mod ring size), handling the wrap.
void ring_write(char* ring, uint64_t size, uint64_t pos, const char* src, uint64_t n) {
  const uint64_t at = pos % size;
  const uint64_t first = std::min(n, size - at);
  std::memcpy(ring + at, src, first);
  if (first < n) std::memcpy(ring, src + first, n - first);
}
void ring_read(const char* ring, uint64_t size, uint64_t pos, char* dst, uint64_t n) {
  const uint64_t at = pos % size;
  const uint64_t first = std::min(n, size - at);
  std::memcpy(dst, ring + at, first);
  if (first < n) std::memcpy(dst + first, ring, n - first);
}

// Moves as much of a send as the ring has room for. Returns whether anything moved.
bool progress_send(CommState& c, Progress& pr) {
  Segment& s = *c.seg;
  const P2POp& op = *pr.op;
  Channel* ch = s.chan(c.rank, op.peer);
  char* ring = s.ring(c.rank, op.peer);
  const uint64_t size = s.ring_bytes();
  uint64_t head = ch->head.load(std::memory_order_relaxed);
  const uint64_t tail = ch->tail.load(std::memory_order_acquire);
  uint64_t space = size - (head - tail);
  bool moved = false;
  if (!pr.header) {
    if (space < kHeader) return false;
    const Header h{op.bytes, c.send_seq[op.peer]++};
    ring_write(ring, size, head, reinterpret_cast<const char*>(&h), kHeader);
    head += kHeader;
    space -= kHeader;
    pr.header = true;
    moved = true;
  }
  const uint64_t total = padded(op.bytes);
  const char* src = static_cast<const char*>(op.buf);
  while (pr.done < total && space > 0) {
    const uint64_t n = std::min(total - pr.done, space);
    if (pr.done < op.bytes)
      ring_write(ring, size, head, src + pr.done, std::min(n, op.bytes - pr.done));
    head += n;
    space -= n;
    pr.done += n;
    moved = true;
  }
  if (moved) {
    ch->head.store(head, std::memory_order_release);
    s.notify();
  }
  pr.complete = pr.header && pr.done == total;
  return moved;
}

mcclResult_t progress_recv(CommState& c, Progress& pr, bool* moved) {
  Segment& s = *c.seg;
  const P2POp& op = *pr.op;
  Channel* ch = s.chan(op.peer, c.rank);
  const char* ring = s.ring(op.peer, c.rank);
  const uint64_t size = s.ring_bytes();
  const uint64_t head = ch->head.load(std::memory_order_acquire);
  uint64_t tail = ch->tail.load(std::memory_order_relaxed);
  uint64_t avail = head - tail;
  *moved = false;
  if (!pr.header) {
    if (avail < kHeader) return mcclSuccess;
    Header h{};
    ring_read(ring, size, tail, reinterpret_cast<char*>(&h), kHeader);
    const uint64_t want = c.recv_seq[op.peer];
    if (h.seq != want)
      return fail(mcclInternalError, "rank %d: message %llu from rank %d arrived as %llu", c.rank,
                  static_cast<unsigned long long>(want), op.peer,
                  static_cast<unsigned long long>(h.seq));
    if (h.bytes != op.bytes)
      return fail(mcclInvalidUsage,
                  "rank %d sends %llu bytes to rank %d, which receives %llu bytes (message #%llu "
                  "between them): count and datatype must match",
                  op.peer, static_cast<unsigned long long>(h.bytes), c.rank,
                  static_cast<unsigned long long>(op.bytes), static_cast<unsigned long long>(want));
    ++c.recv_seq[op.peer];
    tail += kHeader;
    avail -= kHeader;
    pr.header = true;
    *moved = true;
  }
  const uint64_t total = padded(op.bytes);
  char* dst = static_cast<char*>(op.buf);
  if (pr.done < total && avail > 0) {
    const uint64_t n = std::min(total - pr.done, avail);
    if (pr.done < op.bytes)
      ring_read(ring, size, tail, dst + pr.done, std::min(n, op.bytes - pr.done));
    tail += n;
    pr.done += n;
    *moved = true;
  }
  if (*moved) {
    ch->tail.store(tail, std::memory_order_release);
    s.notify();
  }
  pr.complete = pr.header && pr.done == total;
  return mcclSuccess;
}

mcclResult_t submit(const void* buf, size_t count, int dt, int peer, mcclComm_t comm,
                    musaStream_t stream, bool is_send) {
  std::shared_ptr<CommState> st;
  MCCL_TRY(usable(comm, &st));
  const size_t esz = dtype_size(dt);
  if (esz == 0) return fail(mcclInvalidArgument, "invalid datatype %d", dt);
  if (peer < 0 || peer >= st->nranks)
    return fail(mcclInvalidArgument, "peer %d: must be 0..%d", peer, st->nranks - 1);
  size_t bytes = 0;
  if (__builtin_mul_overflow(count, esz, &bytes) || bytes > static_cast<size_t>(PTRDIFF_MAX) - 16)
    return fail(mcclInvalidArgument, "count %zu of %s is too large", count, dtype_name(dt));
  const char* what = is_send ? "sendbuff" : "recvbuff";
  if (bytes != 0 && buf == nullptr) return fail(mcclInvalidArgument, "%s is NULL", what);
  if (bytes != 0 && bytes - 1 > UINTPTR_MAX - reinterpret_cast<uintptr_t>(buf))
    return fail(mcclInvalidArgument, "%s %p + %zu bytes wraps around", what, buf, bytes);
  unsigned flags = 0;
  musaError_t e = musaStreamGetFlags(stream, &flags);
  if (e != musaSuccess)
    return fail(mcclInvalidArgument, "invalid stream %p: %s", static_cast<void*>(stream),
                musaGetErrorString(e));
  Op o;
  o.is_p2p = true;
  o.p2p.is_send = is_send;
  o.p2p.buf = const_cast<void*>(buf);
  o.p2p.bytes = bytes;
  o.p2p.peer = peer;
  o.stream = stream;
  return enqueue(st, o);
}

}  // namespace

mcclResult_t run_p2p(CommState& c, const std::vector<const P2POp*>& ops) {
  std::vector<Progress> prog(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) prog[i].op = ops[i];
  // Messages between two ranks go in call order: only the first unfinished send to (receive
  // from) a peer progresses.
  std::vector<char> busy_send(static_cast<size_t>(c.nranks)), busy_recv(busy_send.size());
  Waiter w(c, "send/recv");
  for (;;) {
    const uint32_t seen = w.seen();
    std::fill(busy_send.begin(), busy_send.end(), 0);
    std::fill(busy_recv.begin(), busy_recv.end(), 0);
    bool moved = false, done = true;
    int blocking = -1;
    for (Progress& pr : prog) {
      if (pr.complete) continue;
      const int peer = pr.op->peer;
      std::vector<char>& busy = pr.op->is_send ? busy_send : busy_recv;
      if (!busy[peer]) {
        busy[peer] = 1;
        if (pr.op->is_send) {
          moved |= progress_send(c, pr);
        } else {
          bool m = false;
          MCCL_TRY(progress_recv(c, pr, &m));
          moved |= m;
        }
      }
      if (!pr.complete) {
        done = false;
        if (blocking < 0) blocking = peer;
      }
    }
    if (done) return mcclSuccess;
    if (moved) {
      w.reset();
      continue;
    }
    MCCL_TRY(w.idle(blocking, seen));
  }
}

}  // namespace mccl_sim

using namespace mccl_sim;

extern "C" {

mcclResult_t mcclSend(const void* sendbuff, size_t count, mcclDataType_t datatype, int peer,
                      mcclComm_t comm, musaStream_t stream) {
  return api([&] {
    return group_error(submit(sendbuff, count, raw(datatype), peer, comm, stream, true));
  });
}

mcclResult_t mcclRecv(void* recvbuff, size_t count, mcclDataType_t datatype, int peer,
                      mcclComm_t comm, musaStream_t stream) {
  return api([&] {
    return group_error(submit(recvbuff, count, raw(datatype), peer, comm, stream, false));
  });
}

}  // extern "C"
