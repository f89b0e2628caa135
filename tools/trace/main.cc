// torchada-trace: tools for the shim's traces (shim/core/trace.h).
//
//   torchada-trace convert LOG [-o OUT] [--max-mb N]
//       LOG: a binary trace log (FILE.tdtrace: TORCHADA_TRACE_FORMAT=binary, or the log a forked
//       child that ended with _exit left next to FILE). Writes the Chrome trace JSON the shim
//       writes at exit (OUT: LOG without ".tdtrace", ".json" added unless it ends so) and keeps
//       LOG.
//       --max-mb: the JSON's size limit (default 2048, as TORCHADA_TRACE_MAX_MB); events past it
//       are dropped and counted.
// Exit status: 0 converted, 1 failed, 2 usage.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/trace_log.h"

namespace lg = torchada::trace::log;

namespace {

int usage() {
  std::fprintf(stderr, "usage: torchada-trace convert LOG [-o OUT] [--max-mb N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || std::strcmp(argv[1], "convert") != 0) return usage();
  const char* in = nullptr;
  std::string out;
  unsigned long long cap_mb = 2048;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
      out = argv[++i];
    } else if (std::strcmp(argv[i], "--max-mb") == 0 && i + 1 < argc) {
      char* e = nullptr;
      cap_mb = std::strtoull(argv[++i], &e, 10);
      if (e == nullptr || *e != '\0' || cap_mb == 0 || cap_mb >= (1ull << 40)) return usage();
    } else if (in == nullptr && argv[i][0] != '-') {
      in = argv[i];
    } else {
      return usage();
    }
  }
  if (in == nullptr) return usage();
  if (out.empty()) {
    char buf[4096];
    if (!lg::json_path_for(in, buf, sizeof buf)) return usage();
    out = buf;
  }
  const lg::Result r = lg::convert_file(in, out.c_str(), cap_mb << 20);
  if (!r.ok) {
    std::fprintf(stderr, "torchada-trace: cannot convert %s to %s (not a trace log, or %s)\n", in,
                 out.c_str(), "the output cannot be written");
    return 1;
  }
  std::printf("%s: %llu event(s)", out.c_str(), static_cast<unsigned long long>(r.events));
  if (r.dropped)
    std::printf(", %llu dropped (size limit)", static_cast<unsigned long long>(r.dropped));
  std::printf("\n");
  return 0;
}
