"""Device kernels of ops/ (src/device/, kernels/elementwise.cu) under PyTorch's CUDA wheel on the
simulator: the operators they serve run through the simulator's device-code executor, not the
kernel bridge, and give what PyTorch's CPU kernels give.

Every case runs in a fresh interpreter under scripts/torchada-run and under a bare LD_PRELOAD
(the `mode` fixture). Results are compared with the same operator on CPU tensors.
"""
import textwrap

from conftest import check, run

# Shared by the snippets: reference comparison and the report of which path served what.
PRELUDE = """
import torch
torch.manual_seed(0)
TOL = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 2e-3, torch.bfloat16: 2e-2}
def same(got, want, tol=None):
    assert got.device.type == "cuda", got.device
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    t = TOL.get(want.dtype, 0) if tol is None else tol
    torch.testing.assert_close(got.cpu(), want, rtol=t, atol=t, equal_nan=True)
def paths():
    ops, paths, calls, secs = torch.ops.torchada.bridge_report()
    out = {}
    for o, p, c in zip(ops, paths, calls):
        out.setdefault(o, {})[p] = c
    return out
def on_device(*names):
    # Every overload of each operator that ran took the device path, and none the bridge.
    p = paths()
    for name in names:
        rows = {o: r for o, r in p.items() if o == name or o.startswith(name + ".")}
        assert any(r.get("device", 0) > 0 for r in rows.values()), (name, rows)
        assert not any(k.startswith("bridge") for r in rows.values() for k in r), (name, rows)
def values(shape, dtype, lo=-3.0, hi=3.0):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if not dtype.is_floating_point:
        return torch.randint(-20, 20, shape).to(dtype)
    return (torch.rand(shape, dtype=torch.float64) * (hi - lo) + lo).to(dtype)
"""


def run_ok(mode, code, env=None):
    p = check(run(mode, PRELUDE + textwrap.dedent(code), env=env))
    assert p.stdout.rstrip().endswith("OK"), p.stdout[-2000:]
    return p


def test_unary_and_activation_operators_match_the_cpu(mode):
    run_ok(mode, """
    unary = {
        "exp": torch.exp, "exp2": torch.exp2, "expm1": torch.expm1, "log": torch.log,
        "log2": torch.log2, "log1p": torch.log1p, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
        "reciprocal": torch.reciprocal, "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh,
        "sigmoid": torch.sigmoid, "erf": torch.erf, "neg": torch.neg, "abs": torch.abs,
        "sign": torch.sign, "floor": torch.floor, "ceil": torch.ceil, "round": torch.round,
        "trunc": torch.trunc, "relu": torch.relu,
        "silu": torch.nn.functional.silu, "mish": torch.nn.functional.mish,
        "gelu": torch.nn.functional.gelu,
        "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
        "hardsigmoid": torch.nn.functional.hardsigmoid,
        "hardswish": torch.nn.functional.hardswish,
        "leaky_relu": lambda x: torch.nn.functional.leaky_relu(x, 0.2),
        "elu": lambda x: torch.nn.functional.elu(x, 0.7),
        "softplus": lambda x: torch.nn.functional.softplus(x, 2.0, 5.0),
        "clamp": lambda x: torch.clamp(x, -1.5, 0.5),
        "clamp_min": lambda x: torch.clamp(x, min=-0.5),
        "clamp_max": lambda x: torch.clamp(x, max=0.25),
        "pow2": lambda x: x ** 2, "pow_half": lambda x: x.abs() ** 0.5, "pow3": lambda x: x ** 3.3,
        "threshold": lambda x: torch.nn.functional.threshold(x, 0.1, -7.0),
    }
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        for shape in ((), (1,), (37,), (5, 33), (2, 3, 17)):
            x = values(shape, dtype)
            for name, f in unary.items():
                try:
                    same(f(x.cuda()), f(x))
                except AssertionError as e:
                    raise AssertionError(f"{name} {dtype} {shape}: {e}")
    # Integer inputs: the float functions promote, the others keep the type.
    for dtype in (torch.int32, torch.int64, torch.uint8, torch.int8):
        x = values((41,), dtype).abs() if dtype == torch.uint8 else values((41,), dtype)
        for name in ("exp", "sqrt", "sigmoid", "neg", "abs", "sign", "relu", "clamp", "floor"):
            if dtype == torch.uint8 and name == "neg":
                continue
            same(unary[name](x.cuda()), unary[name](x), tol=1e-6)
    on_device("aten::exp", "aten::tanh", "aten::gelu", "aten::silu", "aten::clamp", "aten::abs",
              "aten::hardswish", "aten::pow", "aten::clamp_min", "aten::sigmoid", "aten::round")
    print("OK")
    """)


