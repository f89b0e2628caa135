#!/usr/bin/env python3
"""Data-parallel training (DistributedDataParallel, or FSDP2 with --wrap fsdp) of an MLP on a
generated regression task.

Plain PyTorch written for NVIDIA GPUs (device="cuda" and backend "nccl" by default, no torchada
import); under torchada it runs unmodified, one simulated device per rank:

    TORCHADA_SIM_DEVICES=2 scripts/torchada-run --backend sim -- \\
        .venv/bin/python -m torch.distributed.run --standalone --nproc-per-node 2 examples/ddp.py
    .venv/bin/python -m torch.distributed.run --standalone --nproc-per-node 2 examples/ddp.py \\
        --device cpu                                          # gloo on the CPU
    .venv/bin/python examples/ddp.py --single --device cpu  # one process, the whole batch

Every rank draws the same dataset (inputs through a fixed random "teacher" network, plus noise)
from the seed on the CPU and builds the same model on the CPU before moving it to its device.
A DistributedSampler gives each rank its share of every epoch's permutation; each step a rank
computes the mean loss on its --batch / world samples and DDP all-reduces (averages) the
gradients, so every rank takes the same optimizer step: the one a single process would take on
the union of the ranks' batches. --single is that process: it asks a DistributedSampler for each
rank's share and concatenates them, so the test can compare 2 ranks with 1 process.

Per step, rank 0 prints "step N loss X" with the global loss (the ranks' losses all-reduced);
at the end, distributed evaluation on the held-out set ("eval N val_loss X"), a check that every
rank holds bit-identical weights (all_gather of their checksums), and the checksum of rank 0's
weights ("weights sum X abs_sum Y"); --save writes rank 0's weights (CPU tensors).
"""
import argparse
import datetime
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DistributedSampler, TensorDataset


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--single", action="store_true",
                   help="one process training on the whole batch of every rank each step")
    p.add_argument("--world", type=int, default=2, help="ranks that --single stands for")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=64, help="global batch (all ranks together)")
    p.add_argument("--samples", type=int, default=1024, help="training samples")
    p.add_argument("--val", type=int, default=256, help="validation samples")
    p.add_argument("--features", type=int, default=16)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--optimizer", choices=["sgd", "adamw"], default="sgd")
    p.add_argument("--lr", type=float, default=None, help="default 0.05 (sgd), 3e-3 (adamw)")
    p.add_argument("--bucket-mb", type=float, default=0.004,
                   help="DDP gradient bucket size in MiB (small: from the second step on, the "
                        "gradients go in 2 buckets, 2 all-reduces)")
    p.add_argument("--wrap", choices=["ddp", "fsdp"], default="ddp",
                   help="DistributedDataParallel, or FSDP2's fully_shard on each Linear and the "
                        "whole model (weights sharded; gradients reduce-scattered, averaged)")
    p.add_argument("--timeout", type=float, default=120, help="seconds for a collective")
    p.add_argument("--save", help="rank 0 writes its final weights here")
    p.add_argument("--seed", type=int, default=2024)
    return p.parse_args()


def make_teacher(features, generator):
    """The weights of a fixed random two-layer network, the function to learn."""
    return (torch.randn(features, 32, generator=generator) / features ** 0.5,
            torch.randn(32, 1, generator=generator) / 32 ** 0.5)


def make_data(n, teacher, generator):
    """Inputs and targets: the teacher network of the inputs, plus noise."""
    g = dict(generator=generator)
    w1, w2 = teacher
    x = torch.randn(n, w1.shape[0], **g)
    y = torch.tanh(x @ w1) @ w2 + 0.05 * torch.randn(n, 1, **g)
    return x, y


