#!/usr/bin/python3
"""10,000 monitors at 10 s spread over three replicas on one PostgreSQL: worst start delay
of a check, beside the same 10,000 monitors on one serve on SQLite in the same run.

Each run starts, one after the other (the order alternates between runs):
  pg-x3   three `trainwatch serve` replicas, one config file, a fresh database on one
          throwaway PostgreSQL 15 (tests/integration/conftest.py's, its defaults);
  sqlite  one `trainwatch serve` on SQLite (the reference).
Both check 10,000 HTTP monitors (interval 10 s, timeout 5 s, 1,000 checks/s in all)
against one local nginx (`return 200`) whose access log ($msec $uri) records every check
start; each monitor has its own path, so the log says when each monitor was checked.

Measured per set-up, after the replicas agree and own all 10,000 and a warm-up
(--warmup, default 30 s), over a window (--seconds, default 80 s):
  - trainwatch_check_max_start_delay_seconds of each serve (/metrics). It is the worst
    since the process started, so it is read at the end of the warm-up and at the end of
    the window: a larger second reading means a worse start inside the window.
  - owned per replica (/healthz) and checks run per replica in the window (/metrics).
  - from the nginx log, in the window: checks seen, monitors checked, the longest gap
    between two checks of one monitor, the most check starts in any 1 s (1,000 when
    evenly spread), and, per replica, the circular arc of the 10 s cycle that holds the
    start phases of all the monitors it owns (10 s when spread, about the burst's length
    when they all fall due together).
  - CPU of trainwatch and of PostgreSQL, and the load average before and after.
In the last run (or --takeover-runs N), after the pg-x3 window, one replica is SIGKILLed
and the two left are watched for --takeover-seconds (35): when each orphan was checked
again, the survivors' worst start delay before and after, and the arcs of what they own.

Usage: /usr/bin/python3 bench/engine/bench_spread.py [--runs 3] [--quick] [--binary PATH]
Prints a markdown table, then one JSON line last. Everything binds 127.0.0.1; every
process started is killed on exit.
"""
import argparse
import json
import os
import pathlib
import re
import selectors
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
from conftest import PG_BIN, Postgres, wait_for  # noqa: E402
from rendezvous import owners  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from benchkit import binary_to_run, cpu_s, free_port, load_avg, logger, postgres_cpu_s  # noqa: E402

MONITORS = 10_000
INTERVAL_S = 10.0
REPLICAS = 3


log = logger("bench_spread.py")


def get(url, timeout=30):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def metric(text, name):
    return sum(float(m.group(1)) for m in re.finditer(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M))


def start_nginx(work):
    port = free_port()
    conf = work / "nginx.conf"
    conf.write_text(f"""daemon off; master_process off; worker_processes 1; pid {work}/nginx.pid;
error_log {work}/nginx-error.log warn;
worker_rlimit_nofile 65536;
events {{ worker_connections 16384; }}
http {{
  log_format starts '$msec $uri';
  access_log {work}/access.log starts buffer=256k flush=1s;
  client_body_temp_path {work}/cb; proxy_temp_path {work}/pt;
  fastcgi_temp_path {work}/ft; uwsgi_temp_path {work}/ut; scgi_temp_path {work}/st;
  server {{ listen 127.0.0.1:{port} backlog=4096; location / {{ return 200 "ok\\n"; }} }}
}}
""")
    proc = subprocess.Popen(["nginx", "-p", str(work), "-c", str(conf)], stderr=open(work / "nginx.out", "wb"))
    for _ in range(100):
        try:
            get(f"http://127.0.0.1:{port}/probe", timeout=1)
            return proc, port
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"nginx exited: {(work / 'nginx.out').read_text()}")
            time.sleep(0.1)
    raise RuntimeError("nginx did not start")


