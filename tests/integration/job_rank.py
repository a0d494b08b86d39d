"""One rank of the tiny job the job-monitor tests and bench/jobs train (PyTorch, CPU, gloo).

Behaviour is steered from outside through files in $CONTROL_DIR, so one running job can go
through several failures: `slow-<rank>` makes that rank do 3x the compute of a step (a slow
GPU's stand-in), `stuck-<rank>` makes it wait in fetch_next_shard (a data loader stuck on a
file system) before its all_reduce for as long as the file exists, `nan-<rank>` makes it
report a NaN loss (and write the step of the first one into `nan-<rank>.first`, for the
test to compare with what the alert names), `oom-<rank>` makes it raise CUDA's
out-of-memory error, `checkpoint` makes rank 0 write a
checkpoint that takes CHECKPOINT_STEPS steps' time. STEP_JITTER adds random sleep a step.
LINGER_S_<rank> keeps that rank alive (still "training") that long after its last step.
`sleep2x-<rank>` makes that rank sleep twice its usual step time every step (a straggler
whose compute does not burn CPU, as a throttled GPU's wait does not), `nan-once-<rank>` makes
its next loss alone NaN (the step goes into `nan-once-<rank>.step`), `mismatch-<rank>` makes
it enter a broadcast where the others enter all_reduce (a collective mismatch: the job
hangs for good). `leak-<rank>` makes that rank hold 40 MB more every half second (the memory leak the OOM
killer ends); when the file names a cgroup.procs file, the rank first moves itself into that
cgroup.
`eval` holds "STEP MODE SECONDS": at that step every rank evaluates for
SECONDS, declared (MODE "all": trainwatch's phase "eval", then a barrier), or rank 0 alone,
undeclared, while the others wait for it in dist.barrier() (MODE "rank0"), as most scripts do.
START_GATE names a file the rank waits for, its imports done, before it joins the rendezvous
and registers with the agent: a restart started early and let go at the instant of a kill is
back within milliseconds, as no Python start-up could be.
"""
import os
import random
import sys
import time

import torch
import torch.distributed as dist

import trainwatch

torch.set_num_threads(1)
gate = os.environ.get("START_GATE")
if gate:
    print("gated", flush=True)
    while not os.path.exists(gate):
        time.sleep(0.005)
# torchrun sets RANK and WORLD_SIZE; under srun the script reads Slurm's own.
dist.init_process_group("gloo", rank=int(os.environ.get("RANK", os.environ.get("SLURM_PROCID", "0"))),
                        world_size=int(os.environ.get("WORLD_SIZE", os.environ.get("SLURM_NTASKS", "1"))))
rank = dist.get_rank()
control = os.environ["CONTROL_DIR"]
server = os.environ.get("IN_PROCESS_SERVER")  # the agent inside a local rank, not a sidecar
tw = trainwatch.init(server=server, report_every=float(os.environ.get("TRAINWATCH_REPORT_EVERY", "1")))
work = torch.randn(160, 160)
model = torch.nn.Linear(32, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
jitter = float(os.environ.get("STEP_JITTER", "0"))
pace = float(os.environ.get("STEP_PACE", "0.02"))
rng = random.Random(rank)


def fetch_next_shard(flag):
    while os.path.exists(flag):
        time.sleep(0.5)


leaked = []
leaked_at = [0.0]


def leak():
    """40 MB more every half second, written (resident, not just reserved), kept forever."""
    if not leaked:
        cgroup = (planned(f"leak-{rank}") or [None])[0]
        if cgroup:
            with open(cgroup, "w") as f:
                f.write(str(os.getpid()))
    if time.monotonic() - leaked_at[0] >= 0.5:
        leaked_at[0] = time.monotonic()
        leaked.append(torch.ones(10_000_000))


def planned(name):
    """The words of control file `name`, or None when there is none."""
    try:
        with open(os.path.join(control, name)) as f:
            return f.read().split()
    except OSError:
        return None


def evaluate(seconds):
    time.sleep(seconds)  # forward passes over the validation set: no step, no collective


def evaluation(step):
    plan = planned("eval")
    if not plan or int(plan[0]) != step:
        return
    mode, seconds = plan[1], float(plan[2])
    if mode == "all":
        with tw.phase("eval"):
            evaluate(seconds)
            dist.barrier()
    else:
        if rank == 0:
            evaluate(seconds)
        dist.barrier()


print("ready", flush=True)
step = 0
nan_before = False
usual_step_s = None  # this rank's step time before it slowed down (sleep2x-<rank>)
last_step_at = time.monotonic()
while True:
    step += 1
    straggling = os.path.exists(os.path.join(control, f"sleep2x-{rank}"))
    if straggling and usual_step_s:
        time.sleep(2 * usual_step_s)
    reps = 3 if os.path.exists(os.path.join(control, f"slow-{rank}")) else 1
    for _ in range(reps):
        for _ in range(8):
            work = torch.tanh(work @ work.T / 160.0)
    x = torch.randn(16, 32)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    fetch_next_shard(os.path.join(control, f"stuck-{rank}"))
    if os.path.exists(os.path.join(control, f"mismatch-{rank}")):
        for p in model.parameters():
            dist.broadcast(p.grad, src=0)
    for p in model.parameters():
        dist.all_reduce(p.grad)
    opt.step()
    value = loss.item()
    if os.path.exists(os.path.join(control, f"oom-{rank}")):
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity)")
    nan_now = os.path.exists(os.path.join(control, f"nan-{rank}"))
    if nan_now:
        value = float("nan")
        if not nan_before:  # the first bad step of this run: written whole, then renamed
            first = os.path.join(control, f"nan-{rank}.first")
            with open(first + ".tmp", "w") as f:
                f.write(str(step))
            os.replace(first + ".tmp", first)
    nan_before = nan_now
    once = os.path.join(control, f"nan-once-{rank}")
    if os.path.exists(once):
        value = float("nan")
        os.unlink(once)
        with open(once + ".step.tmp", "w") as f:
            f.write(str(step))
        os.replace(once + ".step.tmp", once + ".step")
    tw.step(step, loss=value, samples=16, tokens=16 * 32)
    evaluation(step)
    if os.path.exists(os.path.join(control, f"leak-{rank}")):
        leak()
    if rank == 0 and os.path.exists(os.path.join(control, "checkpoint")):
        os.unlink(os.path.join(control, "checkpoint"))
        with tw.checkpoint(step):
            time.sleep(int(os.environ.get("CHECKPOINT_STEPS", "20")) * pace)
    time.sleep(pace + (rng.uniform(0, jitter) if jitter else 0))
    now = time.monotonic()
    if not straggling:  # the usual step, smoothed; a straggler's own steps never count
        took = now - last_step_at
        usual_step_s = took if usual_step_s is None else 0.9 * usual_step_s + 0.1 * took
    last_step_at = now
    if step == int(os.environ.get("MAX_STEPS", "0") or 0):
        break
dist.barrier()
print("done", flush=True)
time.sleep(float(os.environ.get(f"LINGER_S_{rank}", "0")))  # still "training" as far as it said
