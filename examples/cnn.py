#!/usr/bin/env python3
"""A small CNN classifying generated images of shapes and gradients.

Plain PyTorch written for an NVIDIA GPU (device="cuda" by default, no torchada import); under
torchada it runs unmodified:

    scripts/torchada-run --backend sim -- .venv/bin/python examples/cnn.py
    .venv/bin/python examples/cnn.py --device cpu          # the same run on the CPU, to compare

The images (4 classes: a horizontal gradient, a vertical gradient, a filled square, a ring; random
position, size, colour and noise) are generated on the CPU from the seed, so every device trains
on the same data. The model uses what image classifiers use: Conv2d, BatchNorm2d, ReLU,
MaxPool2d, AdaptiveAvgPool2d, Dropout and Linear; random horizontal flips drawn on the device;
cross-entropy with label smoothing; SGD with Nesterov momentum and weight decay or Adam; a cosine
learning-rate schedule; optionally channels_last tensors; evaluation (loss and accuracy) under
no_grad with model.eval(), i.e. BatchNorm's running statistics and no dropout.

Every step prints one line, "step N loss X lr Y acc Z", so that two runs can be compared step by
step (tests/examples does); every --eval-every steps, "eval N val_loss X accuracy Y".
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

CLASSES = ("horizontal gradient", "vertical gradient", "square", "ring")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--size", type=int, default=16, help="image side in pixels")
    p.add_argument("--train", type=int, default=1024, help="training images")
    p.add_argument("--val", type=int, default=256, help="validation images")
    p.add_argument("--width", type=int, default=16, help="channels of the first convolution")
    p.add_argument("--dropout", type=float, default=0.2)
    p.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd")
    p.add_argument("--lr", type=float, default=None,
                   help="peak learning rate (default 0.2 for sgd, 1e-2 for adam)")
    p.add_argument("--channels-last", action="store_true", help="NHWC images and weights")
    p.add_argument("--eval-every", type=int, default=10)
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args()


def make_images(n, size, generator):
    """`n` RGB images of `size` x `size` pixels and their labels, drawn from `generator`."""
    g = dict(generator=generator)
    labels = torch.randint(len(CLASSES), (n,), **g)
    ys, xs = torch.meshgrid(torch.linspace(0, 1, size), torch.linspace(0, 1, size), indexing="ij")
    xs, ys = xs.expand(n, size, size), ys.expand(n, size, size)
    cx, cy = (0.25 + 0.5 * torch.rand(n, 1, 1, **g) for _ in range(2))
    r = 0.15 + 0.12 * torch.rand(n, 1, 1, **g)
    flip = torch.rand(n, 1, 1, **g) < 0.5
    hgrad = torch.where(flip, 1 - xs, xs)
    vgrad = torch.where(flip, 1 - ys, ys)
    square = ((xs - cx).abs() < r) & ((ys - cy).abs() < r)
    ring = (((xs - cx) ** 2 + (ys - cy) ** 2).sqrt() - r).abs() < 0.07
    shapes = torch.stack([hgrad, vgrad, square.float(), ring.float()], dim=1)  # n, 4, size, size
    mask = labels.view(n, 1, 1, 1) == torch.arange(len(CLASSES)).view(1, -1, 1, 1)
    image = (shapes * mask).sum(1, keepdim=True)
    colour = 0.4 + 0.6 * torch.rand(n, 3, 1, 1, **g)
    image = image * colour + 0.15 * torch.randn(n, 3, size, size, **g)
    return (image - 0.3) / 0.35, labels


class ConvBlock(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True))


class CNN(nn.Module):
    def __init__(self, width, classes, dropout):
        super().__init__()
        self.features = nn.Sequential(
            ConvBlock(3, width), nn.MaxPool2d(2),
            ConvBlock(width, 2 * width), nn.MaxPool2d(2),
            ConvBlock(2 * width, 2 * width),
            nn.AdaptiveAvgPool2d(1))
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(dropout),
                                  nn.Linear(2 * width, 2 * width), nn.ReLU(inplace=True),
                                  nn.Linear(2 * width, classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        return self.head(self.features(x))


def main():
    args = parse_args()
    device = torch.device(args.device)
    torch.manual_seed(args.seed)

    data = torch.Generator().manual_seed(args.seed)
    train_x, train_y = make_images(args.train, args.size, data)
    val_x, val_y = make_images(args.val, args.size, data)
    memory_format = torch.channels_last if args.channels_last else torch.contiguous_format

    # Built on the CPU with the seed, then moved: the same initial weights on every device.
    model = CNN(args.width, len(CLASSES), args.dropout).to(device, memory_format=memory_format)
    if args.optimizer == "sgd":
        lr = args.lr or 0.2
        decay = [p for p in model.parameters() if p.dim() > 1]
        no_decay = [p for p in model.parameters() if p.dim() <= 1]
        opt = torch.optim.SGD([{"params": decay, "weight_decay": 5e-4},
                               {"params": no_decay, "weight_decay": 0.0}],
                              lr=lr, momentum=0.9, nesterov=True)
    else:
        lr = args.lr or 1e-2
        opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.steps, eta_min=lr / 20)

    def batches():
        """The batches of every step: a fresh permutation per epoch from a seeded generator."""
        order = torch.Generator().manual_seed(args.seed + 1)
        per_epoch = args.train // args.batch
        for step in range(args.steps):
            k = step % per_epoch
            if k == 0:
                perm = torch.randperm(args.train, generator=order)
            idx = perm[k * args.batch:(k + 1) * args.batch]
            yield train_x[idx], train_y[idx]

    def evaluate():
        model.eval()
        loss_sum, correct = 0.0, 0
        with torch.no_grad():
            for i in range(0, args.val, 128):
                x = val_x[i:i + 128].to(device, memory_format=memory_format)
                y = val_y[i:i + 128].to(device)
                logits = model(x)
                loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
                correct += (logits.argmax(1) == y).sum().item()
        model.train()
        return loss_sum / args.val, correct / args.val

    times = []
    for step, (x, y) in enumerate(batches(), 1):
        t0 = time.perf_counter()
        x = x.to(device, non_blocking=True).contiguous(memory_format=memory_format)
        y = y.to(device, non_blocking=True)
        # Random horizontal flips, drawn on the device.
        flip = torch.rand(x.shape[0], 1, 1, 1, device=device) < 0.5
        x = torch.where(flip, x.flip(3), x)
        logits = model(x)
        loss = F.cross_entropy(logits, y, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        lr_now = sched.get_last_lr()[0]
        sched.step()
        acc = (logits.argmax(1) == y).float().mean().item()
        loss_value = loss.item()
        times.append(time.perf_counter() - t0)
        print(f"step {step} loss {loss_value:.9g} lr {lr_now:.6g} acc {acc:.4f}", flush=True)
        if args.eval_every and step % args.eval_every == 0:
            val_loss, accuracy = evaluate()
            print(f"eval {step} val_loss {val_loss:.9g} accuracy {accuracy:.4f}", flush=True)

    bn = model.features[0][1]
    print(f"bn running_mean_sum {bn.running_mean.sum().item():.9g} "
          f"running_var_sum {bn.running_var.sum().item():.9g}", flush=True)
    if len(times) > 3:  # the first steps warm up allocators
        steady = sorted(times[2:])
        print(f"step_time_ms median {1e3 * steady[len(steady) // 2]:.3f}", flush=True)


if __name__ == "__main__":
    main()
