// A library with no purpose but to be found in /proc/self/maps: the launcher tests preload it to
// check that torchada-run keeps what LD_PRELOAD already holds.
extern "C" __attribute__((visibility("default"))) int torchada_test_marker() { return 42; }