class Serve:
    def __init__(self, binary, config, data_dir, log_path, env):
        self.log_path = log_path
        log_file = open(log_path, "ab")
        self.proc = subprocess.Popen([binary, "serve", "-c", str(config), "--listen", "127.0.0.1:0",
                                      "--data-dir", str(data_dir)], stdout=subprocess.PIPE, stderr=log_file, env=env)
        log_file.close()
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + 120
        line = ""
        while time.monotonic() < deadline:
            if sel.select(timeout=0.5):
                line = self.proc.stdout.readline().decode()
                break
            if self.proc.poll() is not None:
                break
        sel.close()
        if "serving" not in line:
            self.kill()
            raise RuntimeError(f"trainwatch did not start: {line!r}; {log_path.read_bytes()[-1500:]!r}")
        self.base = line.strip().split(" on ")[1].rstrip("/")
        proc = self.proc
        threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()

    def health(self):
        try:
            return json.loads(get(self.base + "/healthz", timeout=5))
        except (urllib.error.URLError, OSError, ValueError):
            return None

    def snapshot(self):
        text = get(self.base + "/metrics", timeout=60)
        h = self.health() or {}
        return {"max_start_delay_s": metric(text, "trainwatch_check_max_start_delay_seconds"),
                "checks": metric(text, "trainwatch_checks_total"),
                "failed": sum(float(x) for x in re.findall(r'result="failure"} (\S+)', text)),
                "dropped_writes": metric(text, "trainwatch_store_dropped_writes_total"),
                "waiting": metric(text, "trainwatch_checks_waiting"),
                "owned": (h.get("replicas") or {}).get("owned", h.get("monitors")),
                "self": (h.get("replicas") or {}).get("self"),
                "cpu_s": cpu_s(self.proc.pid), "wall": time.time()}

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def write_config(path, prefix, nginx_port, store_url_env):
    lines = []
    if store_url_env:
        lines += ["store:", f"  url: ${{{store_url_env}}}"]
    lines.append("monitors:")
    for i in range(MONITORS):
        lines += [f"  - name: m{i}", "    type: http", f"    url: http://127.0.0.1:{nginx_port}/{prefix}{i}",
                  "    interval: 10s", "    timeout: 5s"]
    path.write_text("\n".join(lines) + "\n")


def read_log(path, prefix, start, end):
    """{monitor index: [start times]} of the log lines for `prefix` in [start, end)."""
    out = {}
    rx = re.compile(rf"^(\d+\.\d+) /{prefix}(\d+)$")
    with open(path) as f:
        for line in f:
            m = rx.match(line)
            if m:
                t = float(m.group(1))
                if start <= t < end:
                    out.setdefault(int(m.group(2)), []).append(t)
    return out


def phase_arc(phases):
    """(length, start) of the shortest arc of the INTERVAL_S circle holding every phase."""
    if len(phases) < 2:
        return 0.0, phases[0] if phases else 0.0
    p = sorted(phases)
    gaps = [(b - a, b) for a, b in zip(p, p[1:])] + [(p[0] + INTERVAL_S - p[-1], p[0])]
    widest, start = max(gaps)
    return round(INTERVAL_S - widest, 3), start


