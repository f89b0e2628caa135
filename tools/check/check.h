// torchada-check's command line, callable in-process (main.cc, tests).
#pragma once

#include <string>

namespace torchada::check {

// Exit statuses (also in --help).
constexpr int kExitOk = 0;         // every file ok, replaced or not-cuda
constexpr int kExitPartial = 1;    // some imported function is unsupported, kernel-only or unknown
constexpr int kExitNeedsPort = 2;  // device code or a static CUDA runtime
constexpr int kExitError = 3;      // some input could not be checked
constexpr int kExitUsage = 4;      // bad command line or symbols directory

// Runs the tool; writes the report to *out and diagnostics to *err. Returns the exit status.
int Run(int argc, const char* const* argv, std::string* out, std::string* err);

const char* HelpText();

}  // namespace torchada::check
