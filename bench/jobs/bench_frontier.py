#!/usr/bin/env python3
"""A 131,072-rank job on three replicas: 16,384 node agents, 8 ranks each, one report every 5 s.

    /usr/bin/python3 bench/jobs/bench_frontier.py [--rounds 3] [--quick] [--kill-owner] [--bin PATH]

The issue's full-size job (3,276.8 reports/s of ~6 KB) is sent by report_flood
(bench/jobs/report_flood.cc, built into build/bench/jobs/), open loop over kept-alive
connections: latency counts from the time a report was due. Set-ups, alternating in each
round (pg-x3, nginx, pg-x3, nginx, ...), each started fresh:
  pg-x3   three `trainwatch serve` replicas on one throwaway PostgreSQL 15 database behind
          HAProxy, round-robin for everything, each replica checked through /healthz
          (docs/operations.md); the job monitor `frontier` declared with world_size 131072.
  nginx   one nginx worker, `return 200`, taking the same flood: this machine's floor.

One run: --warmup s of reports (the first 5 s fill the job), then the measured window
(--seconds s). Over the window: reports/s answered 200, latency p99 from the due time,
CPU seconds (utime + stime, /proc) of each replica, of PostgreSQL (all its processes), of
HAProxy and of the generator; PostgreSQL's writes per report answered 200 (pg_stat_database
tup_inserted + tup_updated + tup_deleted, and pg_current_wal_lsn() bytes); each replica's
trainwatch_job_reports_applied_total from its own /metrics ("n/a" where a build has none);
and 20 loads each of GET /jobs/frontier and GET /api/v1/jobs/frontier through HAProxy,
spread over the window.

With --kill-owner (pg-x3 only), after the window: node 1234's local rank 5 (rank 9877) is
SIGKILLed (report_flood --kill-at); once the job's API names it, the replica that owns
the job's monitor (/healthz `owned`) is SIGKILLed under the same load, and the job's API
is read through HAProxy every 0.25 s: how long until it answers with the same culprit (the
first down finding's code and ranks) and the same findings as before the kill, whether
the monitor ever read `up` again (a false recovery), and how many incidents the monitor
opened from the rank kill on (more than one: a second incident).

Prints a markdown table, then one JSON line last. Everything runs on 127.0.0.0/8; every
loop is bounded in count and time; every process started is killed at the end.
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import bench_scale  # noqa: E402  (start_setup, Setup, pct, children, TOKEN, and its path set-up)
from bench_scale import PG_BIN, Postgres, replicas  # noqa: E402
from benchkit import binary_to_run, cpu_s, logger  # noqa: E402

JOB = "frontier"
RANKS_PER_NODE = 8
VICTIM_RANK = 1234 * RANKS_PER_NODE + 5  # 9877, report_flood's
APPLIED = "trainwatch_job_reports_applied_total"

log = logger("bench_frontier")


def get(base, path, timeout=10.0):
    """(status, body bytes, seconds); status 0 when there was no HTTP answer."""
    t = time.monotonic()
    try:
        with urllib.request.urlopen(base + path, timeout=timeout) as r:
            return r.status, r.read(), time.monotonic() - t
    except urllib.error.HTTPError as e:
        return e.code, e.read(), time.monotonic() - t
    except (urllib.error.URLError, OSError):
        return 0, b"", time.monotonic() - t


def job_view(base, timeout=5.0):
    """The job's status, cause, incident id and findings [(code, severity, ranks)] through
    GET /api/v1/jobs/frontier, or None when it did not answer 200 with JSON."""
    status, body, _ = get(base, f"/api/v1/jobs/{JOB}", timeout)
    if status != 200:
        return None
    try:
        j = json.loads(body)
    except ValueError:
        return None
    findings = [(f.get("code"), f.get("severity"), tuple(f.get("ranks", [])[:8])) for f in j.get("findings", [])]
    return {"status": j.get("status"), "cause": j.get("cause"), "incident": (j.get("incident") or {}).get("id"),
            "findings": findings, "ranks": j.get("rank_count"), "nodes_left_out": j.get("nodes_left_out")}


def culprit(view):
    """The first down finding's (code, ranks), or None."""
    return next(((c, r) for c, s, r in (view or {}).get("findings", []) if s == "down"), None)


