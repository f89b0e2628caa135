// Run under the shim on the simulator with TORCHADA_SIM_DEVICES=two and a misspelt
// TORCHADA_SIM_DEVICE=2 (tests/settings/CMakeLists.txt): the program gets one device, and what the
// shim and the simulator write to stderr names both variables, each once, with the fallback.
// Looks cudaGetDeviceCount up in the preloaded shim (no CUDA library linked). Prints
// "settings_program: all checks passed".
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>

namespace {

int g_failures = 0;
void check(bool ok, const char* what, const std::string& detail) {
  if (ok) return;
  ++g_failures;
  std::printf("FAIL: %s\n%s\n", what, detail.c_str());
}

size_t count(const std::string& s, const char* needle) {
  size_t n = 0;
  for (size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

int main() {
  using GetCount = int (*)(int*);
  auto get_count = reinterpret_cast<GetCount>(dlsym(RTLD_DEFAULT, "cudaGetDeviceCount"));
  if (get_count == nullptr) {
    std::printf("FAIL: cudaGetDeviceCount not found: run with libtorchada.so preloaded\n");
    return 1;
  }
  // The warnings are written at the first CUDA call (the shim starts, the simulator creates its
  // devices): catch stderr in a file around it.
  char path[] = "/tmp/torchada_settings_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return 1;
  unlink(path);
  fflush(stderr);
  const int saved = dup(2);
  dup2(fd, 2);
  int n = -1;
  const int rc = get_count(&n);
  const int rc2 = get_count(&n);  // read again: nothing more is written
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::string err;
  lseek(fd, 0, SEEK_SET);
  char buf[4096];
  for (ssize_t k; (k = read(fd, buf, sizeof buf)) > 0;) err.append(buf, static_cast<size_t>(k));
  close(fd);
  std::fputs(err.c_str(), stderr);  // for the log

  check(rc == 0 && rc2 == 0, "cudaGetDeviceCount succeeds", std::to_string(rc));
  check(n == 1, "TORCHADA_SIM_DEVICES=two gives one device", std::to_string(n));
  check(count(err, "TORCHADA_SIM_DEVICES=two is not a whole number in [1, 16]; using 1") == 1,
        "the simulator names TORCHADA_SIM_DEVICES=two once, with what it used", err);
  check(count(err,
              "TORCHADA_SIM_DEVICE is not a variable torchada knows; it is ignored (did you mean "
              "TORCHADA_SIM_DEVICES?)") == 1,
        "the shim names the unknown TORCHADA_SIM_DEVICE once", err);
  check(count(err, "TORCHADA_STATS=sure is not 1, true, yes, on or 0, false, no, off; using off") ==
            1,
        "the shim names its malformed TORCHADA_STATS once", err);
  if (g_failures) return 1;
  std::printf("settings_program: all checks passed\n");
  return 0;
}
