#!/usr/bin/env python3
"""The job page and API of a 131,072-rank job: how long a reader waits, and how much it gets.

    /usr/bin/python3 bench/jobs/bench_job_page.py [--rounds 3] [--nodes 16384] [--loads 20]
        [--bin PATH]

One round:
  1. Start `trainwatch serve` (SQLite) with one declared job monitor `big`
     (world_size = nodes x 8) and the jobs token.
  2. Fill the job: each of the nodes posts one report of its 8 ranks (8 GPUs, a disk,
     memory, about 6 KB, shaped like agent/node_report.cc's) over 4 keep-alive
     connections. Rank 9877 (node 1234, local rank 5) reports as killed by SIGKILL; the
     other ranks train.
  3. Wait (at most 120 s) until GET /api/v1/jobs/big names rank 9877 as the culprit.
  4. Load GET /api/v1/jobs/big, GET /jobs/big, GET /api/v1/jobs and GET /metrics --loads
     times each, one after another on one connection: time to the last byte, and size. The same bytes are then served by
     nginx as static files, --loads times each: the floor of moving them here.
  5. Stop the serve.

Prints a markdown table (median of the rounds' p50 and p99, with each round's), then one
JSON line. Loopback only; every loop is bounded in count and time.
"""
import argparse
import http.client
import json
import os
import pathlib
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent / "heartbeat"))
sys.path.insert(0, str(ROOT / "tests" / "integration"))
import replicas  # noqa: E402  (Serve)
from conftest import wait_for  # noqa: E402
from run import start_nginx  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from benchkit import binary_to_run, logger  # noqa: E402

RANKS_PER_NODE = 8
JOB = "big"
TOKEN = "bench-job-page-token-5c2e"
VICTIM_NODE, VICTIM_LOCAL = 1234, 5
VICTIM = VICTIM_NODE * RANKS_PER_NODE + VICTIM_LOCAL  # 9877
SENDERS = 4
# What a reader loads: the job's API and page, the list of jobs, and /metrics.
READS = (("api", f"/api/v1/jobs/{JOB}"), ("page", f"/jobs/{JOB}"), ("list", "/api/v1/jobs"), ("metrics", "/metrics"))

log = logger("bench_job_page")

GPUS = [{"index": i, "name": "NVIDIA H100 80GB HBM3", "lost": False, "memory_used_bytes": 61_000_000_000,
         "memory_total_bytes": 85_520_809_984, "ecc_uncorrected": 0, "last_xid": 0, "last_xid_critical": False,
         "xid_count": 0} for i in range(8)]


def report(n, world):
    ranks = []
    for local in range(RANKS_PER_NODE):
        rank = n * RANKS_PER_NODE + local
        r = {"rank": rank, "local_rank": local, "world_size": world, "pid": 200_000 + rank, "alive": True,
             "state": "R", "status": "training", "step": 2000, "step_reports": 2001, "last_step_age_ms": 100,
             "max_step_gap_ms": 500, "samples": 128_000, "tokens": 524_288_000, "cpu_s": 900.5,
             "run_id": "bench-job-page", "node_rank": n, "loss": 2.1, "loss_scale": 65536.0}
        if n == VICTIM_NODE:
            r.update(state="S", syscall="futex")
            if local == VICTIM_LOCAL:
                r.update(alive=False, state="?", gone_age_ms=2000,
                         exit={"signal": 9, "signal_name": "SIGKILL", "core_dumped": False, "oom_killed": False})
                del r["cpu_s"]
        ranks.append(r)
    body = {"schema": 1, "job": JOB, "node": f"node-{n:05d}", "seq": 1, "agent_pid": 100_000 + n,
            "report_every_ms": 60_000, "ranks": ranks, "gpus": GPUS,
            "disks": [{"name": "ckpt", "path": "/ckpt", "ok": True, "error": "", "free_bytes": 9_000_000_000_000,
                       "total_bytes": 15_000_000_000_000}],
            "memory": {"available_bytes": 1_500_000_000_000, "total_bytes": 2_000_000_000_000}}
    return json.dumps(body, separators=(",", ":")).encode()


def connection(base, timeout=60):
    url = urllib.parse.urlsplit(base)
    return http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)


