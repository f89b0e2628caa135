"""examples/gan.py (two networks, two optimizers, detached samples, an EMA of the generator) under
torchada on the simulator against the same script on device="cpu"."""
import re

from conftest import assert_close_steps, losses, run_example

ENV = {"OMP_NUM_THREADS": "1"}
STEPS = ("--steps", "30")
_D = re.compile(r"^step (\d+) d_loss (\S+)", re.M)
_G = re.compile(r"^step (\d+) d_loss \S+ g_loss (\S+)", re.M)
_EVAL = re.compile(r"^eval modes_hit (\d+) of 8 near_fraction (\S+)", re.M)

# Relative tolerance (fp32) on both losses of every step: the networks' GEMMs (cuBLAS on the
# simulator's BLAS against PyTorch's CPU GEMM), layer norm and the fused optimizer step round
# differently by a few ulps, which the adversarial game compounds over 30 steps.
TOL = 1e-4


def test_matches_cpu_step_by_step():
    got = run_example("gan.py", STEPS, mode="launcher", env=ENV).stdout
    want = run_example("gan.py", STEPS, mode="cpu", env=ENV).stdout
    d_err = assert_close_steps(losses(got, _D), losses(want, _D), TOL, "discriminator loss")
    g_err = assert_close_steps(losses(got, _G), losses(want, _G), TOL, "generator loss")
    print(f"gan.py: worst relative error d_loss {d_err:.3g}, g_loss {g_err:.3g}")
    e_got, e_want = _EVAL.search(got), _EVAL.search(want)
    assert e_got and e_want, got[-2000:]
    assert abs(float(e_got.group(2)) - float(e_want.group(2))) <= 0.01, (e_got.group(0),
                                                                        e_want.group(0))