def applied_count(base):
    """The sum of a replica's trainwatch_job_reports_applied_total samples, None when its
    /metrics has no such counter, "error" when /metrics did not answer."""
    status, body, _ = get(base, "/metrics", timeout=20)
    if status != 200:
        return "error"
    values = [float(line.rsplit(" ", 1)[1]) for line in body.decode(errors="replace").splitlines()
              if line.startswith(APPLIED) and not line.startswith("#")]
    return sum(values) if values else None


def pg_writes(pg, db):
    """(row changes, WAL bytes) of database `db` now."""
    out = pg.psql("SELECT (SELECT tup_inserted + tup_updated + tup_deleted FROM pg_stat_database "
                  "WHERE datname = current_database()), pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')", database=db)
    rows, wal = out.strip().split("|")
    return int(rows), int(float(wal))


class Marks:
    """CPU of each process group, and PostgreSQL's counters, at one instant."""

    def __init__(self, setup, pg, db):
        self.t = time.monotonic()
        self.replicas = [cpu_s(s.proc.pid) for s in setup.serves]
        c = setup.cpu()
        self.server, self.proxy, self.db = c["server"], c["proxy"], c["db"]
        self.pg = pg_writes(pg, db) if db else None


def page_loads(base, start, span, count):
    """`count` loads each of the job page and the job's API through `base`, spread evenly
    over [start, start + span); {path: [seconds or None]}."""
    out = {f"/jobs/{JOB}": [], f"/api/v1/jobs/{JOB}": []}
    for i in range(count):
        time.sleep(max(0.0, start + i * span / count - time.monotonic()))
        for path in out:
            status, _, secs = get(base, path, timeout=10)
            out[path].append(secs if status == 200 else None)
    return out


