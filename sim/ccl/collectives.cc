// Collectives: argument checks at the API, and the chunked shared-memory algorithms run on the
// stream thread.
//
// Every rank owns two stage buffers in the segment (stage_bytes each, used alternately by
// consecutive chunks). A chunk is: write my part into my stage buffer, publish a step and wait
// until every rank has published it, read the others' buffers. AllReduce and Reduce take a second
// step: rank j reduces slice j of the chunk across all stage buffers into slice j of its own, then,
// after the second step, every rank copies the other slices out. The user's buffers are each read
// or written once, by plain copies (streaming stores for large results); the reduction itself
// works on stage buffers, which stay in cache at the default size. Double buffering makes a third
// step unnecessary: a rank writes buffer p again two chunks later, after waiting for a step every
// peer publishes only once it has finished reading buffer p.
#include <algorithm>
#include <cstring>

#include "../runtime/sim_ext.h"
#include "internal.h"
#include "reduce.h"

namespace mccl_sim {
namespace {

constexpr size_t kAlign = 64;

// Chunk elements split into nranks slices with 64-byte aligned boundaries.
struct Slices {
  size_t per = 0, total = 0;
  Slices(size_t cc, int n, size_t esz) : total(cc) {
    const size_t a = std::max<size_t>(1, kAlign / esz);
    per = (cc + static_cast<size_t>(n) - 1) / static_cast<size_t>(n);
    per = (per + a - 1) / a * a;
  }
  size_t begin(int j) const { return std::min(static_cast<size_t>(j) * per, total); }
  size_t len(int j) const { return std::min(static_cast<size_t>(j + 1) * per, total) - begin(j); }
};

bool is_multi(CollKind k) {
  return k == CollKind::ReduceScatter || k == CollKind::AlltoAll || k == CollKind::Scatter;
}
bool has_root(CollKind k) {
  return k == CollKind::Broadcast || k == CollKind::Reduce || k == CollKind::Gather ||
         k == CollKind::Scatter;
}
bool reduces(CollKind k) {
  return k == CollKind::AllReduce || k == CollKind::Reduce || k == CollKind::ReduceScatter;
}

void copy(void* dst, const void* src, size_t bytes) { put(dst, src, bytes, false); }

// Results of at least this many bytes per rank go to the receive buffer with streaming stores.
constexpr size_t kStreamBytes = 4u << 20;

class Engine {
 public:
  Engine(CommState& c, const CollOp& op)
      : c_(c),
        s_(*c.seg),
        op_(op),
        n_(c.nranks),
        r_(c.rank),
        esz_(dtype_size(op.dtype)),
        send_(static_cast<const char*>(op.send)),
        recv_(static_cast<char*>(op.recv)),
        red_(op.red) {}

  mcclResult_t run() {
    if (red_.kind == Red::PreMulSum && red_.scalar_on_device)
      std::memcpy(red_.scalar, red_.scalar_ptr, esz_);  // read when the collective runs
    const size_t B = s_.stage_bytes();
    size_t region = B;
    if (is_multi(op_.kind)) {
      region = B / static_cast<size_t>(n_);
      if (region >= kAlign) region = region / kAlign * kAlign;
    }
    per_ = region / esz_;
    region_ = per_ * esz_;
    const size_t count = op_.count;
    const size_t nchunks = count == 0 ? 1 : (count + per_ - 1) / per_;
    seq_ = ++c_.op_seq;
    size_t recv_elems = count;
    if (op_.kind == CollKind::AllGather || op_.kind == CollKind::AlltoAll ||
        op_.kind == CollKind::Gather)
      recv_elems *= static_cast<size_t>(n_);
    stream_ = recv_ != nullptr && b(recv_elems) >= kStreamBytes;
    for (size_t k = 0; k < nchunks; ++k) {
      const size_t off = k * per_;
      const size_t cc = count == 0 ? 0 : std::min(per_, count - off);
      const unsigned p = static_cast<unsigned>(c_.chunk++ & 1);
      first_ = k == 0;
      if (first_) write_desc(p);
      mcclResult_t r = mcclSuccess;
      switch (op_.kind) {
        case CollKind::AllReduce:
        case CollKind::Reduce:
          r = allreduce(off, cc, p);
          break;
        case CollKind::ReduceScatter:
          r = reduce_scatter(off, cc, p);
          break;
        case CollKind::AllGather:
          r = all_gather(off, cc, p);
          break;
        case CollKind::Broadcast:
          r = broadcast(off, cc, p);
          break;
        case CollKind::Gather:
          r = gather(off, cc, p);
          break;
        case CollKind::Scatter:
          r = scatter(off, cc, p);
          break;
        case CollKind::AlltoAll:
          r = alltoall(off, cc, p);
          break;
      }
      if (r != mcclSuccess) {
        if (stream_) stream_fence();
        return r;
      }
    }
    if (stream_) stream_fence();  // the streamed results are visible when the operation completes
    return mcclSuccess;
  }

