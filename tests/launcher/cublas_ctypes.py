"""cuBLAS from Python through ctypes, by NVIDIA's full paths, as packages without a compiled
extension do: a 3x4 by 4x2 SGEMM computed on the simulator and compared with the same product
computed here in Python.

    python3 cublas_ctypes.py LIBCUDART_PATH LIBCUBLAS_PATH

Passes when the product is right and NVIDIA's files are not mapped (torchada-run's audit module
sent both loads to torchada's replacements). Exit status 0 when every check passed.
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
    files = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[4] != "0":
                major, minor = (int(x, 16) for x in parts[3].split(":"))
                files.add((os.makedev(major, minor), int(parts[4])))
    return files


def main():
    cudart_path, cublas_path = sys.argv[1], sys.argv[2]
    rt = ctypes.CDLL(cudart_path)
    blas = ctypes.CDLL(cublas_path)
    for fn in (rt.cudaMalloc, rt.cudaMemcpy, rt.cudaFree, blas.cublasCreate_v2,
               blas.cublasSgemm_v2, blas.cublasDestroy_v2):
        fn.restype = ctypes.c_int

    m, n, k = 3, 2, 4
    # Column-major A (m x k), B (k x n).
    a = [float(1 + i) for i in range(m * k)]
    b = [float((i * 7) % 5 - 2) for i in range(k * n)]
    want = [sum(a[r + m * p] * b[p + k * c] for p in range(k)) for c in range(n) for r in range(m)]

    fsize = ctypes.sizeof(ctypes.c_float)
    host = {"a": (ctypes.c_float * len(a))(*a), "b": (ctypes.c_float * len(b))(*b),
            "c": (ctypes.c_float * (m * n))()}
    dev = {}
    for name, buf in host.items():
        p = ctypes.c_void_p()
        check(rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(len(buf) * fsize)) == 0,
              f"cudaMalloc {name}")
        dev[name] = p
    for name in ("a", "b"):
        check(rt.cudaMemcpy(dev[name], host[name], ctypes.c_size_t(len(host[name]) * fsize), 1) == 0,
              f"cudaMemcpy {name} to the device")

    handle = ctypes.c_void_p()
    rc = blas.cublasCreate_v2(ctypes.byref(handle))
    check(rc == 0, f"cublasCreate_v2: status {rc}")
    alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
    rc = blas.cublasSgemm_v2(handle, 0, 0, m, n, k, ctypes.byref(alpha), dev["a"], m, dev["b"], k,
                             ctypes.byref(beta), dev["c"], m)
    check(rc == 0, f"cublasSgemm_v2: status {rc}")
    check(rt.cudaMemcpy(host["c"], dev["c"], ctypes.c_size_t(m * n * fsize), 2) == 0,
          "cudaMemcpy C to the host")
    got = list(host["c"])
    check(got == want, f"C = A B: {got}, computed here: {want}")
    check(blas.cublasDestroy_v2(handle) == 0, "cublasDestroy_v2")
    for p in dev.values():
        rt.cudaFree(p)

    files = mapped_files()
    for path in (cudart_path, cublas_path):
        st = os.stat(path)
        check((st.st_dev, st.st_ino) not in files, f"NVIDIA's {path} is not mapped")
    print("all checks passed" if failures == 0 else "checks FAILED")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
