// Intentionally empty: the link-time stand-in for libcuda.so.1 (shim/CMakeLists.txt). Its only
// purpose is its SONAME, which puts DT_NEEDED libcuda.so.1 into libtorchada.so.