def test_binary_ternary_and_comparison_operators_with_broadcasting_and_dtypes(mode):
    run_ok(mode, """
    binary = {
        "add": lambda a, b: a + b, "add_alpha": lambda a, b: torch.add(a, b, alpha=2),
        "sub": lambda a, b: torch.sub(a, b, alpha=3), "mul": torch.mul,
        "div": torch.div, "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
        "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
        "remainder": torch.remainder, "fmod": torch.fmod, "maximum": torch.maximum,
        "minimum": torch.minimum, "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le,
        "gt": torch.gt, "ge": torch.ge, "atan2": torch.atan2, "pow": torch.pow,
    }
    pairs = [((), ()), ((7,), (7,)), ((4, 5), (5,)), ((3, 1, 6), (1, 4, 1)), ((2, 3), ())]
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64,
                  torch.int32):
        for sa, sb in pairs:
            a, b = values(sa, dtype), values(sb, dtype)
            if not dtype.is_floating_point:
                b = torch.where(b == 0, torch.ones_like(b), b)   # integer division by zero
            for name, f in binary.items():
                if not dtype.is_floating_point and name in ("atan2",):
                    continue
                if not dtype.is_floating_point and name == "pow":
                    b = b.abs() % 4
                try:
                    same(f(a.cuda(), b.cuda()), f(a, b))
                except AssertionError as e:
                    raise AssertionError(f"{name} {dtype} {sa} {sb}: {e}")
    # Mixed dtypes, CPU scalars (wrapped numbers and 0-dim CPU tensors), 0-dim CUDA tensors.
    h, f = values((6, 7), torch.float16), values((6, 7), torch.float32)
    same(h.cuda() + f.cuda(), h + f)
    same(h.cuda() * 3.5, h * 3.5)
    same(h.cuda() + 1e5, h + 1e5)                      # the scalar is not rounded to half first
    i = values((9,), torch.int32)
    same(i.cuda() * 2.5, i * 2.5)
    same(f.cuda() * torch.tensor(2.0), f * torch.tensor(2.0))
    same(f.cuda() - torch.tensor(1.5).cuda(), f - torch.tensor(1.5))
    same(torch.tensor(3).cuda() * i.cuda(), torch.tensor(3) * i)
    b1, b2 = values((10,), torch.bool), values((10,), torch.bool)
    same(b1.cuda() + b2.cuda(), b1 + b2)
    same(b1.cuda() & b2.cuda(), b1 & b2)
    same(~b1.cuda(), ~b1)
    same(~i.cuda(), ~i)
    same(i.cuda() ^ 5, i ^ 5)
    u = torch.tensor([200, 100, 255], dtype=torch.uint8)
    same(u.cuda() + u.cuda(), u + u)                   # wraps as uint8
    # Ternary.
    x, t1, t2 = values((4, 6), torch.float32), values((4, 6), torch.float32), values((6,), torch.float32)
    same(torch.addcmul(x.cuda(), t1.cuda(), t2.cuda(), value=0.5), torch.addcmul(x, t1, t2, value=0.5))
    same(torch.addcdiv(x.cuda(), t1.cuda(), t2.cuda() + 4, value=-2), torch.addcdiv(x, t1, t2 + 4, value=-2))
    same(torch.lerp(x.cuda(), t1.cuda(), 0.3), torch.lerp(x, t1, 0.3))
    same(torch.lerp(x.cuda(), t1.cuda(), 0.8), torch.lerp(x, t1, 0.8))
    w = torch.rand(4, 6)
    same(torch.lerp(x.cuda(), t1.cuda(), w.cuda()), torch.lerp(x, t1, w))
    c = values((4, 6), torch.bool)
    same(torch.where(c.cuda(), x.cuda(), t1.cuda()), torch.where(c, x, t1))
    same(torch.where(c.cuda(), x.cuda(), 0.0), torch.where(c, x, 0.0))
    same(torch.where(c.cuda(), x.cuda().half(), t1.cuda()), torch.where(c, x.half(), t1))
    same(x.cuda().masked_fill(c.cuda(), -1.0), x.masked_fill(c, -1.0))
    same(x.cuda().masked_fill(c[0].cuda(), float("-inf")), x.masked_fill(c[0], float("-inf")))
    on_device("aten::add", "aten::mul", "aten::div", "aten::eq", "aten::where",
              "aten::masked_fill_", "aten::addcmul", "aten::lerp", "aten::bitwise_not",
              "aten::maximum", "aten::remainder", "aten::atan2")
    print("OK")
    """)


def test_in_place_out_strided_views_fill_and_copies(mode):
    run_ok(mode, """
    base = values((6, 8), torch.float32)
    # In place on a strided view: only the view's elements change.
    g, c = base.cuda(), base.clone()
    g[:, ::2].mul_(3).add_(1)
    c[:, ::2].mul_(3).add_(1)
    same(g, c)
    gt, ct = base.cuda().t(), base.t()
    same(torch.exp(gt), torch.exp(ct))
    same(gt.sigmoid_(), ct.sigmoid_())
    # out=, resized when empty.
    out = torch.empty(0, device="cuda")
    torch.mul(base.cuda(), 2, out=out)
    same(out, base * 2)
    out16 = torch.empty(6, 8, device="cuda", dtype=torch.float64)
    torch.add(base.cuda(), base.cuda(), out=out16)      # computed in float, written as double
    same(out16, torch.add(base, base, out=torch.empty(6, 8, dtype=torch.float64)))
    # fill_, zero_, masked_fill_ in place.
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int8, torch.bool):
        t = torch.empty(5, 3, device="cuda", dtype=dtype)
        t.fill_(1)
        same(t, torch.ones(5, 3, dtype=dtype))
        t.zero_()
        same(t, torch.zeros(5, 3, dtype=dtype))
    e = torch.empty(4, 4, device="cuda")[:, 1]
    e.fill_(2.5)
    same(e, torch.full((4,), 2.5))
    m = values((6, 8), torch.bool)
    g, c = base.cuda(), base.clone()
    g.masked_fill_(m.cuda(), 7.0)
    c.masked_fill_(m, 7.0)
    same(g, c)
    # Copies that convert or gather: every dtype pair among these, contiguous and transposed.
    kinds = (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32, torch.int64,
             torch.uint8, torch.bool)
    src = values((5, 7), torch.float32, 0.0, 50.0)
    for a in kinds:
        for b in kinds:
            x = src.to(a)
            same(x.cuda().to(b), x.to(b), tol=0)
            same(x.cuda().t().to(b), x.t().to(b), tol=0)
            same(x.cuda().t().contiguous(), x.t().contiguous(), tol=0)
    y = torch.empty(3, 5, 7, device="cuda")
    y.copy_(src.cuda())                                 # broadcast into the destination
    same(y, src.expand(3, 5, 7).contiguous())
    on_device("aten::copy_", "aten::fill_", "aten::zero_", "aten::masked_fill_")
    print("OK")
    """)


def test_pytorch_checks_still_fire(mode):
    """The device kernels run PyTorch's own meta functions: the CUDA operator's errors, first call
    or later, not a latched CPU kernel's leniency."""
    run_ok(mode, """
    import re
    a, b = torch.ones(3, device="cuda"), torch.ones(4, device="cuda")
    def raises(f, pattern):
        for _ in range(2):   # the first call and a later one answer alike
            try:
                f()
            except RuntimeError as e:
                assert re.search(pattern, str(e)), str(e)
            else:
                raise AssertionError("no error: " + pattern)
    raises(lambda: a + b, "must match the size of tensor b")
    raises(lambda: torch.add(a, a, out=torch.empty(3)), "Expected all tensors to be on the same device")
    raises(lambda: torch.sum(torch.ones(2, 3, device="cuda"), 1, out=torch.empty(2)),
           "Expected out tensor to have device")
    raises(lambda: torch.ones(3, dtype=torch.int64, device="cuda").add_(a),
           "can't be cast to the desired output type")
    raises(lambda: torch.ones(2, dtype=torch.bool, device="cuda") - torch.ones(2, dtype=torch.bool, device="cuda"),
           "Subtraction, the `-` operator, with two bool tensors is not supported")
    raises(lambda: a + torch.ones(3), "Expected all tensors to be on the same device")
    raises(lambda: torch.ones(2, dtype=torch.uint8, device="cuda").fill_(300), "overflow")
    raises(lambda: torch.where(torch.ones(3, device="cuda"), a, a), "where expected condition to be a boolean tensor")
    print("OK")
    """)


def test_captured_into_a_cuda_graph(mode):
    """A device kernel launched while a stream is captured becomes a kernel node of the graph:
    replays compute on the captured addresses."""
    run_ok(mode, """
    x = torch.zeros(1000, device="cuda")
    y = torch.empty_like(x)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y.copy_(x * 2 + 1)       # warm-up, as PyTorch's graph recipe does
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y.copy_(torch.sigmoid(x * 2 + 1))
    for v in (0.0, 1.5, -3.0):
        x.fill_(v)
        g.replay()
        torch.cuda.synchronize()
        same(y, torch.sigmoid(torch.full((1000,), v) * 2 + 1))
    print("OK")
    """)


