"""aten overrides and the environment toggles, each case in a fresh process because the
variables are read once, when the library is loaded."""
import json
import subprocess
import sys

import pytest
import torch

from conftest import HAS_CUDA, REPO, env_without_torchada

PROBE = r"""
import json, sys, torch
import torch.nn.functional as F
sys.path.insert(0, {pypath!r})
import torchada_ops
torchada_ops.load()
dev = {device!r}
res = {{"active": torchada_ops.active_overrides(), "key": torchada_ops.override_key(), "ok": {{}}}}
torch.manual_seed(0)
for dt in (torch.float32, torch.float16, torch.bfloat16):
    x = torch.randn(1000, 33, device=dev, dtype=dt) * 3
    xf = x.float()
    tol = dict(atol=1e-5, rtol=1e-5) if dt == torch.float32 else dict(atol=2e-2, rtol=2e-2)
    checks = {{
        "neg": (torch.neg(x), x.float() * -1),
        "silu": (F.silu(x), xf * torch.sigmoid(xf)),
        "gelu": (F.gelu(x), 0.5 * xf * (1 + torch.erf(xf / 2 ** 0.5))),
        "gelu_tanh": (F.gelu(x, approximate="tanh"),
                      0.5 * xf * (1 + torch.tanh(0.7978845608 * (xf + 0.044715 * xf ** 3)))),
    }}
    for name, (got, exp) in checks.items():
        torch.testing.assert_close(got.float(), exp.to(dt).float(), **tol)
        res["ok"][f"{{name}}/{{dt}}"] = True
# Inputs the kernels do not take fall back to the stock kernel and stay correct.
assert torch.equal(torch.neg(torch.arange(5, device=dev)), torch.arange(5, device=dev) * -1)
s = torch.randn(8, 6, device=dev).t()
torch.testing.assert_close(F.silu(s), s * torch.sigmoid(s))
d = torch.randn(9, device=dev, dtype=torch.float64)
torch.testing.assert_close(torch.neg(d), d * -1)
res["calls"] = {{op: torchada_ops.override_calls(op) for op in ("aten::neg", "aten::silu", "aten::gelu")}}
print("RESULT " + json.dumps(res))
"""


def run_probe(device, **env):
    full = env_without_torchada()
    full.update(env)
    code = PROBE.format(pypath=str(REPO / "ops" / "python"), device=device)
    import os
    if "TORCHADA_OPS_LIBRARY" in os.environ:
        full["TORCHADA_OPS_LIBRARY"] = os.environ["TORCHADA_OPS_LIBRARY"]
    p = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):]), p.stderr


# 3 dtypes x neg, silu, gelu (twice: exact and tanh), one call each
EXPECTED_CALLS = {"aten::neg": 3, "aten::silu": 3, "aten::gelu": 6}


def test_off_by_default():
    res, err = run_probe("cpu")
    assert res["active"] == [] and res["key"] == ""
    assert res["calls"] == {"aten::neg": 0, "aten::silu": 0, "aten::gelu": 0}
    assert "[torchada_ops]" not in err


def test_enabled_on_cpu_key_runs_our_kernels():
    res, _ = run_probe("cpu", TORCHADA_ENABLE_CPP_OPS="1", TORCHADA_OVERRIDE_KEY="CPU")
    assert sorted(res["active"]) == ["aten::gelu", "aten::neg", "aten::silu"]
    assert res["key"] == "CPU"
    assert len(res["ok"]) == 12
    # Only float inputs that are contiguous reach our kernels; the fallbacks are not counted.
    assert res["calls"] == EXPECTED_CALLS


def test_disable_one_override():
    res, _ = run_probe("cpu", TORCHADA_ENABLE_CPP_OPS="1", TORCHADA_OVERRIDE_KEY="CPU",
                       TORCHADA_DISABLE_OP_OVERRIDE_neg="1")
    assert sorted(res["active"]) == ["aten::gelu", "aten::silu"]
    assert res["calls"] == {**EXPECTED_CALLS, "aten::neg": 0}


def test_debug_logs_each_call():
    res, err = run_probe("cpu", TORCHADA_ENABLE_CPP_OPS="1", TORCHADA_OVERRIDE_KEY="CPU",
                         TORCHADA_DEBUG_CPP_OPS="1")
    assert "[torchada_ops] loaded: GPU key" in err
    assert err.count("[torchada_ops] aten::neg -> torchada CPU kernel") == 3
    assert "[torchada_ops] aten::neg -> stock kernel" in err  # the int64 and float64 fallbacks
    assert "[torchada_ops] aten::silu -> stock kernel" in err  # the strided input


def test_bad_key_is_refused():
    env = env_without_torchada()
    env.update(TORCHADA_ENABLE_CPP_OPS="1", TORCHADA_OVERRIDE_KEY="XLA")
    code = f"import sys; sys.path.insert(0, {str(REPO / 'ops' / 'python')!r}); import torchada_ops; torchada_ops.load()"
    import os
    if "TORCHADA_OPS_LIBRARY" in os.environ:
        env["TORCHADA_OPS_LIBRARY"] = os.environ["TORCHADA_OPS_LIBRARY"]
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert p.returncode != 0
    assert "TORCHADA_OVERRIDE_KEY must be auto, CPU, CUDA or PrivateUse1" in p.stderr


def test_custom_ops_count_calls():
    before = torch.ops.torchada.override_calls("torchada::silu_and_mul")
    torch.ops.torchada.silu_and_mul(torch.randn(2, 4))
    assert torch.ops.torchada.override_calls("torchada::silu_and_mul") == before + 1
    with pytest.raises(RuntimeError, match="unknown op 'aten::nope'"):
        torch.ops.torchada.override_calls("aten::nope")


@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")
def test_enabled_on_gpu_key():
    res, _ = run_probe("cuda", TORCHADA_ENABLE_CPP_OPS="1")
    assert res["key"] == "CUDA"
    assert res["calls"] == EXPECTED_CALLS


@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")
def test_gpu_disable_one_override():
    res, _ = run_probe("cuda", TORCHADA_ENABLE_CPP_OPS="1", TORCHADA_DISABLE_OP_OVERRIDE_gelu="1")
    assert res["calls"] == {**EXPECTED_CALLS, "aten::gelu": 0}
