"""Host <-> device copies, byte-exact, under torchada."""
from conftest import check, run


def test_copies_round_trip(mode):
    check(run(mode, """
        import torch
        g = torch.Generator().manual_seed(0)
        for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.uint8):
            src = (torch.randn(257, 33, generator=g) * 100).to(dtype)
            dev = src.cuda()
            assert dev.is_cuda and dev.dtype == dtype
            back = dev.cpu()
            assert torch.equal(back.view(torch.uint8) if dtype != torch.uint8 else back,
                               src.view(torch.uint8) if dtype != torch.uint8 else src), dtype
        # Non-contiguous sources on the host: transposed and sliced.
        base = torch.arange(12 * 10, dtype=torch.float32).reshape(12, 10)
        for src in (base.t(), base[::2, 1::3]):
            assert not src.is_contiguous()
            assert torch.equal(src.cuda().cpu(), src)
        # Device to device (a plain copy, no kernel) and .item().
        a = torch.arange(64, dtype=torch.float32).cuda()
        b = torch.empty_like(a)
        b.copy_(a)
        assert torch.equal(b.cpu(), torch.arange(64, dtype=torch.float32))
        assert a[5].item() == 5.0
        print("OK")
    """))


def test_pinned_and_non_blocking(mode):
    check(run(mode, """
        import torch
        src = torch.arange(1 << 16, dtype=torch.int32).pin_memory()
        assert src.is_pinned()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            dev = src.to("cuda", non_blocking=True)
            out = torch.empty(1 << 16, dtype=torch.int32).pin_memory()
            out.copy_(dev, non_blocking=True)
        s.synchronize()
        assert torch.equal(out, src)
        print("OK")
    """))
