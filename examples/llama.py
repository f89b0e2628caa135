#!/usr/bin/env python3
"""A small LLaMA-style character language model, trained on examples/data/corpus.txt.

Plain PyTorch written for an NVIDIA GPU (device="cuda" by default, no torchada import); under
torchada it runs unmodified:

    scripts/torchada-run --backend sim -- .venv/bin/python examples/llama.py
    .venv/bin/python examples/llama.py --device cpu        # the same run on the CPU, to compare

The architecture of today's open language models, at toy size: RMSNorm before each sublayer (no
biases anywhere), rotary position embeddings applied to queries and keys (the rotate-half form),
grouped-query attention (fewer key/value heads than query heads, expanded for
scaled_dot_product_attention with enable_gqa), a SwiGLU feed-forward layer, untied input and
output embeddings; AdamW with decoupled weight decay on matrices only, a warm-up + cosine
schedule, gradient clipping, optional bf16 autocast.

Every step prints one line, "step N loss X lr Y grad_norm Z", so that two runs can be compared
step by step (tests/examples does).
"""
import argparse
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--block", type=int, default=64, help="context length")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4, help="query heads")
    p.add_argument("--kv-heads", type=int, default=2, help="key/value heads (grouped-query)")
    p.add_argument("--embd", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--optimizer", choices=["foreach", "fused"], default="fused")
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--text", default=os.path.join(HERE, "data", "corpus.txt"))
    return p.parse_args()


def rotary_tables(block, head_dim, base=10000.0):
    """cos and sin of each position's rotation angles: [block, head_dim] (halves repeated)."""
    inv = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(block, dtype=torch.float32), inv)
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos(), angles.sin()


def rotate(x, cos, sin):
    """Rotary embedding of x [batch, heads, time, head_dim] (the rotate-half form)."""
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


class Attention(nn.Module):
    def __init__(self, embd, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, embd // heads
        self.q = nn.Linear(embd, heads * self.head_dim, bias=False)
        self.kv = nn.Linear(embd, 2 * kv_heads * self.head_dim, bias=False)
        self.out = nn.Linear(heads * self.head_dim, embd, bias=False)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.kv(x).view(b, t, 2, self.kv_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.out(y.transpose(1, 2).reshape(b, t, -1))


class SwiGLU(nn.Module):
    def __init__(self, embd):
        super().__init__()
        hidden = 4 * embd * 2 // 3
        self.gate_up = nn.Linear(embd, 2 * hidden, bias=False)
        self.down = nn.Linear(hidden, embd, bias=False)

    def forward(self, x):
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)


class Block(nn.Module):
    def __init__(self, embd, heads, kv_heads):
        super().__init__()
        self.norm1, self.norm2 = nn.RMSNorm(embd, eps=1e-5), nn.RMSNorm(embd, eps=1e-5)
        self.attn = Attention(embd, heads, kv_heads)
        self.mlp = SwiGLU(embd)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.norm1(x), cos, sin)
        return x + self.mlp(self.norm2(x))


class Llama(nn.Module):
    def __init__(self, vocab, block, embd, heads, kv_heads, layers):
        super().__init__()
        self.tok = nn.Embedding(vocab, embd)
        self.blocks = nn.ModuleList(Block(embd, heads, kv_heads) for _ in range(layers))
        self.norm = nn.RMSNorm(embd, eps=1e-5)
        self.head = nn.Linear(embd, vocab, bias=False)
        cos, sin = rotary_tables(block, embd // heads)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)

    def forward(self, idx, targets):
        t = idx.shape[1]
        cos, sin = self.cos[:t], self.sin[:t]
        x = self.tok(idx)
        for blk in self.blocks:
            x = blk(x, cos, sin)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))


def main():
    args = parse_args()
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    text = open(args.text, encoding="utf-8").read()
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)
    windows = (len(data) - 1) // args.block

    # Built on the CPU with the seed, then moved: the same initial weights on every device.
    model = Llama(len(chars), args.block, args.embd, args.heads, args.kv_heads,
                  args.layers).to(device)
    matrices = [p for p in model.parameters() if p.dim() >= 2]
    vectors = [p for p in model.parameters() if p.dim() < 2]
    fused = args.optimizer == "fused"
    opt = torch.optim.AdamW([{"params": matrices, "weight_decay": 0.1},
                             {"params": vectors, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), fused=fused, foreach=not fused)

    def lr_factor(step):
        if step < args.warmup:
            return (step + 1) / args.warmup
        t = (step - args.warmup) / max(1, args.steps - args.warmup)
        return 0.1 + 0.45 * (1 + math.cos(math.pi * min(1.0, t)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor)
    amp_dtype = torch.bfloat16 if args.precision == "bf16" else None
    batches = torch.Generator().manual_seed(args.seed)
    times = []
    for step in range(1, args.steps + 1):
        starts = torch.randint(windows, (args.batch,), generator=batches) * args.block
        chunk = torch.stack([data[s:s + args.block + 1] for s in starts.tolist()])
        t0 = time.perf_counter()
        x, y = chunk[:, :-1].to(device), chunk[:, 1:].to(device)
        with torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
            loss = model(x, y)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        lr = sched.get_last_lr()[0]
        sched.step()
        loss_value = loss.item()
        times.append(time.perf_counter() - t0)
        print(f"step {step} loss {loss_value:.9g} lr {lr:.6g} grad_norm {norm.item():.9g}",
              flush=True)
    if len(times) > 3:
        steady = sorted(times[2:])
        print(f"step_time_ms median {1e3 * steady[len(steady) // 2]:.3f}", flush=True)


if __name__ == "__main__":
    main()
