// Kernels the program registered through __cudaRegisterFatBinary / __cudaRegisterFunction.
// Their device code is NVIDIA's and never runs on MUSA; the shim keeps their names so that a
// refused launch says which kernel it was.
#pragma once

namespace torchada {

// A fresh, unique handle for one registered fat binary (never freed: the program may call
// __cudaUnregisterFatBinary from a destructor after the shim's own state would be gone).
void** register_fat_binary(const void* fat_cubin);
void unregister_fat_binary(void** handle);
void register_kernel(void** fat_handle, const void* host_fun, const char* device_name);

struct KernelInfo {
  const char* name;    // demangled name, or null when `func` was never registered
  bool first_refusal;  // true the first time this kernel is refused (log it once)
};
KernelInfo lookup_kernel(const void* host_fun);
// Name without the first-refusal bookkeeping (cudaFuncGetName).
const char* kernel_name(const void* host_fun);

void kernels_before_fork();
void kernels_after_fork(bool child);

}  // namespace torchada
