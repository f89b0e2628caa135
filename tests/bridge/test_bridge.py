"""Kernel bridge: PyTorch CUDA operators whose kernels are NVIDIA code run PyTorch's CPU kernels.

Each snippet computes on device="cuda" (the simulator) and compares with the same calls on CPU
tensors in the same process; it prints OK at the end so a silent early exit cannot pass.
"""
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import _tc, base_env, check, run, SHIM

PRELUDE = """
import torch
def same(a, b, tol=0.0):
    a, b = a.detach().cpu(), b.detach().cpu()
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    if tol == 0.0:
        assert torch.equal(a, b), (a, b)
    else:
        torch.testing.assert_close(a, b, atol=tol, rtol=tol)
"""


def run_ok(mode, body, env=None):
    p = check(run(mode, PRELUDE + textwrap.dedent(body), env=env))
    assert p.stdout.rstrip().endswith("OK"), p.stdout[-2000:]
    return p


def test_elementwise_reductions_indexing(mode):
    run_ok(mode, """
    c = torch.randn(5, 7)
    g = c.cuda()
    for f in (torch.exp, torch.tanh, torch.sigmoid, torch.abs, lambda t: t * 3 + 1,
              lambda t: torch.where(t > 0, t, -t), lambda t: t.clamp(-0.5, 0.5),
              lambda t: t.to(torch.float16), lambda t: t.to(torch.bfloat16).float(),
              lambda t: t.t().contiguous(), lambda t: torch.nn.functional.gelu(t),
              lambda t: torch.softmax(t, 1), lambda t: torch.log_softmax(t, 0)):
        same(f(g), f(c), tol=1e-6)   # ops/'s device kernels round like a GPU, not bit for bit
    for f in (lambda t: t.sum(), lambda t: t.mean(1), lambda t: t.amax(0), lambda t: t.argmax(1),
              lambda t: t.var(1), lambda t: t.norm(), lambda t: t.cumsum(1),
              lambda t: torch.sort(t, 1)[0], lambda t: torch.topk(t, 3)[1]):
        same(f(g), f(c), tol=1e-6)
    i = torch.tensor([4, 0, 2])
    same(g[i.cuda()], c[i])
    same(g[g > 0], c[c > 0])
    same(g.gather(1, torch.zeros(5, 2, dtype=torch.long).cuda()), c.gather(1, torch.zeros(5, 2, dtype=torch.long)))
    same(torch.nonzero(g > 0.5), torch.nonzero(c > 0.5))
    same(torch.cat([g, g], 0), torch.cat([c, c], 0))
    same(torch.full((3, 2), 7.0, device="cuda"), torch.full((3, 2), 7.0))
    same(torch.arange(10, device="cuda"), torch.arange(10))
    assert abs(g.sum().item() - c.sum().item()) < 1e-5
    print("OK")
    """)


def test_inplace_views_out_aliasing(mode):
    run_ok(mode, """
    base = torch.zeros(4, 6, device="cuda")
    v = base[:, 1::2]            # strided view
    r = v.add_(5)
    assert r is v                # the CUDA tensor itself comes back, not a copy
    assert base[:, 1::2].eq(5).all().item() and base[:, 0::2].eq(0).all().item()
    base.T[:, 2].fill_(3)        # a view's in-place write is visible in the base
    assert base[2].eq(3).all().item()
    x = torch.arange(6.0, device="cuda")
    x.add_(x)                    # input and output alias
    same(x, torch.arange(6.0) * 2)
    x[1:].copy_(x[:-1].clone())
    same(x, torch.tensor([0., 0., 2., 4., 6., 8.]))
    out = torch.empty(0, device="cuda")   # out= resized beyond its storage
    torch.cat([x, x], out=out)
    same(out, torch.tensor([0., 0., 2., 4., 6., 8.]).repeat(2))
    s = torch.empty(3, device="cuda")
    torch.sum(torch.ones(3, 4, device="cuda"), 1, out=s)
    same(s, torch.full((3,), 4.0))
    m = torch.zeros(3, 3, device="cuda")
    m.masked_fill_(torch.eye(3, dtype=torch.bool, device="cuda"), 2.0)
    m.index_put_((torch.tensor([0], device="cuda"), torch.tensor([2], device="cuda")), torch.tensor(9.0, device="cuda"))
    same(m, torch.tensor([[2., 0., 9.], [0., 2., 0.], [0., 0., 2.]]))
    y = torch.ones(2, 3, device="cuda")
    torch.mul(y[1], 2, out=y[0]) # out= into a view of the input's storage
    same(y, torch.tensor([[2., 2., 2.], [1., 1., 1.]]))
    print("OK")
    """)


def test_random_reproducible_and_equal_to_cpu(mode):
    # TORCHADA_OPS_RNG=cpu: random operators take the bridge, which draws from a CPU generator.
    run_ok(mode, """
    def draws(dev, gen=None):
        k = {} if gen is None else {"generator": gen}
        out = [torch.randn(6, device=dev, **k), torch.rand(3, 4, device=dev, **k),
               torch.randint(0, 100, (5,), device=dev, **k), torch.randperm(7, device=dev, **k),
               torch.empty(8, device=dev).uniform_(-1, 1, **k), torch.empty(8, device=dev).bernoulli_(0.3, **k),
               torch.multinomial(torch.ones(10, device=dev), 4, **k)]
        return out
    torch.manual_seed(123); a = draws("cuda")
    torch.manual_seed(123); b = draws("cuda")
    torch.manual_seed(123); c = draws("cpu")
    for x, y, z in zip(a, b, c):
        same(x, y); same(x, z)
    # dropout draws from the same generator: reproducible
    torch.manual_seed(5); d1 = torch.nn.functional.dropout(torch.ones(100, device="cuda"), 0.5)
    torch.manual_seed(5); d2 = torch.nn.functional.dropout(torch.ones(100, device="cuda"), 0.5)
    same(d1, d2)
    assert 0 < (d1 == 0).sum().item() < 100
    # an explicit CUDA generator draws what a CPU generator with the same seed draws
    gc = torch.Generator("cuda").manual_seed(7)
    gh = torch.Generator().manual_seed(7)
    for x, z in zip(draws("cuda", gc), draws("cpu", gh)):
        same(x, z)
    # ... every time both are seeded again, with the same seed too
    gc.manual_seed(7); gh.manual_seed(7)
    for x, z in zip(draws("cuda", gc), draws("cpu", gh)):
        same(x, z)
    try:  # PyTorch's CUDA kernels take only a CUDA generator; the bridge keeps that
        torch.randperm(5, device="cuda", generator=torch.Generator())
        raise AssertionError("a CPU generator was accepted")
    except RuntimeError as e:
        assert "Expected a 'cuda' device type for generator" in str(e), e
    # torch.cuda.manual_seed alone re-seeds the generator bridged ops draw from (when its seed is
    # not the CPU generator's: see ops/README.md)
    torch.manual_seed(1); torch.cuda.manual_seed(99); e1 = torch.randn(5, device="cuda")
    torch.manual_seed(1); torch.cuda.manual_seed(99); e2 = torch.randn(5, device="cuda")
    same(e1, e2)
    torch.manual_seed(99); same(e1, torch.randn(5))
    # ... and so it does with the CPU generator's own seed (torch_patches.cpp), manual_seed_all too
    torch.manual_seed(3); torch.cuda.manual_seed(3); f1 = torch.randn(5, device="cuda")
    torch.randn(5, device="cuda"); torch.cuda.manual_seed(3); f2 = torch.randn(5, device="cuda")
    same(f1, f2)
    torch.randn(5, device="cuda"); torch.cuda.manual_seed_all(3); same(torch.randn(5, device="cuda"), f1)
    # torch.utils.checkpoint restores the RNG state: the recomputed dropout masks are the forward's
    net = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Dropout(0.5), torch.nn.Linear(32, 1)).cuda()
    x = torch.randn(4, 8, device="cuda")
    torch.manual_seed(7); net(x).sum().backward(); plain = [p.grad.clone() for p in net.parameters()]
    net.zero_grad(); torch.manual_seed(7)
    torch.utils.checkpoint.checkpoint(net, x, use_reentrant=False).sum().backward()
    for p, g in zip(net.parameters(), plain):
        same(p.grad, g)
    print("OK")
    """, env={"TORCHADA_OPS_RNG": "cpu"})  # the bridge's draws; the device's: test_device_kernels