def p99_ms(values):
    """p99 in ms of a list of seconds where None (no 200) counts as infinitely slow."""
    if not values:
        return None
    ok = sorted(v for v in values if v is not None)
    k = max(0, -(-99 * len(values) // 100) - 1)
    return round(ok[k] * 1000, 1) if k < len(ok) else None


def flood_cmd(args, port, duration, kill_at=None):
    cmd = [args.flood, "--port", str(port), "--job", JOB, "--token", bench_scale.TOKEN, "--nodes", str(args.nodes),
           "--period", str(args.period), "--warmup", str(args.warmup), "--window", str(args.seconds),
           "--duration", str(duration),
           "--connections", str(args.connections), "--timeout", str(args.timeout), "--bind-sources"]
    if kill_at is not None:
        cmd += ["--kill-at", str(kill_at)]
    return cmd


def names_victim(v):
    c = culprit(v)
    return bool(c and VICTIM_RANK in c[1] and v["status"] == "down")


def kill_owner(setup, base, kill_at, t0, args):
    """After the rank kill at t0 + kill_at: wait until the API through HAProxy names it and
    every replica, asked directly, shows the monitor down with it (a replica that has not
    yet read the state change from the store would read as a false recovery otherwise),
    then SIGKILL the job monitor's owner and time the API's return to the same answer."""
    out = {}
    named = None
    killed_rank = t0 + kill_at
    deadline = killed_rank + args.name_timeout
    time.sleep(max(0.0, killed_rank - time.monotonic()))
    for _ in range(int(args.name_timeout / 0.25) + 2):
        if time.monotonic() > deadline:
            break
        v = job_view(base)
        if names_victim(v):
            named = v
            out["named_s"] = round(time.monotonic() - killed_rank, 2)
            break
        time.sleep(0.25)
    agreed = False
    for _ in range(int(args.name_timeout / 0.25) + 2):
        if named is None or time.monotonic() > deadline:
            break
        if all(names_victim(job_view(s.base)) for s in setup.serves):
            agreed = True
            out["all_replicas_s"] = round(time.monotonic() - killed_rank, 2)
            break
        time.sleep(0.25)
    out["before"] = named
    out["replicas_agreed"] = agreed
    # Under overload the replicas' leases lapse and ownership moves: wait (bounded) for one owner.
    owners = []
    for _ in range(40):
        owners = [((s.health() or {}).get("replicas") or {}).get("owned") for s in setup.serves]
        if owners.count(1) == 1:
            break
        time.sleep(0.25)
    if owners.count(1) != 1:
        out["error"] = f"no single owner of the job's monitor within 10 s: {owners}"
        return out
    victim = owners.index(1)
    out["owner"] = f"r{victim}"
    setup.serves[victim].proc.kill()
    killed = time.monotonic()
    survivors = [s for i, s in enumerate(setup.serves) if i != victim]
    want = culprit(named) if named else None
    first_200 = same_culprit = same_findings = new_owner = None
    statuses = []
    errors = 0
    end = killed + args.recover_timeout
    for _ in range(int(args.recover_timeout / 0.25) + 2):
        if time.monotonic() > end:
            break
        v = job_view(base)
        at = round(time.monotonic() - killed, 2)
        if v is None:
            errors += 1
        else:
            statuses.append((at, v["status"]))
            first_200 = first_200 if first_200 is not None else at
            if want and same_culprit is None and culprit(v) == want and v["status"] == "down":
                same_culprit = at
            if named and same_findings is None and v["findings"] == named["findings"] and v["status"] == "down":
                same_findings = at
        if new_owner is None and sum(((s.health() or {}).get("replicas") or {}).get("owned") or 0
                                     for s in survivors) == 1:
            new_owner = round(time.monotonic() - killed, 2)
        time.sleep(0.25)
    out.update(first_200_s=first_200, same_culprit_s=same_culprit, same_findings_s=same_findings, new_owner_s=new_owner,
               poll_errors=errors, polls=len(statuses) + errors,
               false_up=[s for s in statuses if s[1] == "up"][:3],
               after=job_view(base))
    # Incidents of the monitor from the rank kill on (the list is newest first).
    status, body, _ = get(base, f"/api/v1/incidents?monitor={JOB}&limit=20")
    if status == 200:
        items = json.loads(body)
        items = items.get("incidents", items.get("items", [])) if isinstance(items, dict) else items
        out["incidents"] = [(i.get("id"), i.get("cause"), i.get("ended")) for i in items]
    else:
        out["incidents"] = f"HTTP {status}"
    return out


def run_one(name, args, work, tag, pg):
    # Every replica's clients all come from HAProxy's one address: with the default bound of
    # 256 connections per address, a flood over 256 connections fills it and HAProxy's own
    # /healthz check is refused, taking the replica out (seen in the first full run).
    setup = bench_scale.start_setup("pg-x3-rr" if name == "pg-x3" else "nginx", work, tag, pg, args.bin, job=JOB,
                                    world=args.nodes * RANKS_PER_NODE, checks=True,
                                    server={"max_connections_per_address": args.per_address})
    try:
        return measure(name, setup, args, work, tag, pg)
    finally:
        setup.stop()
        if name == "pg-x3":
            for i, srv in enumerate(setup.serves):
                c, first = replicas.odd_log_lines(srv.log_path, limit=2)
                if c:
                    log(f"  r{i}: {c} log lines with error/warn/fail; first: {first}")


def measure(name, setup, args, work, tag, pg):
    is_tw = name == "pg-x3"
    port = int(setup.base.rsplit(":", 1)[1])
    win_start, win_end = args.warmup, args.warmup + args.seconds
    kill_at = win_end + 1.0 if is_tw and args.kill_owner else None
    duration = win_end + (1.0 + args.name_timeout + args.recover_timeout + 2.0 if kill_at else 0.0)
    db = tag.replace("-", "_") if is_tw else None
    flood_log = open(work / f"flood-{tag}.log", "wb")
    proc = subprocess.Popen(flood_cmd(args, port, duration, kill_at), stdout=subprocess.PIPE, stderr=flood_log)
    t0 = time.monotonic() + 0.2  # report_flood's own start
    res = {"setup": name, "note": setup.note}
    try:
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=4)
        time.sleep(max(0.0, t0 + win_start - 1.0 - time.monotonic()))
        applied0 = list(pool.map(applied_count, [s.base for s in setup.serves])) if is_tw else []
        time.sleep(max(0.0, t0 + win_start - time.monotonic()))
        m0 = Marks(setup, pg, db)
        loads = pool.submit(page_loads, setup.base, t0 + win_start + 0.5, args.seconds - 1.0, args.loads)
        time.sleep(max(0.0, t0 + win_end - time.monotonic()))
        m1 = Marks(setup, pg, db)
        applied1 = list(pool.map(applied_count, [s.base for s in setup.serves])) if is_tw else []
        lo = loads.result(timeout=60)
        if kill_at is not None:
            res["kill_owner"] = kill_owner(setup, setup.base, kill_at, t0, args)
        stdout, _ = proc.communicate(timeout=duration + args.timeout + 30)
        pool.shutdown()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        flood_log.close()
    lines = stdout.decode().strip().splitlines()
    if not lines:
        raise RuntimeError(f"report_flood printed nothing: {(work / f'flood-{tag}.log').read_text()[-800:]}")
    flood = json.loads(lines[-1])
    span = m1.t - m0.t
    ok = flood["achieved_rps"] * args.seconds  # reports answered 200 within the window
    res.update(
        flood=flood, window_s=round(span, 2), achieved_rps=flood["achieved_rps"], offered_rps=flood["offered_rps"],
        p99_ms=flood["latency_ms"]["p99"], p50_ms=flood["latency_ms"]["p50"], answered=flood["window"],
        gen_cpu_s=flood["cpu_window_s"], server_cpu_s=round(m1.server - m0.server, 2),
        replica_cpu_s=[round(b - a, 2) for a, b in zip(m0.replicas, m1.replicas)],
        db_cpu_s=round(m1.db - m0.db, 2), proxy_cpu_s=round(m1.proxy - m0.proxy, 2),
        page_p99_ms=p99_ms(lo[f"/jobs/{JOB}"]), api_p99_ms=p99_ms(lo[f"/api/v1/jobs/{JOB}"]),
        page_failed=lo[f"/jobs/{JOB}"].count(None), api_failed=lo[f"/api/v1/jobs/{JOB}"].count(None))
    res["server_cores"] = round(res["server_cpu_s"] / span, 3)
    res["server_us_per_report"] = round(res["server_cpu_s"] / ok * 1e6, 1) if ok else None
    if is_tw:
        rows = m1.pg[0] - m0.pg[0]
        wal = m1.pg[1] - m0.pg[1]
        res["pg_rows_per_report"] = round(rows / ok, 2) if ok else None
        res["pg_wal_bytes_per_report"] = round(wal / ok) if ok else None
        res["applied"] = [None if a is None or b is None else ("error" if "error" in (a, b) else b - a)
                          for a, b in zip(applied0, applied1)]
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=float, default=15.0, help="seconds of reports before the window")
    ap.add_argument("--seconds", type=float, default=30.0, help="the measured window")
    ap.add_argument("--nodes", type=int, default=16384)
    ap.add_argument("--period", type=float, default=5.0)
    ap.add_argument("--connections", type=int, default=256, help="report_flood's kept-alive connections")
    ap.add_argument("--timeout", type=float, default=10.0, help="s a report waits for its answer")
    ap.add_argument("--per-address", type=int, default=4096,
                    help="each replica's server.max_connections_per_address (HAProxy is one address)")
    ap.add_argument("--loads", type=int, default=20, help="loads of each job read during the window")
    ap.add_argument("--kill-owner", action="store_true", help="after the window: rank kill, then owner kill")
    ap.add_argument("--name-timeout", type=float, default=20.0, help="s from the rank kill to give up naming it")
    ap.add_argument("--recover-timeout", type=float, default=30.0, help="s from the owner kill, watched")
    ap.add_argument("--bin", default=None, help="the trainwatch binary (default: a copy of build's, taken at start)")
    ap.add_argument("--flood", default=str(ROOT / "build" / "bench" / "jobs" / "report_flood"))
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 round, 2,048 nodes, 8 s + 10 s")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.nodes, args.warmup, args.seconds, args.loads = 1, 2048, 8.0, 10.0, 5
        args.name_timeout, args.recover_timeout = 10.0, 15.0
    if not pathlib.Path(args.flood).exists():
        ap.error(f"{args.flood} is missing: build it (ninja -C build report_flood)")
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(1))

    head = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h %s"], capture_output=True,
                          text=True).stdout.strip()[:90]
    work = pathlib.Path(tempfile.mkdtemp(prefix="tw-bench-frontier-"))
    args.bin, built = binary_to_run(args.bin, work)
    replicas.BINARY = args.bin
    load_before = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    log(f"work dir {work}; binary {args.bin} (built {built}); HEAD {head}; load {load_before}")
    runs = {"pg-x3": [], "nginx": []}
    pg = None
    try:
        if not (PG_BIN / "initdb").exists():
            raise RuntimeError("PostgreSQL 15 is not installed; scripts/setup.sh installs it")
        pg = Postgres()
        for rnd in range(args.rounds):
            for name in runs:
                tag = f"{name}-{rnd}"
                r = run_one(name, args, work, tag, pg)
                r["load"] = round(os.getloadavg()[0], 2)
                runs[name].append(r)
                log(f"round {rnd + 1}/{args.rounds} {name}: {r['achieved_rps']}/s of {r['offered_rps']}, "
                    f"p99 {r['p99_ms']} ms, answered {r['answered']}, server {r['server_cpu_s']} s "
                    f"{r['replica_cpu_s']}, db {r['db_cpu_s']} s, haproxy {r['proxy_cpu_s']} s, "
                    f"gen {r['gen_cpu_s']} s, page p99 {r['page_p99_ms']} ms, api p99 {r['api_p99_ms']} ms, "
                    f"pg rows {r.get('pg_rows_per_report')}/report, wal {r.get('pg_wal_bytes_per_report')} B/report, "
                    f"applied {r.get('applied')}, load {r['load']}")
                if "kill_owner" in r:
                    log(f"  kill-owner: {json.dumps(r['kill_owner'], default=str)[:1500]}")
    finally:
        if pg is not None:
            pg.discard()
        if os.environ.get("KEEP_WORK"):
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    def med(name, key, fn=None):
        vals = [(fn(r) if fn else r.get(key)) for r in runs[name]]
        vals = [v for v in vals if isinstance(v, (int, float))]
        return statistics.median(vals) if vals else None

    def cell(name, key, fn=None, fmt="{:,.1f}"):
        vals = [(fn(r) if fn else r.get(key)) for r in runs[name]]
        each = ", ".join("–" if not isinstance(v, (int, float)) else fmt.format(v) for v in vals)
        m = med(name, key, fn)
        return ("–" if m is None else fmt.format(m)) + (f" ({each})" if len(vals) > 1 else "")

    def ratio(key, fn=None):
        a, b = med("pg-x3", key, fn), med("nginx", key, fn)
        return f"{a / b:,.1f}×" if a is not None and b else "–"

    print(f"\n131,072-rank job: {args.nodes} nodes x {RANKS_PER_NODE} ranks, a report every {args.period:g} s "
          f"({args.nodes / args.period:,.1f}/s), {args.rounds} rounds x ({args.warmup:g} s warm-up + "
          f"{args.seconds:g} s "
          f"window), {args.connections} connections, report timeout {args.timeout:g} s; {os.cpu_count()} CPUs, load "
          f"{load_before[0]:.2f} -> {os.getloadavg()[0]:.2f}; binary {args.bin} built {built}; HEAD {head}\n")
    print("Medians of the rounds (each round's in brackets). Latency counts from the time a report was due; "
          "a report never answered counts as infinitely late (–).\n")
    rows = [
        ("reports/s answered 200", "achieved_rps", None, "{:,.0f}"),
        ("answered 200, % of due", None,
         lambda r: 100.0 * r["answered"]["200"] / max(1, r["answered"]["due"]), "{:.1f}"),
        ("5xx, % of due", None,
         lambda r: 100.0 * r["answered"]["5xx"] / max(1, r["answered"]["due"]), "{:.1f}"),
        ("p50 ms", "p50_ms", None, "{:,.1f}"),
        ("p99 ms", "p99_ms", None, "{:,.1f}"),
        ("server CPU s (all replicas)", "server_cpu_s", None, "{:.1f}"),
        ("server µs per report 200", "server_us_per_report", None, "{:,.0f}"),
        ("PostgreSQL CPU s", "db_cpu_s", None, "{:.1f}"),
        ("HAProxy CPU s", "proxy_cpu_s", None, "{:.1f}"),
        ("generator CPU s", "gen_cpu_s", None, "{:.2f}"),
        ("GET /jobs/frontier p99 ms", "page_p99_ms", None, "{:,.1f}"),
        ("GET /api/v1/jobs/frontier p99 ms", "api_p99_ms", None, "{:,.1f}"),
    ]
    print("| measure | pg-x3 | nginx | ratio |")
    print("|---|---|---|---|")
    for label, key, fn, fmt in rows:
        print(f"| {label} | {cell('pg-x3', key, fn, fmt)} | {cell('nginx', key, fn, fmt)} | {ratio(key, fn)} |")
    tw = runs["pg-x3"]
    for i in range(3):
        print(f"| replica r{i} CPU s | {cell('pg-x3', None, lambda r, i=i: r['replica_cpu_s'][i], '{:.1f}')} | | |")
    print(f"| 5xx that were the server's own (problem+json), whole run | "
          f"{', '.join(str(r['flood']['server_5xx']) + ' of ' + str(r['flood']['all']['5xx']) for r in tw)} | | |")
    print(f"| PostgreSQL rows written per report | {cell('pg-x3', 'pg_rows_per_report', None, '{:.2f}')} | | |")
    print(f"| PostgreSQL WAL bytes per report | {cell('pg-x3', 'pg_wal_bytes_per_report', None, '{:,.0f}')} | | |")
    applied = ["; ".join("n/a" if a is None else str(a) for a in r.get("applied", [])) for r in tw]
    print(f"| {APPLIED} per replica (window) | {' / '.join(applied)} | | |")
    if any("kill_owner" in r for r in tw):
        ko = [r.get("kill_owner", {}) for r in tw]
        for label, key in (("rank 9877 named after its kill (through HAProxy), s", "named_s"),
                           ("… and by all three replicas, s", "all_replicas_s"),
                           ("owner SIGKILL → a survivor owns the monitor, s", "new_owner_s"),
                           ("owner SIGKILL → API answers 200, s", "first_200_s"),
                           ("owner SIGKILL → same culprit, s", "same_culprit_s"),
                           ("owner SIGKILL → same findings, s", "same_findings_s")):
            vals = [k.get(key) for k in ko]
            print(f"| {label} | {', '.join('never' if v is None else str(v) for v in vals)} | | |")
        print(f"| monitor read `up` after the owner kill (false recovery) | "
              f"{', '.join(str(len(k.get('false_up', []))) for k in ko)} | | |")
        print(f"| reports due after the window, by answer | "
              f"{'; '.join(str({k: v for k, v in r['flood']['after'].items() if v}) for r in tw)} | | |")
        print(f"| incidents of the monitor (the run's all) | "
              f"{', '.join(str(len(k['incidents'])) if isinstance(k.get('incidents'), list) else '?' for k in ko)}"
              " | | |")
    print()
    print(json.dumps({"bench": "jobs_frontier", "started": started, "nodes": args.nodes, "period_s": args.period,
                      "rounds": args.rounds, "warmup_s": args.warmup, "window_s": args.seconds,
                      "connections": args.connections, "binary": args.bin, "binary_built": built, "head": head,
                      "load_before": [round(x, 2) for x in load_before],
                      "load_after": [round(x, 2) for x in os.getloadavg()], "runs": runs}, default=str))


if __name__ == "__main__":
    main()
