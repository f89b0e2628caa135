"""torch.distributed with backend "nccl" between 2 processes (torchrun), through MCCL."""
import os
import subprocess
import sys

from conftest import base_env, check, command, SHIM

HERE = os.path.dirname(os.path.abspath(__file__))


def test_two_ranks(mode):
    env = base_env({"TORCHADA_SIM_DEVICES": "2", "OMP_NUM_THREADS": "1"})
    if mode == "preload":
        env["LD_PRELOAD"] = SHIM
    argv = command(mode, [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
                          "--master-port", str(29500 + os.getpid() % 1000 + (mode == "launcher")),
                          os.path.join(HERE, "dist_ranks.py")])
    p = check(subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300))
    assert "RANK 0 OK" in p.stdout and "RANK 1 OK" in p.stdout, p.stdout