def fill(base, nodes, world):
    """Each node's one report, over SENDERS keep-alive connections; returns the statuses."""
    statuses = {}

    def send(first):
        conn = connection(base)
        try:
            for n in range(first, nodes, SENDERS):
                conn.request("POST", f"/api/v1/jobs/{JOB}/report", body=report(n, world),
                             headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
                answer = conn.getresponse()
                answer.read()
                statuses[answer.status] = statuses.get(answer.status, 0) + 1
        finally:
            conn.close()

    threads = [threading.Thread(target=send, args=(i,)) for i in range(SENDERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    return statuses


def timed_loads(base, path, loads):
    """(latencies in ms, the last body) of `loads` GETs one after another on one connection."""
    conn = connection(base)
    times, body = [], b""
    try:
        for _ in range(loads):
            start = time.perf_counter()
            conn.request("GET", path)
            answer = conn.getresponse()
            body = answer.read()
            times.append((time.perf_counter() - start) * 1000)
            assert answer.status == 200, (path, answer.status, body[:200])
    finally:
        conn.close()
    return times, body


def p99(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]


def named(base):
    conn = connection(base, timeout=30)
    try:
        conn.request("GET", f"/api/v1/jobs/{JOB}")
        answer = conn.getresponse()
        job = json.loads(answer.read())
    finally:
        conn.close()
    if any(f.get("ranks") == [VICTIM] for f in job.get("findings", [])):
        return job
    log(f"not named yet: phase {job.get('phase')}, rank_count {job.get('rank_count')}, findings "
        f"{[(f.get('code'), f.get('ranks', [])[:4], f.get('message', '')[:120]) for f in job.get('findings', [])][:3]}")
    return False


def one_round(work, nodes, loads):
    world = nodes * RANKS_PER_NODE
    config = work / "serve.yaml"
    config.write_text("jobs:\n  token: ${TRAINWATCH_TOKEN}\nmonitors:\n"
                      f"  - name: {JOB}\n    type: job\n    world_size: {world}\n")
    serve = replicas.Serve(config, work / "data", work / "serve.log", env=dict(os.environ, TRAINWATCH_TOKEN=TOKEN))
    try:
        start = time.monotonic()
        statuses = fill(serve.base, nodes, world)
        filled_s = time.monotonic() - start
        log(f"{nodes} reports in {filled_s:.1f} s: {statuses}")
        assert statuses == {200: nodes}, statuses
        job = wait_for(lambda: named(serve.base), timeout=120, interval=5, what=f"rank {VICTIM} named")
        out = {"fill_s": round(filled_s, 1), "rank_count": job.get("rank_count")}
        for kind, path in READS:
            times, body = timed_loads(serve.base, path, loads)
            (work / f"{kind}.out").write_bytes(body)
            out[kind] = {"p50": statistics.median(times), "p99": p99(times), "bytes": len(body)}
            out[kind]["culprit_first"] = str(VICTIM).encode() in body[:4096]
            if kind == "api":  # what the reader got is the whole job, summarised, culprit first
                detail = json.loads(body)
                assert detail["rank_count"] == world, detail
                assert detail["nodes_left_out"] + len(detail["nodes"]) == nodes, detail
                assert detail["nodes"][0]["name"] == f"node-{VICTIM_NODE:05d}", detail["nodes"][:1]
                assert {"first": VICTIM, "last": VICTIM, "health": "down"} in detail["rank_ranges"]
    finally:
        serve.kill()
    work.chmod(0o755)  # nginx's worker runs as nobody
    proc, base = start_nginx(work, location=f"root {work};", ready_path="/nginx.conf")
    try:
        for kind, _ in READS:
            times, _ = timed_loads(base, f"/{kind}.out", loads)
            out[kind]["nginx_p50"], out[kind]["nginx_p99"] = statistics.median(times), p99(times)
    finally:
        proc.terminate()
        proc.wait(10)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--nodes", type=int, default=16_384)
    ap.add_argument("--loads", type=int, default=20)
    ap.add_argument("--bin", default=None)
    args = ap.parse_args()
    keep = tempfile.TemporaryDirectory(prefix="tw-bench-job-page-bin-")
    replicas.BINARY, built = binary_to_run(args.bin, keep.name)
    log(f"binary {replicas.BINARY} (built {built})")
    rounds = []
    for i in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="tw-bench-job-page-") as tmp:
            r = one_round(pathlib.Path(tmp), args.nodes, args.loads)
            log(f"round {i + 1}/{args.rounds}: {json.dumps(r)}")
            rounds.append(r)
    print(f"\n{args.nodes * RANKS_PER_NODE:,} ranks on {args.nodes:,} nodes; {args.loads} loads each, "
          f"median of {len(rounds)} rounds (each round's)\n")
    print("| read | p50 | p99 | bytes | culprit in the first 4 KB | nginx, same bytes: p50 / p99 |")
    print("|---|---|---|---|---|---|")
    for kind, path in READS:
        label = f"GET {path}"
        def col(key, k=kind):
            values = [r[k][key] for r in rounds]
            return f"{statistics.median(values):.1f} ms ({', '.join(f'{v:.1f}' for v in values)})"
        print(f"| {label} | {col('p50')} | {col('p99')} | {rounds[-1][kind]['bytes']:,} | "
              f"{all(r[kind]['culprit_first'] for r in rounds) if kind in ('api', 'page') else '-'} | "
              f"{statistics.median(r[kind]['nginx_p50'] for r in rounds):.1f} / "
              f"{statistics.median(r[kind]['nginx_p99'] for r in rounds):.1f} ms |")
    print(json.dumps({"nodes": args.nodes, "rounds": rounds}))


if __name__ == "__main__":
    main()
