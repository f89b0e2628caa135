// CUDA graphs both ways programs build them: stream capture with a fork/join across two streams
// (what PyTorch's CUDA graphs do), and explicit construction with node parameters, followed by
// cudaGraphExecUpdate and the DOT dump used for debugging.
#include "check.h"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

constexpr size_t kBytes = 1 << 15;
constexpr size_t kHalf = kBytes / 2;

bool AllBytes(const unsigned char* p, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != v) return false;
  return true;
}

// State shared with the captured host nodes. Each launch the first node writes a new input
// pattern and the last node checks what the copies produced, so every replay is verified.
struct Replay {
  unsigned char* in = nullptr;    // pinned, uploaded to dA
  unsigned char* out = nullptr;   // pinned, first half of dA comes back here
  unsigned char* out2 = nullptr;  // pinned, dB (memset by the second stream) comes back here
  int launches = 0;
  int verified = 0;
  unsigned char Pattern() const { return static_cast<unsigned char>(0x30 + launches); }
};

void CUDART_CB Prepare(void* arg) {
  auto* r = static_cast<Replay*>(arg);
  ++r->launches;
  std::memset(r->in, r->Pattern(), kBytes);
}

void CUDART_CB Verify(void* arg) {
  auto* r = static_cast<Replay*>(arg);
  if (AllBytes(r->out, kHalf, r->Pattern()) && AllBytes(r->out2, kBytes, 0x7F)) ++r->verified;
}

size_t CountNodes(cudaGraph_t g, cudaGraphNodeType type, size_t* total) {
  size_t n = 0;
  CUDA_CHECK(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  CUDA_CHECK(cudaGraphGetNodes(g, nodes.data(), &n));
  *total = n;
  size_t matching = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType t;
    CUDA_CHECK(cudaGraphNodeGetType(node, &t));
    matching += t == type;
  }
  return matching;
}

void CheckStreamCapture() {
  std::printf("stream capture with fork/join\n");
  Replay r;
  CUDA_CHECK(cudaMallocHost(&r.in, kBytes));
  CUDA_CHECK(cudaMallocHost(&r.out, kBytes));
  CUDA_CHECK(cudaMallocHost(&r.out2, kBytes));
  unsigned char *dA, *dB;
  CUDA_CHECK(cudaMalloc(&dA, kBytes));
  CUDA_CHECK(cudaMalloc(&dB, kBytes));
  cudaStream_t s1, s2;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t fork, join;
  CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

  CUDA_CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CUDA_CHECK(cudaStreamIsCapturing(s1, &status));
  EXPECT(status == cudaStreamCaptureStatusActive);
  CUDA_CHECK(cudaLaunchHostFunc(s1, Prepare, &r));                            // node 1
  CUDA_CHECK(cudaMemcpyAsync(dA, r.in, kBytes, cudaMemcpyHostToDevice, s1));  // node 2
  CUDA_CHECK(cudaEventRecord(fork, s1));
  CUDA_CHECK(cudaStreamWaitEvent(s2, fork, 0));  // s2 joins the capture
  CUDA_CHECK(cudaStreamIsCapturing(s2, &status));
  EXPECT(status == cudaStreamCaptureStatusActive);
  CUDA_CHECK(cudaMemsetAsync(dB, 0x7F, kBytes, s2));                            // node 3
  CUDA_CHECK(cudaMemcpyAsync(r.out2, dB, kBytes, cudaMemcpyDeviceToHost, s2));  // node 4
  CUDA_CHECK(cudaMemcpyAsync(r.out, dA, kHalf, cudaMemcpyDeviceToHost, s1));    // node 5
  CUDA_CHECK(cudaEventRecord(join, s2));
  CUDA_CHECK(cudaStreamWaitEvent(s1, join, 0));
  CUDA_CHECK(cudaLaunchHostFunc(s1, Verify, &r));  // node 6
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamEndCapture(s1, &graph));
  CUDA_CHECK(cudaStreamIsCapturing(s1, &status));
  EXPECT(status == cudaStreamCaptureStatusNone);
  EXPECT(r.launches == 0);  // capturing records work, it does not run it

  size_t total = 0;
  EXPECT(CountNodes(graph, cudaGraphNodeTypeHost, &total) == 2);
  EXPECT(CountNodes(graph, cudaGraphNodeTypeMemcpy, &total) == 3);
  EXPECT(CountNodes(graph, cudaGraphNodeTypeMemset, &total) == 1);
  std::printf("  captured %zu nodes\n", total);
  EXPECT(total == 6);
  size_t roots = 0;
  CUDA_CHECK(cudaGraphGetRootNodes(graph, nullptr, &roots));
  EXPECT(roots == 1);  // Prepare: s2's memset follows the upload through the fork event

  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  const int kLaunches = 5;
  for (int i = 0; i < kLaunches; ++i) CUDA_CHECK(cudaGraphLaunch(exec, s1));
  CUDA_CHECK(cudaStreamSynchronize(s1));
  std::printf("  %d launches, %d verified by the graph's own host node\n", r.launches, r.verified);
  EXPECT(r.launches == kLaunches);
  EXPECT(r.verified == kLaunches);
  EXPECT(AllBytes(r.out, kHalf, r.Pattern()));

  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaEventDestroy(fork));
  CUDA_CHECK(cudaEventDestroy(join));
  CUDA_CHECK(cudaStreamDestroy(s1));
  CUDA_CHECK(cudaStreamDestroy(s2));
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFreeHost(r.in));
  CUDA_CHECK(cudaFreeHost(r.out));
  CUDA_CHECK(cudaFreeHost(r.out2));
}

