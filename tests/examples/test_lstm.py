"""examples/lstm.py under torchada on the simulator against the same script on device="cpu".

With cuDNN off (the bridge switches it off), nn.LSTM on CUDA runs one _thnn_fused_lstm_cell per
layer and time step, and its _thnn_fused_lstm_cell_backward_impl: operators PyTorch implements
only for CUDA, which ops/ serves as device kernels (ops/src/device/training.cpp; the bridge also
has CPU kernels for them, ops/src/bridge/cpu_kernels.cpp). The CPU run takes the unfused cell
(linear, sigmoid, tanh), so both paths of nn.LSTM are compared.
"""
import functools
import re

import pytest
from conftest import assert_close_steps, eval_losses, losses, run_example

# One OpenMP thread on both sides: the same reduction splits in the CPU kernels, and the CPU
# reference does not compete with the torchada run for this machine's 2 cores.
ENV = {"OMP_NUM_THREADS": "1"}
STEPS = ("--steps", "40", "--eval-every", "20")

# Relative tolerance (fp32) on every step's loss and gradient norm and on the validation losses.
# The differences: the LSTM's input and recurrent GEMMs (cuBLAS on the simulator's BLAS against
# PyTorch's CPU GEMM) and the fused cell (a composition of CPU operators in the bridge) against
# the CPU's unfused cell; a few ulps, compounded over 32 time steps and 40 training steps.
# Measured worst relative error over both cases: loss 2.2e-7, grad_norm 6.3e-7 (the gradient
# backpropagated through time, the most sensitive), validation loss 1.9e-7, rollout 2.3e-7.
# 2e-5 is ~30x the worst of them.
TOL = 2e-5

_GRAD_NORM = re.compile(r"^step (\d+) .*grad_norm (\S+)", re.M)
_ROLLOUT = re.compile(r"^eval (\d+) val_loss \S+ rollout_mse (\S+)", re.M)


@functools.lru_cache(maxsize=None)
def cpu_run(args):
    return run_example("lstm.py", args, mode="cpu", env=ENV).stdout


@pytest.mark.parametrize("mode,extra", [("launcher", ()), ("preload", ("--dropout", "0.2"))])
def test_matches_cpu_step_by_step(mode, extra):
    args = STEPS + extra
    proc = run_example("lstm.py", args, mode=mode, env=dict(ENV, TORCHADA_STATS="1"))
    got = proc.stdout
    # The bridge's table of operators (TORCHADA_STATS=1): the fused cells ran, as device kernels.
    for op in ("_thnn_fused_lstm_cell", "_thnn_fused_lstm_cell_backward_impl"):
        assert re.search(rf"aten::{op} +device", proc.stderr), proc.stderr[-3000:]
    want = cpu_run(args)
    errs = [assert_close_steps(losses(got), losses(want), TOL),
            assert_close_steps(losses(got, _GRAD_NORM), losses(want, _GRAD_NORM), TOL,
                               "gradient norm"),
            assert_close_steps(eval_losses(got), eval_losses(want), TOL, "validation loss"),
            # the autoregressive continuation, (h, c) carried from call to call
            assert_close_steps(losses(got, _ROLLOUT), losses(want, _ROLLOUT), TOL,
                               "rollout MSE")]
    print(f"lstm.py {mode} {' '.join(extra)}: worst relative error loss {errs[0]:.3g}, "
          f"grad_norm {errs[1]:.3g}, validation loss {errs[2]:.3g}, rollout {errs[3]:.3g}")
    # It learns: the one-step MSE falls from the waves' variance (~0.25) towards the noise's.
    steps, val = losses(got), eval_losses(got)
    first, last = (sum(steps[s] for s in r) / 5 for r in (range(1, 6), range(36, 41)))
    assert last < 0.25 * first, f"the model did not learn: {first} -> {last}"
    assert val[40] < val[20] < 0.25 * first, val
