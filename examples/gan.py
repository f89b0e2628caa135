#!/usr/bin/env python3
"""A small GAN learning a ring of eight Gaussians in the plane.

Plain PyTorch written for an NVIDIA GPU (device="cuda" by default, no torchada import); under
torchada it runs unmodified:

    scripts/torchada-run --backend sim -- .venv/bin/python examples/gan.py
    .venv/bin/python examples/gan.py --device cpu          # the same run on the CPU, to compare

Two networks trained against each other, as GANs are: an MLP generator mapping noise to points and
an MLP discriminator (LeakyReLU, LayerNorm, no batch statistics) scoring them; the non-saturating
BCE-with-logits losses; two Adam optimizers with GAN betas; the generator's samples detached for
the discriminator's step; an exponential moving average of the generator's weights (what sample
quality is judged on) kept with torch._foreach_lerp_; evaluation of the averaged generator by how
many of its samples land near a mode. The real points and the noise are drawn on the CPU from the
seed, so every device trains on the same numbers.

Every step prints one line, "step N d_loss X g_loss Y", so that two runs can be compared step by
step; at the end, "eval modes_hit N of 8 near_fraction F".
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MODES = 8


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--noise", type=int, default=16, help="dimensions of the generator's input")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--ema", type=float, default=0.9, help="decay of the generator's average")
    p.add_argument("--seed", type=int, default=3)
    return p.parse_args()


def real_points(n, generator):
    """`n` points of the ring: a mode chosen uniformly, plus Gaussian noise (std 0.05)."""
    angle = torch.randint(MODES, (n,), generator=generator).float() * (2 * math.pi / MODES)
    centres = torch.stack([angle.cos(), angle.sin()], dim=1) * 2.0
    return centres + 0.05 * torch.randn(n, 2, generator=generator)


def mlp(sizes, out, norm):
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b)] + ([nn.LayerNorm(b)] if norm else []) + [nn.LeakyReLU(0.2)]
    return nn.Sequential(*layers, nn.Linear(sizes[-1], out))


def main():
    args = parse_args()
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    gen = mlp([args.noise, args.hidden, args.hidden], 2, norm=False).to(device)
    disc = mlp([2, args.hidden, args.hidden], 1, norm=True).to(device)
    ema = [p.detach().clone() for p in gen.parameters()]
    opt_g = torch.optim.Adam(gen.parameters(), lr=args.lr, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(disc.parameters(), lr=args.lr, betas=(0.5, 0.999))
    draws = torch.Generator().manual_seed(args.seed)
    ones = torch.ones(args.batch, 1, device=device)
    zeros = torch.zeros(args.batch, 1, device=device)
    times = []
    for step in range(1, args.steps + 1):
        real = real_points(args.batch, draws)
        z = torch.randn(args.batch, args.noise, generator=draws)
        t0 = time.perf_counter()
        real, z = real.to(device), z.to(device)
        # Discriminator: real points score 1, generated ones 0.
        fake = gen(z)
        d_loss = (F.binary_cross_entropy_with_logits(disc(real), ones) +
                  F.binary_cross_entropy_with_logits(disc(fake.detach()), zeros))
        opt_d.zero_grad(set_to_none=True)
        d_loss.backward()
        opt_d.step()
        # Generator: make the discriminator score its points 1 (the non-saturating loss).
        g_loss = F.binary_cross_entropy_with_logits(disc(fake), ones)
        opt_g.zero_grad(set_to_none=True)
        g_loss.backward()
        opt_g.step()
        with torch.no_grad():
            torch._foreach_lerp_(ema, [p.detach() for p in gen.parameters()], 1 - args.ema)
        times.append(time.perf_counter() - t0)
        print(f"step {step} d_loss {d_loss.item():.9g} g_loss {g_loss.item():.9g}", flush=True)

    # The averaged generator's samples: how many modes they reach, and how many land near one.
    with torch.no_grad():
        for p, a in zip(gen.parameters(), ema):
            p.copy_(a)
        z = torch.randn(1024, args.noise, generator=draws).to(device)
        pts = gen(z).cpu()
    angles = torch.arange(MODES).float() * (2 * math.pi / MODES)
    centres = torch.stack([angles.cos(), angles.sin()], dim=1) * 2.0
    dist = torch.cdist(pts, centres)
    near = dist.min(dim=1).values < 0.3
    hit = int(torch.unique(dist.argmin(dim=1)[near]).numel())
    print(f"eval modes_hit {hit} of {MODES} near_fraction {near.float().mean().item():.4f}",
          flush=True)
    if len(times) > 3:
        steady = sorted(times[2:])
        print(f"step_time_ms median {1e3 * steady[len(steady) // 2]:.3f}", flush=True)


if __name__ == "__main__":
    main()