// Host node of the explicit graph: checks the bytes the memcpy node brought back.
struct Expectation {
  const unsigned char* host = nullptr;
  unsigned char value = 0;
  int runs = 0;
  int matched = 0;
};

void CUDART_CB CheckHost(void* arg) {
  auto* e = static_cast<Expectation*>(arg);
  ++e->runs;
  if (AllBytes(e->host, kBytes, e->value)) ++e->matched;
}

// memset(dev) -> memcpy(dev -> host) -> host check. The memcpy edge is added afterwards with
// cudaGraphAddDependencies; the host node gets its dependency at creation.
cudaGraph_t BuildExplicit(unsigned char* dev, unsigned char* host, Expectation* expect,
                          bool extra_node) {
  cudaGraph_t g;
  CUDA_CHECK(cudaGraphCreate(&g, 0));
  cudaMemsetParams ms{};
  ms.dst = dev;
  ms.value = expect->value;
  ms.elementSize = 1;
  ms.width = kBytes;
  ms.height = 1;
  cudaGraphNode_t memset_node, memcpy_node, host_node;
  CUDA_CHECK(cudaGraphAddMemsetNode(&memset_node, g, nullptr, 0, &ms));

  cudaMemcpy3DParms cp{};
  cp.srcPtr = make_cudaPitchedPtr(dev, kBytes, kBytes, 1);
  cp.dstPtr = make_cudaPitchedPtr(host, kBytes, kBytes, 1);
  cp.extent = make_cudaExtent(kBytes, 1, 1);
  cp.kind = cudaMemcpyDeviceToHost;
  CUDA_CHECK(cudaGraphAddMemcpyNode(&memcpy_node, g, nullptr, 0, &cp));
  CUDA_CHECK(cudaGraphAddDependencies(g, &memset_node, &memcpy_node, nullptr, 1));

  cudaHostNodeParams hp{};
  hp.fn = CheckHost;
  hp.userData = expect;
  CUDA_CHECK(cudaGraphAddHostNode(&host_node, g, &memcpy_node, 1, &hp));
  if (extra_node) {
    cudaGraphNode_t empty;
    CUDA_CHECK(cudaGraphAddEmptyNode(&empty, g, &host_node, 1));
  }
  return g;
}

bool DotPrintWorks(cudaGraph_t g) {
  char path[] = "/tmp/torchada-graph-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return false;
  close(fd);
  CUDA_CHECK(cudaGraphDebugDotPrint(g, path, cudaGraphDebugDotFlagsVerbose));
  std::ifstream in(path);
  const std::string dot((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  unlink(path);
  std::printf("  DOT dump: %zu bytes\n", dot.size());
  return dot.find("digraph") != std::string::npos;
}

void CheckExplicitGraph() {
  std::printf("explicit graph, cudaGraphExecUpdate, DOT dump\n");
  unsigned char *dev, *host;
  CUDA_CHECK(cudaMalloc(&dev, kBytes));
  CUDA_CHECK(cudaMallocHost(&host, kBytes));
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  Expectation first;
  first.host = host;
  first.value = 0x5A;
  cudaGraph_t g = BuildExplicit(dev, host, &first, false);
  size_t total = 0;
  CountNodes(g, cudaGraphNodeTypeHost, &total);
  EXPECT(total == 3);
  size_t edges = 0;
  CUDA_CHECK(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &edges));
  EXPECT(edges == 2);
  EXPECT(DotPrintWorks(g));

  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
  CUDA_CHECK(cudaGraphLaunch(exec, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  EXPECT(first.runs == 1 && first.matched == 1);

  // Same topology, new memset value and host-node argument: an in-place update.
  Expectation second = first;
  second.value = 0x3C;
  second.runs = second.matched = 0;
  cudaGraph_t g2 = BuildExplicit(dev, host, &second, false);
  cudaGraphExecUpdateResultInfo info{};
  EXPECT_ERR(cudaGraphExecUpdate(exec, g2, &info), cudaSuccess);
  EXPECT(info.result == cudaGraphExecUpdateSuccess);
  CUDA_CHECK(cudaGraphLaunch(exec, s));
  CUDA_CHECK(cudaGraphLaunch(exec, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  EXPECT(first.runs == 1);
  EXPECT(second.runs == 2 && second.matched == 2);

  // A different topology cannot be applied in place.
  Expectation third = second;
  cudaGraph_t g3 = BuildExplicit(dev, host, &third, true);
  info = {};
  EXPECT_ERR(cudaGraphExecUpdate(exec, g3, &info), cudaErrorGraphExecUpdateFailure);
  EXPECT(info.result == cudaGraphExecUpdateErrorTopologyChanged);
  (void)cudaGetLastError();

  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(g));
  CUDA_CHECK(cudaGraphDestroy(g2));
  CUDA_CHECK(cudaGraphDestroy(g3));
  CUDA_CHECK(cudaStreamDestroy(s));
  CUDA_CHECK(cudaFree(dev));
  CUDA_CHECK(cudaFreeHost(host));
}

}  // namespace

int main() {
  CUDA_CHECK(cudaSetDevice(0));
  CheckStreamCapture();
  CheckExplicitGraph();
  return check::Report("graphs");
}
