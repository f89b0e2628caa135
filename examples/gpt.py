#!/usr/bin/env python3
"""A small character-level GPT, trained on examples/data/corpus.txt.

Plain PyTorch written for an NVIDIA GPU (device="cuda" by default, no torchada import); under
torchada it runs unmodified:

    scripts/torchada-run --backend sim -- .venv/bin/python examples/gpt.py
    .venv/bin/python examples/gpt.py --device cpu          # the same run on the CPU, to compare

It uses what real training scripts use: token and position embeddings, causal
scaled_dot_product_attention, LayerNorm, a GELU MLP, cross-entropy; AdamW (foreach or fused),
gradient clipping, a warm-up + cosine learning-rate schedule, bf16 autocast or fp16 autocast with a
GradScaler; a DataLoader with worker processes and pinned memory; evaluation under no_grad; a
checkpoint (CUDA tensors) saved with torch.save and resumed with torch.load; sampling.

Every step prints one line, "step N loss X lr Y grad_norm Z", so that two runs can be compared
step by step (tests/examples does). --profile TRACE profiles the last step with torch.profiler
(CPU and CUDA activities): its Chrome trace (Perfetto) and the operators' table with CUDA times.
"""
import argparse
import contextlib
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, Sampler

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--block", type=int, default=64, help="context length")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--embd", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--optimizer", choices=["foreach", "fused"], default="fused",
                   help="AdamW implementation")
    p.add_argument("--precision", choices=["fp32", "bf16", "fp16"], default="fp32",
                   help="bf16: autocast; fp16: autocast and a GradScaler")
    p.add_argument("--workers", type=int, default=2, help="DataLoader worker processes")
    p.add_argument("--eval-every", type=int, default=10)
    p.add_argument("--save", help="write a checkpoint here after --save-at steps")
    p.add_argument("--save-at", type=int, default=0)
    p.add_argument("--resume", help="resume from this checkpoint")
    p.add_argument("--generate", type=int, default=80, help="characters to sample at the end")
    p.add_argument("--compile", metavar="BACKEND", help="torch.compile the model with BACKEND")
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--profile", metavar="TRACE",
                   help="profile the last step with torch.profiler (CPU and CUDA activities): "
                        "write its Chrome trace (Perfetto, chrome://tracing) to TRACE and print "
                        "the operators' table")
    p.add_argument("--text", default=os.path.join(HERE, "data", "corpus.txt"))
    return p.parse_args()


class Chunks(Dataset):
    """Windows of `block + 1` characters; the last one is the target of the one before."""

    def __init__(self, data, block):
        self.data, self.block = data, block

    def __len__(self):
        return (len(self.data) - 1) // self.block

    def __getitem__(self, i):
        chunk = self.data[i * self.block:(i + 1) * self.block + 1]
        return chunk[:-1], chunk[1:]


class StepBatches(Sampler):
    """The batches of steps [first, last): a fresh permutation per epoch from a seeded generator,
    so a resumed run draws exactly the batches the uninterrupted run would have drawn."""

    def __init__(self, n, batch, seed, first, last):
        self.n, self.batch, self.seed, self.first, self.last = n, batch, seed, first, last

    def __len__(self):
        return self.last - self.first

    def __iter__(self):
        per_epoch = self.n // self.batch
        for step in range(self.first, self.last):
            epoch, k = divmod(step, per_epoch)
            perm = torch.randperm(self.n, generator=torch.Generator().manual_seed(self.seed + epoch))
            yield perm[k * self.batch:(k + 1) * self.batch].tolist()


class Block(nn.Module):
    def __init__(self, embd, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(embd)
        self.qkv = nn.Linear(embd, 3 * embd)
        self.proj = nn.Linear(embd, embd)
        self.ln2 = nn.LayerNorm(embd)
        self.mlp = nn.Sequential(nn.Linear(embd, 4 * embd), nn.GELU(), nn.Linear(4 * embd, embd))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, block, embd, heads, layers):
        super().__init__()
        self.block = block
        self.tok = nn.Embedding(vocab, embd)
        self.pos = nn.Embedding(block, embd)
        self.blocks = nn.ModuleList(Block(embd, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(embd)
        self.head = nn.Linear(embd, vocab, bias=False)
        self.head.weight = self.tok.weight  # tied input and output embeddings
        for m in self.modules():  # GPT-2's initialisation
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)

    def forward(self, idx, targets=None):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln_f(x))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(),
                                       targets.reshape(-1))

    @torch.no_grad()
    def generate(self, idx, n, generator):
        for _ in range(n):
            logits, _ = self(idx[:, -self.block:])
            probs = F.softmax(logits[:, -1, :].float(), dim=-1)
            idx = torch.cat([idx, torch.multinomial(probs, 1, generator=generator)], dim=1)
        return idx