 private:
  char* stage(int j, unsigned p) const { return s_.stage(j, p); }
  void to_recv(void* dst, const void* src, size_t bytes) const { put(dst, src, bytes, stream_); }
  size_t b(size_t elems) const { return elems * esz_; }

  void write_desc(unsigned p) {
    OpDesc& d = s_.slot(r_)->desc[p];
    d.seq = seq_;
    d.count = op_.count;
    d.kind = static_cast<uint32_t>(op_.kind);
    d.dtype = static_cast<uint32_t>(op_.dtype);
    d.red = reduces(op_.kind) ? static_cast<uint32_t>(op_.red.kind) : 0u;
    d.root = has_root(op_.kind) ? op_.root : -1;
  }

  // After the first step of a collective: every rank must be running the same one.
  mcclResult_t check_desc(unsigned p) {
    const OpDesc& me = s_.slot(r_)->desc[p];
    for (int j = 0; j < n_; ++j) {
      const OpDesc& d = s_.slot(j)->desc[p];
      if (d.seq == me.seq && d.count == me.count && d.kind == me.kind && d.dtype == me.dtype &&
          d.red == me.red && d.root == me.root)
        continue;
      return fail(
          mcclInvalidUsage,
          "collective mismatch: rank %d calls %s(count %llu, %s, op %u, root %d) as "
          "collective #%llu, rank %d calls %s(count %llu, %s, op %u, root %d) as #%llu",
          r_, coll_name(static_cast<CollKind>(me.kind)), static_cast<unsigned long long>(me.count),
          dtype_name(static_cast<mcclDataType_t>(me.dtype)), me.red, me.root,
          static_cast<unsigned long long>(me.seq), j, coll_name(static_cast<CollKind>(d.kind)),
          static_cast<unsigned long long>(d.count),
          dtype_name(static_cast<mcclDataType_t>(d.dtype)), d.red, d.root,
          static_cast<unsigned long long>(d.seq));
    }
    return mcclSuccess;
  }

  // Publishes the next step and waits until every rank has published it.
  mcclResult_t sync(unsigned p) {
    const uint64_t v = ++c_.step;
    s_.slot(r_)->step.store(v, std::memory_order_release);
    s_.notify();
    Waiter w(c_, coll_name(op_.kind));
    int from = 0;
    for (;;) {
      const uint32_t seen = w.seen();
      while (from < n_ && s_.slot(from)->step.load(std::memory_order_acquire) >= v) ++from;
      if (from == n_) break;
      MCCL_TRY(w.idle(from, seen));
    }
    if (first_) {
      first_ = false;
      MCCL_TRY(check_desc(p));
    }
    return mcclSuccess;
  }

  // The whole chunk goes to my stage buffer (one fast copy reads the send buffer once); rank j
  // reduces slice j across the stage buffers, in cache, into its own buffer (and its receive
  // buffer); after the second step every rank copies the other slices out.
  mcclResult_t allreduce(size_t off, size_t cc, unsigned p) {
    const Slices sl(cc, n_, esz_);
    char* mine = stage(r_, p);
    copy_scaled(op_.dtype, mine, send_ + b(off), cc, red_);
    MCCL_TRY(sync(p));
    const bool gets = op_.kind == CollKind::AllReduce || r_ == op_.root;
    if (sl.len(r_) != 0) {
      srcs_.assign(static_cast<size_t>(n_), nullptr);
      for (int k = 0; k < n_; ++k) srcs_[k] = stage(k, p) + b(sl.begin(r_));
      reduce(op_.dtype, red_.kind, n_, srcs_.data(), n_, Out{mine + b(sl.begin(r_)), false},
             Out{gets ? recv_ + b(off + sl.begin(r_)) : nullptr, stream_}, sl.len(r_));
    }
    MCCL_TRY(sync(p));
    if (gets)
      for (int j = 0; j < n_; ++j)
        if (j != r_)
          to_recv(recv_ + b(off + sl.begin(j)), stage(j, p) + b(sl.begin(j)), b(sl.len(j)));
    return mcclSuccess;
  }