def test_switch_keeps_the_bridge_for_comparison(mode):
    p = run_ok(mode, """
    x = torch.ones(8, device="cuda")
    y = (x.exp() * 2).sum()
    assert abs(y.item() - 16 * 2.718281828) < 1e-3, y
    rows = paths()
    assert rows["aten::exp"] == {"bridge-direct": 1}, rows["aten::exp"]
    print("OK")
    """, env={"TORCHADA_OPS_KERNELS": "off"})
    assert "OK" in p.stdout


def test_reductions_match_the_cpu(mode):
    run_ok(mode, """
    shapes = [(17,), (4, 33), (3, 5, 7), (2, 300), (600, 3)]
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        tol = {torch.float32: 1e-4, torch.float64: 1e-10}.get(dtype, 2e-2)
        for shape in shapes:
            x = values(shape, dtype)
            g = x.cuda()
            dims = [None] + list(range(len(shape))) + ([(0, len(shape) - 1)] if len(shape) > 1 else [])
            for d in dims:
                for keep in (False, True):
                    kw = {} if d is None else {"dim": d, "keepdim": keep}
                    same(g.sum(**kw), x.sum(**kw), tol)
                    same(g.mean(**kw), x.mean(**kw), tol)
                    same(torch.linalg.vector_norm(g, 2, **kw), torch.linalg.vector_norm(x, 2, **kw), tol)
                    if d is not None:
                        same(g.amax(**kw), x.amax(**kw), 0)
                        same(g.amin(**kw), x.amin(**kw), 0)
                        same(g.var(**kw), x.var(**kw), tol * 10)
                        same(g.std(correction=0, **kw), x.std(correction=0, **kw), tol * 10)
                        for p in (1, float("inf"), 3):
                            same(torch.linalg.vector_norm(g, p, **kw), torch.linalg.vector_norm(x, p, **kw), tol * 5)
                    if d is None or isinstance(d, int):
                        same(g.argmax(**kw), x.argmax(**kw), 0)
                        same(g.argmin(**kw), x.argmin(**kw), 0)
                    if isinstance(d, int):
                        v, i = g.max(d, keep)
                        wv, wi = x.max(d, keep)
                        same(v, wv, 0)
                        same(i, wi, 0)
                        v, i = g.min(d, keep)
                        wv, wi = x.min(d, keep)
                        same(v, wv, 0)
                        same(i, wi, 0)
            same(g.max(), x.max(), 0)
            same(g.min(), x.min(), 0)
    # Ties go to the first index; NaN is the maximum and the minimum.
    t = torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, float("nan"), 5.0, float("nan")]])
    same(t.cuda().argmax(1), t.argmax(1), 0)
    same(t.cuda().max(1).indices, t.max(1).indices, 0)
    same(t.cuda().amin(1), t.amin(1), 0)
    # Integers and booleans: sums widen to int64, any/all give bool.
    i = values((6, 9), torch.int32)
    same(i.cuda().sum(1), i.sum(1), 0)
    same(i.cuda().sum(), i.sum(), 0)
    same(i.cuda().amax(0), i.amax(0), 0)
    b = values((6, 9), torch.bool)
    same(b.cuda().any(1), b.any(1), 0)
    same(b.cuda().all(0), b.all(0), 0)
    same(b.cuda().sum(1), b.sum(1), 0)
    # Half input summed into float (autocast's loss), and a mean of an empty dimension.
    h = values((5, 64), torch.float16)
    same(h.cuda().sum(1, dtype=torch.float32), h.sum(1, dtype=torch.float32), 1e-3)
    same(torch.ones(3, 0, device="cuda").mean(1), torch.ones(3, 0).mean(1))
    # Over everything: any / all, aminmax; equal (sizes, elements, NaN equal only to itself).
    x = values((6, 9), torch.float32)
    for dim, keepdim in ((None, False), (None, True), (1, False), (0, True)):
        for g, c in zip(torch.aminmax(x.cuda(), dim=dim, keepdim=keepdim),
                        torch.aminmax(x, dim=dim, keepdim=keepdim)):
            same(g, c, 0)
    same(torch.any(x.cuda() > 2.5), torch.any(x > 2.5), 0)
    same(torch.all(x.cuda() > -3.5), torch.all(x > -3.5), 0)
    assert torch.equal(x.cuda(), x.clone().cuda()) and not torch.equal(x.cuda(), (x + 1).cuda())
    assert not torch.equal(x.cuda(), x[:4].cuda())
    nan = torch.tensor([float("nan"), 1.0], device="cuda")
    assert torch.equal(nan, nan) and not torch.equal(nan, nan.clone())
    on_device("aten::sum", "aten::mean", "aten::amax", "aten::amin", "aten::argmax",
              "aten::argmin", "aten::linalg_vector_norm", "aten::var", "aten::std",
              "aten::any", "aten::all", "aten::aminmax", "aten::equal")
    print("OK")
    """)


