#include "core/log.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "settings/settings.h"

namespace torchada {
namespace {

// -1: not read yet. Reading the environment is idempotent, so a race costs nothing.
std::atomic<int> g_level{-1};
std::atomic<int> g_fd{-1};

void warn_line(const char* message);

int level() {
  int l = g_level.load(std::memory_order_relaxed);
  if (l < 0) {
    // The level's words are LogLevel's values in order (settings/settings.h). It is stored before
    // a malformed value is reported: the report is itself a log line.
    l = settings::word(settings::Id::kLogLevel, nullptr);
    g_level.store(l, std::memory_order_relaxed);
    settings::word(settings::Id::kLogLevel, warn_line);
  }
  return l;
}

int out_fd() {
  int fd = g_fd.load(std::memory_order_acquire);
  if (fd >= 0) return fd;
  fd = STDERR_FILENO;
  if (const char* path = settings::text(settings::Id::kLogFile)) {
    int f = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (f >= 0) fd = f;
  }
  int expected = -1;
  if (!g_fd.compare_exchange_strong(expected, fd) && fd != STDERR_FILENO) {
    ::close(fd);  // another thread opened it first
    fd = expected;
  }
  return fd;
}

const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "?";
}

void warn_line(const char* message) { TORCHADA_LOG(kWarn, "%s", message); }

}  // namespace

bool log_enabled(LogLevel l) { return static_cast<int>(l) <= level(); }

void log(LogLevel l, const char* fmt, ...) {
  // One write(2) per line keeps lines from different threads and processes whole.
  char buf[1024];
  int n = std::snprintf(buf, sizeof buf, "[torchada %d:%ld %s] ", static_cast<int>(::getpid()),
                        static_cast<long>(::syscall(SYS_gettid)), level_name(l));
  if (n < 0) return;
  va_list ap;
  va_start(ap, fmt);
  int m = std::vsnprintf(buf + n, sizeof buf - static_cast<size_t>(n) - 1, fmt, ap);
  va_end(ap);
  if (m < 0) return;
  size_t len = std::strlen(buf);
  buf[len++] = '\n';
  ssize_t ignored = ::write(out_fd(), buf, len);
  (void)ignored;
}

}  // namespace torchada
