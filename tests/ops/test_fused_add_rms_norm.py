"""torchada::fused_add_rms_norm: in place on input and residual."""
import pytest
import torch

from conftest import assert_close, graph_targets

op = torch.ops.torchada.fused_add_rms_norm


def reference(x, r, w, eps):
    res = (x.float() + r.float()).to(x.dtype)
    rf = res.float()
    out = (rf * torch.rsqrt(rf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)
    return out, res


@pytest.mark.parametrize("shape", [(1, 1), (5, 31), (3, 128), (2, 3, 257), (8, 4096)], ids=str)
def test_matches_reference(device, dtype, shape):
    x = torch.randn(shape, device=device, dtype=dtype)
    r = torch.randn(shape, device=device, dtype=dtype)
    w = torch.randn(shape[-1], device=device, dtype=dtype)
    ex, er = reference(x, r, w, 1e-6)
    xp, rp = x.data_ptr(), r.data_ptr()
    assert op(x, r, w, 1e-6) is None
    assert x.data_ptr() == xp and r.data_ptr() == rp  # really in place
    assert_close(r, er, dtype)
    assert_close(x, ex, dtype)


def test_empty(device):
    x = torch.empty(0, 8, device=device)
    r = torch.empty(0, 8, device=device)
    op(x, r, torch.ones(8, device=device), 1e-6)
    assert x.shape == (0, 8)


def test_non_contiguous_views_updated_in_place(device, dtype):
    xb = torch.randn(64, 24, device=device, dtype=dtype)
    rb = torch.randn(24, 128, device=device, dtype=dtype)[:, ::2]  # [24, 64], strided
    x = xb.t()  # [24, 64], strided
    w = torch.randn(64, device=device, dtype=dtype)
    ex, er = reference(x.clone(), rb.clone(), w, 1e-6)
    op(x, rb, w, 1e-6)
    assert_close(xb.t(), ex, dtype)  # the base tensor saw the write
    assert_close(rb, er, dtype)


def test_errors(device):
    x = torch.randn(4, 8, device=device)
    with pytest.raises(RuntimeError, match="input and residual must have the same shape"):
        op(x, torch.randn(4, 9, device=device), torch.ones(8, device=device), 1e-6)
    with pytest.raises(RuntimeError, match="same dtype"):
        op(x, x.clone().half(), torch.ones(8, device=device), 1e-6)
    with pytest.raises(RuntimeError, match="must be float32, float16 or bfloat16"):
        op(x.int(), x.int(), torch.ones(8, device=device).int(), 1e-6)
    with pytest.raises(RuntimeError, match="same device"):
        op(x, torch.randn(4, 8, device="meta"), torch.ones(8, device=device), 1e-6)
    with pytest.raises(RuntimeError, match=r"weight must have shape \[8\]"):
        op(x, x.clone(), torch.ones(4, device=device), 1e-6)


def test_opcheck(device):
    args = (torch.randn(2, 3, 64, device=device), torch.randn(2, 3, 64, device=device),
            torch.randn(64, device=device), 1e-6)
    torch.library.opcheck(op, args)


def test_compile_fullgraph(device):
    def fn(x, r, w):
        op(x, r, w, 1e-6)
        return x + 1, r

    x = torch.randn(4, 64, device=device)
    r = torch.randn(4, 64, device=device)
    w = torch.randn(64, device=device)
    assert "torchada.fused_add_rms_norm" in graph_targets(fn, x.clone(), r.clone(), w)
    torch._dynamo.reset()
    cx, cr = x.clone(), r.clone()
    got = torch.compile(fn, fullgraph=True)(cx, cr, w)
    exp = fn(x.clone(), r.clone(), w)
    assert_close(got[0], exp[0], torch.float32)
    assert_close(got[1], exp[1], torch.float32)
    assert_close(cr, exp[1], torch.float32)  # the mutation reached the caller's tensor