def test_softmax_layer_norm_and_foreach_match_the_cpu_forward_and_backward(mode):
    run_ok(mode, """
    F = torch.nn.functional
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        tol = {torch.float32: 2e-5, torch.float64: 1e-10}.get(dtype, 3e-2)
        for shape, dim in (((6, 40), 1), ((6, 40), 0), ((3, 4, 17), -1), ((2, 300), 1)):
            x = values(shape, dtype)
            for f in (lambda t: F.softmax(t, dim), lambda t: F.log_softmax(t, dim)):
                g = x.cuda().requires_grad_()
                c = x.clone().requires_grad_()
                yg, yc = f(g), f(c)
                same(yg, yc.detach(), tol)
                w = values(shape, dtype)
                (yg * w.cuda()).sum().backward()
                (yc * w).sum().backward()
                same(g.grad, c.grad, tol * 10)
        # Layer norm over the last one or two dimensions, with and without affine parameters.
        for shape, norm in (((8, 32), (32,)), ((2, 5, 3, 4), (3, 4)), ((4, 7), (7,))):
            x = values(shape, dtype)
            for affine in (True, False):
                w = values(norm, dtype) if affine else None
                b = values(norm, dtype) if affine else None
                args_g = [x.cuda().requires_grad_()] + ([w.cuda().requires_grad_(), b.cuda().requires_grad_()] if affine else [])
                args_c = [x.clone().requires_grad_()] + ([w.clone().requires_grad_(), b.clone().requires_grad_()] if affine else [])
                yg = F.layer_norm(args_g[0], norm, *args_g[1:], eps=1e-5)
                yc = F.layer_norm(args_c[0], norm, *args_c[1:], eps=1e-5)
                same(yg, yc.detach(), tol * 10)
                go = values(shape, dtype)
                yg.backward(go.cuda())
                yc.backward(go)
                for a, b2 in zip(args_g, args_c):
                    same(a.grad, b2.grad, tol * 50)
    # RMS norm (nn.RMSNorm), with and without a weight, default and given eps.
    for dtype in (torch.float32, torch.float64, torch.bfloat16):
        tol = {torch.float32: 2e-5, torch.float64: 1e-10}.get(dtype, 3e-2)
        for shape, norm in (((6, 20), (20,)), ((2, 3, 4, 5), (4, 5))):
            x, w = values(shape, dtype), values(norm, dtype)
            for weight, eps in ((w, None), (None, 1e-5)):
                gx, cx = x.cuda().requires_grad_(), x.clone().requires_grad_()
                gw = weight.cuda().requires_grad_() if weight is not None else None
                cw = weight.clone().requires_grad_() if weight is not None else None
                yg, yc = F.rms_norm(gx, norm, gw, eps), F.rms_norm(cx, norm, cw, eps)
                same(yg, yc.detach(), tol * 10)
                go = values(shape, dtype)
                yg.backward(go.cuda())
                yc.backward(go)
                same(gx.grad, cx.grad, tol * 50)
                if weight is not None:
                    same(gw.grad, cw.grad, tol * 50)
    # Half input with float parameters (a mixed-precision model): PyTorch's CUDA kernel takes it,
    # its CPU kernel does not; computed in float, rounded once.
    x = values((6, 24), torch.float16)
    w, b = values((24,), torch.float32), values((24,), torch.float32)
    same(F.layer_norm(x.cuda(), (24,), w.cuda(), b.cuda()),
         F.layer_norm(x.float(), (24,), w, b).half(), 2e-3)
    # Saved statistics: float for half input (PyTorch's CUDA accumulation type).
    y, mean, rstd = torch.native_layer_norm(values((4, 8), torch.float16).cuda(), [8], None, None, 1e-5)
    assert mean.dtype == torch.float32 and mean.shape == (4, 1) and y.dtype == torch.float16, (mean.dtype, mean.shape)
    # _foreach_ arithmetic and norms (optimizers with foreach=True, clip_grad_norm_).
    ts = [values(s, torch.float32) for s in ((3,), (4, 5), (2, 2, 2))]
    gs = [t.cuda() for t in ts]
    torch._foreach_add_(gs, 1.5)
    torch._foreach_mul_(gs, torch.tensor(2.0, device="cuda"))
    torch._foreach_add_(gs, gs, alpha=0.5)
    for g, t in zip(gs, ts):
        same(g, ((t + 1.5) * 2.0) * 1.5)
    for g, n in zip(torch._foreach_norm(gs, 2), torch._foreach_norm([g.cpu() for g in gs], 2)):
        same(g, n, 1e-5)
    p = torch.nn.Parameter(values((10, 10), torch.float32).cuda())
    p.grad = values((10, 10), torch.float32).cuda() * 10
    cp = torch.nn.Parameter(p.detach().cpu())
    cp.grad = p.grad.cpu()
    same(torch.nn.utils.clip_grad_norm_([p], 1.0), torch.nn.utils.clip_grad_norm_([cp], 1.0), 1e-5)
    same(p.grad, cp.grad, 1e-5)
    on_device("aten::_softmax", "aten::_log_softmax", "aten::_softmax_backward_data",
              "aten::_log_softmax_backward_data", "aten::native_layer_norm",
              "aten::native_layer_norm_backward", "aten::_fused_rms_norm",
              "aten::_fused_rms_norm_backward", "aten::_foreach_add_", "aten::_foreach_mul_",
              "aten::_foreach_norm")
    print("OK")
    """)


