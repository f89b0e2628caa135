"""examples/gpt.py under torchada on the simulator against the same script on device="cpu"."""
import os
import re

import pytest
from conftest import (assert_close_steps, cpu_reference, eval_losses, losses, run_example,
                      sample)

STEPS = ("--steps", "16", "--eval-every", "8", "--generate", "40")

# Relative tolerance on each step's loss. fp32: the only difference from the CPU run is the
# matrix products (the simulator's OpenBLAS through cuBLAS against PyTorch's own CPU GEMM), so
# the losses agree to a few ulps compounded over the steps (measured worst: 1.5e-7). Mixed
# precision rounds every product to 16 bits, where the two GEMMs' summation orders show
# (measured worst: bf16 1.9e-3, fp16 5e-4).
TOL = {"fp32": 1e-5, "bf16": 3e-2, "fp16": 1e-2}


@pytest.mark.parametrize("mode,optimizer", [("launcher", "fused"), ("preload", "foreach")])
def test_fp32_matches_cpu_step_by_step(mode, optimizer):
    args = STEPS + ("--optimizer", optimizer)
    got = run_example("gpt.py", args, mode=mode).stdout
    want = cpu_reference("gpt.py", args)
    assert_close_steps(losses(got), losses(want), TOL["fp32"])
    assert_close_steps(eval_losses(got), eval_losses(want), TOL["fp32"], "validation loss")
    # Sampling draws from a CUDA generator: under TORCHADA_OPS_RNG=cpu (conftest) the bridge draws
    # what a CPU generator with the same seed draws, so the text is the CPU run's.
    assert sample(got) == sample(want)
    assert losses(got)[16] < 0.8 * losses(got)[1], "the model did not learn"


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_mixed_precision_matches_cpu(precision):
    args = STEPS + ("--precision", precision)
    got = run_example("gpt.py", args, mode="launcher").stdout
    want = cpu_reference("gpt.py", args)
    assert_close_steps(losses(got), losses(want), TOL[precision])


def test_checkpoint_of_cuda_tensors_resumes_where_it_stopped(tmp_path):
    ckpt = str(tmp_path / "ckpt.pt")
    args = ("--steps", "10", "--eval-every", "0", "--generate", "0")
    whole = losses(run_example("gpt.py", args, mode="launcher").stdout)
    first = run_example("gpt.py", args + ("--save", ckpt, "--save-at", "5"), mode="launcher")
    assert f"saved {ckpt} at step 5" in first.stdout
    assert os.path.getsize(ckpt) > 0
    resumed = run_example("gpt.py", args + ("--resume", ckpt), mode="preload").stdout
    assert "resumed from" in resumed and "at step 5" in resumed
    after = losses(resumed)
    assert sorted(after) == list(range(6, 11))
    assert_close_steps(after, {s: whole[s] for s in after}, 1e-6)


def test_torch_compile_aot_eager_matches_cpu():
    args = ("--steps", "6", "--eval-every", "0", "--generate", "0", "--compile", "aot_eager")
    got = run_example("gpt.py", args, mode="launcher").stdout
    want = cpu_reference("gpt.py", args)
    assert_close_steps(losses(got), losses(want), TOL["fp32"])


def _trace(path):
    import json
    with open(path) as f:
        return json.load(f)["traceEvents"]


@pytest.mark.parametrize("mode", ["launcher", "preload"])
def test_profiler_shows_the_step_on_the_device(mode, tmp_path):
    """torch.profiler with CPU and CUDA activities on one training step (issue 25): a Chrome trace
    with a GPU row whose events are the step's operators and copies, each linked to the operator
    that launched it, and CUDA time per operator in key_averages()."""
    trace = str(tmp_path / "trace.json")
    args = ("--steps", "3", "--eval-every", "0", "--generate", "0", "--profile", trace)
    proc = run_example("gpt.py", args, mode=mode)
    assert f"profile {trace}" in proc.stdout
    assert "CUPTI" not in proc.stderr and "CPU activities only" not in proc.stderr, proc.stderr
    events = _trace(trace)
    cpu_ops = [e for e in events if e.get("cat") == "cpu_op"]
    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    kernels = [e for e in gpu if e["cat"] == "kernel"]
    assert kernels, "no GPU row"
    # The GPU row is device 0's, one stream per row, and every event lies in the step's window.
    assert {e["pid"] for e in gpu} == {0}
    step_start = min(e["ts"] for e in cpu_ops)
    step_end = max(e["ts"] + e["dur"] for e in cpu_ops)
    for e in gpu:
        assert e["dur"] >= 0 and step_start <= e["ts"] <= step_end, e
    # Each kernel is an operator of the step, run by a device kernel of ops/, the kernel bridge
    # or cuBLAS, and linked to the CPU operator that launched it.
    kinds = set()
    for e in kernels:
        m = re.fullmatch(r"(aten::[\w.]+) \[(torchada device kernel|torchada bridge: CPU kernel|"
                         r"cuBLAS)\]", e["name"])
        assert m, e["name"]
        kinds.add(m.group(2))
        assert m.group(1).split(".")[0] in {c["name"].split(".")[0] for c in cpu_ops}, e["name"]
        assert "External id" in e["args"], e
    assert {"torchada device kernel", "cuBLAS"} <= kinds
    names = {e["name"].split(" [")[0] for e in kernels}
    for op in ("aten::mm", "aten::native_layer_norm", "aten::_fused_adamw_"):
        assert any(n == op or n.startswith(op + ".") for n in names), (op, sorted(names))
    # The step's input batch: two host-to-device copies.
    copies = [e for e in gpu if e["cat"] == "gpu_memcpy"]
    assert sum("HtoD" in e["name"] for e in copies) >= 2, [e["name"] for e in copies]
    # Flow arrows from the launching runtime call to the device work.
    assert any(e.get("cat") == "ac2g" for e in events)
    # key_averages(): CUDA time per operator (the table's "CUDA total" column; aten::mm's is
    # its cuBLAS calls' device time).
    lines = proc.stdout[proc.stdout.index("Name"):].splitlines()
    header = re.split(r"\s{2,}", lines[0].strip())
    assert "CUDA total" in header, lines[0]
    column = header.index("CUDA total")
    mm = next(re.split(r"\s{2,}", l.strip()) for l in lines if l.strip().startswith("aten::mm "))
    assert float(re.sub(r"[a-z]+$", "", mm[column])) > 0, mm
