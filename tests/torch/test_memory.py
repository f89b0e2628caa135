"""The caching allocator (default and expandable segments) under torchada."""
import pytest

from conftest import check, run

ALLOCATOR = """
    import torch
    torch.cuda.init()
    free0, total = torch.cuda.mem_get_info()
    assert 0 < free0 <= total
    x = torch.empty(1 << 20, dtype=torch.float32, device="cuda")  # 4 MiB, no fill kernel
    assert torch.cuda.memory_allocated() >= 4 << 20, torch.cuda.memory_allocated()
    assert torch.cuda.memory_reserved() >= torch.cuda.memory_allocated()
    stats = torch.cuda.memory_stats()
    assert stats["allocation.all.current"] >= 1, stats
    free1, _ = torch.cuda.mem_get_info()
    assert free1 < free0, (free0, free1)
    y = torch.empty(3, 5, device="cuda")
    assert y.is_cuda and y.shape == (3, 5)
    del x, y
    torch.cuda.empty_cache()
    assert torch.cuda.memory_allocated() == 0, torch.cuda.memory_allocated()
    assert torch.cuda.memory_reserved() == 0, torch.cuda.memory_reserved()
    print("OK")
"""


# expandable_segments: the allocator maps physical memory through the driver's VMM calls, and asks
# NVML about fabric memory (torchada's libnvidia-ml.so.1 answers on MUSA machines).
@pytest.mark.parametrize("conf", ["", "expandable_segments:True"])
def test_caching_allocator(mode, conf):
    env = {"PYTORCH_CUDA_ALLOC_CONF": conf} if conf else {}
    assert "OK" in check(run(mode, ALLOCATOR, env=env)).stdout