def test_indexing_losses_and_cat_match_the_cpu(mode):
    run_ok(mode, """
    F = torch.nn.functional
    # arange: every dtype, negative steps, a fractional step, a strided out= tensor.
    for dtype in (torch.int64, torch.int32, torch.int16, torch.float32, torch.float64,
                  torch.float16, torch.bfloat16):
        for a, b, s in ((0, 10, 1), (5, -7, -3), (1, 2, 0.125) if dtype.is_floating_point else (1, 2, 1)):
            same(torch.arange(a, b, s, dtype=dtype, device="cuda"), torch.arange(a, b, s, dtype=dtype), 0)
    out = torch.zeros(10, 2, device="cuda")[:, 0]
    torch.arange(3, 13, out=out)
    same(out, torch.arange(3, 13, dtype=torch.float32), 0)
    for bad in ((0, 10, 0), (0, 10, -1)):
        try:
            torch.arange(*bad, device="cuda")
            raise SystemExit("arange%s accepted" % (bad,))
        except RuntimeError as e:
            assert "step" in str(e), e
    # gather and index_select along every dimension, int32 and int64 indices, strided inputs.
    x = values((5, 6, 7), torch.float32)
    for dim in range(3):
        idx = torch.randint(0, x.size(dim), (3, 4, 2))
        same(torch.gather(x.cuda(), dim, idx.cuda()), torch.gather(x, dim, idx), 0)
        for it in (torch.int64, torch.int32):
            xt = x.transpose(0, 2)
            sel = torch.randint(0, xt.size(dim), (9,)).to(it)
            same(torch.index_select(xt.cuda(), dim, sel.cuda()), torch.index_select(xt, dim, sel), 0)
    # Embedding forward and backward (repeated indices, padding_idx), half and float.
    for dtype in (torch.float32, torch.float16, torch.float64):
        w = values((11, 6), dtype)
        idx = torch.tensor([[1, 3, 3, 0], [10, 3, 5, 1]])
        for pad in (None, 3):
            wg = w.cuda().requires_grad_()
            wc = w.clone().requires_grad_()
            yg, yc = F.embedding(idx.cuda(), wg, padding_idx=pad), F.embedding(idx, wc, padding_idx=pad)
            same(yg, yc.detach(), 0)
            go = values(yc.shape, dtype)
            yg.backward(go.cuda())
            yc.backward(go)
            same(wg.grad, wc.grad, {torch.float16: 2e-3}.get(dtype, 1e-6))
    # NLL loss and cross entropy: every reduction, class weights, ignore_index, backward.
    for dtype in (torch.float32, torch.float64):
        logits = values((9, 5), dtype)
        target = torch.tensor([0, 4, 2, 2, -100, 1, 3, 4, 0])
        weight = values((5,), dtype, 0.5, 2.0)
        for reduction in ("none", "mean", "sum"):
            for wt in (None, weight):
                g = logits.cuda().requires_grad_()
                c = logits.clone().requires_grad_()
                lg = F.cross_entropy(g, target.cuda(), weight=None if wt is None else wt.cuda(), reduction=reduction)
                lc = F.cross_entropy(c, target, weight=wt, reduction=reduction)
                same(lg, lc.detach(), 1e-5)
                go = values(lc.shape, dtype)
                lg.backward(go.cuda())
                lc.backward(go)
                same(g.grad, c.grad, 1e-5)
    # Every target ignored: a mean of nothing is NaN, as in PyTorch.
    same(F.nll_loss(values((3, 4), torch.float32).cuda(), torch.full((3,), -100, device="cuda")),
         F.nll_loss(values((3, 4), torch.float32), torch.full((3,), -100)))
    # cat: dtype promotion, the legacy empty tensor, every dimension, non-contiguous inputs.
    a, b = values((2, 3, 4), torch.float32), values((2, 5, 4), torch.float16)
    same(torch.cat([a.cuda(), b.cuda()], 1), torch.cat([a, b], 1), 0)
    same(torch.cat([a.cuda(), torch.empty(0, device="cuda"), a.cuda()], 0),
         torch.cat([a, torch.empty(0), a], 0), 0)
    same(torch.cat([a.cuda().transpose(0, 2), a.cuda().transpose(0, 2)], -1),
         torch.cat([a.transpose(0, 2), a.transpose(0, 2)], -1), 0)
    # flip: any set of dimensions, strided and channels-last inputs.
    x = values((3, 4, 5, 2), torch.float32)
    for dims in ((0,), (1, 3), (-1, 0, 2)):
        same(x.cuda().flip(dims), x.flip(dims), 0)
        same(x.cuda().transpose(1, 2).flip(dims), x.transpose(1, 2).flip(dims), 0)
        cl = x.cuda().contiguous(memory_format=torch.channels_last).flip(dims)
        assert cl.is_contiguous(memory_format=torch.channels_last)
        same(cl, x.flip(dims), 0)
    # Regression and binary losses: MSE (every reduction) and BCE with logits (log-sigmoid).
    for reduction in ("none", "mean", "sum"):
        a, b = values((5, 7), torch.float32), values((5, 7), torch.float32)
        ga, ca = a.cuda().requires_grad_(), a.clone().requires_grad_()
        lg, lc = F.mse_loss(ga, b.cuda(), reduction=reduction), F.mse_loss(ca, b, reduction=reduction)
        same(lg, lc.detach(), 1e-5)
        go = values(lc.shape, torch.float32)
        lg.backward(go.cuda())
        lc.backward(go)
        same(ga.grad, ca.grad, 1e-5)
        y = (torch.rand(5, 7) > 0.5).float()
        ga, ca = (a * 10).cuda().requires_grad_(), (a * 10).requires_grad_()
        lg = F.binary_cross_entropy_with_logits(ga, y.cuda(), reduction=reduction)
        lc = F.binary_cross_entropy_with_logits(ca, y, reduction=reduction)
        same(lg, lc.detach(), 1e-5)
        lg.backward(go.cuda())
        lc.backward(go)
        same(ga.grad, ca.grad, 1e-5)
    on_device("aten::arange", "aten::gather", "aten::index_select", "aten::embedding_dense_backward",
              "aten::nll_loss_forward", "aten::nll_loss_backward", "aten::cat", "aten::flip",
              "aten::mse_loss", "aten::mse_loss_backward")
    print("OK")
    """)


def test_fused_adamw_matches_the_cpu_fused_optimizer(mode):
    run_ok(mode, """
    for dtype in (torch.float32, torch.float64, torch.bfloat16):
        for amsgrad, maximize, wd in ((False, False, 0.01), (True, True, 0.0)):
            shapes = ((7, 3), (5,), (2, 2, 2))
            ps = [values(s, dtype) for s in shapes]
            gp = [torch.nn.Parameter(p.cuda()) for p in ps]
            cp = [torch.nn.Parameter(p.clone()) for p in ps]
            kw = dict(lr=1e-2, betas=(0.8, 0.95), weight_decay=wd, amsgrad=amsgrad,
                      maximize=maximize, fused=True)
            go, co = torch.optim.AdamW(gp, **kw), torch.optim.AdamW(cp, **kw)
            for step in range(3):
                for g, c in zip(gp, cp):
                    grad = values(g.shape, dtype)
                    g.grad, c.grad = grad.cuda(), grad.clone()
                go.step()
                co.step()
            tol = {torch.float32: 1e-5, torch.float64: 1e-12}.get(dtype, 1e-2)
            for g, c in zip(gp, cp):
                same(g.detach(), c.detach(), tol)
                for k in ("exp_avg", "exp_avg_sq"):
                    same(go.state[g][k], co.state[c][k], tol)
    # grad_scale unscales the gradients (and stores them back); found_inf = 1 skips the step.
    p = values((6,), torch.float32).cuda()
    grad = values((6,), torch.float32).cuda()
    m, v, step = torch.zeros_like(p), torch.zeros_like(p), torch.ones((), device="cuda")
    before = p.clone()
    torch._fused_adamw_([p], [grad], [m], [v], [], [step], lr=0.1, beta1=0.9, beta2=0.99,
                        weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False,
                        grad_scale=torch.full((), 4.0, device="cuda"),
                        found_inf=torch.ones((), device="cuda"))
    same(p, before.cpu(), 0)
    unscaled = grad.cpu() / 4
    torch._fused_adamw_([p], [grad], [m], [v], [], [step], lr=0.1, beta1=0.9, beta2=0.99,
                        weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False,
                        grad_scale=torch.full((), 4.0, device="cuda"),
                        found_inf=torch.zeros((), device="cuda"))
    same(grad, unscaled, 1e-6)
    same(m, 0.1 * unscaled, 1e-6)
    on_device("aten::_fused_adamw_")
    print("OK")
    """)


