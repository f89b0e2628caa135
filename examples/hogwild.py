#!/usr/bin/env python3
"""Hogwild training: several processes update one model that lives in CUDA memory shared between
them (torch.multiprocessing and CUDA IPC, as in PyTorch's mnist_hogwild example).

Plain PyTorch written for NVIDIA GPUs (no torchada import); under torchada it runs unmodified:

    scripts/torchada-run --backend sim -- .venv/bin/python examples/hogwild.py
    scripts/torchada-run --backend sim -- .venv/bin/python examples/hogwild.py --in-turn
    scripts/torchada-run --backend sim -- .venv/bin/python examples/hogwild.py --processes 1

The parent builds an MLP on the GPU and starts --workers processes (spawned, as CUDA requires);
each receives the model through multiprocessing, which shares its parameters by CUDA IPC, and
trains it with plain SGD on its own shard of a generated regression task (inputs through a fixed
random "teacher" network, plus noise). Every worker's optimizer step writes the one shared copy.

By default the workers run freely, as Hogwild does: the order of their updates is whatever the
scheduler makes it. --in-turn makes them take turns, one step each in worker order (a shared
counter and a condition variable; each worker finishes its step on the GPU before passing the
turn), so the run is deterministic. --processes 1 runs that same sequence of steps in one
process, which --in-turn must match bit for bit: the check that the processes really share one
model, and see each other's updates in order.

Every step prints "step N loss X" (N counts all workers' steps; in turn order worker w's r-th
step is r * workers + w + 1); at the end the parent prints the validation loss
("eval N val_loss X") and a checksum of the weights; --save writes them (CPU tensors).
"""
import argparse
import time

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--workers", type=int, default=2, help="workers (shards of the data)")
    p.add_argument("--processes", type=int, default=None,
                   help="1: every worker's steps in this process, in turn order; default "
                        "--workers")
    p.add_argument("--in-turn", action="store_true",
                   help="workers take turns, one step each (deterministic)")
    p.add_argument("--steps", type=int, default=20, help="steps per worker")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--samples", type=int, default=1024)
    p.add_argument("--val", type=int, default=256)
    p.add_argument("--features", type=int, default=16)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", default=None, help="write the final weights here")
    return p.parse_args()


def make_data(args):
    """The same samples in every process: drawn on the CPU from the seed."""
    g = torch.Generator().manual_seed(args.seed)
    n = args.samples + args.val
    x = torch.randn(n, args.features, generator=g)
    teacher = [torch.randn(args.features, args.hidden, generator=g) / args.features ** 0.5,
               torch.randn(args.hidden, 1, generator=g) / args.hidden ** 0.5]
    y = torch.tanh(x @ teacher[0]) @ teacher[1] + 0.05 * torch.randn(n, 1, generator=g)
    return (x[:args.samples], y[:args.samples]), (x[args.samples:], y[args.samples:])


def make_model(args):
    torch.manual_seed(args.seed + 1)
    return nn.Sequential(nn.Linear(args.features, args.hidden), nn.Tanh(),
                         nn.Linear(args.hidden, args.hidden), nn.Tanh(),
                         nn.Linear(args.hidden, 1))


class Worker:
    """One worker's shard and optimizer over the (shared) model."""

    def __init__(self, args, model, w):
        (x, y), _ = make_data(args)
        self.args, self.model, self.w = args, model, w
        self.x = x[w::args.workers].to(args.device)
        self.y = y[w::args.workers].to(args.device)
        self.order = torch.randperm(len(self.x), generator=torch.Generator().manual_seed(w))
        self.opt = torch.optim.SGD(model.parameters(), lr=args.lr)

    def step(self, r):
        n, b = len(self.x), self.args.batch
        idx = self.order[torch.arange(r * b, (r + 1) * b) % n].to(self.args.device)
        loss = F.mse_loss(self.model(self.x[idx]), self.y[idx])
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        print(f"step {r * self.args.workers + self.w + 1} loss {loss.item():.9g}", flush=True)


def work(w, args, models, turn, cond):
    """A worker process: --steps steps, in turn with the others when turn is given."""
    # Through a queue rather than the process's arguments: the last reference to the shared
    # parameters is then this function's, gone when it returns, which tells the parent (through
    # PyTorch's IPC reference counts) that its memory is no longer used here.
    model = models.get()
    worker = Worker(args, model, w)
    for r in range(args.steps):
        if turn is not None:
            with cond:
                cond.wait_for(lambda: turn.value == r * args.workers + w)
        worker.step(r)
        if turn is not None:
            torch.cuda.synchronize()  # the update is in the shared memory before the next turn
            with cond:
                turn.value += 1
                cond.notify_all()


def main():
    args = parse_args()
    processes = args.workers if args.processes is None else args.processes
    if processes not in (1, args.workers):
        raise SystemExit("--processes is 1 or --workers")
    start = time.time()
    model = make_model(args).to(args.device)
    if processes == 1:
        workers = [Worker(args, model, w) for w in range(args.workers)]
        for r in range(args.steps):
            for worker in workers:
                worker.step(r)
    else:
        # CUDA in child processes needs spawn; the model's CUDA parameters travel by IPC.
        ctx = mp.get_context("spawn")
        model.share_memory()
        turn = ctx.Value("l", 0) if args.in_turn else None
        cond = ctx.Condition() if args.in_turn else None
        models = ctx.Queue()
        procs = [ctx.Process(target=work, args=(w, args, models, turn, cond))
                 for w in range(args.workers)]
        for p in procs:
            p.start()
            models.put(model)
        for p in procs:
            p.join()
        failed = [p.exitcode for p in procs if p.exitcode != 0]
        if failed:
            raise SystemExit(f"a worker failed (exit codes {failed})")
    _, (xv, yv) = make_data(args)
    with torch.no_grad():
        val = F.mse_loss(model(xv.to(args.device)), yv.to(args.device)).item()
    total = args.steps * args.workers
    print(f"eval {total} val_loss {val:.9g}")
    weights = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    print(f"weights sum {sum(float(v.sum()) for v in weights.values()):.9g} abs_sum "
          f"{sum(float(v.abs().sum()) for v in weights.values()):.9g}")
    if args.save:
        torch.save(weights, args.save)
    print(f"{processes} process(es), {args.workers} worker(s), {total} steps in "
          f"{time.time() - start:.1f} s")
    del model
    if args.device == "cuda" and torch.cuda.is_available():
        torch.cuda.ipc_collect()


if __name__ == "__main__":
    main()