  // Region j of my stage buffer holds my contribution to rank j's block.
  mcclResult_t reduce_scatter(size_t off, size_t cc, unsigned p) {
    const size_t rc = op_.count;
    char* mine = stage(r_, p);
    if (cc != 0)
      for (int j = 0; j < n_; ++j)
        copy_scaled(op_.dtype, mine + j * region_, send_ + b(j * rc + off), cc, red_);
    MCCL_TRY(sync(p));
    if (cc != 0) {
      srcs_.assign(static_cast<size_t>(n_), nullptr);
      for (int k = 0; k < n_; ++k) srcs_[k] = stage(k, p) + r_ * region_;
      reduce(op_.dtype, red_.kind, n_, srcs_.data(), n_, Out{recv_ + b(off), stream_}, Out{}, cc);
    }
    return mcclSuccess;
  }

  mcclResult_t all_gather(size_t off, size_t cc, unsigned p) {
    copy(stage(r_, p), send_ + b(off), b(cc));
    MCCL_TRY(sync(p));
    const size_t sc = op_.count;
    for (int j = 0; j < n_; ++j)
      to_recv(recv_ + b(j * sc + off), j == r_ ? send_ + b(off) : stage(j, p), b(cc));
    return mcclSuccess;
  }

  mcclResult_t broadcast(size_t off, size_t cc, unsigned p) {
    const int root = op_.root;
    if (r_ == root) copy(stage(r_, p), send_ + b(off), b(cc));
    MCCL_TRY(sync(p));
    to_recv(recv_ + b(off), r_ == root ? send_ + b(off) : stage(root, p), b(cc));
    return mcclSuccess;
  }

  mcclResult_t gather(size_t off, size_t cc, unsigned p) {
    const int root = op_.root;
    if (r_ != root) copy(stage(r_, p), send_ + b(off), b(cc));
    MCCL_TRY(sync(p));
    if (r_ == root)
      for (int j = 0; j < n_; ++j)
        to_recv(recv_ + b(j * op_.count + off), j == root ? send_ + b(off) : stage(j, p), b(cc));
    return mcclSuccess;
  }

  mcclResult_t scatter(size_t off, size_t cc, unsigned p) {
    const int root = op_.root;
    if (r_ == root)
      for (int j = 0; j < n_; ++j)
        if (j != root) copy(stage(r_, p) + j * region_, send_ + b(j * op_.count + off), b(cc));
    MCCL_TRY(sync(p));
    to_recv(recv_ + b(off),
            r_ == root ? send_ + b(root * op_.count + off) : stage(root, p) + r_ * region_, b(cc));
    return mcclSuccess;
  }

  mcclResult_t alltoall(size_t off, size_t cc, unsigned p) {
    char* mine = stage(r_, p);
    for (int j = 0; j < n_; ++j)
      if (j != r_) copy(mine + j * region_, send_ + b(j * op_.count + off), b(cc));
    MCCL_TRY(sync(p));
    for (int j = 0; j < n_; ++j)
      to_recv(recv_ + b(j * op_.count + off),
              j == r_ ? send_ + b(r_ * op_.count + off) : stage(j, p) + r_ * region_, b(cc));
    return mcclSuccess;
  }