def test_attention_forward_and_backward_match_the_cpu(mode):
    run_ok(mode, """
    F = torch.nn.functional
    for dtype in (torch.float32, torch.bfloat16):
        tol = {torch.float32: 2e-5}.get(dtype, 3e-2)
        for (L, S), causal in (((16, 16), True), ((8, 12), False), ((12, 8), True)):
            q, k, v = (values((2, 3, n, 8), dtype, -1, 1) for n in (L, S, S))
            gq, gk, gv = (t.cuda().requires_grad_() for t in (q, k, v))
            cq, ck, cv = (t.clone().requires_grad_() for t in (q, k, v))
            yg = F.scaled_dot_product_attention(gq, gk, gv, is_causal=causal)
            yc = F.scaled_dot_product_attention(cq, ck, cv, is_causal=causal)
            same(yg, yc.detach(), tol)
            go = values(yc.shape, dtype, -1, 1)
            yg.backward(go.cuda())
            yc.backward(go)
            for a, b in ((gq, cq), (gk, ck), (gv, cv)):
                same(a.grad, b.grad, tol * 10)
    # Grouped-query attention: 4 query heads over 2 key/value heads.
    q, k, v = values((2, 4, 10, 8), torch.float32, -1, 1), *(values((2, 2, 10, 8), torch.float32, -1, 1) for _ in range(2))
    gq, gk, gv = (t.cuda().requires_grad_() for t in (q, k, v))
    cq, ck, cv = (t.clone().requires_grad_() for t in (q, k, v))
    yg = F.scaled_dot_product_attention(gq, gk, gv, is_causal=True, enable_gqa=True)
    yc = F.scaled_dot_product_attention(cq, ck, cv, is_causal=True, enable_gqa=True)
    same(yg, yc.detach(), 2e-5)
    go = values(yc.shape, torch.float32)
    yg.backward(go.cuda())
    yc.backward(go)
    for a, b in ((gq, cq), (gk, ck), (gv, cv)):
        same(a.grad, b.grad, 2e-4)
    # A boolean mask and an additive one, with a scale.
    q, k, v = (values((1, 2, 6, 4), torch.float32, -1, 1) for _ in range(3))
    mask = torch.rand(6, 6) > 0.3
    mask[:, 0] = True
    for m in (mask, torch.where(mask, 0.0, -2.0)):
        same(F.scaled_dot_product_attention(q.cuda(), k.cuda(), v.cuda(), attn_mask=m.cuda(), scale=0.7),
             F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.7), 2e-5)
    p = paths()
    name = "aten::_scaled_dot_product_fused_attention_overrideable"
    assert p[name].get("device", 0) > 0 and not any(k.startswith("bridge") for k in p[name]), p[name]
    assert p[name + "_backward"].get("device", 0) > 0, p[name + "_backward"]
    print("OK")
    """)


def test_an_index_out_of_range_is_a_device_side_assert(mode):
    # As on an NVIDIA GPU: the launch's error is sticky, reported by the next synchronisation.
    run_ok(mode, """
    w = torch.randn(4, 3, device="cuda")
    try:
        torch.index_select(w, 0, torch.tensor([1, 7], device="cuda"))
        torch.cuda.synchronize()
        raise SystemExit("an out-of-range index was accepted")
    except RuntimeError as e:
        assert "device-side assert" in str(e), e
    print("OK")
    """)


def test_convolution_pooling_and_batch_norm_match_the_cpu(mode):
    run_ok(mode, """
    F = torch.nn.functional
    for dtype, tol in ((torch.float32, 2e-4), (torch.float64, 1e-10)):
        # 2-D and 1-D convolutions: stride, padding, dilation, groups, with and without bias.
        for xs, ws, kw in (((2, 4, 9, 7), (6, 4, 3, 3), dict(stride=1, padding=1)),
                           ((2, 4, 9, 7), (6, 2, 3, 2), dict(stride=(2, 1), padding=(0, 1), dilation=(1, 2), groups=2)),
                           ((3, 2, 11), (5, 2, 4), dict(stride=2, padding=2))):
            x, w, b = values(xs, dtype), values(ws, dtype), values(ws[:1], dtype)
            conv = F.conv2d if len(xs) == 4 else F.conv1d
            for bias in (b, None):
                gx, gw = x.cuda().requires_grad_(), w.cuda().requires_grad_()
                cx, cw = x.clone().requires_grad_(), w.clone().requires_grad_()
                gb = bias.cuda().requires_grad_() if bias is not None else None
                cb = bias.clone().requires_grad_() if bias is not None else None
                yg, yc = conv(gx, gw, gb, **kw), conv(cx, cw, cb, **kw)
                same(yg, yc.detach(), tol)
                go = values(yc.shape, dtype)
                yg.backward(go.cuda())
                yc.backward(go)
                same(gx.grad, cx.grad, tol)
                same(gw.grad, cw.grad, tol * 10)
                if bias is not None:
                    same(gb.grad, cb.grad, tol)
        # Max pooling: overlapping windows, padding, dilation, ceil_mode; the indices too.
        x = values((2, 3, 9, 8), dtype)
        for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                   dict(kernel_size=(3, 2), stride=1, dilation=(2, 1), ceil_mode=True)):
            gx, cx = x.cuda().requires_grad_(), x.clone().requires_grad_()
            (yg, ig), (yc, ic) = (F.max_pool2d(gx, return_indices=True, **kw),
                                  F.max_pool2d(cx, return_indices=True, **kw))
            same(yg, yc.detach(), 0)
            same(ig, ic, 0)
            go = values(yc.shape, dtype)
            yg.backward(go.cuda())
            yc.backward(go)
            same(gx.grad, cx.grad, tol)
        # Batch norm: training (running statistics updated) and evaluation, backward both ways.
        for shape in ((4, 3, 5, 6), (8, 5)):
            x = values(shape, dtype)
            layer = torch.nn.BatchNorm2d if len(shape) == 4 else torch.nn.BatchNorm1d
            bg, bc = layer(shape[1]).to(dtype), layer(shape[1]).to(dtype)
            bc.load_state_dict(bg.state_dict())
            bg = bg.cuda()
            for train in (True, False):
                bg.train(train)
                bc.train(train)
                gx, cx = x.cuda().requires_grad_(), x.clone().requires_grad_()
                yg, yc = bg(gx), bc(cx)
                same(yg, yc.detach(), tol * 10)
                go = values(shape, dtype)
                yg.backward(go.cuda())
                yc.backward(go)
                same(gx.grad, cx.grad, tol * 10)
                same(bg.weight.grad, bc.weight.grad, tol * 10)
                same(bg.bias.grad, bc.bias.grad, tol * 10)
                same(bg.running_mean, bc.running_mean, tol)
                same(bg.running_var, bc.running_var, tol)
                bg.zero_grad()
                bc.zero_grad()
    # Channels-last: computed as contiguous, laid out as PyTorch's CUDA kernels lay them out.
    cl = torch.channels_last
    x, w = values((2, 4, 9, 7), torch.float32), values((6, 4, 3, 3), torch.float32)
    gx = x.cuda().to(memory_format=cl).requires_grad_()
    gw = w.cuda().to(memory_format=cl).requires_grad_()
    cx, cw = x.clone().requires_grad_(), w.clone().requires_grad_()
    yg = F.max_pool2d(F.conv2d(gx, gw, padding=1), 2)
    yc = F.max_pool2d(F.conv2d(cx, cw, padding=1), 2)
    assert yg.is_contiguous(memory_format=cl), yg.stride()
    same(yg, yc.detach(), 2e-4)
    go = values(yc.shape, torch.float32)
    yg.backward(go.cuda())
    yc.backward(go)
    assert gx.grad.is_contiguous(memory_format=cl) and gw.grad.is_contiguous(memory_format=cl)
    same(gx.grad, cx.grad, 2e-4)
    same(gw.grad, cw.grad, 2e-3)
    # addmm where PyTorch copies the bias itself: one output column, a 2-D bias, beta and alpha.
    for m, k, n, bias_shape, beta, alpha in ((8, 5, 1, (1,), 1, 1), (4, 6, 3, (4, 3), 0.5, 2),
                                             (1, 3, 4, (4,), 1, 1), (5, 4, 3, (3,), 0, 1)):
        a, b, c = values((m, k), torch.float32), values((k, n), torch.float32), values(bias_shape, torch.float32)
        same(torch.addmm(c.cuda(), a.cuda(), b.cuda(), beta=beta, alpha=alpha),
             torch.addmm(c, a, b, beta=beta, alpha=alpha), 1e-5)
    on_device("aten::convolution", "aten::convolution_backward", "aten::max_pool2d_with_indices",
              "aten::max_pool2d_with_indices_backward", "aten::native_batch_norm",
              "aten::native_batch_norm_backward", "aten::addmm")
    print("OK")
    """)


