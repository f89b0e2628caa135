"""torchada's libnvidia-ml.so.1: loaded for the sim backend once the backend is chosen, so a later
dlopen("libnvidia-ml.so.1") finds it; it answers from torchada's CUDA runtime, and its monitoring
calls from the simulator's MTML (libmtml.so). Not loaded for the cuda backend (NVIDIA's NVML
serves there). Without MTML, monitoring answers NVML_ERROR_NOT_SUPPORTED and the rest works.
   nvml_test.py sim | cuda | nomtml SIM_LIB_DIR      (libtorchada.so preloaded)"""
import atexit
import ctypes
import os
import shutil
import sys
import tempfile
import time

NOT_SUPPORTED = 3


class Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


class Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


def monitoring(nvml, rt, dev):
    """What the simulator's MTML reports through NVML, checked against the runtime's own view."""
    mem = Memory()
    assert nvml.nvmlDeviceGetMemoryInfo(dev, ctypes.byref(mem)) == 0
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    assert rt.cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total)) == 0
    assert mem.total == total.value and mem.free + mem.used == mem.total, (mem.total, total.value)
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(96 << 20)) == 0
    after = Memory()
    assert nvml.nvmlDeviceGetMemoryInfo(dev, ctypes.byref(after)) == 0
    assert after.used - mem.used == 96 << 20, (after.used, mem.used)
    # Utilisation: none while idle, some once a stream has run work (a large device copy).
    util = Utilization()
    time.sleep(0.02)
    assert nvml.nvmlDeviceGetUtilizationRates(dev, ctypes.byref(util)) == 0
    time.sleep(0.02)
    assert nvml.nvmlDeviceGetUtilizationRates(dev, ctypes.byref(util)) == 0 and util.gpu == 0
    q = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(q), ctypes.c_size_t(96 << 20)) == 0
    stream = ctypes.c_void_p()
    assert rt.cudaStreamCreateWithFlags(ctypes.byref(stream), 1) == 0  # non-blocking
    for _ in range(8):
        assert rt.cudaMemcpyAsync(q, p, ctypes.c_size_t(96 << 20), 3, stream) == 0
    assert rt.cudaStreamSynchronize(stream) == 0
    assert nvml.nvmlDeviceGetUtilizationRates(dev, ctypes.byref(util)) == 0
    assert 0 < util.gpu <= 100 and 0 < util.memory <= 100, (util.gpu, util.memory)
    for x in (p, q):
        rt.cudaFree(x)
    rt.cudaStreamDestroy(stream)
    clock, rate = ctypes.c_uint(), ctypes.c_int()
    assert rt.cudaDeviceGetAttribute(ctypes.byref(rate), 13, 0) == 0  # clock rate, kHz (device 0)
    assert nvml.nvmlDeviceGetClockInfo(dev, 1, ctypes.byref(clock)) == 0  # NVML_CLOCK_SM
    assert clock.value == rate.value // 1000, (clock.value, rate.value)
    assert nvml.nvmlDeviceGetClockInfo(dev, 2, ctypes.byref(clock)) == NOT_SUPPORTED  # memory
    assert nvml.nvmlDeviceGetTemperature(dev, 0, ctypes.byref(clock)) == NOT_SUPPORTED  # no sensor
    assert nvml.nvmlDeviceGetPowerUsage(dev, ctypes.byref(clock)) == NOT_SUPPORTED
    version = ctypes.create_string_buffer(80)
    assert nvml.nvmlSystemGetDriverVersion(version, 80) == 0 and version.value, version.value
    assert nvml.nvmlSystemGetDriverVersion(version, 2) == 7  # NVML_ERROR_INSUFFICIENT_SIZE


def main():
    backend = sys.argv[1]
    if backend == "nomtml":  # every simulated library but MTML
        hidden = tempfile.mkdtemp(prefix="torchada-nomtml-")
        atexit.register(shutil.rmtree, hidden, True)
        for f in os.listdir(sys.argv[2]):
            if not f.startswith("libmtml"):
                os.symlink(os.path.join(sys.argv[2], f), os.path.join(hidden, f))
        os.environ["TORCHADA_SIM_LIB_DIR"] = hidden
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
    uuid = ctypes.create_string_buffer(96)
    assert nvml.nvmlDeviceGetUUID(dev, uuid, 96) == 0 and uuid.value.startswith(b"GPU-"), uuid.value
    if backend == "nomtml":
        mem = Memory()
        assert nvml.nvmlDeviceGetMemoryInfo(dev, ctypes.byref(mem)) == NOT_SUPPORTED
        assert nvml.nvmlDeviceGetUtilizationRates(dev, ctypes.byref(Utilization())) == NOT_SUPPORTED
    else:
        monitoring(nvml, rt, dev)
    v = ctypes.c_int()
    assert nvml.nvmlSystemGetCudaDriverVersion_v2(ctypes.byref(v)) == 0 and v.value >= 13000
    assert nvml.nvmlShutdown() == 0 and nvml.nvmlShutdown() == 1
    print(f"ok: torchada's NVML answers for {n.value} device(s), {name.value.decode()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
