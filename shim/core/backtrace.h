// Symbolized backtraces of the calling thread, for debug-level diagnostics (an unsupported call, a
// failed call). Frames are unwound with libunwind when libunwind.so.8 can be loaded (it is loaded
// privately, RTLD_LOCAL, at the first backtrace: linked into the preloaded shim, its _Unwind_*
// exports would take over every C++ exception of a C host program such as Python); otherwise with
// glibc's backtrace(). Names come from the frame's ELF symbol tables, demangled, with the module
// from dladdr.
#pragma once

namespace torchada {

// Logs at debug level: the heading (printf format), then one line per frame,
// "  #N 0xADDRESS function+0xOFFSET (module)". `skip` innermost frames besides its own are left
// out. Does nothing below TORCHADA_LOG_LEVEL=debug.
void log_backtrace(int skip, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace torchada
