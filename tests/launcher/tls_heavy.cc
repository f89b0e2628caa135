// A library with 8 KiB of initial-exec TLS, as preloaded allocators (jemalloc, tcmalloc) have:
// glibc leaves too little static TLS for it once an audit module is loaded (sourceware bug
// 31991) unless torchada-run reserves more (launcher.preload_static_tls).
__thread char torchada_test_tls[8192] __attribute__((tls_model("initial-exec")));
extern "C" __attribute__((visibility("default"))) int torchada_test_tls_touch() {
  torchada_test_tls[0] = 1;
  return torchada_test_tls[0];
}
