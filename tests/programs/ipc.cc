// CUDA IPC between two processes, the way a multi-process program uses it: an exporter (this
// process) shares device memory and an interprocess event with an importer (a child forked
// before either touches CUDA), and the two order their work through the event.
//
//   memory   the importer sees the exporter's bytes (written before the export, with untouched
//            pages between), writes that the exporter sees, the same address for a handle
//            opened twice, reference-counted closes, cudaFree refused on imported memory, the
//            bytes kept while imported after the exporter frees them, a stale handle refused
//   events   a wait on the importer's stream holds its copy until the exporter's stream
//            reaches its record; the importer's record is what the exporter's synchronise waits
//   driver   cuIpcGetMemHandle, cuIpcOpenMemHandle, cuIpcCloseMemHandle, cuIpcOpenEventHandle
//
// Linked like a user's program (NVIDIA's libcudart); prints "ipc: all checks passed".
#include <cuda.h>
#include <cuda_runtime.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "check.h"

namespace {

constexpr size_t kBigSize = 3 * 1024 * 1024 + 5;  // odd, with untouched pages in the middle
constexpr size_t kSmall = 4096;

unsigned char pattern(size_t i) { return static_cast<unsigned char>((i * 7 + 3) % 251); }

struct Handles {
  cudaIpcMemHandle_t big, small;
  cudaIpcEventHandle_t event;
};

// One direction of the conversation: fixed-size messages over a pipe.
struct Channel {
  int fds[2];
  void send(const void* p, size_t n) const {
    if (write(fds[1], p, n) != static_cast<ssize_t>(n)) {
      std::perror("ipc: write");
      _exit(2);
    }
  }
  void recv(void* p, size_t n) const {
    size_t got = 0;
    while (got < n) {
      const ssize_t r = read(fds[0], static_cast<char*>(p) + got, n - got);
      if (r <= 0) {
        std::perror("ipc: read");
        _exit(2);
      }
      got += static_cast<size_t>(r);
    }
  }
  void signal(char c) const { send(&c, 1); }
  char wait() const {
    char c = 0;
    recv(&c, 1);
    return c;
  }
};

// The exporter's stream waits in this host function until the importer writes to the gate.
void CUDART_CB wait_for_gate(void* gate) { static_cast<Channel*>(gate)->wait(); }

template <class F>
F driver(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      fn == nullptr) {
    std::printf("  FAIL no driver entry point %s\n", name);
    ++check::Failures();
    return nullptr;
  }
  return reinterpret_cast<F>(fn);
}

// ---- The importer (the child) --------------------------------------------------------------