def main():
    args = parse_args()
    device = torch.device(args.device)
    torch.manual_seed(args.seed)

    text = open(args.text, encoding="utf-8").read()
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)
    split = int(0.9 * len(data))
    train, val = Chunks(data[:split], args.block), Chunks(data[split:], args.block)

    # Built on the CPU with the seed, then moved: the same initial weights on every device.
    model = GPT(len(chars), args.block, args.embd, args.heads, args.layers).to(device)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    fused = args.optimizer == "fused"
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), fused=fused, foreach=not fused)

    def lr_factor(step):  # linear warm-up, then cosine decay to 10%
        if step < args.warmup:
            return (step + 1) / args.warmup
        t = (step - args.warmup) / max(1, args.steps - args.warmup)
        return 0.1 + 0.45 * (1 + math.cos(math.pi * min(1.0, t)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor)
    amp_dtype = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[args.precision]
    scaler = torch.amp.GradScaler(device.type, enabled=args.precision == "fp16")

    first = 0
    if args.resume:
        ckpt = torch.load(args.resume)  # CUDA tensors come back on the device they were saved from
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optim"])
        sched.load_state_dict(ckpt["sched"])
        scaler.load_state_dict(ckpt["scaler"])
        torch.set_rng_state(ckpt["rng"])
        first = ckpt["step"]
        print(f"resumed from {args.resume} at step {first}", flush=True)

    run = torch.compile(model, backend=args.compile) if args.compile else model
    pin = device.type == "cuda"
    loader = DataLoader(train, batch_sampler=StepBatches(len(train), args.batch, args.seed, first,
                                                         args.steps),
                        num_workers=args.workers, pin_memory=pin,
                        persistent_workers=False)

    def evaluate():
        run.eval()
        losses = []
        with torch.no_grad(), torch.autocast(device.type, dtype=amp_dtype,
                                             enabled=amp_dtype is not None):
            for i in range(0, len(val), args.batch):
                xs, ys = zip(*(val[j] for j in range(i, min(i + args.batch, len(val)))))
                x, y = torch.stack(xs).to(device), torch.stack(ys).to(device)
                losses.append(run(x, y)[1].item())
        run.train()
        return sum(losses) / len(losses)

    def profiled(step):
        if not args.profile or step != args.steps:
            return contextlib.nullcontext()
        activities = [torch.profiler.ProfilerActivity.CPU]
        if device.type == "cuda":
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        return torch.profiler.profile(activities=activities)

    times = []
    step = first
    for x, y in loader:
        t0 = time.perf_counter()
        with profiled(step + 1) as prof:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
                _, loss = run(x, y)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
            opt.zero_grad(set_to_none=True)
        if prof is not None:
            prof.export_chrome_trace(args.profile)
            sort = "cuda_time_total" if device.type == "cuda" else "cpu_time_total"
            print(prof.key_averages().table(sort_by=sort, row_limit=15), flush=True)
            print(f"profile {args.profile}", flush=True)
        lr = sched.get_last_lr()[0]
        sched.step()
        step += 1
        loss_value = loss.item()
        times.append(time.perf_counter() - t0)
        print(f"step {step} loss {loss_value:.9g} lr {lr:.6g} grad_norm {norm.item():.9g}",
              flush=True)
        if args.eval_every and step % args.eval_every == 0:
            print(f"eval {step} val_loss {evaluate():.9g}", flush=True)
        if args.save and step == args.save_at:
            torch.save({"model": model.state_dict(), "optim": opt.state_dict(),
                        "sched": sched.state_dict(), "scaler": scaler.state_dict(),
                        "rng": torch.get_rng_state(), "step": step}, args.save)
            print(f"saved {args.save} at step {step}", flush=True)

    if args.generate:
        g = torch.Generator(device).manual_seed(args.seed)
        start = torch.tensor([[stoi["T"]]], device=device)
        out = model.generate(start, args.generate, g)[0].tolist()
        print("sample " + repr("".join(chars[i] for i in out)), flush=True)
    if len(times) > 3:  # the first steps warm up allocators and worker processes
        steady = sorted(times[2:])
        print(f"step_time_ms median {1e3 * steady[len(steady) // 2]:.3f}", flush=True)


if __name__ == "__main__":
    main()
