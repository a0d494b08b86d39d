#!/usr/bin/python3
"""Agent memory with 8 ranks and 8 (fake) GPUs (target: RSS <= 10 MB).

Starts 8 real rank processes (trainwatch.init(rank=i, world_size=8), stepping), the
`trainwatch agent` sidecar with the fake libnvidia-ml.so reporting 8 GPUs (through its real
dlopen path), serves it 2,000 /health and 2,000 /metrics requests, then reads VmRSS and
VmHWM from /proc. The seed's health server (../shared/peers/seed_http_target.py, idle)
is measured in the same run after the same requests.

Usage: PYTHONPATH=build-agent-rel/python /usr/bin/python3 bench/agent/bench_rss.py [build=build-agent-rel]
Prints one JSON line last.
"""
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PEERS = os.path.join(ROOT, "..", "shared", "peers")
BUILD = os.path.join(ROOT, sys.argv[1] if len(sys.argv) > 1 else "build-agent-rel")
RANKS = GPUS = 8
REQUESTS = 2000

sys.path.insert(0, os.path.dirname(HERE))
from benchkit import free_port  # noqa: E402

RANK = r"""
import sys, time, trainwatch
tw = trainwatch.init(rank=int(sys.argv[1]), local_rank=int(sys.argv[1]), world_size=8)
step = 0
while True:
    step += 1
    tw.step(step, loss=1.0 / step, loss_scale=65536.0, tokens=4096)
    time.sleep(0.01)
"""


def memory_kb(pid):
    text = open(f"/proc/{pid}/status").read()
    return {k: int(re.search(rf"^{k}:\s+(\d+) kB", text, re.M).group(1)) for k in ("VmRSS", "VmHWM")}


def hammer(port, path, n):
    """n keep-alive requests; waits for the server to come up first (bounded)."""
    for _ in range(200):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", path)
            c.getresponse().read()
            break
        except OSError:
            time.sleep(0.05)
    for _ in range(n):
        c.request("GET", path)
        c.getresponse().read()
    return c


def main():
    tmp = tempfile.mkdtemp()
    nvml_conf = os.path.join(tmp, "nvml.conf")
    with open(nvml_conf, "w") as f:
        f.write(f"count {GPUS}\n" + "".join(f"mem {i} {30 << 30} {80 << 30}\n" for i in range(GPUS)))
    env = dict(os.environ, TRAINWATCH_DIR=os.path.join(tmp, "slots"), TRAINWATCH_JOB="rss",
               FAKE_NVML_CONFIG=nvml_conf,
               TRAINWATCH_NVML_LIBRARY=os.path.join(BUILD, "tests", "fake_nvml", "libnvidia-ml.so.1"),
               PYTHONPATH=os.path.join(BUILD, "python"))
    procs = [subprocess.Popen(["/usr/bin/python3", "-c", RANK, str(i)], env=env) for i in range(RANKS)]
    port = free_port()
    agent = subprocess.Popen([os.path.join(BUILD, "src", "cli", "trainwatch"), "agent", "--job", "rss",
                              "--dir", env["TRAINWATCH_DIR"], "--listen", f"127.0.0.1:{port}",
                              "--checkpoint-dir", tmp, "--disk-free-gb", "0"], env=env)
    try:
        hammer(port, "/health", REQUESTS)
        hammer(port, "/metrics", REQUESTS)
        time.sleep(1.0)  # one more sample and probe round with everything warm
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("GET", "/health")
        health = json.loads(c.getresponse().read())
        assert len(health["ranks"]) == RANKS, health["ranks"]
        assert len(health["gpus"]) == GPUS, health["gpus"]
        ours = memory_kb(agent.pid)
    finally:
        agent.terminate()
        agent.wait()
        for p in procs:
            p.kill()
            p.wait()

    seed_port = free_port()
    seed = subprocess.Popen(["/usr/bin/python3", os.path.join(PEERS, "seed_http_target.py"), str(seed_port), "idle",
                             "60"], cwd=PEERS, stderr=subprocess.DEVNULL)
    try:
        hammer(seed_port, "/health", REQUESTS)
        seed_mem = memory_kb(seed.pid)
    finally:
        seed.terminate()
        seed.wait()
    print(f"agent ({RANKS} ranks, {GPUS} fake GPUs): RSS {ours['VmRSS'] / 1024:.1f} MB, peak {ours['VmHWM'] / 1024:.1f} MB; "
          f"seed health server: RSS {seed_mem['VmRSS'] / 1024:.1f} MB", flush=True)
    print(json.dumps({"bench": "agent_rss", "ranks": RANKS, "gpus": GPUS, "agent_kb": ours, "seed_kb": seed_mem}))


if __name__ == "__main__":
    main()
