// Logging: TORCHADA_LOG_LEVEL=error|warn|info|debug (default warn), to stderr or TORCHADA_LOG_FILE.
// Every line is prefixed "[torchada pid:tid LEVEL]". Safe before the shim is initialised, from
// constructors, after atexit, and in forked children.
#pragma once

#include <cstdarg>

namespace torchada {

enum class LogLevel : int { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

bool log_enabled(LogLevel level);
void log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace torchada

#define TORCHADA_LOG(level, ...)                                 \
  do {                                                           \
    if (::torchada::log_enabled(::torchada::LogLevel::level))    \
      ::torchada::log(::torchada::LogLevel::level, __VA_ARGS__); \
  } while (0)
