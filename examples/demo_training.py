#!/usr/bin/env python3
"""The demo's simulated training job: 8 ranks over two "nodes", reporting through the
trainwatch Python module (no PyTorch). Each node's local rank 0 serves the node agent's
/health (node-a on :8765, node-b on :8766), which examples/demo.yaml checks, and pushes
node reports to the server (TRAINWATCH_SERVER, default http://127.0.0.1:8080), which
watches the whole job as the monitor demo-llm.

The ranks step in lock-step, as data-parallel ranks do around their all-reduce (marked
with tw.collective). Now and then rank 6 straggles: its compute takes 0.5 s longer a step for
60 steps, so every rank's step takes twice as long and the others wait for it in the
all-reduce. Every 100 steps every rank writes a checkpoint. Rank 0 pings STEP_HEARTBEAT_URL every 20 steps.

    PYTHONPATH=build/python /usr/bin/python3 examples/demo_training.py [--steps N]
"""
import argparse
import math
import os
import random
import subprocess
import sys
import time

WORLD = 8
# A test runs the demo beside others: the agents' ports and the slot directories can move.
PORTS = [int(p) for p in os.environ.get("TRAINWATCH_DEMO_PORTS", "8765,8766").split(",")]
NODES = {"node-a": (0, PORTS[0]), "node-b": (4, PORTS[1])}
SLOTS = os.environ.get("TRAINWATCH_DEMO_DIR", "/dev/shm/trainwatch-demo")
STRAGGLER = 6
STEP_S = 0.5  # a step: COMPUTE_S of compute, the rest in the all-reduce
COMPUTE_S = 0.3
SLOW_S = 0.5  # the straggler's extra compute a step while it straggles
CHECKPOINT_S = 1.0


def straggling(step):
    """Rank 6 straggles one minute in three: steps 120-179, 300-359, ..."""
    return (step // 60) % 3 == 2


def rank_main(rank, node, steps, start):
    import trainwatch
    first, port = NODES[node]
    tw = trainwatch.init(job="demo-llm", dir=f"{SLOTS}/{node}", rank=rank,
                         local_rank=rank - first, world_size=WORLD, health_port=port,
                         health_host="127.0.0.1", stall_after_s=30, disk_free_gb=0.1, host_memory_free_gb=0.1,
                         server=os.environ.get("TRAINWATCH_SERVER", "http://127.0.0.1:8080"), node=node, report_every=2)
    rng = random.Random(rank)
    # Lock-step data parallelism: each step computes, then all-reduces, and the all-reduce
    # ends for every rank when the slowest has reached it. The ranks share one schedule
    # (`due`, where each step's all-reduce ends) instead of a real collective: while rank 6
    # straggles, its compute takes SLOW_S longer, every step of the job with it, and the
    # others wait for it in the all-reduce, which trainwatch sees them marked in.
    due = start
    for step in range(steps):
        slow = straggling(step)
        due += STEP_S + (SLOW_S if slow else 0)
        time.sleep(COMPUTE_S + (SLOW_S if slow and rank == STRAGGLER else 0) + rng.uniform(0, 0.05))
        with tw.collective("all_reduce"):
            time.sleep(max(0.0, due - time.time()))
        loss = 4.0 * math.exp(-step / 400) + 1.2 + rng.uniform(-0.05, 0.05)
        tw.step(step, loss=loss, tokens=8192)
        if step and step % 100 == 0:
            with tw.checkpoint(step, path="/tmp/trainwatch-demo-ckpt"):
                time.sleep(CHECKPOINT_S)
            due += CHECKPOINT_S


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--rank", type=int)
    parser.add_argument("--node")
    parser.add_argument("--start", type=float)
    args = parser.parse_args()
    if args.rank is not None:
        return rank_main(args.rank, args.node, args.steps, args.start)
    env = dict(os.environ, TRAINWATCH_PING_EVERY="20",
               STEP_HEARTBEAT_URL=os.environ.get("STEP_HEARTBEAT_URL", "http://127.0.0.1:8080/ping/demo-steps"))
    procs = []
    start = time.time() + 2  # every rank's step schedule starts here
    for node, (first, _) in NODES.items():
        for rank in range(first, first + 4):
            procs.append(subprocess.Popen([sys.executable, __file__, "--rank", str(rank), "--node", node,
                                           "--steps", str(args.steps), "--start", str(start)], env=env))
    try:
        for p in procs:
            p.wait()
    except KeyboardInterrupt:
        pass
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()


if __name__ == "__main__":
    main()
