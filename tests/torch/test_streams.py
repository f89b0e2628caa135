"""Streams and events under torchada."""
from conftest import check, run


def test_streams_and_events(mode):
    check(run(mode, """
        import torch
        lo, hi = torch.cuda.Stream(priority=0), torch.cuda.Stream(priority=-1)
        assert hi.priority <= lo.priority
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        host = torch.arange(1 << 20, dtype=torch.float32).pin_memory()
        with torch.cuda.stream(lo):
            start.record()
            dev = host.to("cuda", non_blocking=True)
            end.record()
        hi.wait_stream(lo)
        with torch.cuda.stream(hi):
            back = dev.to("cpu", non_blocking=True)
        end.synchronize()
        assert end.query()
        assert start.elapsed_time(end) >= 0.0
        torch.cuda.synchronize()
        assert hi.query() and lo.query()
        assert torch.equal(back, host)
        assert torch.cuda.current_stream() == torch.cuda.default_stream()
        print("OK")
    """))
