// torchada-check: see check.cc (HelpText) and docs/torchada-check.md.
#include <cstdio>
#include <string>

#include "check.h"

int main(int argc, char** argv) {
  std::string out, err;
  const int status = torchada::check::Run(argc, argv, &out, &err);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  std::fwrite(err.data(), 1, err.size(), stderr);
  return status;
}
