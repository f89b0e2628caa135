"""torch.profiler's CUDA activities under torchada (its CUPTI, shim/cupti/): a GPU timeline of
device kernels, bridged operators, cuBLAS calls and copies, each linked to its operator."""
from conftest import check, run


def test_profiler_device_rows(mode, tmp_path):
    trace = tmp_path / "trace.json"
    check(run(mode, f"""
        import json
        import torch
        from torch.profiler import ProfilerActivity, profile, record_function

        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                    torch.nn.Linear(128, 8)).cuda()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        host_x, host_y = torch.randn(32, 64), torch.randn(32, 8)

        def step():
            x, y = host_x.to("cuda"), host_y.to("cuda")
            with record_function("forward_pass"):
                loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            values, _ = torch.cummax(x, dim=1)  # a bridged operator (PyTorch's CPU kernel)
            return loss.item(), values.sum().item()

        step()  # warm-up: the first call of each operator latches, loads, allocates
        for session in range(2):  # two sessions in one process: the second starts afresh
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                step()
            events = prof.events()
            device = [e for e in events if e.device_type == torch.autograd.DeviceType.CUDA]
            names = {{e.name for e in device}}
            assert any(n == "aten::addmm [cuBLAS]" for n in names), sorted(names)
            assert any(n.endswith("[torchada device kernel]") for n in names), sorted(names)
            assert "aten::cummax [torchada bridge: CPU kernel]" in names or \\
                   "aten::_cummax_helper [torchada bridge: CPU kernel]" in names, sorted(names)
            assert any(n.startswith("Memcpy HtoD") for n in names), sorted(names)
            assert any(n.startswith("Memcpy DtoH") for n in names), sorted(names)
            for e in device:
                assert e.time_range.end >= e.time_range.start, e
            # key_averages(): device time per operator, from the device rows linked to it.
            avg = {{a.key: a for a in prof.key_averages()}}
            assert avg["aten::addmm"].device_time_total > 0, avg["aten::addmm"]
            assert avg["aten::cummax"].device_time_total > 0
            cpu_only = avg["aten::detach"] if "aten::detach" in avg else None
            assert cpu_only is None or cpu_only.device_time_total == 0
            # The device time of an operator lies inside its CPU span on a synchronous path: the
            # bridged cummax ran on the host while its operator ran.
            bridged = [e for e in device if "cummax" in e.name]
            assert bridged
        prof.export_chrome_trace({str(trace)!r})
        trace = json.load(open({str(trace)!r}))["traceEvents"]
        gpu = [e for e in trace if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
        assert gpu and all(e["pid"] == 0 for e in gpu)
        assert all("External id" in e["args"] for e in gpu if e["cat"] == "kernel")
        # record_function's scope on the device row (its CUSTOM1 correlation).
        assert any(e.get("cat") == "gpu_user_annotation" and e["name"] == "forward_pass"
                   for e in trace), sorted({{e.get("cat") for e in trace}})
        print("OK")
    """))
