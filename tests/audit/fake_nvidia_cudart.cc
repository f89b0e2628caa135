// Stands in for NVIDIA's libcudart.so.13 in one test (audit.nvidia_dependencies_left_alone):
// named and versioned like it, answering cudaGetDeviceCount with a code of its own, and with a
// DT_NEEDED entry on another library the replacements serve (NVIDIA's libcudart.so.12). When
// libtorchada.so's pass-through loads it, that dependency must be NVIDIA's, not torchada's.
extern "C" __attribute__((visibility("default"))) int cudaGetDeviceCount(int* count) {
  if (count != nullptr) *count = 0;
  return 800;  // cudaErrorNotPermitted: no real library answers this here
}
