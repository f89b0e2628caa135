"""cudart through ctypes.CDLL(<full path of NVIDIA's libcudart.so.13>), the way Python packages
that find cudart by scanning /proc/self/maps or site-packages load it.

    python3 ctypes_probe.py PATH

Passes when torchada answered: the simulator's configured device count (TORCHADA_SIM_DEVICES)
and memory (TORCHADA_SIM_MEMORY_MB), NVIDIA's file (PROBE_NVIDIA_LIB) not mapped, one
libtorchada.so mapped. Exit status 0 when every check passed.
"""
import ctypes
import os
import sys

failures = 0


def check(ok, what):
    global failures
    print(("  ok   " if ok else "  FAIL ") + what, flush=True)
    failures += 0 if ok else 1


def mapped_files():
    """(dev, inode) -> path of every file mapped into this process."""
    files = {}
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            if len(parts) < 6 or parts[4] == "0":
                continue
            major, minor = (int(x, 16) for x in parts[3].split(":"))
            files[(os.makedev(major, minor), int(parts[4]))] = parts[5].strip()
    return files


def main():
    path = sys.argv[1]
    lib = ctypes.CDLL(path)
    count_fn = lib.cudaGetDeviceCount
    count_fn.restype = ctypes.c_int
    count_fn.argtypes = [ctypes.POINTER(ctypes.c_int)]
    mem_fn = lib.cudaMemGetInfo
    mem_fn.restype = ctypes.c_int
    mem_fn.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]

    want_devices = int(os.environ.get("TORCHADA_SIM_DEVICES", "1"))
    want_mb = int(os.environ.get("TORCHADA_SIM_MEMORY_MB", "49152"))
    n = ctypes.c_int(-1)
    rc = count_fn(ctypes.byref(n))
    check(rc == 0 and n.value == want_devices,
          f"CDLL({path}).cudaGetDeviceCount: rc {rc}, {n.value} devices (simulator: {want_devices})")
    free_b, total_b = ctypes.c_size_t(), ctypes.c_size_t()
    rc = mem_fn(ctypes.byref(free_b), ctypes.byref(total_b))
    check(rc == 0 and total_b.value == want_mb << 20,
          f"cudaMemGetInfo: rc {rc}, total {total_b.value} (simulator: {want_mb} MiB)")

    files = mapped_files()
    nvidia = os.environ["PROBE_NVIDIA_LIB"]
    st = os.stat(nvidia)
    check((st.st_dev, st.st_ino) not in files, f"NVIDIA's {nvidia} is not mapped")
    shims = sorted({p for p in files.values() if os.path.basename(p) == "libtorchada.so"})
    check(len(shims) == 1, f"one libtorchada.so mapped: {shims}")
    print("all checks passed" if failures == 0 else "checks FAILED")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