  CommState& c_;
  Segment& s_;
  const CollOp& op_;
  const int n_, r_;
  const size_t esz_;
  const char* const send_;
  char* const recv_;
  RedSpec red_;
  size_t per_ = 0, region_ = 0;
  bool stream_ = false;
  uint64_t seq_ = 0;
  bool first_ = false;
  std::vector<const void*> srcs_;
};

// ---- Argument checks ----------------------------------------------------------------------------
bool mul_ok(size_t a, size_t b, size_t* out) { return !__builtin_mul_overflow(a, b, out); }

bool overlap(const void* a, size_t an, const void* b, size_t bn) {
  if (a == nullptr || b == nullptr || an == 0 || bn == 0) return false;
  const uintptr_t x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + bn && y < x + an;
}

mcclResult_t check_buffer(const char* what, const void* p, size_t bytes) {
  if (bytes == 0) return mcclSuccess;
  if (p == nullptr) return fail(mcclInvalidArgument, "%s is NULL", what);
  if (bytes - 1 > UINTPTR_MAX - reinterpret_cast<uintptr_t>(p))
    return fail(mcclInvalidArgument, "%s %p + %zu bytes wraps around", what, p, bytes);
  return mcclSuccess;
}

mcclResult_t check_stream(musaStream_t stream) {
  unsigned flags = 0;
  musaError_t e = musaStreamGetFlags(stream, &flags);
  if (e != musaSuccess)
    return fail(mcclInvalidArgument, "invalid stream %p: %s", static_cast<void*>(stream),
                musaGetErrorString(e));
  return mcclSuccess;
}

mcclResult_t submit(mcclComm_t comm, musaStream_t stream, CollOp op, int dt, int red) {
  std::shared_ptr<CommState> st;
  MCCL_TRY(usable(comm, &st));
  const size_t esz = dtype_size(dt);
  if (esz == 0) return fail(mcclInvalidArgument, "invalid datatype %d", dt);
  op.dtype = static_cast<mcclDataType_t>(dt);
  if (reduces(op.kind)) MCCL_TRY(resolve_red(*st, red, op.dtype, &op.red));
  const int n = st->nranks, r = st->rank;
  if (has_root(op.kind) && (op.root < 0 || op.root >= n))
    return fail(mcclInvalidArgument, "root %d: must be 0..%d", op.root, n - 1);
  size_t one = 0, all = 0;
  if (!mul_ok(op.count, esz, &one) || !mul_ok(one, static_cast<size_t>(n), &all) ||
      all > static_cast<size_t>(PTRDIFF_MAX))
    return fail(mcclInvalidArgument, "count %zu of %s is too large", op.count,
                dtype_name(op.dtype));
  // Bytes each buffer must hold on this rank (0: not used here).
  size_t sbytes = 0, rbytes = 0;
  const bool root = r == op.root;
  switch (op.kind) {
    case CollKind::AllReduce:
      sbytes = one, rbytes = one;
      break;
    case CollKind::Broadcast:
      sbytes = root ? one : 0, rbytes = one;
      break;
    case CollKind::Reduce:
      sbytes = one, rbytes = root ? one : 0;
      break;
    case CollKind::AllGather:
      sbytes = one, rbytes = all;
      break;
    case CollKind::ReduceScatter:
      sbytes = all, rbytes = one;
      break;
    case CollKind::AlltoAll:
      sbytes = all, rbytes = all;
      break;
    case CollKind::Gather:
      sbytes = one, rbytes = root ? all : 0;
      break;
    case CollKind::Scatter:
      sbytes = root ? all : 0, rbytes = one;
      break;
  }
  MCCL_TRY(check_buffer("sendbuff", op.send, sbytes));
  MCCL_TRY(check_buffer("recvbuff", op.recv, rbytes));
  if (sbytes == 0) op.send = nullptr;
  if (rbytes == 0) op.recv = nullptr;
  MCCL_TRY(check_stream(stream));
  // A buffer that runs beyond its allocation: what a GPU's collective kernel makes of it, the
  // device's sticky musaErrorIllegalAddress at the next synchronisation, and nothing run on this
  // rank (its peers wait for it, as on a GPU, until the communicator's timeout or an abort).
  int device = 0;
  if (stream == nullptr || musaStreamGetDevice(stream, &device) != musaSuccess)
    musaGetDevice(&device);
  const char* name = coll_name(op.kind);
  if (musaSimCheckOperand(device, name, "sendbuff", op.send, sbytes) != musaSuccess ||
      musaSimCheckOperand(device, name, "recvbuff", op.recv, rbytes) != musaSuccess)
    return mcclSuccess;
  // Both buffers lie within their allocations from here: an overlap is NCCL's in-place misuse,
  // never the consequence of an overrun (which faulted above).
  if (overlap(op.send, sbytes, op.recv, rbytes)) {
    const char* s = static_cast<const char*>(op.send);
    const char* d = static_cast<const char*>(op.recv);
    bool in_place = false;
    switch (op.kind) {
      case CollKind::AllReduce:
      case CollKind::Broadcast:
      case CollKind::Reduce:
      case CollKind::AlltoAll:
        in_place = s == d;
        break;
      case CollKind::AllGather:
        in_place = s == d + static_cast<size_t>(r) * one;
        break;
      case CollKind::ReduceScatter:
        in_place = d == s + static_cast<size_t>(r) * one;
        break;
      case CollKind::Gather:
        in_place = s == d + static_cast<size_t>(op.root) * one;
        break;
      case CollKind::Scatter:
        in_place = d == s + static_cast<size_t>(op.root) * one;
        break;
    }
    if (!in_place)
      return fail(mcclInvalidArgument,
                  "%s: sendbuff %p and recvbuff %p overlap without being the in-place form",
                  coll_name(op.kind), op.send, op.recv);
  }
  Op o;
  o.coll = op;
  o.stream = stream;
  return enqueue(st, o);
}

CollOp make(CollKind k, const void* send, void* recv, size_t count, int root) {
  CollOp op;
  op.kind = k;
  op.send = send;
  op.recv = recv;
  op.count = count;
  op.root = root;
  return op;
}

}  // namespace

mcclResult_t run_collective(CommState& c, const CollOp& op) { return Engine(c, op).run(); }

}  // namespace mccl_sim

