"""PyTorch's NVML-based monitoring under torchada (torch.cuda.utilization, memory_usage,
device_memory_used, clock_rate, temperature, power_draw), answered by torchada's NVML from the
simulator's MTML: utilisation from the time the device's streams spend running work, memory in use
from its allocations; the simulated device has no temperature or power sensor."""
from conftest import check, run


def test_utilization_and_memory_follow_the_work(mode):
    out = check(run(mode, """
        import time
        import pynvml
        import torch
        torch.cuda.init()
        time.sleep(0.05)
        idle = torch.cuda.utilization(0)           # no work since the first reading's baseline
        x = torch.randn(1024, 1024, device="cuda")
        end = time.time() + 0.5
        while time.time() < end:
            y = x @ x
        torch.cuda.synchronize()
        busy = torch.cuda.utilization(0)
        memory_busy = torch.cuda.memory_usage(0)
        used = torch.cuda.device_memory_used(0)
        reserved = torch.cuda.memory_reserved(0)
        extra = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
        more = torch.cuda.device_memory_used(0)
        print("MON", idle, busy, memory_busy, used, reserved, more - used)
        assert idle == 0, idle
        assert 0 < busy <= 100 and 0 < memory_busy <= 100, (busy, memory_busy)
        assert used >= reserved > 0, (used, reserved)
        assert more - used >= 64 << 20, more - used
        """))
    assert "MON 0 " in out.stdout, out.stdout


def test_clocks_uuid_and_the_sensors_the_simulator_lacks(mode):
    check(run(mode, """
        import pynvml
        import torch
        props = torch.cuda.get_device_properties(0)
        assert torch.cuda.clock_rate(0) == props.clock_rate // 1000, (torch.cuda.clock_rate(0),
                                                                      props.clock_rate)
        for f in (torch.cuda.temperature, torch.cuda.power_draw):
            try:
                f(0)
            except pynvml.NVMLError_NotSupported:
                pass
            else:
                raise AssertionError(f.__name__ + " answered without a sensor")
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        assert pynvml.nvmlDeviceGetUUID(h) == "GPU-" + str(props.uuid), pynvml.nvmlDeviceGetUUID(h)
        assert pynvml.nvmlDeviceGetCudaComputeCapability(h) == (props.major, props.minor)
        m = pynvml.nvmlDeviceGetMemoryInfo(h)
        assert m.total == props.total_memory and m.free + m.used == m.total, (m.total, m.used)
        v2 = pynvml.nvmlDeviceGetMemoryInfo(h, version=pynvml.nvmlMemory_v2)
        assert v2.total == m.total and v2.used >= 0, v2.used
        assert pynvml.nvmlSystemGetDriverVersion()
        print("OK")
        """))
