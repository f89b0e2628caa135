// A libmccl.so.2 that is not Moore Threads' (MetaX MACA ships one, built on its own runtime): it
// exports MCCL's core names but is not linked against the MUSA runtime. The shim refuses it.
extern "C" {
__attribute__((visibility("default"))) int mcclGetUniqueId(void*) { return 0; }
__attribute__((visibility("default"))) int mcclAllReduce(const void*, void*, unsigned long, int,
                                                         int, void*, void*) {
  return 0;
}
__attribute__((visibility("default"))) int mcclUnhandledMacaError() { return 1; }
}