def log_figures(checks, owner_of_index=None):
    """What the nginx log says about one window: counts, gaps, peak second, phase arcs."""
    times = sorted(t for ts in checks.values() for t in ts)
    if not times:
        return {"checks_seen": 0}
    per_second = {}
    for t in times:
        per_second[int(t)] = per_second.get(int(t), 0) + 1
    whole = [v for k, v in per_second.items() if int(times[0]) < k < int(times[-1])]
    gaps = [b - a for ts in checks.values() for a, b in zip(sorted(ts), sorted(ts)[1:])]
    out = {"checks_seen": len(times), "monitors_seen": len(checks),
           "max_gap_s": round(max(gaps), 3) if gaps else None,
           "gaps_over_11s": sum(1 for g in gaps if g > INTERVAL_S + 1),
           "peak_checks_in_1s": max(whole) if whole else None,
           "median_checks_per_s": statistics.median(whole) if whole else None}
    if owner_of_index is not None:
        groups, members = {}, {}
        for i, ts in checks.items():
            members.setdefault(owner_of_index(i), []).append(i)
            # The monitor's phase in the cycle: its median start, modulo the interval (taken
            # around its first start, so a phase near 0 / 10 s does not split).
            deltas = [((t - ts[0]) + INTERVAL_S / 2) % INTERVAL_S - INTERVAL_S / 2 for t in ts]
            groups.setdefault(owner_of_index(i), []).append((ts[0] + statistics.median(deltas)) % INTERVAL_S)
        out["phase_arc_s"], out["burst_lateness_s"] = {}, {}
        for g in sorted(groups, key=str):
            arc, start = phase_arc(groups[g])
            out["phase_arc_s"][g] = arc
            if arc < INTERVAL_S / 2:
                # All of g fall due together (one burst a cycle): how long after the burst's
                # first start each check started. The first starts about on time, so this is
                # each check's start delay in the window, less the first one's.
                late = sorted(((t - start + 1.0) % INTERVAL_S) - 1.0 for i in members[g] for t in checks[i])
                out["burst_lateness_s"][g] = {"p50": round(late[len(late) // 2], 3),
                                              "p99": round(late[int(0.99 * (len(late) - 1))], 3),
                                              "max": round(late[-1], 3)}
    return out


def run_pg_x3(args, binary, work, pg, nginx_port, run, takeover):
    db = f"spread{run}"
    pg.psql(f"CREATE DATABASE {db}", database="postgres")
    url = pg.url().replace("/trainwatch?", f"/{db}?")
    config = work / f"pg-{run}.yaml"
    write_config(config, "p", nginx_port, "TRAINWATCH_STORE_URL")
    env = dict(os.environ, TRAINWATCH_STORE_URL=url)
    postmaster = int((pg.dir / "data" / "postmaster.pid").read_text().split()[0])
    names = [f"m{i}" for i in range(MONITORS)]
    replicas = []
    out = {"setup": "pg-x3", "run": run}
    try:
        t0 = time.monotonic()
        for i in range(REPLICAS):
            replicas.append(Serve(binary, config, work / f"data-pg{run}-{i}", work / f"pg{run}-{i}.log", env))
        views = wait_for(lambda: (v := [r.health() for r in replicas]) and all(
            x and len(x["replicas"]["members"]) == REPLICAS for x in v)
            and sum(x["replicas"]["owned"] for x in v) == MONITORS and v,
            timeout=180, interval=0.5, what="three replicas owning all 10,000")
        out["ready_s"] = round(time.monotonic() - t0, 1)
        members = views[0]["replicas"]["members"]
        own = owners(names, members)
        ids = [v["replicas"]["self"] for v in views]
        log(f"pg-x3 run {run}: ready in {out['ready_s']} s, owned {[v['replicas']['owned'] for v in views]}; "
            f"warm-up {args.warmup} s")
        time.sleep(args.warmup)
        out["load_before"] = load_avg()
        s0 = [r.snapshot() for r in replicas]
        d0 = postgres_cpu_s(postmaster)
        time.sleep(args.seconds)
        s1 = [r.snapshot() for r in replicas]
        d1 = postgres_cpu_s(postmaster)
        out["load_after"] = load_avg()
        checks = read_log(work / "access.log", "p", s0[0]["wall"], s1[0]["wall"]) if wait_flush() else {}
        out["log"] = log_figures(checks, lambda i: f"r{ids.index(own[f'm{i}'])}")
        out["replicas"] = [{"owned": b["owned"], "max_start_delay_s_warmup": round(a["max_start_delay_s"], 3),
                            "max_start_delay_s_end": round(b["max_start_delay_s"], 3),
                            "checks": int(b["checks"] - a["checks"]), "failed": int(b["failed"] - a["failed"]),
                            "dropped_writes": int(b["dropped_writes"]), "cpu_s": round(b["cpu_s"] - a["cpu_s"], 2)}
                           for a, b in zip(s0, s1)]
        out["worst_start_delay_s"] = max(r["max_start_delay_s_end"] for r in out["replicas"])
        out["worst_start_delay_s_at_warmup_end"] = max(r["max_start_delay_s_warmup"] for r in out["replicas"])
        total = sum(r["checks"] for r in out["replicas"])
        out["checks"] = total
        out["cpu_s"] = round(sum(r["cpu_s"] for r in out["replicas"]), 2)
        out["database_cpu_s"] = round(d1 - d0, 2)
        out["checks_per_cpu_s"] = round(total / out["cpu_s"]) if out["cpu_s"] else None
        log(f"pg-x3 run {run}: worst start delay {out['worst_start_delay_s']} s "
            f"(at warm-up end {out['worst_start_delay_s_at_warmup_end']}); per replica "
            f"{[r['max_start_delay_s_end'] for r in out['replicas']]}; arcs {out['log'].get('phase_arc_s')}; "
            f"burst lateness {out['log'].get('burst_lateness_s')}; "
            f"peak/s {out['log'].get('peak_checks_in_1s')}; load {out['load_after']}")
        if takeover:
            out["takeover"] = kill_one(args, replicas, ids, names, work)
    finally:
        for r in replicas:
            r.kill()
    return out


def wait_flush():
    time.sleep(1.5)  # nginx writes its log buffer at least every second
    return True


def kill_one(args, replicas, ids, names, work):
    """SIGKILL the replica that owns the most, watch the two left for a while."""
    victim = max(range(REPLICAS), key=lambda i: replicas[i].snapshot()["owned"])
    survivors = [i for i in range(REPLICAS) if i != victim]
    before = {i: replicas[i].snapshot() for i in survivors}
    orphans = {int(n[1:]) for n, o in owners(names, ids).items() if o == ids[victim]}
    killed_wall = time.time()
    replicas[victim].kill()
    log(f"takeover: SIGKILL replica {victim} ({len(orphans)} monitors); watching {args.takeover_seconds} s")
    readings = []
    for at in sorted({min(12.0, args.takeover_seconds), min(20.0, args.takeover_seconds), args.takeover_seconds}):
        time.sleep(max(0.0, killed_wall + at - time.time()))
        readings.append({"after_s": round(time.time() - killed_wall, 1),
                         "max_start_delay_s": {f"r{i}": round(replicas[i].snapshot()["max_start_delay_s"], 3)
                                               for i in survivors}})
    end_wall = time.time()
    wait_flush()
    checks = read_log(work / "access.log", "p", killed_wall, end_wall)
    firsts = sorted(min(checks[i]) - killed_wall for i in orphans if i in checks)
    # After the takeover settles (the orphans' first checks), what each survivor owns and its phases.
    later = read_log(work / "access.log", "p", killed_wall + 15, end_wall)
    new_ids = [s for s in (replicas[i].snapshot()["self"] for i in survivors)]
    own2 = owners(names, new_ids)
    out = {"victim": victim, "orphans": len(orphans), "orphans_checked_again": len(firsts),
           "first_check_after_kill_s": {"min": round(firsts[0], 2), "median": round(statistics.median(firsts), 2),
                                        "max": round(firsts[-1], 2)} if firsts else None,
           "orphan_first_checks_spread_s": round(firsts[-1] - firsts[0], 2) if firsts else None,
           "max_start_delay_s_before": {f"r{i}": round(before[i]["max_start_delay_s"], 3) for i in survivors},
           "readings": readings,
           "log_after_15s": log_figures(later, lambda i: f"r{survivors[new_ids.index(own2[f'm{i}'])]}"
                                        + ("-orphan" if i in orphans else ""))}
    log(f"takeover: orphans checked again {out['first_check_after_kill_s']}; survivors' worst delay "
        f"{out['max_start_delay_s_before']} -> {readings[-1]['max_start_delay_s']}; "
        f"arcs {out['log_after_15s'].get('phase_arc_s')}; burst lateness {out['log_after_15s'].get('burst_lateness_s')}")
    return out


def run_sqlite(args, binary, work, nginx_port, run):
    config = work / f"sqlite-{run}.yaml"
    write_config(config, "s", nginx_port, None)
    out = {"setup": "sqlite", "run": run}
    s = Serve(binary, config, work / f"data-sqlite{run}", work / f"sqlite{run}.log", dict(os.environ))
    try:
        log(f"sqlite run {run}: warm-up {args.warmup} s")
        time.sleep(args.warmup)
        out["load_before"] = load_avg()
        a = s.snapshot()
        time.sleep(args.seconds)
        b = s.snapshot()
        out["load_after"] = load_avg()
        checks = read_log(work / "access.log", "s", a["wall"], b["wall"]) if wait_flush() else {}
        out["log"] = log_figures(checks, lambda i: "sqlite")
        out.update(worst_start_delay_s=round(b["max_start_delay_s"], 3),
                   worst_start_delay_s_at_warmup_end=round(a["max_start_delay_s"], 3),
                   checks=int(b["checks"] - a["checks"]), failed=int(b["failed"] - a["failed"]),
                   dropped_writes=int(b["dropped_writes"]), cpu_s=round(b["cpu_s"] - a["cpu_s"], 2))
        out["checks_per_cpu_s"] = round(out["checks"] / out["cpu_s"]) if out["cpu_s"] else None
        log(f"sqlite run {run}: worst start delay {out['worst_start_delay_s']} s "
            f"(at warm-up end {out['worst_start_delay_s_at_warmup_end']}); peak/s "
            f"{out['log'].get('peak_checks_in_1s')}; load {out['load_after']}")
    finally:
        s.kill()
    return out


def spread(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {"median": round(statistics.median(xs), 3), "min": round(min(xs), 3), "max": round(max(xs), 3),
            "runs": [round(x, 3) for x in xs]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--warmup", type=float, default=30.0)
    ap.add_argument("--seconds", type=float, default=80.0)
    ap.add_argument("--takeover-runs", type=int, default=1, help="the last N runs end with one SIGKILL")
    ap.add_argument("--takeover-seconds", type=float, default=35.0)
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 run, 20 s warm-up, 30 s window")
    ap.add_argument("--binary", default=None)
    args = ap.parse_args()
    if args.quick:
        args.runs, args.warmup, args.seconds, args.takeover_seconds = 1, 20.0, 30.0, 30.0

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(1))

    work = pathlib.Path(tempfile.mkdtemp(prefix="tw-bench-spread-"))
    binary, binary_built = binary_to_run(args.binary, work)
    started = time.monotonic()
    load_start = load_avg()
    results = []
    pg = nginx = None
    try:
        log(f"work {work}; binary {binary} (built {binary_built}); load {load_start}")
        if not (PG_BIN / "initdb").exists():
            raise RuntimeError("PostgreSQL 15 is not installed; scripts/setup.sh installs it")
        pg = Postgres()
        nginx, port = start_nginx(work)
        for run in range(1, args.runs + 1):
            takeover = run > args.runs - args.takeover_runs
            order = ["pg-x3", "sqlite"] if run % 2 else ["sqlite", "pg-x3"]
            for setup in order:
                if setup == "pg-x3":
                    results.append(run_pg_x3(args, binary, work, pg, port, run, takeover))
                else:
                    results.append(run_sqlite(args, binary, work, port, run))
    finally:
        if nginx is not None and nginx.poll() is None:
            nginx.terminate()
            try:
                nginx.wait(10)
            except subprocess.TimeoutExpired:
                nginx.kill()
                nginx.wait()
        if pg is not None:
            pg.discard()
        errors = []
        for p in sorted(work.glob("*.log")):
            if p.name == "access.log":
                continue
            errors += [f"{p.name}: {l}" for l in p.read_text(errors="replace").splitlines()
                       if "[error]" in l or "[critical]" in l]
        if os.environ.get("KEEP_WORK"):
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    pgx = [r for r in results if r["setup"] == "pg-x3"]
    sql = [r for r in results if r["setup"] == "sqlite"]
    ratios = [p["worst_start_delay_s"] / s["worst_start_delay_s"] for p in pgx for s in sql
              if p["run"] == s["run"] and s["worst_start_delay_s"] > 0]
    summary = {
        "bench": "engine_spread", "monitors": MONITORS, "interval_s": INTERVAL_S, "runs": args.runs,
        "warmup_s": args.warmup, "window_s": args.seconds, "binary_built": binary_built, "nproc": os.cpu_count(),
        "load_start": load_start, "load_end": load_avg(), "wall_s": round(time.monotonic() - started, 1),
        "pg_x3_worst_start_delay_s": spread([r["worst_start_delay_s"] for r in pgx]),
        "pg_x3_worst_at_warmup_end_s": spread([r["worst_start_delay_s_at_warmup_end"] for r in pgx]),
        "pg_x3_worst_burst_lateness_in_window_s": spread(
            [max((v["max"] for v in r["log"].get("burst_lateness_s", {}).values()), default=None) for r in pgx]),
        "pg_x3_peak_checks_in_1s": spread([r["log"].get("peak_checks_in_1s") for r in pgx]),
        "sqlite_peak_checks_in_1s": spread([r["log"].get("peak_checks_in_1s") for r in sql]),
        "sqlite_worst_start_delay_s": spread([r["worst_start_delay_s"] for r in sql]),
        "ratio_pg_x3_to_sqlite": spread(ratios),
        "pg_x3_checks_per_cpu_s": spread([r["checks_per_cpu_s"] for r in pgx]),
        "sqlite_checks_per_cpu_s": spread([r["checks_per_cpu_s"] for r in sql]),
        "error_log_lines": len(errors), "error_examples": errors[:5],
        "results": results,
    }
    print(f"\n10,000 monitors at 10 s, {args.runs} run(s), warm-up {args.warmup:.0f} s, window {args.seconds:.0f} s, "
          f"{os.cpu_count()} CPUs, load {load_start[0]} -> {load_avg()[0]}\n")
    print("| run | set-up | worst start delay s (end / at warm-up end) | per replica | checks in window "
          "(seen at nginx) | peak checks in 1 s | phase arcs s | burst lateness max s | CPU s (+ db) | load |")
    print("|---|---|---|---|---|---:|---|---|---|---|")
    for r in results:
        per = ", ".join(f"{x['max_start_delay_s_end']}" for x in r.get("replicas", [])) or "-"
        print(f"| {r['run']} | {r['setup']} | {r['worst_start_delay_s']} / {r['worst_start_delay_s_at_warmup_end']} | "
              f"{per} | {r['checks']} ({r['log'].get('checks_seen')}) | {r['log'].get('peak_checks_in_1s')} | "
              f"{r['log'].get('phase_arc_s')} | "
              f"{ {g: v['max'] for g, v in r['log'].get('burst_lateness_s', {}).items()} or '-'} | {r['cpu_s']}" + (f" (+{r['database_cpu_s']})" if "database_cpu_s" in r
                                                                 else "") + f" | {r['load_before'][0]} |")
    for r in pgx:
        if "takeover" in r:
            print(f"\ntakeover (run {r['run']}): {json.dumps(r['takeover'])}")
    print(f"\npg-x3 worst: {summary['pg_x3_worst_start_delay_s']}; sqlite worst: {summary['sqlite_worst_start_delay_s']}")
    if errors:
        print(f"error log lines: {len(errors)}; first: {errors[:3]}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