class MLP(nn.Module):
    def __init__(self, features, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(features, hidden), nn.GELU(),
                                 nn.LayerNorm(hidden),
                                 nn.Linear(hidden, hidden), nn.GELU(),
                                 nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


def main():
    args = parse_args()
    distributed = not args.single
    if distributed:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ["LOCAL_RANK"])
    else:
        rank, world, local_rank = 0, args.world, 0
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    if distributed:
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo",
                                timeout=datetime.timedelta(seconds=args.timeout))
    assert args.batch % world == 0, "--batch must be a multiple of the world size"
    local_batch = args.batch // world
    torch.manual_seed(args.seed)

    data = torch.Generator().manual_seed(args.seed)
    teacher = make_teacher(args.features, data)
    train = TensorDataset(*make_data(args.samples, teacher, data))
    val_x, val_y = make_data(args.val, teacher, data)

    # Every rank builds the same model on the CPU with the seed (DDP also broadcasts rank 0's
    # weights at construction), then moves it to its device.
    model = MLP(args.features, args.hidden).to(device)
    if distributed and args.wrap == "ddp":
        model = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None,
                    bucket_cap_mb=args.bucket_mb)
    elif distributed:
        from torch.distributed.fsdp import fully_shard
        for layer in model.net:
            if isinstance(layer, nn.Linear):
                fully_shard(layer)
        fully_shard(model)
    if args.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=args.lr or 0.05, momentum=0.9)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=args.lr or 3e-3, weight_decay=0.01)

    # DistributedSampler: each epoch one permutation from seed + epoch, rank r takes every
    # world-th index from r. --single takes every rank's share.
    ranks = [rank] if distributed else list(range(world))
    samplers = [DistributedSampler(train, num_replicas=world, rank=r, shuffle=True,
                                   seed=args.seed, drop_last=True) for r in ranks]
    per_epoch = len(samplers[0]) // local_batch

    def batch(step):
        epoch, k = divmod(step, per_epoch)
        idx = []
        for s in samplers:
            s.set_epoch(epoch)
            idx += list(s)[k * local_batch:(k + 1) * local_batch]
        return train[idx]

    if distributed:
        dist.barrier()  # every rank has its data and model before the first step
    times = []
    for step in range(1, args.steps + 1):
        t0 = time.perf_counter()
        x, y = batch(step - 1)
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        loss = F.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()  # DDP: the gradients are all-reduced (averaged) bucket by bucket
        opt.step()
        global_loss = loss.detach().clone()
        if distributed:
            dist.all_reduce(global_loss)  # SUM: gloo has no AVG
            global_loss /= world
        value = global_loss.item()
        times.append(time.perf_counter() - t0)
        if rank == 0:
            print(f"step {step} loss {value:.9g}", flush=True)

    # Distributed evaluation: each rank its contiguous share of the validation set.
    net = model.module if distributed and args.wrap == "ddp" else model
    net.eval()
    with torch.no_grad():
        shard = args.val // world
        err = torch.zeros(2, dtype=torch.float64, device=device)  # sum of squares, count
        for r in ranks:
            xs = val_x[r * shard:(r + 1) * shard].to(device)
            ys = val_y[r * shard:(r + 1) * shard].to(device)
            err += torch.stack([F.mse_loss(net(xs), ys, reduction="sum").double(),
                                torch.tensor(float(len(ys)), dtype=torch.float64,
                                             device=device)])
        if distributed:
            dist.all_reduce(err)
    val_loss = (err[0] / err[1]).item()

    # Every rank must hold the same weights: gather each rank's checksum.
    def full(t):  # an FSDP parameter is a DTensor: its shards gathered (every rank calls)
        return t.full_tensor() if hasattr(t, "full_tensor") else t

    flat = torch.cat([full(p.detach()).reshape(-1) for p in net.parameters()])
    weights = {k: full(v.detach()).cpu() for k, v in net.state_dict().items()} if args.save \
        else None
    checksum = torch.stack([flat.double().sum(), flat.double().abs().sum()])
    if distributed:
        every = [torch.empty_like(checksum) for _ in range(world)]
        dist.all_gather(every, checksum)
        for r, c in enumerate(every):
            assert torch.equal(c, checksum), f"rank {r} weights {c.tolist()} differ from " \
                                             f"rank {rank}'s {checksum.tolist()}"
    if rank == 0:
        print(f"eval {args.steps} val_loss {val_loss:.9g}", flush=True)
        total, abs_total = checksum.tolist()
        print(f"weights sum {total:.12g} abs_sum {abs_total:.12g}", flush=True)
        if distributed:
            print(f"ranks {world} agree", flush=True)
        if args.save:
            torch.save(weights, args.save)
        if len(times) > 3:
            steady = sorted(times[2:])
            print(f"step_time_ms median {1e3 * steady[len(steady) // 2]:.3f}", flush=True)
    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
