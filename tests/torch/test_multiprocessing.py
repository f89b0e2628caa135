"""CUDA tensors shared between processes (torch.multiprocessing: CUDA IPC of memory and events)
under torchada on the simulator.

The scripts are files, not `python -c` snippets: the "spawn" start method (which CUDA requires)
imports the parent's main module in every child. examples/hogwild.py (tests/examples) trains one
shared model from two processes.
"""
import textwrap

import pytest
from conftest import base_env, check, command, SHIM

import subprocess
import sys


def run_script(mode, tmp_path, code, timeout=300, env=None):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(code))
    env = base_env({"OMP_NUM_THREADS": "1", **(env or {})})
    if mode == "preload":
        env["LD_PRELOAD"] = SHIM
    argv = command(mode, [sys.executable, str(path)])
    return check(subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout,
                                cwd=str(tmp_path)))


QUEUES = """
    import torch
    import torch.multiprocessing as mp

    def child(inbox, outbox, done):
        x, view, again, event = inbox.get()
        # The same storage sent twice arrives once (PyTorch's cache of opened handles).
        assert again.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        assert view.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        assert view.storage_offset() == 100 and torch.equal(view, torch.arange(100, 110.0, device="cuda"))
        # The parent recorded an interprocess event after its last write: waiting on it orders
        # this process's reads after that write.
        event.wait()
        assert float(x[-1]) == -1.0
        x.add_(1)  # in place: the parent's memory
        torch.cuda.synchronize()
        mine = torch.full((3, 5), 7.0, device="cuda")
        outbox.put(mine)
        del x, view, again
        done.wait()  # the producer keeps its memory alive until the parent is done with it
        del mine

    if __name__ == "__main__":
        ctx = mp.get_context("spawn")
        inbox, outbox, done = ctx.Queue(), ctx.Queue(), ctx.Event()
        p = ctx.Process(target=child, args=(inbox, outbox, done))
        p.start()
        x = torch.arange(1000.0, device="cuda")
        x[-1] = -1.0
        event = torch.cuda.Event(interprocess=True)
        event.record()
        inbox.put((x, x[100:110], x, event))
        got = outbox.get()
        assert got.device.type == "cuda" and torch.equal(got, torch.full((3, 5), 7.0, device="cuda"))
        del got  # released before the child, its producer, may exit
        done.set()
        p.join()
        assert p.exitcode == 0
        want = torch.arange(1000.0) + 1
        want[-1] = 0.0
        assert torch.equal(x.cpu(), want), x
        del x
        torch.cuda.ipc_collect()
        print("OK")
"""


def test_cuda_tensors_and_events_through_queues(mode, tmp_path):
    proc = run_script(mode, tmp_path, QUEUES)
    assert "OK" in proc.stdout
    assert "Producer process has been terminated" not in proc.stderr, proc.stderr[-2000:]


def test_expandable_segments_shared_through_queues(tmp_path):
    # PyTorch's expandable segments share memory through the driver's virtual memory calls
    # (cuMemExportToShareableHandle, a POSIX file descriptor taken with pidfd_getfd), not
    # cudaIpcGetMemHandle.
    code = QUEUES.replace(
        "event = torch.cuda.Event(interprocess=True)",
        'segments = torch.cuda.memory._snapshot()["segments"]\n'
        '        assert segments and all(s["is_expandable"] for s in segments), segments\n'
        "        event = torch.cuda.Event(interprocess=True)")
    assert code != QUEUES
    proc = run_script("launcher", tmp_path, code,
                      env={"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})
    assert "OK" in proc.stdout


DATALOADER = """
    import torch
    from torch.utils.data import DataLoader, Dataset

    class OnDevice(Dataset):
        def __len__(self):
            return 12

        def __getitem__(self, i):
            return torch.full((4,), float(i), device="cuda"), i

    if __name__ == "__main__":
        # Workers that make CUDA tensors: PyTorch allows it with the spawn start method.
        loader = DataLoader(OnDevice(), batch_size=3, num_workers=2,
                            multiprocessing_context="spawn")
        seen = []
        for values, index in loader:
            assert values.device.type == "cuda" and values.shape == (3, 4)
            assert torch.equal(values.cpu(), index.to(torch.float32)[:, None].expand(3, 4))
            seen += index.tolist()
        assert sorted(seen) == list(range(12)), seen
        print("OK")
"""


def test_dataloader_workers_return_cuda_tensors(tmp_path):
    proc = run_script("launcher", tmp_path, DATALOADER)
    assert "OK" in proc.stdout