def test_bridged_random_operators_follow_the_cuda_generator(mode):
    # With the device's random kernels (the default), the random operators they do not serve take
    # the bridge and draw from the CUDA generator's state (seed and offset), which they move on.
    run_ok(mode, """
    def bridged(g=None):
        return [torch.randperm(50, device="cuda", generator=g),
                torch.bernoulli(torch.full((64,), 0.5, device="cuda"), generator=g),
                torch.multinomial(torch.ones(20, device="cuda"), 30, replacement=True, generator=g)]
    def equal(a, b):
        return all(torch.equal(x, y) for x, y in zip(a, b))
    g = torch.Generator("cuda")
    g.manual_seed(7); a = bridged(g)
    assert g.get_offset() > 0, g.get_offset()
    g.manual_seed(7); assert equal(a, bridged(g))   # the same seed again: the same draws
    assert not equal(a, bridged(g))                  # and then new ones
    state = g.get_state(); b = bridged(g); g.set_state(state); assert equal(b, bridged(g))
    g.manual_seed(8); assert not equal(a, bridged(g))
    # The default generator: seeding, the state round trip, fork_rng; CPU draws do not move it.
    torch.cuda.manual_seed(11); a = bridged()
    torch.cuda.manual_seed(11); torch.rand(100); torch.randperm(9); assert equal(a, bridged())
    state = torch.cuda.get_rng_state(); b = bridged()
    torch.cuda.set_rng_state(state); assert equal(b, bridged())
    state = torch.cuda.get_rng_state()
    with torch.random.fork_rng(devices=[0]):
        bridged()
    c = bridged(); torch.cuda.set_rng_state(state); assert equal(c, bridged())
    # Device draws and bridged draws share the generator: a device draw moves bridged ones on.
    torch.cuda.manual_seed(11); torch.rand(10, device="cuda"); assert not equal(a, bridged())
    # The draws are draws: a permutation, Bernoulli(0.5) near half, categories in range.
    p, m, k = bridged(g)
    assert sorted(p.tolist()) == list(range(50))
    assert 10 < int(m.sum().item()) < 54 and set(m.unique().tolist()) <= {0.0, 1.0}
    assert 0 <= int(k.min().item()) and int(k.max().item()) < 20
    try:
        torch.multinomial(torch.ones(4, device="cuda"), 2, True, generator=torch.Generator())
        raise AssertionError("a CPU generator was accepted")
    except RuntimeError as e:
        assert "Expected a 'cuda' device type for generator" in str(e), e
    print("OK")
    """)


def test_sparse_tensors(mode):
    """SparseCUDA / SparseCsrCUDA kernels (Thrust, CUB, cuSPARSE) run on the CPU's sparse kernels:
    results equal the same calls on CPU tensors, in-place ops change the CUDA tensor itself."""
    run_ok(mode, """
    def dense_same(a, b, tol=0.0):
        assert a.is_cuda and a.layout == b.layout, (a.device, a.layout, b.layout)
        same(a.to_dense() if a.layout != torch.strided else a,
             b.to_dense() if b.layout != torch.strided else b, tol)
    torch.manual_seed(0)
    i = torch.tensor([[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]); v = torch.randn(5)
    c = torch.sparse_coo_tensor(i, v, (3, 3)); g = c.cuda()
    cc, gc = c.coalesce(), g.coalesce()
    assert gc.is_coalesced() and gc._nnz() == cc._nnz() == 4
    same(gc.indices(), cc.indices()); same(gc.values(), cc.values())
    dense_same(g * 2, c * 2); dense_same(torch.sparse.sum(g, 1), torch.sparse.sum(c, 1))
    same(torch.sparse.sum(g), torch.sparse.sum(c))
    d = torch.randn(3, 4)
    same(torch.sparse.mm(g, d.cuda()), torch.sparse.mm(c, d), 1e-6)
    dense_same(gc + gc, cc + cc)
    same(torch.ones(3, 3, device="cuda") + g, torch.ones(3, 3) + c)
    gm = gc.clone(); gm.mul_(3)  # in place: the CUDA tensor itself
    assert gm.is_cuda; dense_same(gm, cc * 3)
    # the gradient of a sparse product, and nn.Embedding's sparse gradient with SparseAdam
    w = torch.randn(3, 4, requires_grad=True); gw = w.detach().cuda().requires_grad_()
    torch.sparse.mm(c, w).square().sum().backward(); torch.sparse.mm(g, gw).square().sum().backward()
    same(gw.grad, w.grad, 1e-5)
    emb = torch.nn.Embedding(10, 4, sparse=True); gemb = torch.nn.Embedding(10, 4, sparse=True).cuda()
    gemb.load_state_dict(emb.state_dict())
    idx = torch.tensor([[1, 2, 1], [7, 2, 9]])
    for m, x in ((emb, idx), (gemb, idx.cuda())):
        opt = torch.optim.SparseAdam(m.parameters(), lr=0.1)
        m(x).square().sum().backward(); opt.step()
    assert gemb.weight.grad.is_sparse and gemb.weight.grad.is_cuda
    dense_same(gemb.weight.grad.coalesce(), emb.weight.grad.coalesce())
    same(gemb.weight, emb.weight, 1e-6)
    # compressed (CSR) tensors: cuSPARSE's products
    a = torch.randn(4, 5) * (torch.rand(4, 5) > 0.5)
    ca, ga = a.to_sparse_csr(), a.cuda().to_sparse_csr()
    assert ga.layout == torch.sparse_csr and ga.is_cuda
    same(ga @ torch.ones(5, 2, device="cuda"), ca @ torch.ones(5, 2), 1e-6)
    same(ga.to_dense(), a)
    # a CSR weight in linear: its transpose is CSC, another compressed layout (SparseCsrCPU's)
    w = torch.randn(6, 5) * (torch.rand(6, 5) > 0.5)
    x = torch.randn(4, 5)
    same(torch.nn.functional.linear(x.cuda(), w.cuda().to_sparse_csr()), x @ w.t(), 1e-5)
    same(torch.nn.functional.linear(x.cuda(), w.cuda().to_sparse_csr(), torch.ones(6, device="cuda")),
         x @ w.t() + 1, 1e-5)
    rows = dict(zip(*torch.ops.torchada.bridge_report()[:2]))
    assert any(op.endswith("[SparseCUDA]") for op in rows), rows
    print("OK")
    """)


