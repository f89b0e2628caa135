"""cudart from Python through ctypes, as Python packages without a compiled extension do.

ctypes.CDLL(None) is dlopen(NULL): symbol lookups through it search the global scope, where the
preloaded shim comes first. dlvsym is reached through the same handle. A CDLL of libcudart.so.13
by name is also opened RTLD_GLOBAL: lookups through the global scope must still reach the shim.
Lookups through that library's own handle search its own scope, which LD_PRELOAD does not
cover; their outcome is printed for information only.
"""
import ctypes
import sys

failures = 0


def expect(cond, what):
    global failures
    print(("  ok   " if cond else "  FAIL ") + what, flush=True)
    failures += 0 if cond else 1


def lookup(lib, name, label):
    try:
        return getattr(lib, name)
    except AttributeError as e:
        expect(False, f"{label}: {e}")
        return None


def device_count(fn, label):
    if fn is None:
        return None
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.POINTER(ctypes.c_int)]
    count = ctypes.c_int(-1)
    rc = fn(ctypes.byref(count))
    expect(rc == 0 and count.value >= 1, f"{label}: cudaGetDeviceCount rc={rc} count={count.value}")
    return rc


def round_trip(lib):
    lib.cudaMalloc.restype = ctypes.c_int
    lib.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    lib.cudaMemcpy.restype = ctypes.c_int
    lib.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    lib.cudaFree.restype = ctypes.c_int
    lib.cudaFree.argtypes = [ctypes.c_void_p]
    n = 4096
    src = (ctypes.c_ubyte * n)(*[(i * 7) & 0xFF for i in range(n)])
    dst = (ctypes.c_ubyte * n)()
    dev = ctypes.c_void_p()
    expect(lib.cudaMalloc(ctypes.byref(dev), n) == 0 and dev.value, "cudaMalloc")
    expect(lib.cudaMemcpy(dev, src, n, 1) == 0, "cudaMemcpy host to device")  # cudaMemcpyHostToDevice
    expect(lib.cudaMemcpy(dst, dev, n, 2) == 0, "cudaMemcpy device to host")  # cudaMemcpyDeviceToHost
    expect(bytes(src) == bytes(dst), "data round trip")
    expect(lib.cudaFree(dev) == 0, "cudaFree")


def main():
    sys.stdout.reconfigure(line_buffering=True)
    print("global scope: ctypes.CDLL(None)")
    glob = ctypes.CDLL(None)
    if device_count(lookup(glob, "cudaGetDeviceCount", "CDLL(None)"), "CDLL(None)") is None:
        return 1  # the shim is not in the global scope; nothing else can work
    round_trip(glob)

    print("dlvsym(RTLD_DEFAULT, ...) through ctypes")
    dlvsym = glob.dlvsym
    dlvsym.restype = ctypes.c_void_p
    dlvsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int))
    for version in (b"libcudart.so.13", b"libcudart.so.12"):
        addr = dlvsym(None, b"cudaGetDeviceCount", version)  # None is RTLD_DEFAULT
        expect(bool(addr), f"dlvsym cudaGetDeviceCount@{version.decode()} = {addr and hex(addr)}")
        if addr:
            device_count(proto(addr), f"cudaGetDeviceCount@{version.decode()}")

    print("after CDLL('libcudart.so.13', RTLD_GLOBAL)")
    try:
        lib = ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        lib = None
        print(f"  (libcudart.so.13 not loadable here: {e})")
    label = "CDLL(None) after loading libcudart"
    device_count(lookup(ctypes.CDLL(None), "cudaGetDeviceCount", label), label)
    if lib is not None:
        count = ctypes.c_int(-1)
        rc = lib.cudaGetDeviceCount(ctypes.byref(count))
        print(f"  info: handle-scoped lib.cudaGetDeviceCount rc={rc} count={count.value}")

    print("ctypes: all checks passed" if failures == 0 else f"ctypes: {failures} check(s) FAILED")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
