"""Run by test_bridge.py's test_sync_batch_norm under torchrun (2 ranks, backend nccl): a
SyncBatchNorm network in DDP, each rank on its half of a batch, against BatchNorm on the whole
batch on the CPU (what SyncBatchNorm computes): outputs, gradients and running statistics."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
local = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
dist.init_process_group("nccl", device_id=torch.device("cuda", local))
torch.manual_seed(0)


def net():
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.Conv2d(4, 2, 1), nn.BatchNorm2d(2))


ref = net()
ref[1].weight.data.uniform_(0.5, 1.5)
ref[1].bias.data.uniform_(-0.5, 0.5)
model = nn.SyncBatchNorm.convert_sync_batchnorm(net())
model.load_state_dict(ref.state_dict())
ddp = nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[local])

x = torch.randn(2 * world, 3, 5, 5)            # the same batch on every rank (same seed)
per = x.shape[0] // world
out = ddp(x[rank * per:(rank + 1) * per].cuda())
out.square().sum().backward()

ref_out = ref(x)
ref_out.square().sum().backward()


def close(a, b, what, atol=1e-5):
    a = a.detach().cpu()
    assert torch.allclose(a, b.detach(), rtol=1e-4, atol=atol), (what, (a - b).abs().max())


close(out, ref_out[rank * per:(rank + 1) * per], "output")
for (name, p), q in zip(model.named_parameters(), ref.parameters()):
    # DDP averages gradients over ranks; the reference's loss sums over the whole batch. A
    # convolution's bias just before a BatchNorm has a gradient of 0 up to rounding (~1e-5 here).
    close(p.grad * world, q.grad, name + ".grad", atol=1e-4)
close(model[1].running_mean, ref[1].running_mean, "running_mean")
close(model[1].running_var, ref[1].running_var, "running_var")
# The out= form of the normalisation, against the functional one.
xe, me, se = x.cuda(), ref_out.new_zeros(3).cuda() + 0.25, torch.rand(3).cuda() + 0.5
o = torch.empty(0, device="cuda")
torch.batch_norm_elemt(xe, None, None, me, se, 1e-5, out=o)
close(o, torch.batch_norm_elemt(xe, None, None, me, se, 1e-5).cpu(), "batch_norm_elemt.out")
dist.destroy_process_group()
print(f"RANK {rank} OK")
