"""examples/hogwild.py: two processes train one model held in CUDA memory they share (CUDA IPC
through torch.multiprocessing) under torchada on the simulator.

Taking turns (--in-turn), each worker's step reads the weights the other's last step wrote, so
the run must equal, bit for bit, one process running the same steps in the same order
(--processes 1): every step's loss, the validation loss and the weights. Running freely (Hogwild
proper), the order of the updates is the scheduler's; the model must still learn.
"""
from conftest import eval_losses, losses, run_example

ENV = {"OMP_NUM_THREADS": "1"}
STEPS = ("--steps", "10")


def weights(path):
    import torch  # only here: collecting the other cases does not import torch
    return torch.load(path)


def test_processes_taking_turns_equal_one_process(tmp_path):
    shared, single = str(tmp_path / "shared.pt"), str(tmp_path / "single.pt")
    got = run_example("hogwild.py", STEPS + ("--in-turn", "--save", shared), env=ENV).stdout
    want = run_example("hogwild.py", STEPS + ("--processes", "1", "--save", single),
                       mode="preload", env=ENV).stdout
    assert "2 process(es), 2 worker(s), 20 steps" in got, got[-2000:]
    assert losses(got) == losses(want)  # every step, exactly
    assert eval_losses(got) == eval_losses(want)
    a, b = weights(shared), weights(single)
    assert sorted(a) == sorted(b)
    for k in b:
        assert a[k].equal(b[k]), f"{k} differs between the shared model and one process's"


def test_free_running_workers_learn(tmp_path):
    out = run_example("hogwild.py", ("--steps", "30"), mode="preload", env=ENV).stdout
    steps = losses(out)
    assert sorted(steps) == list(range(1, 61))
    first = sum(steps[s] for s in range(1, 7)) / 6
    assert eval_losses(out)[60] < 0.5 * first, f"the model did not learn: {first} -> {out[-500:]}"
