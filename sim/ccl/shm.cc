// The shared-memory segment: creation, rendezvous on its header, the futex word, liveness.
#include "shm.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <thread>

#include "internal.h"

namespace mccl_sim {
namespace {

size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

struct Layout {
  size_t slots_off, chans_off, stage_off, rings_off, total;
};

Layout layout(int n, size_t stage_bytes, size_t ring_bytes) {
  Layout l{};
  size_t nn = static_cast<size_t>(n);
  l.slots_off = align_up(sizeof(SegHeader), 4096);
  l.chans_off = align_up(l.slots_off + nn * sizeof(RankSlot), 4096);
  l.stage_off = align_up(l.chans_off + nn * nn * sizeof(Channel), 4096);
  l.rings_off = align_up(l.stage_off + nn * 2 * stage_bytes, 4096);
  l.total = align_up(l.rings_off + nn * nn * ring_bytes, 4096);
  return l;
}

// Ranks of one process share one mapping per segment (so that they, and tools such as TSan, see
// one address per shared counter).
struct Registry {
  std::mutex mu;
  std::map<std::string, std::weak_ptr<Segment>> live;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: stream threads may outlive exit handlers
  return *r;
}

long futex(std::atomic<uint32_t>* addr, int op, uint32_t val, const timespec* ts) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), op, val, ts, nullptr, 0);
}

bool expired(Clock::time_point start, long timeout_ms) {
  return timeout_ms > 0 && Clock::now() - start > std::chrono::milliseconds(timeout_ms);
}

}  // namespace