EXTENSION_CU = r"""
#include <cuda_runtime.h>
__global__ void add_one(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1;
}
extern "C" int launch_add_one(float* x, int n) {
  add_one<<<1, 32>>>(x, n);
  return static_cast<int>(cudaGetLastError());
}
"""


def test_extension_kernels_are_named_bridged_ones_are_not(tmp_path):
    """A kernel of the program's own (a CUDA extension) is refused with a warning naming it, while
    the kernels of the PyTorch operators the bridge tries are served quietly (debug level)."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        pytest.skip("needs nvcc (the CUDA toolkit) to build the extension")
    src, lib = tmp_path / "ext.cu", tmp_path / "libext.so"
    src.write_text(EXTENSION_CU)
    subprocess.run([nvcc, "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared", "-o", str(lib),
                    str(src)], check=True, capture_output=True, timeout=300)
    p = run_ok("preload", f"""
    import ctypes
    x = torch.zeros(4, device="cuda")
    y = torch.exp(x) * 2                 # bridged operators: their kernels are served
    lib = ctypes.CDLL({str(lib)!r})
    rc = lib.launch_add_one(ctypes.c_void_p(x.data_ptr()), 4)
    assert rc == 209, rc                 # cudaErrorNoKernelImageForDevice
    same(y, torch.full((4,), 2.0))
    print("OK")
    """)
    named = [l for l in p.stderr.splitlines() if "is NVIDIA device code and cannot run" in l]
    assert len(named) == 1 and "add_one(float*, int)" in named[0], p.stderr[-3000:]


def test_conv_batchnorm_pool_forward_backward(mode):
    run_ok(mode, """
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 8, 3, groups=8, padding=1),   # depthwise: no CPU kernel of its own
        torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 4, 1), torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(), torch.nn.Linear(4, 3))
    import copy
    gnet = copy.deepcopy(net).cuda()
    x = torch.randn(2, 3, 16, 16)
    y = torch.tensor([0, 2])
    for model, xx, yy in ((net, x, y), (gnet, x.cuda(), y.cuda())):
        loss = torch.nn.functional.cross_entropy(model(xx), yy)
        loss.backward()
        model.loss = loss
    same(gnet.loss, net.loss, tol=1e-5)
    for p, q in zip(gnet.parameters(), net.parameters()):
        same(p.grad, q.grad, tol=1e-4)
    same(gnet[1].running_mean, net[1].running_mean, tol=1e-6)
    assert not torch.backends.cudnn.enabled   # steered away from cuDNN
    # A script that turns cuDNN back on gets one warning, and its convolutions still run.
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.backends.cudnn.enabled = True
        with torch.backends.cudnn.flags(enabled=True, benchmark=True):
            out = torch.nn.functional.conv2d(x.cuda(), gnet[0].weight, padding=1)
    assert not torch.backends.cudnn.enabled
    assert [str(w.message) for w in caught if "cuDNN is NVIDIA's library" in str(w.message)], \
        [str(w.message) for w in caught]
    same(out, torch.nn.functional.conv2d(x, net[0].weight, padding=1), tol=1e-5)
    print("OK")
    """)


def test_lstm_gru_forward_backward(mode):
    run_ok(mode, """
    torch.manual_seed(0)
    import copy
    for cls in (torch.nn.LSTM, torch.nn.GRU):
        rnn = cls(5, 7, num_layers=2, batch_first=True)
        grnn = copy.deepcopy(rnn).cuda()
        x = torch.randn(3, 4, 5)
        o, _ = rnn(x); go, _ = grnn(x.cuda())
        same(go, o, tol=1e-5)
        o.square().sum().backward(); go.square().sum().backward()
        for p, q in zip(grnn.parameters(), rnn.parameters()):
            same(p.grad, q.grad, tol=1e-4)
    print("OK")
    """)


def test_sdpa_causal_and_rms_norm(mode):
    run_ok(mode, """
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 8, 16, requires_grad=True) for _ in range(3))
    gq, gk, gv = (t.detach().cuda().requires_grad_() for t in (q, k, v))
    F = torch.nn.functional
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    go = F.scaled_dot_product_attention(gq, gk, gv, is_causal=True)
    same(go, o, tol=1e-5)
    o.sum().backward(); go.sum().backward()
    same(gq.grad, q.grad, tol=1e-5); same(gv.grad, v.grad, tol=1e-5)
    n = torch.nn.RMSNorm(16); gn = torch.nn.RMSNorm(16).cuda()
    x = torch.randn(4, 16, requires_grad=True); gx = x.detach().cuda().requires_grad_()
    n(x).square().sum().backward(); gn(gx).square().sum().backward()
    same(gx.grad, x.grad, tol=1e-5); same(gn.weight.grad, n.weight.grad, tol=1e-5)
    print("OK")
    """)



SDPA_CASES = """
F = torch.nn.functional
torch.manual_seed(0)
def run(dev, causal, mask, dropout=0.0):
    torch.manual_seed(1)
    q, k, v = (torch.randn(2, 4, 16, 8, generator=torch.Generator().manual_seed(i)).to(dev).requires_grad_()
               for i in range(3))
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else mask.to(dev),
                                       is_causal=causal, dropout_p=dropout)
    o.square().sum().backward()
    return [t.detach().cpu() for t in (o, q.grad, k.grad, v.grad)]
bool_mask = torch.rand(16, 16, generator=torch.Generator().manual_seed(5)) > 0.3
bool_mask.fill_diagonal_(True)
float_mask = torch.randn(16, 16, generator=torch.Generator().manual_seed(6))
for causal, mask in ((True, None), (False, None), (False, bool_mask), (False, float_mask)):
    for a, b in zip(run("cuda", causal, mask), run("cpu", causal, mask)):
        assert torch.equal(a, b), (causal, None if mask is None else mask.dtype, (a - b).abs().max())
