"""torchada's libnvidia-ml.so.1: loaded for the sim backend once the backend is chosen, so a later
dlopen("libnvidia-ml.so.1") finds it; it answers from torchada's CUDA runtime. Not loaded for the
cuda backend (NVIDIA's NVML serves there).   nvml_test.py sim|cuda   (libtorchada.so preloaded)"""
import ctypes
import sys


def main():
    backend = sys.argv[1]
    rt = ctypes.CDLL("libcudart.so.13")
    count = ctypes.c_int(-1)
    rc = rt.cudaGetDeviceCount(ctypes.byref(count))  # chooses the backend
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError as e:
        if backend == "cuda":
            print(f"ok: no NVML for the cuda backend ({e})")
            return 0
        print(f"FAIL: libnvidia-ml.so.1 not found under the sim backend: {e}")
        return 1
    if backend == "cuda":
        if "/torchada/nvml/" in open("/proc/self/maps").read():
            print("FAIL: torchada's NVML was loaded for the cuda backend")
            return 1
        print("ok: the NVML found for the cuda backend is NVIDIA's")
        return 0
    assert rc == 0 and count.value >= 1, (rc, count.value)
    assert nvml.nvmlDeviceGetCount_v2(ctypes.byref(ctypes.c_uint())) == 1, "uninitialised"
    assert nvml.nvmlInit_v2() == 0
    n = ctypes.c_uint()
    assert nvml.nvmlDeviceGetCount_v2(ctypes.byref(n)) == 0 and n.value == count.value, n.value
    bus = ctypes.create_string_buffer(64)
    assert rt.cudaDeviceGetPCIBusId(bus, 64, count.value - 1) == 0
    dev, idx = ctypes.c_void_p(), ctypes.c_uint(99)
    assert nvml.nvmlDeviceGetHandleByPciBusId_v2(bus, ctypes.byref(dev)) == 0
    assert nvml.nvmlDeviceGetIndex(dev, ctypes.byref(idx)) == 0 and idx.value == count.value - 1
    assert nvml.nvmlDeviceGetHandleByPciBusId_v2(b"ffff:ff:1f.7", ctypes.byref(dev)) == 6  # not found
    # nvmlGpuFabricInfo_v2_t: version, clusterUuid[16], status, cliqueId, state, healthMask.
    info = (ctypes.c_ubyte * 64)()
    ctypes.c_uint.from_buffer(info).value = 0xDEAD
    assert nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) == 0
    assert nvml.nvmlDeviceGetGpuFabricInfoV(dev, info) == 0
    state_offset = 4 + 16 + 4 + 4
    assert info[state_offset] == 0, "NVML_GPU_FABRIC_STATE_NOT_SUPPORTED"
    name = ctypes.create_string_buffer(96)
    assert nvml.nvmlDeviceGetName(dev, name, 96) == 0 and name.value, name.value
    assert nvml.nvmlDeviceGetComputeRunningProcesses(dev, ctypes.byref(n), None) == 3  # not supported
    v = ctypes.c_int()
    assert nvml.nvmlSystemGetCudaDriverVersion_v2(ctypes.byref(v)) == 0 and v.value >= 13000
    assert nvml.nvmlShutdown() == 0 and nvml.nvmlShutdown() == 1
    print(f"ok: torchada's NVML answers for {n.value} device(s), {name.value.decode()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