mcclResult_t Segment::open(const std::string& name, const SegParams& p, long timeout_ms,
                           std::shared_ptr<Segment>* out) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  auto it = reg.live.find(name);
  if (it != reg.live.end()) {
    if (auto s = it->second.lock()) {
      if (s->nranks() != p.nranks)
        return fail(mcclInvalidUsage, "nranks %d differs from the %d other ranks were given",
                    p.nranks, s->nranks());
      *out = std::move(s);
      return mcclSuccess;
    }
    reg.live.erase(it);
  }

  std::shared_ptr<Segment> seg(new (std::nothrow) Segment);
  if (!seg) return fail(mcclSystemError, "out of memory");
  seg->name_ = name;
  const Clock::time_point start = Clock::now();
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd >= 0) {
    // Creator: size, reserve (a full /dev/shm fails here, not later with SIGBUS), fill the header.
    const Layout l = layout(p.nranks, p.stage_bytes, p.ring_bytes);
    int err = 0;
    if (ftruncate(fd, static_cast<off_t>(l.total)) != 0) err = errno;
    if (err == 0) err = posix_fallocate(fd, 0, static_cast<off_t>(l.total));
    void* m = MAP_FAILED;
    if (err == 0) {
      m = mmap(nullptr, l.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (m == MAP_FAILED) err = errno;
    }
    close(fd);
    if (err != 0) {
      shm_unlink(name.c_str());
      return fail(mcclSystemError, "cannot create the %zu-byte shared segment %s: %s", l.total,
                  name.c_str(), std::strerror(err));
    }
    seg->base_ = static_cast<char*>(m);
    seg->size_ = l.total;
    SegHeader* h = reinterpret_cast<SegHeader*>(m);
    h->magic = kSegMagic;
    h->version = kSegVersion;
    h->nranks = static_cast<uint32_t>(p.nranks);
    h->total_bytes = l.total;
    h->stage_bytes = p.stage_bytes;
    h->ring_bytes = p.ring_bytes;
    h->slots_off = l.slots_off;
    h->chans_off = l.chans_off;
    h->stage_off = l.stage_off;
    h->rings_off = l.rings_off;
    h->creator_pid = static_cast<int32_t>(getpid());
    seg->hdr_ = h;
    h->ready.store(1, std::memory_order_release);
  } else {
    if (errno != EEXIST)
      return fail(mcclSystemError, "shm_open(%s): %s", name.c_str(), std::strerror(errno));
    fd = shm_open(name.c_str(), O_RDWR, 0);
    if (fd < 0)
      return fail(mcclInvalidUsage,
                  "the id's segment %s is gone (every rank already joined, or the creator "
                  "failed): %s",
                  name.c_str(), std::strerror(errno));
    // Another process is creating it: wait for its size, then for its header.
    struct stat st {};
    for (;;) {
      if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return fail(mcclSystemError, "fstat(%s): %s", name.c_str(), std::strerror(e));
      }
      if (st.st_size >= static_cast<off_t>(sizeof(SegHeader))) break;
      if (expired(start, timeout_ms)) {
        close(fd);
        return fail(mcclRemoteError, "timed out after %ld ms waiting for %s to be created",
                    timeout_ms, name.c_str());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    void* m =
        mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (m == MAP_FAILED)
      return fail(mcclSystemError, "mmap(%s): %s", name.c_str(), std::strerror(e));
    seg->base_ = static_cast<char*>(m);
    seg->size_ = static_cast<size_t>(st.st_size);
    SegHeader* h = reinterpret_cast<SegHeader*>(m);
    while (h->ready.load(std::memory_order_acquire) == 0) {
      if (expired(start, timeout_ms))
        return fail(mcclRemoteError, "timed out after %ld ms waiting for %s to be initialised",
                    timeout_ms, name.c_str());
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (h->magic != kSegMagic || h->version != kSegVersion || h->total_bytes != seg->size_)
      return fail(mcclInvalidUsage, "%s is not a segment of this MCCL simulator", name.c_str());
    seg->hdr_ = h;
    if (static_cast<int>(h->nranks) != p.nranks)
      return fail(mcclInvalidUsage, "nranks %d differs from the %u other ranks were given",
                  p.nranks, h->nranks);
  }
  reg.live[name] = seg;
  *out = std::move(seg);
  return mcclSuccess;
}

Segment::~Segment() {
  if (base_ != nullptr) munmap(base_, size_);
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  auto it = reg.live.find(name_);
  if (it != reg.live.end() && it->second.expired()) reg.live.erase(it);
}

void Segment::unlink_name() {
  if (unlinked_.exchange(true)) return;
  shm_unlink(name_.c_str());  // ENOENT: another rank did it
}

void Segment::notify() {
  hdr_->wake.fetch_add(1, std::memory_order_seq_cst);
  if (hdr_->sleepers.load(std::memory_order_seq_cst) != 0)
    futex(&hdr_->wake, FUTEX_WAKE, INT_MAX, nullptr);
}

void Segment::sleep(uint32_t seen, long timeout_us) {
  hdr_->sleepers.fetch_add(1, std::memory_order_seq_cst);
  if (hdr_->wake.load(std::memory_order_seq_cst) == seen) {
    timespec ts{timeout_us / 1000000, (timeout_us % 1000000) * 1000};
    futex(&hdr_->wake, FUTEX_WAIT, seen, &ts);
  }
  hdr_->sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

// /proc/<pid>/stat: "pid (comm) state ppid ... starttime(22) ...". comm may hold spaces and
// parentheses, so fields are counted from the last ')'.
static bool read_stat(int pid, char* state, uint64_t* start) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE* f = std::fopen(path, "re");
  if (f == nullptr) return false;
  char buf[1024];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr) return false;
  ++p;
  // Field 3 is the state; field 22 the start time.
  int field = 2;
  const char* tok = p;
  while (*tok != '\0') {
    while (*tok == ' ') ++tok;
    if (*tok == '\0') break;
    ++field;
    if (field == 3) *state = *tok;
    if (field == 22) {
      *start = std::strtoull(tok, nullptr, 10);
      return true;
    }
    while (*tok != ' ' && *tok != '\0') ++tok;
  }
  return false;
}

uint64_t pid_namespace() {
  struct stat st {};
  return stat("/proc/self/ns/pid", &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

uint64_t process_start_time(int pid) {
  char state = 0;
  uint64_t start = 0;
  return read_stat(pid, &state, &start) ? start : 0;
}

bool process_alive(int pid, uint64_t start_time) {
  if (pid <= 0) return true;  // unknown: cannot tell
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  char state = 0;
  uint64_t start = 0;
  if (!read_stat(pid, &state, &start)) return true;  // cannot inspect it: kill() found it
  if (state == 'Z' || state == 'X' || state == 'x') return false;
  return start_time == 0 || start == start_time;
}

}  // namespace mccl_sim