def test_recurrent_cells_dropout_and_grad_scaler_match_the_cpu(mode):
    run_ok(mode, """
    for dtype, tol in ((torch.float32, 2e-5), (torch.float64, 1e-10)):
        for cls in (torch.nn.LSTM, torch.nn.GRU):
            for bias in (True, False):
                torch.manual_seed(1)
                cpu = cls(5, 7, num_layers=2, bias=bias, batch_first=True).to(dtype)
                dev = cls(5, 7, num_layers=2, bias=bias, batch_first=True).to(dtype)
                dev.load_state_dict(cpu.state_dict())
                dev = dev.cuda()
                x = values((3, 6, 5), dtype)
                gx, cx = x.cuda().requires_grad_(), x.clone().requires_grad_()
                (yg, _), (yc, _) = dev(gx), cpu(cx)
                same(yg, yc.detach(), tol)
                go = values(yc.shape, dtype)
                yg.backward(go.cuda())
                yc.backward(go)
                same(gx.grad, cx.grad, tol * 10)
                for (n, pg), (_, pc) in zip(dev.named_parameters(), cpu.named_parameters()):
                    same(pg.grad, pc.grad, tol * 10)
    # Dropout: evaluation mode is the identity; the backward applies the mask and the scale.
    x = values((4, 6), torch.float32).cuda()
    same(torch.nn.functional.dropout(x, 0.5, training=False), x.cpu(), 0)
    out, mask = torch.ops.aten.native_dropout(x, 0.25, False)
    assert bool(mask.all()), mask
    mask = torch.rand(4, 6) > 0.5
    grad = values((4, 6), torch.float32)
    same(torch.ops.aten.native_dropout_backward(grad.cuda(), mask.cuda(), 2.0), grad * mask * 2.0, 0)
    # GradScaler's operators against their CPU kernels: unscaling with and without an overflow,
    # the scale backing off, holding and growing.
    for bad in (None, float("inf"), float("nan")):
        grads = [values((5, 3), torch.float32), values((7,), torch.float16)]
        if bad is not None:
            grads[1][2] = bad
        dev = [g.cuda() for g in grads]
        found, found_cpu = torch.zeros(1, device="cuda"), torch.zeros(1)
        inv = torch.full((1,), 0.125)
        torch._amp_foreach_non_finite_check_and_unscale_(dev, found, inv.cuda())
        torch._amp_foreach_non_finite_check_and_unscale_(grads, found_cpu, inv)
        same(found, found_cpu, 0)
        for d, c in zip(dev, grads):
            same(d, c, 0)
    for found_inf, tracker in ((0.0, 0), (0.0, 2), (1.0, 2)):
        scale, scale_cpu = torch.full((1,), 1024.0, device="cuda"), torch.full((1,), 1024.0)
        t, t_cpu = torch.full((1,), tracker, dtype=torch.int32, device="cuda"), torch.full((1,), tracker, dtype=torch.int32)
        f = torch.full((1,), found_inf)
        torch._amp_update_scale_(scale, t, f.cuda(), 2.0, 0.5, 3)
        torch._amp_update_scale_(scale_cpu, t_cpu, f, 2.0, 0.5, 3)
        same(scale, scale_cpu, 0)
        same(t, t_cpu, 0)
    on_device("aten::_thnn_fused_lstm_cell", "aten::_thnn_fused_lstm_cell_backward_impl",
              "aten::_thnn_fused_gru_cell", "aten::_thnn_fused_gru_cell_backward",
              "aten::native_dropout_backward", "aten::_amp_foreach_non_finite_check_and_unscale_",
              "aten::_amp_update_scale_")
    print("OK")
    """)


# A reference of PyTorch's CUDA random kernels: Philox4x32-10 (checked against Random123's known
# answers), curand's conversions and the order in which the kernels spend each thread's draws.
PHILOX = """
import numpy as np
M = 0xFFFFFFFF
def philox(c, k):
    c, (k0, k1) = list(c), k
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M, (k1 + 0xBB67AE85) & M
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & M, p1 & M, ((p0 >> 32) ^ c[3] ^ k1) & M, p0 & M]
    return c
assert philox([0, 0, 0, 0], [0, 0]) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
assert philox([M] * 4, [M, M]) == [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]
assert philox([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344],
              [0xA4093822, 0x299F31D0]) == [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]
PROPS = torch.cuda.get_device_properties(0)
def grid(n):
    resident = PROPS.multi_processor_count * (PROPS.max_threads_per_multi_processor // 256)
    return max(1, min(resident, (n + 255) // 256))
def draws(seed, offset, thread, call):  # the call-th curand4 of a thread
    lo = offset // 4 + call
    return philox([lo & M, lo >> 32, thread & M, thread >> 32], [seed & M, seed >> 32])
def strided(n, unroll):  # element -> (thread, call, word) of the distribution kernels
    s = grid(n) * 256
    for e in range(n):
        k, r = divmod(e, s * unroll)
        yield e, r % s, k, r // s
def increment(n, unroll):
    return ((n - 1) // (grid(n) * 256 * unroll) + 1) * 4
def uniform32(w):  # float(w) * 2^-32 + 2^-33, fused
    return np.float32(np.float64(np.float32(w)) * 2.3283064e-10 + 2.3283064e-10 / 2)
"""


