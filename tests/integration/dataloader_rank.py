"""One rank of a tiny job (PyTorch, CPU, gloo) that reads its batches through a DataLoader
with one worker process, for the test of a hang inside a worker (test_dataloader_hang.py).

While `$CONTROL_DIR/stuck-<rank>` exists, that rank's worker waits in the dataset's
__getitem__ (a file system that stopped answering), after writing its pid to
`$CONTROL_DIR/worker-<rank>`; the rank's main process waits for the batch, and the other
rank waits for it in all_reduce.
"""
import os
import time

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset

import trainwatch

torch.set_num_threads(1)
dist.init_process_group("gloo", rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
rank = dist.get_rank()
control = os.environ["CONTROL_DIR"]
tw = trainwatch.init(report_every=float(os.environ.get("TRAINWATCH_REPORT_EVERY", "1")))


class Shards(Dataset):
    def __len__(self):
        return 1_000_000

    def __getitem__(self, index):
        flag = os.path.join(control, f"stuck-{rank}")
        said = False
        while os.path.exists(flag):
            if not said:  # once it waits, never before: the test reads it once the rank is down
                with open(os.path.join(control, f"worker-{rank}"), "w") as f:
                    f.write(str(os.getpid()))
                said = True
            time.sleep(0.2)  # the worker waits here
        return torch.randn(32)


model = torch.nn.Linear(32, 1)
print("ready", flush=True)
for step, x in enumerate(DataLoader(Shards(), batch_size=16, num_workers=1), start=1):
    loss = model(x).pow(2).mean()
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
    tw.step(step, loss=loss.item())
    time.sleep(0.02)