int importer(const Channel& from_parent, const Channel& to_parent, const Channel& gate) {
  Handles h;
  from_parent.recv(&h, sizeof h);

  void* big = nullptr;
  CUDA_CHECK(cudaIpcOpenMemHandle(&big, h.big, cudaIpcMemLazyEnablePeerAccess));
  std::vector<unsigned char> host(kBigSize);
  CUDA_CHECK(cudaMemcpy(host.data(), big, kBigSize, cudaMemcpyDeviceToHost));
  bool same = true;
  for (size_t i = 0; i < kBigSize; ++i) {
    const bool written = i < 65536 || i >= kBigSize - 100;
    same = same && host[i] == (written ? pattern(i) : 0);
  }
  EXPECT_TRUE_MSG(same, "the importer reads the bytes the exporter wrote before exporting");
  void* again = nullptr;
  CUDA_CHECK(cudaIpcOpenMemHandle(&again, h.big, cudaIpcMemLazyEnablePeerAccess));
  EXPECT_TRUE_MSG(again == big, "a handle opened twice gives the same address");
  cudaPointerAttributes attr{};
  CUDA_CHECK(cudaPointerGetAttributes(&attr, big));
  EXPECT(attr.type == cudaMemoryTypeDevice);
  EXPECT(cudaFree(big) != cudaSuccess);  // imported memory is closed, not freed
  cudaGetLastError();

  // The exporter's stream is held at its gate: its record is not reached.
  cudaEvent_t ev = nullptr;
  CUDA_CHECK(cudaIpcOpenEventHandle(&ev, h.event));
  EXPECT_ERR(cudaEventQuery(ev), cudaErrorNotReady);
  void* small = nullptr;
  CUDA_CHECK(cudaIpcOpenMemHandle(&small, h.small, cudaIpcMemLazyEnablePeerAccess));
  cudaStream_t t = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
  // Pinned: a copy to pageable memory would return only once done (CUDA's rule), here never.
  unsigned char* got = nullptr;
  CUDA_CHECK(cudaMallocHost(&got, kSmall));
  std::memset(got, 0, kSmall);
  CUDA_CHECK(cudaStreamWaitEvent(t, ev, 0));
  CUDA_CHECK(cudaMemcpyAsync(got, small, kSmall, cudaMemcpyDeviceToHost, t));
  usleep(50 * 1000);
  EXPECT_ERR(cudaStreamQuery(t), cudaErrorNotReady);  // the copy waits for the other process
  gate.signal('g');
  CUDA_CHECK(cudaStreamSynchronize(t));
  bool filled = true;
  for (size_t i = 0; i < kSmall; ++i) filled = filled && got[i] == 0x5a;
  CUDA_CHECK(cudaFreeHost(got));
  EXPECT_TRUE_MSG(filled, "the wait ordered the copy after the exporter's memset");
  EXPECT_ERR(cudaEventQuery(ev), cudaSuccess);

  // The importer writes, records the shared event after its second write, and says so.
  CUDA_CHECK(cudaMemset(big, 0xc3, 4096));
  CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(big) + 4096, 0x3c, 4096, t));
  CUDA_CHECK(cudaEventRecord(ev, t));
  to_parent.signal('w');

  // References: two opens, two closes; a third close is an error.
  EXPECT_ERR(cudaIpcCloseMemHandle(big), cudaSuccess);
  EXPECT_ERR(cudaIpcCloseMemHandle(big), cudaSuccess);
  EXPECT(cudaIpcCloseMemHandle(big) != cudaSuccess);
  cudaGetLastError();

  // The exporter frees `small` while it is open here: the bytes stay until it is closed.
  EXPECT(from_parent.wait() == 'f');
  std::vector<unsigned char> kept(kSmall, 0);
  CUDA_CHECK(cudaMemcpy(kept.data(), small, kSmall, cudaMemcpyDeviceToHost));
  EXPECT_TRUE_MSG(kept[0] == 0x5a && kept[kSmall - 1] == 0x5a,
                  "imported bytes outlive the exporter's cudaFree until closed");
  EXPECT_ERR(cudaIpcCloseMemHandle(small), cudaSuccess);
  void* stale = nullptr;
  EXPECT(cudaIpcOpenMemHandle(&stale, h.small, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess);
  cudaGetLastError();

  // The driver API on the same handles.
  auto open_mem = driver<decltype(&::cuIpcOpenMemHandle_v2)>("cuIpcOpenMemHandle");
  auto close_mem = driver<decltype(&::cuIpcCloseMemHandle)>("cuIpcCloseMemHandle");
  auto open_event = driver<decltype(&::cuIpcOpenEventHandle)>("cuIpcOpenEventHandle");
  auto dtoh = driver<decltype(&::cuMemcpyDtoH_v2)>("cuMemcpyDtoH");
  auto query = driver<decltype(&::cuEventQuery)>("cuEventQuery");
  if (open_mem && close_mem && open_event && dtoh && query) {
    CUipcMemHandle dh;
    static_assert(sizeof dh == sizeof h.big);
    std::memcpy(&dh, &h.big, sizeof dh);
    CUdeviceptr p = 0;
    EXPECT(open_mem(&p, dh, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_SUCCESS);
    unsigned char first = 0;
    EXPECT(p != 0 && dtoh(&first, p, 1) == CUDA_SUCCESS && first == 0xc3);
    EXPECT(close_mem(p) == CUDA_SUCCESS);
    CUipcEventHandle de;
    std::memcpy(&de, &h.event, sizeof de);
    CUevent e = nullptr;
    EXPECT(open_event(&e, de) == CUDA_SUCCESS && query(e) == CUDA_SUCCESS);
  }
  CUDA_CHECK(cudaEventDestroy(ev));
  CUDA_CHECK(cudaStreamDestroy(t));
  return check::Failures() == 0 ? 0 : 1;
}

// ---- The exporter (this process) -----------------------------------------------------------

void exporter(pid_t child, const Channel& to_child, const Channel& from_child, Channel& gate) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  EXPECT(prop.ipcEventSupported == 1);

  void* big = nullptr;
  CUDA_CHECK(cudaMalloc(&big, kBigSize));
  std::vector<unsigned char> host(kBigSize, 0);
  for (size_t i = 0; i < kBigSize; ++i)
    if (i < 65536 || i >= kBigSize - 100) host[i] = pattern(i);
  CUDA_CHECK(cudaMemcpy(big, host.data(), kBigSize, cudaMemcpyHostToDevice));
  void* small = nullptr;
  CUDA_CHECK(cudaMalloc(&small, kSmall));
  CUDA_CHECK(cudaMemset(small, 0, kSmall));

  Handles h;
  CUDA_CHECK(cudaIpcGetMemHandle(&h.big, big));
  cudaIpcMemHandle_t twice;
  CUDA_CHECK(cudaIpcGetMemHandle(&twice, big));
  EXPECT_TRUE_MSG(std::memcmp(&twice, &h.big, sizeof twice) == 0,
                  "exporting again gives the same handle");
  CUDA_CHECK(cudaIpcGetMemHandle(&h.small, small));
  cudaEvent_t ev = nullptr;
  cudaEvent_t timed = nullptr;
  EXPECT_ERR(cudaEventCreateWithFlags(&timed, cudaEventInterprocess), cudaErrorInvalidValue);
  CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventInterprocess | cudaEventDisableTiming));
  CUDA_CHECK(cudaIpcGetEventHandle(&h.event, ev));
  cudaEvent_t plain = nullptr;
  CUDA_CHECK(cudaEventCreateWithFlags(&plain, cudaEventDisableTiming));
  cudaIpcEventHandle_t not_shared;
  EXPECT(cudaIpcGetEventHandle(&not_shared, plain) != cudaSuccess);
  cudaGetLastError();
  CUDA_CHECK(cudaEventDestroy(plain));

  auto get_mem = driver<decltype(&::cuIpcGetMemHandle)>("cuIpcGetMemHandle");
  if (get_mem) {
    CUipcMemHandle dh;
    EXPECT(get_mem(&dh, reinterpret_cast<CUdeviceptr>(big)) == CUDA_SUCCESS &&
           std::memcmp(&dh, &h.big, sizeof dh) == 0);
  }

  // The stream stops at the gate (opened by the importer), then fills `small` and records.
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUDA_CHECK(cudaLaunchHostFunc(s, wait_for_gate, &gate));
  CUDA_CHECK(cudaMemsetAsync(small, 0x5a, kSmall, s));
  CUDA_CHECK(cudaEventRecord(ev, s));
  to_child.send(&h, sizeof h);

  // The importer's record follows its writes: synchronising on it makes them visible here.
  EXPECT(from_child.wait() == 'w');
  CUDA_CHECK(cudaEventSynchronize(ev));
  std::vector<unsigned char> seen(8192, 0);
  CUDA_CHECK(cudaMemcpy(seen.data(), big, seen.size(), cudaMemcpyDeviceToHost));
  EXPECT_TRUE_MSG(seen[0] == 0xc3 && seen[4095] == 0xc3 && seen[4096] == 0x3c && seen[8191] == 0x3c,
                  "the exporter sees the importer's writes after its event");

  CUDA_CHECK(cudaStreamSynchronize(s));
  CUDA_CHECK(cudaFree(small));  // still open in the importer
  to_child.signal('f');

  int status = 0;
  if (waitpid(child, &status, 0) != child) std::perror("ipc: waitpid");
  EXPECT_TRUE_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the importer's checks passed (its lines above)");
  CUDA_CHECK(cudaEventDestroy(ev));
  CUDA_CHECK(cudaStreamDestroy(s));
  CUDA_CHECK(cudaFree(big));
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Channel to_child{}, from_child{}, gate{};
  if (pipe(to_child.fds) != 0 || pipe(from_child.fds) != 0 || pipe(gate.fds) != 0) return 2;
  // Both processes are forked before either uses CUDA, as CUDA requires.
  const pid_t pid = fork();
  if (pid < 0) return 2;
  if (pid == 0) {
    alarm(120);
    std::printf("importer (pid %d):\n", static_cast<int>(getpid()));
    _exit(importer(to_child, from_child, gate));
  }
  alarm(120);
  std::printf("exporter (pid %d):\n", static_cast<int>(getpid()));
  exporter(pid, to_child, from_child, gate);
  return check::Report("ipc");
}
