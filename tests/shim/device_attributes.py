"""Every device attribute id CUDA's headers define yields a value through the shim, on the
runtime (cudaDeviceGetAttribute) and the driver (cuDeviceGetAttribute); ids outside the enum are
errors. A feature MUSA lacks is answered as a CUDA device without it answers (0).

    device_attributes.py <driver_types.h> <cuda.h>      (run with libtorchada.so preloaded)
"""
import ctypes
import re
import sys


def enum_values(path, start, end, pattern):
    text = open(path).read()
    body = text[text.index(start):]
    body = body[:body.index(end)]
    return [(n, int(v)) for n, v in re.findall(pattern, body) if not n.endswith("_MAX")]


def main():
    driver_types, cuda_h = sys.argv[1], sys.argv[2]
    runtime = enum_values(driver_types, "enum __device_builtin__ cudaDeviceAttr", "};",
                          r"(cudaDevAttr\w+)\s*=\s*(\d+)")
    driver = enum_values(cuda_h, "typedef enum CUdevice_attribute_enum", "} CUdevice_attribute;",
                         r"(CU_DEVICE_ATTRIBUTE_\w+)\s*=\s*(\d+)")
    assert len(runtime) > 130 and len(driver) > 140, (len(runtime), len(driver))
    rt = ctypes.CDLL("libcudart.so.13")  # resolved in the preloaded libtorchada.so
    cu = ctypes.CDLL("libcuda.so.1")     # torchada's, brought in by libtorchada.so
    assert cu.cuInit(0) == 0
    v = ctypes.c_int(-12345)
    failures = []
    for name, i in runtime:
        v.value = -12345
        rc = rt.cudaDeviceGetAttribute(ctypes.byref(v), i, 0)
        if rc != 0 or v.value == -12345:
            failures.append(f"{name} ({i}): cudaDeviceGetAttribute returned {rc}")
    for name, i in driver:
        v.value = -12345
        rc = cu.cuDeviceGetAttribute(ctypes.byref(v), i, 0)
        if rc != 0 or v.value == -12345:
            failures.append(f"{name} ({i}): cuDeviceGetAttribute returned {rc}")
    # Ids no header defines are errors (cudaErrorInvalidValue / CUDA_ERROR_INVALID_VALUE).
    # (255, not larger: a value outside the enum's bit range is UB to hold in the enum type, and
    # the sanitizer builds abort on it.)
    for bad in (0, max(i for _, i in runtime) + 1, 255):
        if rt.cudaDeviceGetAttribute(ctypes.byref(v), bad, 0) != 1:
            failures.append(f"cudaDeviceGetAttribute accepted id {bad}")
        rt.cudaGetLastError()
    for bad in (0, max(i for _, i in driver) + 1, 255):
        if cu.cuDeviceGetAttribute(ctypes.byref(v), bad, 0) != 1:
            failures.append(f"cuDeviceGetAttribute accepted id {bad}")
    # The policy-driven values agree between the two APIs.
    for rname, dname in (("cudaDevAttrComputeCapabilityMajor", "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR"),
                         ("cudaDevAttrWarpSize", "CU_DEVICE_ATTRIBUTE_WARP_SIZE")):
        a, b = ctypes.c_int(), ctypes.c_int()
        rt.cudaDeviceGetAttribute(ctypes.byref(a), dict(runtime)[rname], 0)
        cu.cuDeviceGetAttribute(ctypes.byref(b), dict(driver)[dname], 0)
        if a.value != b.value:
            failures.append(f"{rname} {a.value} != {dname} {b.value}")
    if failures:
        print("\n".join(failures))
        return 1
    print(f"ok: {len(runtime)} runtime and {len(driver)} driver attribute ids answered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
