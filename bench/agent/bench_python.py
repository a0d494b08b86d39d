#!/usr/bin/python3
"""The library's and agent's benchmarks, side by side with the seeds' versions (../shared/peers) in one run.

1. per-step: tw.step(step, loss=...) vs the seed's locked dict update (bench_step_overhead.py
   runs in the same invocation; ratios are what count on this noisy host).
2. /health under wrk, idle and with a busy Python thread in the training process, vs the
   seed's http.server (bench_seed_health_http.py), same wrk settings.
3. The same wrk against rtt_floor.c, a server that does no work at all: what any server
   that sleeps between requests reaches on this machine (one connection is bound by round
   trips, not by the server).

Usage: PYTHONPATH=build-agent-rel/python /usr/bin/python3 bench/agent/bench_python.py [wrk_seconds=5]
Prints one JSON line last.
"""
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = os.path.join(HERE, "..", "..", "..", "shared", "peers")
sys.path.insert(0, PEERS)
from wrkparse import parse_wrk  # noqa: E402
sys.path.insert(0, os.path.dirname(HERE))
from benchkit import free_port  # noqa: E402

DUR = int(sys.argv[1]) if len(sys.argv) > 1 else 5
N = 1_000_000


def our_step_ns(n, runs=5):
    import tempfile
    import trainwatch
    tw = trainwatch.init(job="bench", dir=tempfile.mkdtemp(), rank=0, world_size=1, status="training")
    out = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        for step in range(n):
            overflow = step % 1000 == 0  # noqa: F841  (same loop body as the seed's baseline)
            tw.step(step, loss=0.5)
        t1 = time.perf_counter_ns()
        for step in range(n):
            overflow = step % 1000 == 0  # noqa: F841
        t2 = time.perf_counter_ns()
        out.append(((t1 - t0) - (t2 - t1)) / n)
    out.sort()
    return out[len(out) // 2]


TARGET = r"""
import sys, threading, time, tempfile, trainwatch
port, mode = int(sys.argv[1]), sys.argv[2]
tw = trainwatch.init(job="benchhttp", dir=tempfile.mkdtemp(), rank=0, world_size=1, health_port=port,
                     health_host="127.0.0.1", host_memory_free_gb=0, disk_free_gb=0)
def train():
    step = 0
    while True:
        step += 1
        acc = 0
        for j in range(1000):
            acc += (j * j) % 7
        tw.step(step, loss=1.0 / step)
if mode == "busy":
    threading.Thread(target=train, daemon=True).start()
time.sleep(float(sys.argv[3]))
"""


def wrk(url, conns):
    out = subprocess.run(["wrk", "-t1", f"-c{conns}", f"-d{DUR}s", "--latency", "--timeout", "2s", url],
                         capture_output=True, text=True, timeout=DUR + 30).stdout
    return parse_wrk(out)


def our_health():
    results = []
    for mode in ("idle", "busy"):
        port = free_port()
        p = subprocess.Popen([sys.executable, "-c", TARGET, str(port), mode, str(4 * DUR + 20)])
        try:
            time.sleep(1.5)
            for conns in (1, 10):
                r = wrk(f"http://127.0.0.1:{port}/health", conns)
                r.update(mode=mode, connections=conns)
                results.append(r)
                print(f"trainwatch {mode} c{conns}: {r['rps']} req/s p99 {r['p99_ms']} ms", flush=True)
        finally:
            p.kill()
            p.wait()
    return results


def floor_health():
    import tempfile
    binary = os.path.join(tempfile.mkdtemp(), "rtt_floor")
    subprocess.run(["gcc", "-O2", "-o", binary, os.path.join(HERE, "rtt_floor.c")], check=True)
    port = free_port()
    p = subprocess.Popen([binary, str(port)])
    try:
        time.sleep(0.5)
        results = {}
        for conns in (1, 10):
            results[conns] = wrk(f"http://127.0.0.1:{port}/health", conns)
            print(f"no-work floor c{conns}: {results[conns]['rps']} req/s", flush=True)
        return results
    finally:
        p.kill()
        p.wait()


def main():
    seed_step = subprocess.run([sys.executable, os.path.join(PEERS, "bench_step_overhead.py"), str(N), "5"],
                               cwd=PEERS, capture_output=True, text=True, timeout=600).stdout.strip().splitlines()[-1]
    seed_step = json.loads(seed_step)
    ours = our_step_ns(N)
    seed_ns = seed_step["overhead_ns_vs_empty"]["seed_update"]
    print(f"per-step: trainwatch {ours:.1f} ns, seed {seed_ns:.1f} ns, ratio {ours / seed_ns:.3f}", flush=True)

    health = our_health()
    seed_http = subprocess.run([sys.executable, os.path.join(PEERS, "bench_seed_health_http.py"), str(DUR)],
                               cwd=PEERS, capture_output=True, text=True, timeout=1200).stdout.strip().splitlines()[-1]
    seed_http = json.loads(seed_http)["results"]
    floor = floor_health()

    def pick(rs, mode, conns):
        return next(r for r in rs if r["mode"] == mode and r["connections"] == conns)

    ratios = {}
    for mode in ("idle", "busy"):
        for conns in (1, 10):
            o, s = pick(health, mode, conns), pick(seed_http, mode, conns)
            ratios[f"{mode}_c{conns}"] = {"ours_rps": o["rps"], "seed_rps": s["rps"],
                                          "ratio": round(o["rps"] / max(s["rps"], 1e-9), 1),
                                          "ours_p99_ms": o["p99_ms"], "seed_p99_ms": s["p99_ms"],
                                          "floor_rps": floor[conns]["rps"],
                                          "floor_over_seed": round(floor[conns]["rps"] / max(s["rps"], 1e-9), 1)}
            print(f"{mode} c{conns}: ours {o['rps']} req/s (p99 {o['p99_ms']} ms) vs seed {s['rps']} "
                  f"(p99 {s['p99_ms']} ms): x{ratios[f'{mode}_c{conns}']['ratio']}", flush=True)
    print(json.dumps({"bench": "agent_beside_python_health_server", "step_ns": {"trainwatch": round(ours, 1), "seed": seed_ns,
                                                    "ratio": round(ours / seed_ns, 3)},
                      "health": ratios, "wrk_seconds": DUR, "nproc": os.cpu_count()}))


if __name__ == "__main__":
    main()
