"""Run by test_distributed.py under torchrun: NCCL collectives between 2 ranks, on tensors copied
from the host, checked against values each rank can compute itself."""
import os

import torch
import torch.distributed as dist

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl", device_id=torch.device("cuda", int(os.environ["LOCAL_RANK"])))
assert dist.get_backend() == "nccl"
n = 1000
mine = torch.arange(n, dtype=torch.float32) + 1000 * rank

t = mine.cuda()
dist.all_reduce(t)
assert torch.equal(t.cpu(), sum(torch.arange(n, dtype=torch.float32) + 1000 * r for r in range(world)))

b = (mine if rank == 1 else torch.zeros(n)).cuda()
dist.broadcast(b, src=1)
assert torch.equal(b.cpu(), torch.arange(n, dtype=torch.float32) + 1000)

out = torch.empty(world * n).cuda()
dist.all_gather_into_tensor(out, mine.cuda())
assert torch.equal(out.cpu(), torch.cat([torch.arange(n, dtype=torch.float32) + 1000 * r
                                         for r in range(world)]))

full = (torch.arange(world * n, dtype=torch.float32) * (rank + 1)).cuda()
part = torch.empty(n).cuda()
dist.reduce_scatter_tensor(part, full)
factor = sum(r + 1 for r in range(world))
assert torch.equal(part.cpu(), torch.arange(rank * n, (rank + 1) * n, dtype=torch.float32) * factor)

if rank == 0:
    dist.send(torch.full((n,), 7.0).cuda(), dst=1)
else:
    r = torch.empty(n).cuda()
    dist.recv(r, src=0)
    assert torch.equal(r.cpu(), torch.full((n,), 7.0))

dist.barrier()
dist.destroy_process_group()
print(f"RANK {rank} OK", flush=True)
