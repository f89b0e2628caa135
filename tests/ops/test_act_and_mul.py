"""torchada::silu_and_mul and torchada::gelu_and_mul (exact and tanh)."""
import pytest
import torch
import torch.nn.functional as F

from conftest import assert_close, graph_targets

silu_and_mul = torch.ops.torchada.silu_and_mul
gelu_and_mul = torch.ops.torchada.gelu_and_mul


def ref_silu(x):
    a, b = x.float().chunk(2, -1)
    return (F.silu(a) * b).to(x.dtype)


def ref_gelu(x, approximate):
    a, b = x.float().chunk(2, -1)
    return (F.gelu(a, approximate=approximate) * b).to(x.dtype)


CASES = {
    "silu": (lambda x: silu_and_mul(x), ref_silu),
    "gelu": (lambda x: gelu_and_mul(x, "none"), lambda x: ref_gelu(x, "none")),
    "gelu_tanh": (lambda x: gelu_and_mul(x, "tanh"), lambda x: ref_gelu(x, "tanh")),
}
SHAPES = [(1, 2), (7, 66), (3, 256), (2, 3, 514), (2, 2, 2, 32), (16, 8192)]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_reference(device, dtype, case, shape):
    fn, ref = CASES[case]
    x = torch.randn(shape, device=device, dtype=dtype) * 3
    out = fn(x)
    assert out.shape == (*shape[:-1], shape[-1] // 2) and out.dtype == dtype
    assert_close(out, ref(x), dtype)


@pytest.mark.parametrize("case", CASES)
def test_empty_and_non_contiguous(device, case):
    fn, ref = CASES[case]
    assert fn(torch.empty(0, 8, device=device)).shape == (0, 4)
    assert fn(torch.empty(3, 0, device=device)).shape == (3, 0)
    x = torch.randn(40, 10, device=device).t()  # [10, 40] strided
    assert_close(fn(x), ref(x), torch.float32)


def test_errors(device):
    with pytest.raises(RuntimeError, match="must be even"):
        silu_and_mul(torch.randn(3, 5, device=device))
    with pytest.raises(RuntimeError, match="must be float32, float16 or bfloat16"):
        silu_and_mul(torch.ones(3, 4, device=device, dtype=torch.int32))
    with pytest.raises(RuntimeError, match="approximate must be 'none' or 'tanh'"):
        gelu_and_mul(torch.randn(2, 4, device=device), "erf")
    with pytest.raises(RuntimeError, match="at least one dimension"):
        gelu_and_mul(torch.tensor(1.0, device=device))


def test_opcheck(device):
    x = torch.randn(3, 4, 64, device=device, requires_grad=True)
    torch.library.opcheck(silu_and_mul, (x,))
    torch.library.opcheck(gelu_and_mul, (x.detach(), "tanh"))
    torch.library.opcheck(gelu_and_mul, (x.detach().bfloat16(), "none"))


@pytest.mark.parametrize("case", CASES)
def test_compile_fullgraph(device, case):
    fn, _ = CASES[case]
    x = torch.randn(4, 128, device=device)
    name = "torchada.silu_and_mul" if case == "silu" else "torchada.gelu_and_mul"
    assert name in graph_targets(fn, x)
    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True, dynamic=True)
    assert_close(compiled(x), fn(x), torch.float32)
    x2 = torch.randn(3, 5, 64, device=device)
    assert_close(compiled(x2), fn(x2), torch.float32)


@pytest.mark.parametrize("dt", [torch.float32, torch.bfloat16], ids=str)
def test_silu_and_mul_autograd(device, dt):
    x = torch.randn(3, 5, 64, device=device, dtype=dt, requires_grad=True)
    g = torch.randn(3, 5, 32, device=device, dtype=dt)
    (gx,) = torch.autograd.grad(silu_and_mul(x), (x,), g)
    xr = x.detach().float().requires_grad_()
    (rx,) = torch.autograd.grad(ref_silu(xr), (xr,), g.float())
    tol = dict(atol=1e-5, rtol=1e-5) if dt == torch.float32 else dict(atol=3e-2, rtol=3e-2)
    torch.testing.assert_close(gx.float(), rx, **tol)


def test_silu_and_mul_autograd_compiled(device):
    x = torch.randn(6, 64, device=device, requires_grad=True)
    torch._dynamo.reset()
    f = torch.compile(lambda a: silu_and_mul(a).pow(2).sum(), fullgraph=True)
    (gc,) = torch.autograd.grad(f(x), (x,))
    (ge,) = torch.autograd.grad(silu_and_mul(x).pow(2).sum(), (x,))
    torch.testing.assert_close(gc, ge)