using namespace mccl_sim;

extern "C" {

mcclResult_t mcclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           mcclDataType_t datatype, mcclRedOp_t op, mcclComm_t comm,
                           musaStream_t stream) {
  return api([&] {
    return group_error(submit(comm, stream, make(CollKind::AllReduce, sendbuff, recvbuff, count, 0),
                              raw(datatype), raw(op)));
  });
}

mcclResult_t mcclReduce(const void* sendbuff, void* recvbuff, size_t count, mcclDataType_t datatype,
                        mcclRedOp_t op, int root, mcclComm_t comm, musaStream_t stream) {
  return api([&] {
    return group_error(submit(comm, stream, make(CollKind::Reduce, sendbuff, recvbuff, count, root),
                              raw(datatype), raw(op)));
  });
}

mcclResult_t mcclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           mcclDataType_t datatype, int root, mcclComm_t comm,
                           musaStream_t stream) {
  return api([&] {
    return group_error(submit(comm, stream,
                              make(CollKind::Broadcast, sendbuff, recvbuff, count, root),
                              raw(datatype), mcclSum));
  });
}

mcclResult_t mcclBcast(void* buff, size_t count, mcclDataType_t datatype, int root, mcclComm_t comm,
                       musaStream_t stream) {
  return api([&] {
    return group_error(submit(comm, stream, make(CollKind::Broadcast, buff, buff, count, root),
                              raw(datatype), mcclSum));
  });
}

mcclResult_t mcclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           mcclDataType_t datatype, mcclComm_t comm, musaStream_t stream) {
  return api([&] {
    return group_error(submit(comm, stream,
                              make(CollKind::AllGather, sendbuff, recvbuff, sendcount, 0),
                              raw(datatype), mcclSum));
  });
}

mcclResult_t mcclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               mcclDataType_t datatype, mcclRedOp_t op, mcclComm_t comm,
                               musaStream_t stream) {
  return api([&] {
    return group_error(submit(comm, stream,
                              make(CollKind::ReduceScatter, sendbuff, recvbuff, recvcount, 0),
                              raw(datatype), raw(op)));
  });
}

mcclResult_t mcclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                          mcclDataType_t datatype, mcclComm_t comm, musaStream_t stream) {
  return api([&] {
    return group_error(submit(comm, stream, make(CollKind::AlltoAll, sendbuff, recvbuff, count, 0),
                              raw(datatype), mcclSum));
  });
}

mcclResult_t mcclGather(const void* sendbuff, void* recvbuff, size_t count, mcclDataType_t datatype,
                        int root, mcclComm_t comm, musaStream_t stream) {
  return api([&] {
    return group_error(submit(comm, stream, make(CollKind::Gather, sendbuff, recvbuff, count, root),
                              raw(datatype), mcclSum));
  });
}

mcclResult_t mcclScatter(const void* sendbuff, void* recvbuff, size_t count,
                         mcclDataType_t datatype, int root, mcclComm_t comm, musaStream_t stream) {
  return api([&] {
    return group_error(submit(comm, stream,
                              make(CollKind::Scatter, sendbuff, recvbuff, count, root),
                              raw(datatype), mcclSum));
  });
}

}  // extern "C"
