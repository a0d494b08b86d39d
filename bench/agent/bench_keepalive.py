#!/usr/bin/python3
"""What a node report costs the server on a fresh connection vs on a kept-alive one.

The agent used to open a connection per report; it now keeps one (net/http_connection.h:
at most 100 requests or 60 s, so 12 reports per connection at the default 5 s). This
sends the same 6 KB 8-rank node reports (bench/jobs/bench_scale.py's Job) to the real
`trainwatch serve` (SQLite, the job declared, the jobs token) and to nginx `return 200`
(the peer: this machine's ceiling for the same POSTs), with http.client, at a steady rate,
a fixed count per measurement, each report from its node's own loopback address:

  fresh     a new connection for each report (the agent before)
  kept-12   a new connection every 12 reports (the agent at report_every 5 s)
  kept-100  a new connection every 100 reports (the agent's request bound)

and reads the server's CPU (utime + stime from /proc/PID/stat; nginx: master and worker)
before and after each measurement. Each round also reads it over the same time with no
report sent ("idle": serve checks the job every second meanwhile); "net" is a mode's
figure less that round's idle one, the cost of the reports alone. Order: for each round, each mode, serve then nginx;
three rounds; medians with the spread (min-max).

Usage: /usr/bin/python3 bench/agent/bench_keepalive.py [--reports 3000] [--rate 500]
       [--rounds 3] [--bin PATH]
Loopback only; about 2.5 minutes with the defaults. Prints a markdown table, then one
JSON line.
"""
import argparse
import http.client
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "jobs"))
import bench_scale as scale  # noqa: E402  (Job, start_setup, TOKEN, JOB, node_addr)
import replicas  # noqa: E402  (on sys.path through bench_scale)
from benchkit import binary_to_run, logger  # noqa: E402

MODES = {"idle": 0, "fresh": 1, "kept-12": 12, "kept-100": 100}  # reports per connection
NODES = 512  # nodes taking turns; each has reported once before the first measurement
PATH = f"/api/v1/jobs/{scale.JOB}/report"
HEADERS = {"Content-Type": "application/json", "Authorization": f"Bearer {scale.TOKEN}"}

log = logger("bench_keepalive")


def send(setup, per_connection, count, rate, job):
    """POSTs `count` reports at `rate` a second, a new connection every `per_connection`;
    returns the server's CPU µs per report, failures, and how far behind schedule it ran."""
    if per_connection == 0:  # idle: the same time, nothing sent
        cpu0 = setup.cpu()["server"]
        time.sleep(count / rate)
        cpu = setup.cpu()["server"] - cpu0
        return {"us_per_report": round(cpu * 1e6 / count, 1), "failures": 0, "behind_s": 0.0,
                "wall_s": round(count / rate, 2)}
    host, port = setup.base.split("//")[1].rsplit(":", 1)
    bodies = [job.body(n, 1, job.t0 + 600.0) for n in range(NODES)]
    conn, used, failures, behind = None, 0, 0, 0.0
    cpu0 = setup.cpu()["server"]
    start = time.monotonic()
    for i in range(count):
        due = start + i / rate
        now = time.monotonic()
        if now < due:
            time.sleep(due - now)
        else:
            behind = max(behind, now - due)
        n = i % NODES
        if conn is None or used >= per_connection:
            if conn is not None:
                conn.close()
            conn = http.client.HTTPConnection(host, int(port), timeout=10,
                                              source_address=(scale.node_addr(n), 0))
            used = 0
        try:
            conn.request("POST", PATH, bodies[n], HEADERS)
            resp = conn.getresponse()
            resp.read()
            failures += resp.status != 200
            used += 1
            if resp.will_close:
                conn.close()
                conn = None
        except (OSError, http.client.HTTPException) as e:
            failures += 1
            log(f"{setup.name}: {e}")
            conn.close()
            conn = None
    if conn is not None:
        conn.close()
    wall = time.monotonic() - start
    cpu = setup.cpu()["server"] - cpu0
    return {"us_per_report": round(cpu * 1e6 / count, 1), "failures": failures,
            "behind_s": round(behind, 3), "wall_s": round(wall, 2)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reports", type=int, default=3000)
    ap.add_argument("--rate", type=float, default=500.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bin", default=None, help="the trainwatch binary (default: a copy of build's)")
    args = ap.parse_args()

    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-keepalive-"))
    args.bin, built = binary_to_run(args.bin, work)
    replicas.BINARY = args.bin
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          cwd=HERE).stdout.strip()
    log(f"work {work}; binary {args.bin} (built {built}); HEAD {head}; load {scale.load1()}")
    setups = []
    try:
        for name in ("sqlite", "nginx"):
            setups.append(scale.start_setup(name, work, name, None, args.bin))
        job = scale.Job(time.monotonic() - 600.0)
        for s in setups:  # every node reports once: what is measured is a report, not a new node
            send(s, 100, NODES, 2 * args.rate, job)
        runs = {(s.name, m): [] for s in setups for m in MODES}
        for r in range(args.rounds):
            for mode, per in MODES.items():
                for s in setups:
                    out = send(s, per, args.reports, args.rate, job)
                    runs[(s.name, mode)].append(out)
                    log(f"round {r + 1} {s.name:6} {mode:8} {out}")
    finally:
        for s in setups:
            s.stop()

    def med(name, mode):
        return statistics.median(x["us_per_report"] for x in runs[(name, mode)])

    def net(name, mode):  # per round, less that round's idle reading
        return statistics.median(x["us_per_report"] - i["us_per_report"]
                                 for x, i in zip(runs[(name, mode)], runs[(name, "idle")]))

    def spread(name, mode):
        xs = [x["us_per_report"] for x in runs[(name, mode)]]
        return f"{min(xs):.0f}–{max(xs):.0f}"

    print(f"\n{args.reports} reports of {len(scale.Job(0).body(0, 1, 0))} bytes per measurement at "
          f"{args.rate:.0f}/s, {args.rounds} rounds; HEAD {head}, binary built {built}, load {scale.load1()}\n")
    print("| connection | serve µs/report (median, min–max) | serve net of idle | nginx µs/report | "
          "nginx net | serve net vs nginx net | serve net vs fresh | failures | most behind schedule s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for mode in MODES:
        fails = sum(x["failures"] for s in setups for x in runs[(s.name, mode)])
        behind = max(x["behind_s"] for s in setups for x in runs[(s.name, mode)])
        row = f"| {mode} | {med('sqlite', mode):.0f} ({spread('sqlite', mode)}) | "
        if mode == "idle":
            print(row + f"– | {med('nginx', mode):.0f} ({spread('nginx', mode)}) | – | – | – | – | – |")
            continue
        ratio = net("sqlite", mode) / net("nginx", mode) if net("nginx", mode) > 0 else float("nan")
        print(row + f"{net('sqlite', mode):.0f} | {med('nginx', mode):.0f} ({spread('nginx', mode)}) | "
              f"{net('nginx', mode):.0f} | {ratio:.1f}x | {net('sqlite', mode) / net('sqlite', 'fresh'):.2f} | "
              f"{fails} | {behind} |")
    print(json.dumps({"head": head, "built": built, "reports": args.reports, "rate": args.rate,
                      "runs": {f"{k[0]}/{k[1]}": v for k, v in runs.items()}}))


if __name__ == "__main__":
    main()
