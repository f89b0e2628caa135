"""Matrix products whose CUDA implementation is cuBLAS/cuBLASLt alone, against the CPU."""
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
