// A libmusart.so.5 lacking the MUSA runtime's core functions (musaMalloc, musaMemcpy,
// musaStreamCreate): a truncated or foreign library with the runtime's name. The shim refuses it;
// torchada-doctor must say so and name the fix.
extern "C" {
__attribute__((visibility("default"))) int musaGetDeviceCount(int* n) {
  *n = 0;
  return 0;
}
__attribute__((visibility("default"))) const char* musaGetErrorString(int) { return "fake"; }
}
