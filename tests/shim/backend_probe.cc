// A process that makes its first CUDA call through the preloaded shim, for the tests that need a
// fresh process: backend selection, refusals of non-MUSA libraries, TORCHADA_STRICT, the exit
// summary, TORCHADA_LOG_FILE. Prints "rc=<code> count=<n>" for the first cudaGetDeviceCount.
//   backend_probe              cudaGetDeviceCount only
//   backend_probe unsupported  then an unsupported call (cudaMemPoolCreate)
//   backend_probe logfile      TORCHADA_LOG_FILE set here, unsupported call, file checked
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace {
template <class F>
F cuda(const char* name) {
  void* p = dlsym(RTLD_DEFAULT, name);
  if (p == nullptr) {
    std::printf("%s not found: is libtorchada.so preloaded?\n", name);
    std::exit(2);
  }
  return reinterpret_cast<F>(p);
}
}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  std::string log_path;
  if (mode == "logfile") {
    log_path = "/tmp/torchada_probe_log." + std::to_string(getpid());
    setenv("TORCHADA_LOG_FILE", log_path.c_str(), 1);
  }
  int n = -1;
  int rc = cuda<int (*)(int*)>("cudaGetDeviceCount")(&n);
  std::printf("rc=%d count=%d\n", rc, n);
  std::fflush(stdout);
  if (mode == "unsupported" || mode == "logfile") {
    void* pool = reinterpret_cast<void*>(1);
    char props[256] = {};
    int u = cuda<int (*)(void**, const void*)>("cudaMemPoolCreate")(&pool, props);
    std::printf("unsupported rc=%d pool=%p\n", u, pool);
    if (u == 0 || pool != nullptr) return 1;
  }
  if (mode == "logfile") {
    std::ifstream in(log_path);
    std::stringstream text;
    text << in.rdbuf();
    std::remove(log_path.c_str());
    const std::string prefix = "[torchada " + std::to_string(getpid()) + ":";
    const bool ok = text.str().find(prefix) != std::string::npos &&
                    text.str().find("cudaMemPoolCreate") != std::string::npos;
    std::printf("logfile %s\n", ok ? "ok" : "missing lines");
    return ok ? 0 : 1;
  }
  return 0;
}
