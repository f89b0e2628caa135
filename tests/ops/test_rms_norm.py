"""torchada::rms_norm: reference comparison, edge cases, errors, opcheck, compile, autograd."""
import pytest
import torch

from conftest import assert_close, graph_targets

op = torch.ops.torchada.rms_norm


def reference(x, w, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


SHAPES = [(1, 1), (7, 33), (4, 128), (2, 3, 257), (2, 2, 2, 64), (16, 4096)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_reference(device, dtype, shape):
    x = torch.randn(shape, device=device, dtype=dtype)
    w = torch.randn(shape[-1], device=device, dtype=dtype)
    out = op(x, w, 1e-6)
    assert out.shape == x.shape and out.dtype == dtype and out.is_contiguous()
    assert_close(out, reference(x, w, 1e-6), dtype)


def test_eps_matters(device):
    x = torch.full((2, 8), 1e-3, device=device)
    w = torch.ones(8, device=device)
    assert not torch.allclose(op(x, w, 1e-6), op(x, w, 1.0))
    assert_close(op(x, w, 1.0), reference(x, w, 1.0), torch.float32)


def test_empty_and_single(device):
    w = torch.randn(16, device=device)
    assert op(torch.empty(0, 16, device=device), w, 1e-6).shape == (0, 16)
    x = torch.randn(1, device=device)
    assert_close(op(x, torch.ones(1, device=device), 1e-6), reference(x, torch.ones(1, device=device), 1e-6), torch.float32)


def test_non_contiguous(device, dtype):
    base = torch.randn(64, 40, device=device, dtype=dtype)
    x = base.t()  # [40, 64], strided
    w = torch.randn(64, device=device, dtype=dtype)
    assert not x.is_contiguous()
    assert_close(op(x, w, 1e-5), reference(x, w, 1e-5), dtype)
    sl = torch.randn(8, 96, device=device, dtype=dtype)[:, 16:80]  # row stride != hidden
    assert_close(op(sl, w, 1e-5), reference(sl, w, 1e-5), dtype)


def test_errors(device):
    x = torch.randn(4, 8, device=device)
    with pytest.raises(RuntimeError, match="must be float32, float16 or bfloat16, got Long"):
        op(x.long(), torch.ones(8, device=device).long(), 1e-6)
    with pytest.raises(RuntimeError, match="same dtype"):
        op(x, torch.ones(8, device=device, dtype=torch.float16), 1e-6)
    with pytest.raises(RuntimeError, match=r"weight must have shape \[8\]"):
        op(x, torch.ones(7, device=device), 1e-6)
    with pytest.raises(RuntimeError, match="same device"):
        op(x, torch.ones(8, device="meta"), 1e-6)
    with pytest.raises(RuntimeError, match="at least one dimension"):
        op(torch.tensor(1.0, device=device), torch.ones(1, device=device), 1e-6)


def test_opcheck(device):
    x = torch.randn(3, 5, 32, device=device, requires_grad=True)
    w = torch.randn(32, device=device, requires_grad=True)
    torch.library.opcheck(op, (x, w, 1e-6))
    torch.library.opcheck(op, (x.detach().half(), w.detach().half(), 1e-6))


def test_compile_fullgraph(device):
    x = torch.randn(4, 64, device=device)
    w = torch.randn(64, device=device)
    fn = lambda a, b: op(a, b, 1e-6) * 2  # noqa: E731
    assert "torchada.rms_norm" in graph_targets(fn, x, w)
    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True, dynamic=True)
    assert_close(compiled(x, w), fn(x, w), torch.float32)
    x2 = torch.randn(9, 64, device=device)  # another size through the dynamic graph
    assert_close(compiled(x2, w), fn(x2, w), torch.float32)


@pytest.mark.parametrize("dt", [torch.float32, torch.bfloat16], ids=str)
def test_autograd(device, dt):
    x = torch.randn(3, 4, 48, device=device, dtype=dt, requires_grad=True)
    w = torch.randn(48, device=device, dtype=dt, requires_grad=True)
    g = torch.randn(3, 4, 48, device=device, dtype=dt)
    gx, gw = torch.autograd.grad(op(x, w, 1e-6), (x, w), g)
    xr = x.detach().float().requires_grad_()
    wr = w.detach().float().requires_grad_()
    rx, rw = torch.autograd.grad(reference(xr, wr, 1e-6), (xr, wr), g.float())
    tol = dict(atol=1e-4, rtol=1e-4) if dt == torch.float32 else dict(atol=5e-2, rtol=5e-2)
    torch.testing.assert_close(gx.float(), rx, **tol)
    torch.testing.assert_close(gw.float(), rw, **tol)


def test_autograd_compiled(device):
    x = torch.randn(5, 32, device=device, requires_grad=True)
    w = torch.randn(32, device=device, requires_grad=True)
    torch._dynamo.reset()
    f = torch.compile(lambda a, b: op(a, b, 1e-6).sum(), fullgraph=True)
    gx, gw = torch.autograd.grad(f(x, w), (x, w))
    ex, ew = torch.autograd.grad(op(x, w, 1e-6).sum(), (x, w))
    torch.testing.assert_close(gx, ex)
    torch.testing.assert_close(gw, ew)