ops, paths, calls, secs = torch.ops.torchada.bridge_report()
rows = {(o, p): c for o, p, c in zip(ops, paths, calls)}
path = "bridge-" + torch.ops.torchada.bridge_mode()
fused = "aten::_scaled_dot_product_fused_attention_overrideable"
assert rows.get((fused, path)) == 4 and rows.get((fused + "_backward", path)) == 4, rows
assert ("aten::bmm", "native") not in rows, rows           # not the math composition
# Dropout: the CPU takes math, so do CUDA tensors (bridged operators, cuBLAS bmm).
run("cuda", False, None, dropout=0.5)
ops, paths, calls, secs = torch.ops.torchada.bridge_report()
rows2 = {(o, p): c for o, p, c in zip(ops, paths, calls)}
assert rows2.get((fused, path)) == 4 and rows2.get(("aten::bmm", "native"), 0) >= 2, rows2
# The user's settings reach the choice: flash attention off means math for CUDA tensors too,
# and CPU tensors keep flash attention by default (the bridge no longer switches it off).
assert torch.backends.cuda.flash_sdp_enabled()
torch.backends.cuda.enable_flash_sdp(False)
run("cuda", True, None)
ops, paths, calls, secs = torch.ops.torchada.bridge_report()
rows3 = {(o, p): c for o, p, c in zip(ops, paths, calls)}
assert rows3.get((fused, path)) == 4, rows3
print("OK")
"""


@pytest.mark.parametrize("bridge", ["direct", "copy"])
def test_sdpa_runs_the_cpu_flash_kernel(mode, bridge):
    # Without device kernels (TORCHADA_OPS_KERNELS=off here; a backend whose build of ops/ has
    # none), CUDA tensors take PyTorch's CPU flash-attention kernel where the CPU would: outputs
    # and gradients equal to CPU tensors' bit for bit; dropout and a disabled flash backend take
    # math. (With device kernels the same pair runs on the device: test_device_kernels.py.)
    run_ok(mode, SDPA_CASES, env={"TORCHADA_KERNEL_BRIDGE": bridge, "TORCHADA_OPS_KERNELS": "off"})

EXIT_DRAIN = """
import gc, time, types
x = torch.randn(4, device="cuda", requires_grad=True)
(x * 2).sum().backward()
time.sleep(0.01)  # a bytecode boundary: the registration is a pending call of the main thread
drains = [o for o in gc.get_objects() if isinstance(o, types.FunctionType)
          and o.__name__ == "_torchada_drain_autograd_threads"]
assert len(drains) == 1, drains
drains[0]()          # what atexit runs: one backward per used device, through the engine
assert x.grad is not None and x.grad.is_cuda
print("OK")
"""


def test_exit_drains_the_autograd_device_threads(mode):
    # PyTorch 2.15's device thread releases a finished backward (which holds a Python object)
    # after waking the caller; a script ending right then aborted at exit ("terminate called
    # without an active exception", seen 1 run in ~45 on the loaded 2-core VM). The bridge
    # registers an atexit drain (ops/src/bridge/exit_drain.cpp); it is there and it runs.
    run_ok(mode, EXIT_DRAIN)


COPY_VS_DIRECT = """
import hashlib
torch.manual_seed(0)
x = torch.randn(32, 32, device="cuda")
w = torch.randn(32, 32, device="cuda", requires_grad=True)
y = torch.nn.functional.dropout(torch.tanh(x @ w), 0.1)
y.sum().backward()
v = x[:, ::2]
v.mul_(2)
r = torch.cat([y.detach(), w.grad, x, torch.sort(x, 1)[0]])
print(torch.ops.torchada.bridge_mode(), hashlib.sha256(r.cpu().numpy().tobytes()).hexdigest())
print("OK")
"""


def test_copy_and_direct_identical(mode):
    outs = {}
    for m in ("direct", "copy"):
        p = run_ok(mode, COPY_VS_DIRECT, env={"TORCHADA_KERNEL_BRIDGE": m})
        line = p.stdout.strip().splitlines()[-2].split()
        assert line[0] == m
        outs[m] = line[1]
    assert outs["direct"] == outs["copy"]


FRESH_RESULTS = """
import gc
torch.cuda.synchronize()
base = torch.cuda.memory_allocated()
c = torch.randn(64, 48)
g = c.cuda()
before = torch.ops.torchada.bridge_copied_results()
r = {
    "gelu": (torch.nn.functional.gelu(g), torch.nn.functional.gelu(c)),
    "mul": (g * g, c * c),
    "softmax": (torch.softmax(g, 1), torch.softmax(c, 1)),
    "max": (torch.max(g, 1), torch.max(c, 1)),            # two fresh results
    "topk": (torch.topk(g, 5, 1), torch.topk(c, 5, 1)),
    "cat": (torch.cat([g, g]), torch.cat([c, c])),
    "nonzero": (torch.nonzero(g > 0), torch.nonzero(c > 0)),
}
out = torch.empty(0, device="cuda")                       # out= reallocated by the CPU kernel
torch.cat([g, g], 1, out=out)
copied = torch.ops.torchada.bridge_copied_results() - before
for k, (a, b) in r.items():
    for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        assert x.is_cuda and x.device == g.device, k
        same(x, y, tol=1e-6)
