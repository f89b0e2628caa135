"""examples/llama.py (RMSNorm, rotary embeddings, grouped-query attention, SwiGLU) under torchada
on the simulator against the same script on device="cpu"."""
import functools

import pytest
from conftest import assert_close_steps, losses, run_example

ENV = {"OMP_NUM_THREADS": "1"}
STEPS = ("--steps", "20")

# Relative tolerance (fp32) on every step's loss. The device path computes attention as GEMMs and
# a fused softmax (the CPU run: its flash kernel), layer sums in another order and the optimizer
# in the fused kernel's arithmetic: rounding differences of a few ulps that 20 steps of AdamW
# compound. 1e-4 stays two orders below a step's change in loss.
TOL = 1e-4


@functools.lru_cache(maxsize=None)
def cpu_run(args):
    return run_example("llama.py", args, mode="cpu", env=ENV).stdout


@pytest.mark.parametrize("mode", ["launcher", "preload"])
def test_matches_cpu_step_by_step(mode):
    got = run_example("llama.py", STEPS, mode=mode, env=ENV).stdout
    want = cpu_run(STEPS)
    err = assert_close_steps(losses(got), losses(want), TOL)
    print(f"llama.py {mode}: worst relative error {err:.3g}")
    steps = losses(got)
    assert steps[20] < 0.85 * steps[1], f"the model did not learn: {steps[1]} -> {steps[20]}"
