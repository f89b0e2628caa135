"""Matrix products whose CUDA implementation is cuBLAS/cuBLASLt alone, against the CPU."""
import re

import pytest

from conftest import check, run


# TF32 rounds inputs to 10 mantissa bits (the simulated muBLAS does, like NVIDIA's tensor cores).
@pytest.mark.parametrize("dtype,tf32,tol", [("float32", False, 1e-5), ("float32", True, 2e-3),
                                            ("float16", False, 2e-2), ("bfloat16", False, 5e-2)])
def test_mm_bmm_linear(mode, dtype, tf32, tol):
    check(run(mode, f"""
        import torch
        torch.backends.cuda.matmul.allow_tf32 = {tf32}
        dt = torch.{dtype}
        g = torch.Generator().manual_seed(1)
        a, b = torch.randn(37, 53, generator=g), torch.randn(53, 29, generator=g)
        x, w = torch.randn(4, 11, 53, generator=g), torch.randn(29, 53, generator=g)
        p, q = torch.randn(6, 17, 23, generator=g), torch.randn(6, 23, 19, generator=g)
        def close(dev, ref):
            ref = ref.to(dt).float()
            err = (dev.cpu().float() - ref).abs().max().item()
            scale = ref.abs().max().item()
            assert err <= {tol} * max(scale, 1.0), (err, scale)
        close(torch.mm(a.to(dt).cuda(), b.to(dt).cuda()), a.to(dt).float() @ b.to(dt).float())
        close(torch.bmm(p.to(dt).cuda(), q.to(dt).cuda()), torch.bmm(p.to(dt).float(), q.to(dt).float()))
        close(torch.nn.functional.linear(x.to(dt).cuda(), w.to(dt).cuda()),
              torch.nn.functional.linear(x.to(dt).float(), w.to(dt).float()))
        print("OK")
    """))


# linear with a bias is addmm, which PyTorch runs through cuBLASLt (cublasLtMatmul with a BIAS
# epilogue) handing it its cuBLAS handle cast to cublasLtHandle_t: the shim resolves that handle
# (shim/cublasLt/handles.cc), so the product is muBLASLt's, not the kernel bridge's host fallback.
@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float16", 2e-2), ("bfloat16", 5e-2)])
def test_linear_with_bias_reaches_cublaslt(mode, dtype, tol):
    p = check(run(mode, f"""
        import torch
        import torch.nn.functional as F
        torch.backends.cuda.matmul.allow_tf32 = False
        dt = torch.{dtype}
        g = torch.Generator().manual_seed(2)
        w, b = torch.randn(29, 53, generator=g), torch.randn(29, generator=g)
        for x in (torch.randn(37, 53, generator=g), torch.randn(4, 11, 53, generator=g)):
            dev = F.linear(x.to(dt).cuda(), w.to(dt).cuda(), b.to(dt).cuda()).cpu().float()
            ref = F.linear(x.to(dt).float(), w.to(dt).float(), b.to(dt).float()).to(dt).float()
            err = (dev - ref).abs().max().item()
            scale = ref.abs().max().item()
            assert err <= {tol} * max(scale, 1.0), (err, scale)
        report = getattr(torch.ops.torchada, "bridge_report", None) if hasattr(torch.ops, "torchada") else None
        if report is not None:  # the kernel bridge is loaded: addmm was PyTorch's own, natively
            ops, paths, calls, _ = report()
            rows = {{(o, p): c for o, p, c in zip(ops, paths, calls)}}
            assert rows.get(("aten::addmm", "native"), 0) >= 2, rows
            assert not any(o == "aten::addmm" and p != "native" for o, p in rows), rows
        print("OK")
    """, env={"TORCHADA_STATS": "1"}))
    assert "OK" in p.stdout
    stats = {}
    for line in p.stderr.splitlines():
        m = re.search(r"\]\s+(cublasLt\w+)\s+(\d+)\s+(\d+)\s", line)
        if m:
            stats[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    for fn in ("cublasLtMatmulAlgoGetHeuristic", "cublasLtMatmul"):
        assert fn in stats, (fn, p.stderr[-4000:])
        calls, errors = stats[fn]
        assert calls >= 2 and errors == 0, (fn, calls, errors, p.stderr[-4000:])
    assert "was not made by cublasLtCreate nor by cublasCreate" not in p.stderr
