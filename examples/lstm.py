#!/usr/bin/env python3
"""A 2-layer LSTM predicting the next value of noisy sine waves.

Plain PyTorch written for an NVIDIA GPU (device="cuda" by default, no torchada import); under
torchada it runs unmodified:

    scripts/torchada-run --backend sim -- .venv/bin/python examples/lstm.py
    .venv/bin/python examples/lstm.py --device cpu          # the same run on the CPU, to compare

The waves (a random frequency, phase and amplitude each, plus noise) are generated on the CPU
from the seed, so every device trains on the same data. The model is an nn.LSTM (2 layers,
batch_first, optional dropout between the layers) and a Linear head, trained with MSE on every
time step's next value, Adam, gradient clipping (clip_grad_norm_) and a step learning-rate
decay. Evaluation under no_grad measures the one-step loss on held-out waves and then continues
them autoregressively, carrying the LSTM's (h, c) state from one call to the next.

With cuDNN off (as under torchada) PyTorch's CUDA LSTM takes its native path, which runs one
fused cell per layer and time step (_thnn_fused_lstm_cell and its backward).

Every step prints one line, "step N loss X lr Y grad_norm Z", so that two runs can be compared
step by step (tests/examples does); every --eval-every steps, "eval N val_loss X rollout_mse Y".
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--length", type=int, default=32, help="time steps per training sequence")
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.0, help="between the LSTM layers")
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--clip", type=float, default=1.0, help="max gradient norm")
    p.add_argument("--train", type=int, default=512, help="training waves")
    p.add_argument("--val", type=int, default=64, help="validation waves")
    p.add_argument("--rollout", type=int, default=8, help="steps to continue a wave in eval")
    p.add_argument("--eval-every", type=int, default=20)
    p.add_argument("--seed", type=int, default=4321)
    return p.parse_args()


def make_waves(n, length, generator):
    """`n` noisy sine waves of `length` samples, shape (n, length, 1), drawn from `generator`."""
    g = dict(generator=generator)
    t = torch.arange(length, dtype=torch.float32).view(1, -1)
    freq = 0.15 + 0.35 * torch.rand(n, 1, **g)  # radians per sample
    phase = 2 * math.pi * torch.rand(n, 1, **g)
    amp = 0.5 + 0.5 * torch.rand(n, 1, **g)
    wave = amp * torch.sin(freq * t + phase) + 0.05 * torch.randn(n, length, **g)
    return wave.unsqueeze(-1)


class Forecaster(nn.Module):
    def __init__(self, hidden, layers, dropout):
        super().__init__()
        self.lstm = nn.LSTM(1, hidden, num_layers=layers, batch_first=True, dropout=dropout)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x, state=None):
        y, state = self.lstm(x, state)
        return self.head(y), state


def main():
    args = parse_args()
    device = torch.device(args.device)
    torch.manual_seed(args.seed)

    data = torch.Generator().manual_seed(args.seed)
    # One sample more than the inputs: the last is the target of the one before.
    train = make_waves(args.train, args.length + 1, data)
    val = make_waves(args.val, args.length + 1 + args.rollout, data)

    # Built on the CPU with the seed, then moved: the same initial weights on every device.
    model = Forecaster(args.hidden, args.layers, args.dropout).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=max(1, args.steps // 3), gamma=0.5)

    def batches():
        order = torch.Generator().manual_seed(args.seed + 1)
        per_epoch = args.train // args.batch
        for step in range(args.steps):
            k = step % per_epoch
            if k == 0:
                perm = torch.randperm(args.train, generator=order)
            yield train[perm[k * args.batch:(k + 1) * args.batch]]

    def evaluate():
        model.eval()
        with torch.no_grad():
            seq = val.to(device)
            context, future = seq[:, :args.length + 1], seq[:, args.length + 1:]
            pred, state = model(context[:, :-1])
            val_loss = F.mse_loss(pred, context[:, 1:]).item()
            # Continue every wave from its last true sample, one step per call, feeding each
            # prediction back with the LSTM's state.
            x, outs = context[:, -1:], []
            for _ in range(args.rollout):
                x, state = model(x, state)
                outs.append(x)
            rollout = F.mse_loss(torch.cat(outs, 1), future).item()
        model.train()
        return val_loss, rollout

    times = []
    for step, seq in enumerate(batches(), 1):
        t0 = time.perf_counter()
        seq = seq.to(device, non_blocking=True)
        pred, _ = model(seq[:, :-1])
        loss = F.mse_loss(pred, seq[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        opt.step()
        lr = sched.get_last_lr()[0]
        sched.step()
        loss_value = loss.item()
        times.append(time.perf_counter() - t0)
        print(f"step {step} loss {loss_value:.9g} lr {lr:.6g} grad_norm {norm.item():.9g}",
              flush=True)
        if args.eval_every and step % args.eval_every == 0:
            val_loss, rollout = evaluate()
            print(f"eval {step} val_loss {val_loss:.9g} rollout_mse {rollout:.9g}", flush=True)

    if len(times) > 3:  # the first steps warm up allocators
        steady = sorted(times[2:])
        print(f"step_time_ms median {1e3 * steady[len(steady) // 2]:.3f}", flush=True)


if __name__ == "__main__":
    main()
