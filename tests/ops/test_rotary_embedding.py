"""torchada::rotary_embedding: GPT-NeoX and GPT-J layouts, in place on query and key."""
import pytest
import torch

from conftest import assert_close, graph_targets

op = torch.ops.torchada.rotary_embedding


def make_cache(max_pos, rot_dim, dtype, device, base=10000.0):
    inv = 1.0 / (base ** (torch.arange(0, rot_dim, 2, dtype=torch.float32) / rot_dim))
    freqs = torch.outer(torch.arange(max_pos, dtype=torch.float32), inv)
    return torch.cat([freqs.cos(), freqs.sin()], -1).to(dtype).to(device)


def reference(positions, x, head_size, cache, neox):
    """x: positions.shape + [heads * head_size] or + [heads, head_size]; returns rotated copy."""
    shape = x.shape
    xf = x.float().reshape(*positions.shape, -1, head_size)
    rot = cache.shape[1]
    cos, sin = cache.float()[positions].chunk(2, -1)  # [..., rot/2]
    cos, sin = cos.unsqueeze(-2), sin.unsqueeze(-2)
    r, tail = xf[..., :rot], xf[..., rot:]
    if neox:
        a, b = r.chunk(2, -1)
        out = torch.cat([a * cos - b * sin, b * cos + a * sin], -1)
    else:
        a, b = r[..., 0::2], r[..., 1::2]
        out = torch.stack([a * cos - b * sin, b * cos + a * sin], -1).flatten(-2)
    return torch.cat([out, tail], -1).reshape(shape).to(x.dtype)


@pytest.mark.parametrize("neox", [True, False], ids=["neox", "gptj"])
@pytest.mark.parametrize(
    "lead,q_heads,k_heads,head_size,rot_dim",
    [((1,), 1, 1, 2, 2), ((7,), 4, 2, 64, 64), ((2, 5), 3, 1, 128, 64), ((3,), 2, 2, 80, 80)],
    ids=str)
def test_matches_reference(device, dtype, neox, lead, q_heads, k_heads, head_size, rot_dim):
    positions = torch.randint(0, 100, lead, device=device)
    q = torch.randn(*lead, q_heads * head_size, device=device, dtype=dtype)
    k = torch.randn(*lead, k_heads, head_size, device=device, dtype=dtype)
    cache = make_cache(100, rot_dim, dtype, device)
    eq = reference(positions, q, head_size, cache, neox)
    ek = reference(positions, k, head_size, cache, neox)
    op(positions, q, k, head_size, cache, neox)
    assert_close(q, eq, dtype)
    assert_close(k, ek, dtype)


def test_int32_positions_empty_and_strided(device):
    cache = make_cache(16, 32, torch.float32, device)
    pos = torch.tensor([3, 0, 15], device=device, dtype=torch.int32)
    qkv = torch.randn(3, 3 * 64, device=device)  # q and k as column slices of a fused qkv
    q, k = qkv[:, :64], qkv[:, 64:128]
    eq = reference(pos.long(), q, 32, cache, True)
    ek = reference(pos.long(), k, 32, cache, True)
    v = qkv[:, 128:].clone()
    op(pos, q, k, 32, cache, True)
    assert_close(qkv[:, :64], eq, torch.float32)  # the slices of the base were rotated
    assert_close(qkv[:, 64:128], ek, torch.float32)
    assert torch.equal(qkv[:, 128:], v)  # and nothing else was touched
    e = torch.empty(0, 64, device=device)
    op(torch.empty(0, dtype=torch.long, device=device), e, e.clone(), 32, cache, False)


def test_errors(device):
    cache = make_cache(8, 16, torch.float32, device)
    pos = torch.zeros(2, dtype=torch.long, device=device)
    q = torch.randn(2, 32, device=device)
    k = torch.randn(2, 32, device=device)
    with pytest.raises(RuntimeError, match="positions must be int64 or int32"):
        op(pos.float(), q, k, 16, cache, True)
    with pytest.raises(RuntimeError, match="whole number of heads of size 20"):
        op(pos, q, k, 20, cache, True)
    with pytest.raises(RuntimeError, match="rot_dim must be even and at most head_size"):
        op(pos, q, k, 8, cache, True)
    with pytest.raises(RuntimeError, match="must start with the shape of positions"):
        op(torch.zeros(3, dtype=torch.long, device=device), q, k, 16, cache, True)
    with pytest.raises(RuntimeError, match="same dtype"):
        op(pos, q, k, 16, cache.half(), True)
    with pytest.raises(RuntimeError, match="same device"):
        op(pos, q, torch.randn(2, 32, device="meta"), 16, cache, True)
    if device == "cpu":  # the GPU kernel does not range-check (it would need a sync)
        with pytest.raises(RuntimeError, match=r"positions must be in \[0, 8\)"):
            op(torch.tensor([0, 8], device=device), q, k, 16, cache, True)


def test_opcheck(device):
    cache = make_cache(32, 64, torch.float32, device)
    pos = torch.randint(0, 32, (2, 3), device=device)
    q = torch.randn(2, 3, 4, 64, device=device)
    k = torch.randn(2, 3, 128, device=device)
    torch.library.opcheck(op, (pos, q, k, 64, cache, True))
    torch.library.opcheck(op, (pos, q, k, 64, cache, False))


def test_compile_fullgraph(device):
    def fn(pos, q, k, cache):
        op(pos, q, k, 64, cache, True)
        return q * 2, k

    cache = make_cache(32, 64, torch.float32, device)
    pos = torch.randint(0, 32, (5,), device=device)
    q = torch.randn(5, 256, device=device)
    k = torch.randn(5, 64, device=device)
    assert "torchada.rotary_embedding" in graph_targets(fn, pos, q.clone(), k.clone(), cache)
    torch._dynamo.reset()
    got = torch.compile(fn, fullgraph=True)(pos, q.clone(), k.clone(), cache)
    exp = fn(pos, q.clone(), k.clone(), cache)
    assert_close(got[0], exp[0], torch.float32)
    assert_close(got[1], exp[1], torch.float32)