def test_random_operators_draw_as_pytorchs_cuda_kernels(mode):
    run_ok(mode, PHILOX + textwrap.dedent("""
    seed = 20261128
    # random_ with bounds (randint): the raw 32-bit and 64-bit draws, exact.
    for n, hi, dtype, unroll in ((5000, 1000, torch.int32, 4), (3001, 2 ** 40, torch.int64, 2)):
        g = torch.Generator("cuda").manual_seed(seed)
        for offset in (0, increment(n, unroll)):
            got = torch.randint(0, hi, (n,), device="cuda", generator=g, dtype=dtype).cpu().tolist()
            for e, t, k, i in strided(n, unroll):
                w = draws(seed, offset, t, k)
                v = w[i] if unroll == 4 else (w[2 * i] << 32) | w[2 * i + 1]
                assert got[e] == v % hi, (n, e, got[e], v % hi)
        assert g.get_offset() == 2 * increment(n, unroll), g.get_offset()
    # rand in float32 (curand_uniform4) and float64 (curand_uniform2_double), uniform_'s bounds.
    n = 2000
    g = torch.Generator("cuda").manual_seed(seed)
    got = torch.rand(n, device="cuda", generator=g).cpu()
    want = torch.tensor([float(uniform32(draws(seed, 0, t, k)[i])) for e, t, k, i in strided(n, 4)])
    torch.testing.assert_close(got, want, rtol=2.5e-7, atol=0)
    got = torch.empty(n, device="cuda").uniform_(-2, 3, generator=g).cpu()
    want = torch.tensor([float(uniform32(draws(seed, increment(n, 4), t, k)[i])) for e, t, k, i in strided(n, 4)])
    torch.testing.assert_close(got, want * 5 - 2, rtol=1e-6, atol=1e-6)
    off = g.get_offset()
    got = torch.rand(n, device="cuda", generator=g, dtype=torch.float64).cpu().tolist()
    for e, t, k, i in strided(n, 2):
        w = draws(seed, off, t, k)
        z = w[2 * i] ^ (w[2 * i + 1] << 21)
        assert got[e] == z * 2.0 ** -53 + 2.0 ** -54, (e, got[e])
    # randn: Box-Muller on pairs of words.
    off = g.get_offset()
    got = torch.randn(n, device="cuda", generator=g).cpu()
    want = []
    for e, t, k, i in strided(n, 4):
        w = draws(seed, off, t, k)
        u, v = float(uniform32(w[i & 2])), (w[(i & 2) + 1] + 0.5) * 2.0 ** -32 * 2 * np.pi
        want.append(np.sqrt(-2 * np.log(u)) * (np.sin(v) if i % 2 == 0 else np.cos(v)))
    torch.testing.assert_close(got, torch.tensor(want, dtype=torch.float32), rtol=1e-4, atol=1e-4)

    # multinomial without replacement is PyTorch's own composition, argmax(p / q) with q drawn by
    # exponential_ (-log of the uniform draws), on the device; normal with a tensor mean is
    # normal_ then the mean added.
    p = torch.softmax(values((3, 50), torch.float32), -1)
    g = torch.Generator("cuda").manual_seed(seed)
    got = torch.multinomial(p.cuda(), 1, generator=g).cpu().flatten().tolist()
    u = np.array([float(uniform32(draws(seed, 0, t, k)[i])) for e, t, k, i in strided(150, 4)])
    assert got == (p.numpy() / -np.log(u).reshape(3, 50)).argmax(-1).tolist(), got
    mean = values((500,), torch.float32)
    g.manual_seed(seed)
    want = torch.empty(500, device="cuda").normal_(0, 3, generator=g).cpu() + mean
    g.manual_seed(seed)
    same(torch.normal(mean.cuda(), 3.0, generator=g), want, 1e-6)

    # Dropout: the mask from vectors of 4 (float, aligned), 8 (half: two draws a vector) and the
    # unrolled order (an odd count); the kept elements scaled by 1 / (1 - p).
    for shape, dtype, vec in (((64, 50), torch.float32, 4), ((40, 16), torch.float16, 8),
                              ((7, 11), torch.float32, 1)):
        torch.cuda.manual_seed(seed)
        x = values(shape, dtype).cuda()
        out, mask = torch.ops.aten.native_dropout(x, 0.3, True)
        n, s, flat = x.numel(), grid(x.numel()) * 256, mask.flatten().cpu().tolist()
        for e in range(n):
            if vec == 1:
                t, k, i = e % s, e // (4 * s), (e % (4 * s)) // s
            else:
                t, k, j = (e // vec) % s, e // (vec * s), e % vec
                k, i = k * ((vec + 3) // 4) + j // 4, j % 4
            assert flat[e] == bool(uniform32(draws(seed, 0, t, k)[i]) < np.float32(0.7)), (shape, e)
        same(out, (x.cpu().float() * mask.cpu() / np.float32(0.7)).to(dtype), 2e-3)
    # Seeding, state round trips and a generator of the wrong device, as on NVIDIA.
    torch.manual_seed(3)
    a = torch.randn(1000, device="cuda")
    torch.manual_seed(3)
    assert torch.equal(a, torch.randn(1000, device="cuda"))
    state = torch.cuda.get_rng_state()
    b = torch.rand(77, device="cuda")
    torch.cuda.set_rng_state(state)
    assert torch.equal(b, torch.rand(77, device="cuda"))
    with torch.random.fork_rng(devices=[0]):
        torch.rand(5, device="cuda")
    assert not torch.equal(b, torch.rand(77, device="cuda"))
    try:
        torch.rand(3, device="cuda", generator=torch.Generator())
        raise AssertionError("a CPU generator was accepted")
    except RuntimeError as e:
        assert "generator" in str(e), e
    # The other distributions' moments, and PyTorch's own argument checks.
    x = torch.empty(200000, device="cuda")
    assert abs(x.bernoulli_(0.3).mean().item() - 0.3) < 0.01
    assert abs(x.exponential_(4.0).mean().item() - 0.25) < 0.01 and x.min().item() > 0
    assert abs(x.normal_(2.0, 0.5).mean().item() - 2.0) < 0.01
    assert abs(x.std().item() - 0.5) < 0.01
    h = torch.empty(1000, device="cuda", dtype=torch.half).uniform_(1, 2)
    assert h.min().item() >= 1 and h.max().item() < 2
    for bad in (lambda: x.normal_(0, -1), lambda: x.uniform_(3, 2), lambda: x.bernoulli_(1.5)):
        try:
            bad()
            raise AssertionError("accepted")
        except RuntimeError:
            pass
    # Inside a CUDA graph each replay draws anew from the graph's advancing offset.
    static = torch.empty(1000, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static.uniform_()
    graph.replay()
    first = static.clone()
    graph.replay()
    assert not torch.equal(first, static) and 0 <= static.min().item() and static.max().item() < 1
    on_device("aten::random_", "aten::uniform_", "aten::normal_", "aten::bernoulli_",
              "aten::exponential_", "aten::native_dropout", "aten::normal.Tensor_float")
    assert paths()["aten::multinomial"] == {"native": 1}, paths()["aten::multinomial"]
    print("OK")
    """))
