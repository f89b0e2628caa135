"""examples/cnn.py under torchada on the simulator against the same script on device="cpu"."""
import functools
import re

import pytest
from conftest import assert_close_steps, eval_losses, losses, run_example

# One OpenMP thread on both sides: the CPU kernels (the bridge runs PyTorch's own CPU kernels on
# the CUDA tensors' data) then split their reductions alike, and the device="cpu" reference does
# not fight the torchada run's threads on this 2-core machine (2 threads: 75 ms a step, 1: 7 ms).
ENV = {"OMP_NUM_THREADS": "1"}
STEPS = ("--steps", "40", "--eval-every", "20")

# Relative tolerance on every step's training loss and on the validation losses (fp32).
# Convolutions, BatchNorm, pooling, dropout and the optimizer run the CPU's kernels through the
# bridge, dropout and the flips draw from the CPU generator: the only difference from the CPU run
# is the Linear layers' addmm (cuBLASLt on the simulator's BLAS against PyTorch's CPU GEMM), a
# few ulps compounded over the steps. Measured worst relative error over both cases: training
# loss 2.6e-7, validation loss 7.9e-7 (with cuBLASLt's addmm refused, when the bridge ran it on
# the host, both were 0: bit-exact). 2e-5 is ~25x the worst, and still 4 orders below a step's
# change in loss.
TOL = 2e-5

_ACCURACY = re.compile(r"^eval (\d+) val_loss \S+ accuracy (\S+)", re.M)
_BN = re.compile(r"^bn running_mean_sum (\S+) running_var_sum (\S+)", re.M)


@functools.lru_cache(maxsize=None)
def cpu_run(args):
    return run_example("cnn.py", args, mode="cpu", env=ENV).stdout


@pytest.mark.parametrize("mode,extra", [("launcher", ("--optimizer", "sgd")),
                                        ("preload", ("--optimizer", "adam", "--channels-last"))])
def test_matches_cpu_step_by_step(mode, extra):
    args = STEPS + extra
    got = run_example("cnn.py", args, mode=mode, env=ENV).stdout
    want = cpu_run(args)
    err = assert_close_steps(losses(got), losses(want), TOL)
    val_err = assert_close_steps(eval_losses(got), eval_losses(want), TOL, "validation loss")
    print(f"cnn.py {mode} {' '.join(extra)}: worst relative error loss {err:.3g}, "
          f"validation loss {val_err:.3g}")
    # Evaluation in eval mode (running statistics, no dropout): the same predictions, at most one
    # of the 256 images flipped by a near-tie of two logits.
    acc_got, acc_want = losses(got, _ACCURACY), losses(want, _ACCURACY)
    assert sorted(acc_got) == sorted(acc_want)
    for s in acc_want:
        assert abs(acc_got[s] - acc_want[s]) <= 1.5 / 256, (s, acc_got[s], acc_want[s])
    # BatchNorm's running statistics, updated in every training step (sums over 16 channels of
    # values of order 0.1 to 1: an absolute tolerance).
    bn_got, bn_want = _BN.search(got), _BN.search(want)
    assert bn_got and bn_want, got[-2000:]
    for g, w in zip(bn_got.groups(), bn_want.groups()):
        assert abs(float(g) - float(w)) <= 1e-4, (bn_got.group(0), bn_want.group(0))
    # It learns: 4 classes (chance 25 %, loss ln 4 = 1.39 with label smoothing 0.1).
    steps = losses(got)
    first, last = (sum(steps[s] for s in r) / 5 for r in (range(1, 6), range(36, 41)))
    assert last < 0.7 * first, f"the model did not learn: {first} -> {last}"
    assert acc_got[40] >= 0.8, f"validation accuracy {acc_got[40]}"
