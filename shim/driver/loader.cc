// libmusa.so (the MUSA driver) of the backend the runtime chose, loaded once on the first driver
// entry point request by the loader all MUSA libraries share (shim/core/libraries.cc: the
// simulator's folder, or next to the loaded libmusart and then the runtime's search path). Like the
// CUDA runtime with its driver, the shim calls muInit(0) once the library is loaded.
#include <dlfcn.h>

#include <cstdio>

#include "core/libraries.h"
#include "core/log.h"
#include "driver/driver.h"

namespace torchada {
namespace drv {
namespace {

void* lookup(void* handle, const char* name) { return dlsym(handle, name); }

const DriverBackend* load() {
  auto* b = new DriverBackend();  // never destroyed: used from atexit handlers too
  const LoadedLibrary& lib = load_musa_library(MusaLibrary::kMusaDriver);
  if (lib.handle == nullptr) return b;  // pass-through, or missing (logged)
  std::snprintf(b->path, sizeof b->path, "%s", lib.path);
  resolve_musa_driver(b->table, lookup, lib.handle);
  const MUresult r = b->table.p_muInit ? b->table.p_muInit(0) : MUSA_ERROR_NOT_FOUND;
  if (r != MUSA_SUCCESS) {
    TORCHADA_LOG(kError,
                 "muInit(0) of %s failed (MUresult %d): driver entry points report \"symbol not "
                 "found\"",
                 b->path, static_cast<int>(r));
    return b;
  }
  b->usable = true;
  return b;
}

}  // namespace

const DriverBackend& driver_backend() {
  static const DriverBackend* b = load();  // thread-safe, once
  return *b;
}

}  // namespace drv
}  // namespace torchada