same(out, torch.cat([c, c], 1))
(r["gelu"][0] + 1).sum().item()                           # the results are ordinary CUDA tensors
print("copied", copied)
del r, out, g, a, b, x, y
gc.collect()
torch.cuda.synchronize()
assert torch.cuda.memory_allocated() == base, (torch.cuda.memory_allocated(), base)
print("OK")
"""


@pytest.mark.parametrize("bridge", ["direct", "copy"])
def test_fresh_results_taken_without_copy_in_direct_mode(mode, bridge):
    # Direct mode: the CPU kernel's allocations are CUDA caching-allocator blocks, so fresh
    # results become CUDA tensors as they are; copy mode copies each (the counter can move).
    p = run_ok(mode, FRESH_RESULTS, env={"TORCHADA_KERNEL_BRIDGE": bridge})
    copied = int(re.search(r"^copied (\d+)$", p.stdout, re.M).group(1))
    if bridge == "direct":
        assert copied == 0, p.stdout[-2000:]
    else:  # the bridged fresh results: topk (2), nonzero, cat.out's reallocated out= (gelu,
        # mul, max, softmax and the functional cat: device kernels of ops/)
        assert copied >= 3, p.stdout[-2000:]


def test_mode_off_gives_pytorch_error(mode):
    p = run(mode, """
    import torch
    try:
        torch.ones(3, device="cuda").exp()
    except torch.AcceleratorError as e:
        print("ERR", e)
    """, env={"TORCHADA_KERNEL_BRIDGE": "off"})
    check(p)
    assert "ERR CUDA error: no kernel image is available" in p.stdout


def test_strict_names_the_operator(mode):
    p = run(mode, """
    import torch
    x = torch.tensor([1.0, 2.0], device="cuda")   # a copy, no kernel
    x.exp()                                        # a device kernel of ops/: no bridge
    try:
        x.cumsum(0)                                # no device kernel yet: the bridge
    except RuntimeError as e:
        print("ERR", e)
    """, env={"TORCHADA_STRICT": "1"})
    check(p)
    assert "ERR" in p.stdout and "TORCHADA_STRICT=1: aten::cumsum needs the kernel bridge" in p.stdout


def test_stats_and_report(mode):
    p = run_ok(mode, """
    x = torch.ones(4, 4, device="cuda")
    for _ in range(3):
        y = (x.cumsum(0).exp() @ x).sum()
    ops, paths, calls, secs = torch.ops.torchada.bridge_report()
    rows = {(o, p): c for o, p, c in zip(ops, paths, calls)}
    assert rows[("aten::cumsum", "bridge-direct")] == 3, rows
    assert rows[("aten::exp", "device")] == 3, rows        # ops/'s device kernel
    assert rows[("aten::mm", "native")] == 3, rows        # cuBLAS, through the shim
    assert ("aten::mm", "bridge-direct") not in rows
    print("OK")
    """, env={"TORCHADA_STATS": "1"})
    table = [l for l in p.stderr.splitlines() if "kernel bridge:" in l]
    assert any(re.search(r"aten::cumsum\s+bridge-direct\s+3\s", l) for l in table), p.stderr[-3000:]
    assert any(re.search(r"aten::exp\s+device\s+3\s", l) for l in table), p.stderr[-3000:]
    assert any(re.search(r"aten::mm\s+native\s+3\s", l) for l in table), p.stderr[-3000:]
    assert "NVIDIA device code and cannot run" not in p.stderr   # refusals are not warned


def test_stream_ordering(mode):
    run_ok(mode, """
    n = 1 << 22
    host = torch.arange(n, dtype=torch.float32).pin_memory()
    dev = torch.zeros(n, device="cuda")
    side = torch.cuda.Stream()
    # PyTorch's streams are non-blocking: without this wait the zero fill queued on the default
    # stream may still be running when the copies start (a race on NVIDIA GPUs too).
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(4):                       # enough queued work to be still running
            dev.copy_(host, non_blocking=True)
    torch.cuda.current_stream().wait_stream(side)
    s = dev.neg_().neg_().sum()                  # device kernels, on the current stream
    want = n * (n - 1) / 2                       # a float sum is close, an early one far off
    assert abs(s.item() - want) / want < 1e-6, (s.item(), want)
    print("OK")
    """)


def test_compile_aot_eager(mode):
    run_ok(mode, """
    def f(x, w):
        return torch.nn.functional.gelu(x @ w).softmax(-1).sum(0)
    x, w = torch.randn(8, 8), torch.randn(8, 8)
    cf = torch.compile(f, backend="aot_eager")
    same(cf(x.cuda(), w.cuda()), f(x, w), tol=1e-5)
    print("OK")
    """)


def test_pytorch_triton_operators_are_steered_to_aten(mode):
    # PyTorch's torch._native registers Triton kernels (NVIDIA code) over some CUDA operators;
    # libtorchada.so sets TORCH_DISABLE_NATIVE_JIT=1 at load so they stay on ATen's kernels, which
    # the bridge runs. bmm with k=1 is one of them (bmm_outer_product): it failed in
    # cuModuleLoadData before.
    run_ok(mode, """
    import os
    assert os.environ.get("TORCH_DISABLE_NATIVE_JIT") == "1", os.environ.get("TORCH_DISABLE_NATIVE_JIT")
    a, b = torch.randn(2, 5, 1), torch.randn(2, 1, 6)
    same(torch.bmm(a.cuda(), b.cuda()), torch.bmm(a, b), tol=1e-6)
    print("OK")
    """)


def test_a_users_torch_native_setting_is_kept():
    p = check(run("preload", """
    import os
    print(os.environ.get("TORCH_DISABLE_NATIVE_JIT"))
    """, env={"TORCH_DISABLE_NATIVE_JIT": "0"}))
    assert p.stdout.strip() == "0", p.stdout


def test_default_compile_runs_inductors_graphs_with_aot_eager(mode):
    # torch.compile's default backend (inductor) would generate Triton kernels, NVIDIA code: its
    # graphs run with aot_eager instead, once warned, for functions, modules, Module.compile and
    # inductor's modes, forward and backward equal to eager.
    p = run_ok(mode, """
    import warnings
    warnings.simplefilter("always")
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4)).cuda()
    x = torch.randn(8, 16, device="cuda")
    ref = m(x)
    ref.sum().backward()
    grads = [q.grad.clone() for q in m.parameters()]
    m.zero_grad()
    y = torch.compile(m)(x)
    same(y, ref, tol=1e-6)
    y.sum().backward()
    for q, g in zip(m.parameters(), grads):
        same(q.grad, g, tol=1e-6)
    f = torch.compile(lambda a: torch.sin(a) * 2 + a.cos(), mode="max-autotune")
    same(f(x), torch.sin(x) * 2 + x.cos(), tol=1e-6)
    lin = torch.nn.Linear(4, 4).cuda()
    lin.compile()
    same(lin(x[:, :4]), torch.nn.functional.linear(x[:, :4], lin.weight, lin.bias), tol=1e-6)
    print("OK")
    """)
    assert p.stderr.count("torch.compile's inductor backend generates Triton kernels") == 1, \
        p.stderr[-4000:]


def test_profiler_serves_the_cuda_activity(mode):
    # torch.profiler's CUDA activity is served by torchada's CUPTI (shim/cupti/) in every form a
    # script asks for it: profile()'s default activities (which include CUDA), CPU + CUDA with
    # shapes and memory, and the legacy torch.autograd.profiler with use_device="cuda". Each gets
    # device time for the operators, and nothing is dropped or warned about (NVIDIA's CUPTI,
    # which crashes on MUSA, is never started).
    p = run_ok(mode, """
    import warnings
    warnings.simplefilter("always")
    from torch.profiler import profile, record_function, ProfilerActivity
    x = torch.randn(32, 32, device="cuda")
    with profile() as p1:
        with record_function("step"):
            (x @ x).sum().item()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 record_shapes=True, profile_memory=True) as p2:
        (x * 2).sum().item()
    with torch.autograd.profiler.profile(use_device="cuda") as p3:
        (x + 1).sum().item()
    seen = [{e.key: e for e in q.key_averages()} for q in (p1, p2, p3)]
    assert "step" in seen[0] and "aten::mm" in seen[0], sorted(seen[0])
    assert "aten::mul" in seen[1] and "aten::add" in seen[2], (sorted(seen[1]), sorted(seen[2]))
    for avg, op in ((seen[0], "aten::mm"), (seen[1], "aten::mul"), (seen[2], "aten::add")):
        assert avg[op].device_time_total > 0, (op, avg[op])
    print("OK")
    """)
    assert "CPU activities only" not in p.stderr and "CUPTI" not in p.stderr, p.stderr[-4000:]


def test_inductor_kept_fails_naming_what_to_use_instead():
    # TORCHADA_TORCH_COMPILE=inductor keeps inductor, whose Triton kernels cannot run: the error
    # must say what works.
    p = run("launcher", PRELUDE + textwrap.dedent("""
    f = torch.compile(lambda x: torch.sin(x) * 2 + 1)
    try:
        f(torch.randn(16, device="cuda"))
    except Exception as e:
        print("FAILED", type(e).__name__)
    else:
        print("RAN")
    """), env={"TORCHADA_TORCH_COMPILE": "inductor"})
    assert "FAILED" in p.stdout, p.stdout[-2000:] + p.stderr[-4000:]
    assert re.search(r"cuModule\w*\(.*triton_\w+.*\): NVIDIA device code", p.stderr), p.stderr[-4000:]
    assert 'torch.compile(backend="aot_eager")' in p.stderr, p.stderr[-4000:]


@pytest.mark.parametrize("bridge", ["direct", "copy"])
def test_fused_and_foreach_optimizers_match_cpu(mode, bridge):
    # _fused_adamw_ and _foreach_add_ return nothing: the host tensors of their list arguments
    # must outlive the call for their metadata to be read back (copy mode failed with "a Tensor
    # with 0 elements cannot be converted to Scalar" when they did not).
    run_ok(mode, """
    torch.manual_seed(0)
    cpu = [torch.randn(4, 4, requires_grad=True), torch.randn(3, requires_grad=True)]
    dev = [t.detach().cuda().requires_grad_() for t in cpu]
    for fused in (True, False):
        oc = torch.optim.AdamW(cpu, lr=1e-2, fused=fused, foreach=not fused)
        od = torch.optim.AdamW(dev, lr=1e-2, fused=fused, foreach=not fused)
        for step in range(3):
            for c, d in zip(cpu, dev):
                g = torch.randn(c.shape)
                c.grad, d.grad = g, g.cuda()
            oc.step(); od.step()
        for c, d in zip(cpu, dev):
            same(d, c, tol=1e-6)
        assert od.state[dev[0]]["step"].item() == 3.0
    print("OK")
    """, env={"TORCHADA_KERNEL_BRIDGE": bridge})


def test_data_parallel(mode):
    # nn.DataParallel over 2 simulated devices: NCCL broadcast of the parameters from one thread
    # (a group over both devices' communicators, stream 0), scatter, a thread per replica, gather;
    # forward and gradients equal to the module on the CPU.
    run_ok(mode, """
    import torch.nn as nn
    torch.manual_seed(0)
    assert torch.cuda.device_count() == 2
    cpu = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    gpu = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).cuda()
    gpu.load_state_dict(cpu.state_dict())
    x = torch.randn(8, 16)
    out = nn.DataParallel(gpu)(x.cuda())
    same(out, cpu(x), tol=1e-5)
    out.square().sum().backward()
    cpu(x).square().sum().backward()
    for a, b in zip(gpu.parameters(), cpu.parameters()):
        same(a.grad, b.grad, tol=1e-5)
    print("OK")
    """, env={"TORCHADA_SIM_DEVICES": "2", "OMP_NUM_THREADS": "1"})


def test_bridged_operators_in_cuda_graphs(mode):
    # A bridged call in a capture becomes a host node running the CPU kernel on the captured
    # addresses at every replay (capture.cpp), random operators drawing from the graph's philox
    # state; one whose output shape needs the data is refused, naming the operator, and the
    # process goes on.
    run_ok(mode, """
    x = torch.randn(4, 6, device="cuda")
    x.cumsum(0), x.cummax(1)  # latched before the capture, as a warm-up does
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.cuda.graph(g):
        y = x.cumsum(0) * 2          # fresh result, then a device kernel
        values, indices = x.cummax(1)  # written arguments (the helper fills values and indices)
        z = x.clone()
        z.cumsum_(1)                  # in place
    torch.cuda.current_stream().wait_stream(s)
    for _ in range(3):
        x.copy_(torch.randn(4, 6))
        g.replay()
        torch.cuda.synchronize()
        c = x.cpu()
        same(y, c.cumsum(0) * 2, tol=1e-6)
        same(values, c.cummax(1).values)
        same(indices, c.cummax(1).indices)
        same(z, c.cumsum(1), tol=1e-6)

    g2 = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g2):
            torch.nonzero(x > 0)
        raise SystemExit("capture of nonzero (its shape needs the data) succeeded")
    except RuntimeError as e:
        assert "aten::nonzero runs through the kernel bridge" in str(e), str(e)
        assert "cannot be captured into a CUDA graph for an output whose shape needs the data" in str(e), str(e)
    torch.cuda.synchronize()
    same(x.cumsum(0), x.cpu().cumsum(0), tol=1e-6)   # the process goes on after the failed capture

    # Random operators on the bridge draw anew at each replay, from the graph's seed and offset:
    # torch.cuda.manual_seed before the replays makes them reproducible.
    probs = torch.ones(20, device="cuda")
    torch.randperm(50, device="cuda"), torch.multinomial(probs, 30, replacement=True)  # warm-up
    g3 = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g3):
        perm = torch.randperm(50, device="cuda")
        draws = torch.multinomial(probs, 30, replacement=True)
    def replays():
        out = []
        for _ in range(3):
            g3.replay()
            torch.cuda.synchronize()
            out.append((perm.cpu().clone(), draws.cpu().clone()))
        return out
    torch.cuda.manual_seed(5)
    first = replays()
    torch.cuda.manual_seed(5)
    again = replays()
    for (p1, d1), (p2, d2) in zip(first, again):
        assert torch.equal(p1, p2) and torch.equal(d1, d2)
    assert not torch.equal(first[0][0], first[1][0]), "two replays drew the same permutation"
    assert not torch.equal(first[0][1], first[1][1]), "two replays drew the same samples"
    for p, d in first:
        assert sorted(p.tolist()) == list(range(50)) and 0 <= d.min() and d.max() < 20

    # make_graphed_callables: forward and backward graphs, against the CPU.
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)
        def forward(self, t):
            return self.lin(t).cumsum(1).tanh()
    torch.manual_seed(0)
    ref = M()
    m = M().cuda()
    m.load_state_dict(ref.state_dict())
    graphed = torch.cuda.make_graphed_callables(m, (torch.randn(4, 8, device="cuda", requires_grad=True),))
    for _ in range(3):
        t = torch.randn(4, 8)
        a, b = t.cuda().requires_grad_(), t.clone().requires_grad_()
        out, want = graphed(a), ref(b)
        out.square().sum().backward()
        want.square().sum().backward()
        same(out, want, tol=1e-5)
        same(a.grad, b.grad, tol=1e-5)

    # torch.compile's CUDA-graph trees (the cudagraphs backend) around a bridged operator.
    f = torch.compile(lambda t: (t.cumsum(0) * 3).sin(), backend="cudagraphs")
    for _ in range(4):
        t = torch.randn(16, device="cuda")
        same(f(t), (t.cpu().cumsum(0) * 3).sin(), tol=1e-5)
    print("OK")
    """)


def test_operators_built_on_other_nvidia_code(mode):
    # Operators whose CUDA path is NVIDIA code that is neither a launched kernel nor cuBLAS:
    # kernels PyTorch compiles at run time (jiterator, loaded through the driver, which refuses
    # them), cuFFT (torch.fft) and cuSOLVER (torch.linalg); host code asserting NVIDIA's warp
    # size (torch.mode). Each runs on the host, equal to the CPU.
    run_ok(mode, """
    torch.manual_seed(0)
    c = torch.rand(16) + 0.5
    g = c.cuda()
    for f in (torch.i0, torch.special.bessel_j0, torch.special.erfcx, torch.sinc,
              lambda t: torch.polygamma(2, t), lambda t: torch.gcd((t * 10).long(), (t * 7).long()),
              lambda t: torch.logaddexp(t.to(torch.cfloat), t.to(torch.cfloat))):
        same(f(g), f(c), tol=1e-5)
    same(torch.fft.rfft(g), torch.fft.rfft(c), tol=1e-5)
    same(torch.fft.ifft(torch.fft.fft(g)), torch.fft.ifft(torch.fft.fft(c)), tol=1e-5)
    a = torch.randn(6, 6)
    a = a @ a.T + 6 * torch.eye(6)
    ga = a.cuda()
    same(torch.linalg.cholesky(ga), torch.linalg.cholesky(a), tol=1e-5)
    same(torch.linalg.solve(ga, ga[:, :2]), torch.linalg.solve(a, a[:, :2]), tol=1e-5)
    same(torch.linalg.inv(ga), torch.linalg.inv(a), tol=1e-5)
    same(torch.linalg.det(ga), torch.linalg.det(a), tol=1e-4)
    same(torch.linalg.eigvalsh(ga), torch.linalg.eigvalsh(a), tol=1e-5)
    same(torch.linalg.svdvals(ga), torch.linalg.svdvals(a), tol=1e-5)
    q, r = torch.linalg.qr(ga)
    same(q @ r, ga, tol=1e-5)
    # torch.mode's host code asserts a block of whole warps, at most 32: MUSA's warps are 128 wide
    m = torch.randint(0, 5, (3, 7)).float()
    same(torch.mode(m.cuda(), 1).values, torch.mode(m, 1).values)
    print("OK")
    """)


@pytest.mark.parametrize("bridge", ["direct", "copy"])
def test_sync_batch_norm(mode, bridge):
    # SyncBatchNorm's CUDA-only kernels (batch_norm_stats, _gather_stats_with_counts, _elemt,
    # _backward_reduce, _backward_elemt) get CPU kernels: DDP over 2 ranks equals BatchNorm on the
    # whole batch. Copy mode also copies back the running statistics, which the gathering updates
    # in place without saying so in its schema.
    env = base_env({"TORCHADA_SIM_DEVICES": "2", "OMP_NUM_THREADS": "1",
                    "TORCHADA_KERNEL_BRIDGE": bridge})
    if mode == "preload":
        env["LD_PRELOAD"] = SHIM
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sync_bn_ranks.py")
    argv = _tc.command(mode, [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node",
                              "2", "--master-port",
                              str(28500 + os.getpid() % 1000 + 2 * (mode == "launcher") +
                                  (bridge == "copy")), script])
    p = check(subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300))
    assert "RANK 0 OK" in p.stdout and "RANK 1 OK" in p.stdout, p.stdout


INT_MM = """
a = torch.randint(-128, 128, (32, 256), dtype=torch.int8, generator=torch.Generator().manual_seed(1))
b = torch.randint(-128, 128, (256, 48), dtype=torch.int8, generator=torch.Generator().manual_seed(2))
ref = a.to(torch.int32) @ b.to(torch.int32)
same(torch._int_mm(a.cuda(), b.cuda()), ref)
same(torch._int_mm(a.cuda(), b.t().contiguous().cuda().t()), ref)   # B transposed in memory
ops, paths, calls, secs = torch.ops.torchada.bridge_report()
rows = {(o, p): c for o, p, c in zip(ops, paths, calls)}
assert rows.get(("aten::_int_mm", "native")) == 2, rows
print("OK")
"""


def test_int8_matmul_reaches_cublaslt(mode):
    # torch._int_mm is cuBLASLt's int8 GEMM (compute 32I): the shim forwards it and the
    # simulator's muBLASLt computes it exactly; it is not bridged to the CPU.
    run_ok(mode, INT_MM, env={"TORCHADA_STATS": "1"})


@pytest.mark.parametrize("bridge", ["direct", "copy"])
def test_bridged_reads_keep_lazy_clones_lazy(mode, bridge):
    # torch._lazy_clone shares the storage copy-on-write: an operator that only reads it must not
    # materialise it (PyTorch's own kernels do not); the first write materialises the written one.
    run_ok(mode, """
    a = torch.randn(100, device="cuda")
    b = torch._lazy_clone(a)
    assert torch._C._is_cow_tensor(a) and torch._C._is_cow_tensor(b)
    c = torch.cumsum(b, 0)                                 # the bridge reads b
    d = torch.cummax(torch._lazy_clone(b)[10:], 0).values  # a view of a lazy clone
    assert torch._C._is_cow_tensor(a) and torch._C._is_cow_tensor(b)
    same(c, torch.cumsum(a.cpu(), 0), tol=1e-5)
    same(d, torch.cummax(a.cpu()[10:], 0).values)
    b.cumsum_(0)                                           # the bridge writes b: b alone is copied
    assert not torch._C._is_cow_tensor(b) and torch._C._is_cow_tensor(a)
    same(b, c, tol=1e-5)
    same(torch.cumsum(a, 0), c, tol=1e-5)                  # a kept its values
    print("OK")
    """, env={"TORCHADA_KERNEL_BRIDGE": bridge})


def test_narrow_dtypes_the_cpu_kernels_lack_are_widened(mode):
    # ComplexHalf: PyTorch's CUDA kernels have it, its CPU kernels refuse it ("rsqrt_cpu" not
    # implemented for 'ComplexHalf'). The bridge computes in complex float and rounds once, as the
    # CUDA kernel does: functional, in-place and out= forms, a real-valued result (abs: Half).
    run_ok(mode, """
    x = torch.randn(64, device="cuda", dtype=torch.complex64) + 2
    h = x.to(torch.complex32)
    want = torch.rsqrt(h.to(torch.complex64)).to(torch.complex32)
    def bits(t):
        return t.view(torch.float16).cpu()
    r = torch.rsqrt(h)
    assert r.dtype == torch.complex32 and r.is_cuda
    assert torch.equal(bits(r), bits(want))
    inplace = h.clone()
    assert inplace.rsqrt_() is inplace and torch.equal(bits(inplace), bits(want))
    out = torch.empty(64, device="cuda", dtype=torch.complex32)
    assert torch.rsqrt(h, out=out) is out and torch.equal(bits(out), bits(want))
    a = torch.abs(h)
    assert a.dtype == torch.float16
    same(a, torch.abs(h.to(torch.complex64)).half())
    print("OK")
    """)


def test_jiterator_refusal_says_what_to_do(mode):
    # torch.cuda.jiterator compiles the user's CUDA C++ into NVIDIA device code: refused, and the
    # error says so (the driver's own text kept) instead of "CUDA driver error: ..." alone.
    run_ok(mode, """
    fn = torch.cuda.jiterator._create_jit_fn("template <typename T> T twice(T x) { return x * 2; }")
    try:
        fn(torch.ones(4, device="cuda"))
        raise AssertionError("a jiterator kernel ran")
    except RuntimeError as e:
        text = str(e)
        assert "torch.cuda.jiterator" in text and "PyTorch operators" in text, text
        assert "CUDA driver error" in text, text
    print("OK")
    """)


# torch.cuda.set_sync_debug_mode: PyTorch's CUDA operators that synchronise to learn their output's
# shape (nonzero, masked_select) warn or raise there; the bridge keeps that once it serves them
# (the first calls latch them), and stays quiet for operators whose shape needs no data (topk)
# and while the mode is off.
def test_sync_debug_mode_for_bridged_operators(mode):
    run_ok(mode, """
    import warnings
    x = torch.randn(64, device="cuda")
    torch.nonzero(x > 0), torch.masked_select(x, x > 0), torch.topk(x, 3)  # latched
    def warned(f):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            f()
        return [str(m.message) for m in w if "synchronizing CUDA operation" in str(m.message)]
    torch.cuda.set_sync_debug_mode("warn")
    assert warned(lambda: torch.nonzero(x > 0)), "nonzero did not warn"
    assert warned(lambda: torch.masked_select(x, x > 0)), "masked_select did not warn"
    assert not warned(lambda: torch.topk(x, 3)), "topk warned"
    torch.cuda.set_sync_debug_mode("error")
    try:
        torch.nonzero(x > 0)
        raise AssertionError("nonzero did not raise")
    except RuntimeError as e:
        assert "synchronizing CUDA operation" in str(e), str(e)
    torch.cuda.set_sync_debug_mode(0)
    assert not warned(lambda: torch.nonzero(x > 0)), "nonzero warned with the mode off"
    same(torch.nonzero(x > 0), torch.nonzero(x.cpu() > 0))
    print("OK")
    """)



def test_argument_checks_hold_after_an_operator_latched(mode):
    # PyTorch's CUDA operators check their arguments' devices (out= included) and raise the
    # determinism alert before launching; a bridged operator answers the same after an earlier
    # valid call latched it (or a device kernel serves it) as on its first call.
    run_ok(mode, """
    import warnings
    def error(f):
        try:
            f()
        except RuntimeError as e:
            return str(e)
        return None
    x = torch.randn(6, device="cuda")
    other = torch.randn(3, device="cuda:1")
    for first in (True, False):  # before and after the valid calls below latched the operators
        e = error(lambda: torch.nonzero(x > 0, out=torch.empty(0, 1, dtype=torch.long)))
        assert e and "same device" in e, e
        e = error(lambda: torch.cat([x, other]))
        assert e and "same device" in e, e
        e = error(lambda: torch.stack([x[:3], torch.randn(3)]))
        assert e and "same device" in e, e
        e = error(lambda: x + torch.randn(6))  # a CPU tensor that is not a scalar
        assert e and "same device" in e, e
        e = error(lambda: torch.linalg.eigvals(torch.randn(3, 3, device="cuda"),
                                               out=torch.empty(3, dtype=torch.complex64)))
        assert e and "same device" in e, e
        same(x * torch.tensor(2.0), x.cpu() * 2.0)  # a CPU scalar is PyTorch's exception
        if first:  # valid calls: each operator latches or runs a device kernel
            torch.nonzero(x > 0), torch.cat([x, x]), torch.stack([x, x]), x + x
            torch.linalg.eigvals(torch.randn(3, 3, device="cuda"))
    a = torch.randn(1, 2, 8, device="cuda", requires_grad=True)
    pad = lambda: torch.nn.functional.pad(a, (2, 2), mode="reflect").sum().backward()
    pad()  # latched outside deterministic mode
    torch.use_deterministic_algorithms(True)
    for _ in range(2):
        e = error(pad)
        assert e and "does not have a deterministic implementation" in e, e
    torch.use_deterministic_algorithms(True, warn_only=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        a.grad = None
        pad()
    assert any("deterministic" in str(m.message) for m in w), [str(m.message) for m in w]
    ref = a.detach().cpu().requires_grad_()
    torch.nn.functional.pad(ref, (2, 2), mode="reflect").sum().backward()
    same(a.grad, ref.grad)  # warn_only: the alert warned, and the gradient was computed
    torch.use_deterministic_algorithms(False)
    print("OK")
    """, env={"TORCHADA_SIM_DEVICES": "2"})


def test_cases_the_cpu_kernels_refuse_are_rewritten(mode):
    # Complex nansum, svd's driver= and LU without pivoting: CUDA's operators have them, the CPU
    # kernels refuse them; the bridge answers from other operators (rewrite.cpp).
    run_ok(mode, """
    nan = float("nan")
    z = torch.randn(4, 5, dtype=torch.complex64)
    z[0, 1], z[2, 3] = complex(nan, 1.0), complex(2.0, nan)
    zc = z.cuda()
    skip = torch.where(torch.isnan(z), torch.zeros((), dtype=z.dtype), z)
    same(torch.nansum(zc, 1), skip.sum(1), tol=1e-6)
    same(torch.nansum(zc), skip.sum(), tol=1e-6)
    out = torch.empty(0, dtype=torch.complex64, device="cuda")
    r = torch.nansum(zc, 0, keepdim=True, out=out)
    assert r.data_ptr() == out.data_ptr()
    same(out, skip.sum(0, keepdim=True), tol=1e-6)

    a = torch.randn(6, 4)
    for driver in ("gesvd", "gesvdj", "gesvda"):
        u, s, vh = torch.linalg.svd(a.cuda(), full_matrices=False, driver=driver)
        same(s, torch.linalg.svdvals(a), tol=1e-5)
        same(u @ torch.diag(s) @ vh, a, tol=1e-5)

    # Column-diagonally dominant: partial pivoting exchanges no rows, so the CPU's pivoted LU is
    # the unpivoted one.
    g = torch.Generator().manual_seed(0)
    for shape in ((4, 4), (2, 5, 5), (3, 5), (5, 3)):
        m, n = shape[-2:]
        a = torch.randn(shape, generator=g, dtype=torch.float64)
        a = a + 3 * max(m, n) * torch.eye(m, n, dtype=torch.float64)
        lu, piv = torch.linalg.lu_factor(a.cuda(), pivot=False)
        want_lu, want_piv = torch.linalg.lu_factor(a)
        assert torch.equal(want_piv, torch.arange(1, min(m, n) + 1, dtype=torch.int32).expand_as(want_piv))
        same(piv, want_piv)
        same(lu, want_lu, tol=1e-12)
        p, l, u = torch.linalg.lu(a.cuda(), pivot=False)
        assert p.numel() == 0
        same(l @ u, a, tol=1e-12)
        assert torch.equal(torch.tril(l.cpu(), -1) + torch.eye(m, min(m, n), dtype=l.dtype), l.cpu())
    info = torch.linalg.lu_factor_ex(torch.zeros(2, 3, 3, device="cuda"), pivot=False).info
    assert info.tolist() == [1, 1], info
    try:
        torch.linalg.lu_factor(torch.zeros(3, 3, device="cuda"), pivot=False)
        raise AssertionError("a singular matrix was factored without an error")
    except RuntimeError as e:
        assert "singular" in str(e) or "not invertible" in str(e) or "zero" in str(e), str(e)
    # Quantized CUDA tensors: refused, saying what works, not handed back malformed.
    try:
        torch.quantize_per_tensor(torch.randn(4, 5, device="cuda"), 0.1, 3, torch.quint8)
        raise AssertionError("a quantized CUDA tensor was made")
    except RuntimeError as e:
        assert "quantized CUDA tensors are not supported" in str(e) and ".cpu()" in str(e), str(e)
    same(torch.ones(3, device="cuda").cumsum(0), torch.arange(1.0, 4.0))  # the process goes on
    print("OK")
    """)
