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
