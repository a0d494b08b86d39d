#!/usr/bin/env python3
"""Heartbeat ping throughput for several store set-ups, side by side in one run.

Set-ups (all started once, then measured in alternating rounds: A B C D, A B C D, ...):
  sqlite    one `trainwatch serve`, default SQLite store (--data-dir)
  postgres  one `trainwatch serve`, `store.url` on a throwaway PostgreSQL 15 cluster
  pg-x3     three `trainwatch serve` replicas, same config file, same database, behind
            HAProxy (mode http, roundrobin, http-reuse always)
  nginx     one nginx worker, `return 200 "OK"`: this machine's ceiling

Load: wrk -t2 -c128 -d{seconds}s with bench/heartbeat/ping.lua, a random one of 10,000
heartbeat tokens per request (as bench/heartbeat/run.py). PostgreSQL runs with its
defaults: fsync on and synchronous_commit on, so a 200 means the row is committed.
Each PostgreSQL set-up has its own database; the three replicas share one.

Durability: after the last round the trainwatch processes are SIGKILLed (no clean
shutdown, nothing flushed on the way out) and the rows of heartbeat_pings are counted
against the pings answered 2xx (wrk's requests minus non-2xx, warm-up included). Rows
may exceed that by at most the requests in flight when wrk stopped (128 per wrk run);
fewer rows than 2xx answers would be a durability bug.

Usage: /usr/bin/python3 bench/heartbeat/replicas.py [--rounds 3] [--seconds 10] [--quick]
Prints a markdown table, then one JSON line last.
"""
import argparse
import json
import os
import pathlib
import secrets
import selectors
import shutil
import signal
import sqlite3
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
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "integration"))
from run import BINARY, TOKENS, start_nginx, wrk  # noqa: E402
from conftest import PASSWORD, PG_BIN, Postgres, wait_for  # noqa: E402
sys.path.insert(0, str(ROOT / "bench"))
from benchkit import free_port, logger, run_haproxy  # noqa: E402

REPLICAS = 3


log = logger("replicas.py")


def write_config(path, tokens, store_url_env):
    """The monitors of run.py; with `store_url_env`, store.url comes from that variable."""
    lines = []
    if store_url_env:
        lines += ["store:", f"  url: ${{{store_url_env}}}"]
    lines.append("monitors:")
    for i, token in enumerate(tokens):
        lines += [f"  - name: hb{i}", "    type: heartbeat", "    period: 1d", f"    token: {token}"]
    path.write_text("\n".join(lines) + "\n")


class Serve:
    """One `trainwatch serve`; `base` once it printed its 'serving ... on URL' line."""

    def __init__(self, config, data_dir, log_path, env=None, timeout=120):
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen([BINARY, "serve", "-c", str(config), "--listen", "127.0.0.1:0",
                                      "--data-dir", str(data_dir)],
                                     stdout=subprocess.PIPE, stderr=self.log, env=env)
        line = self._ready_line(timeout)
        if "serving" not in line:
            raise RuntimeError(f"trainwatch did not start: {line!r}; log tail: {self.log_tail()}")
        self.base = line.strip().split(" on ")[1].rstrip("/")
        # Keep draining stdout so a chatty server never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()

    def _ready_line(self, timeout):
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if sel.select(timeout=0.5):
                return self.proc.stdout.readline().decode()
            if self.proc.poll() is not None:
                return ""
        return ""

    def health(self):
        try:
            with urllib.request.urlopen(self.base + "/healthz", timeout=5) as r:
                return json.loads(r.read())
        except (urllib.error.URLError, OSError, ValueError):
            return None

    def log_tail(self, n=2000):
        self.log.flush()
        return pathlib.Path(self.log_path).read_bytes()[-n:].decode(errors="replace")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.log.close()


def replicas_agree(servers):
    """Every replica's /healthz, once all list len(servers) members and the same ones."""
    views = [s.health() for s in servers]
    if any(v is None or len(v.get("replicas", {}).get("members", [])) != len(servers) for v in views):
        return None
    return views if len({tuple(sorted(v["replicas"]["members"])) for v in views}) == 1 else None


def start_haproxy(work, backends, threads):
    port = free_port()
    cfg = work / "haproxy.cfg"
    servers = "\n".join(f"  server r{i} {b.split('//')[1]}" for i, b in enumerate(backends))
    cfg.write_text(f"""global
  nbthread {threads}
  maxconn 4096
defaults
  mode http
  option http-keep-alive
  http-reuse always
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend fe
  bind 127.0.0.1:{port}
  default_backend replicas
backend replicas
  balance roundrobin
{servers}
""")
    return run_haproxy(cfg, work / "haproxy.log", port), f"http://127.0.0.1:{port}"


def pg_url(port, database):
    return f"postgresql://postgres:{PASSWORD}@127.0.0.1:{port}/{database}?sslmode=disable"


# Said at every start when the config has no jobs token; nothing to do with pings.
BENIGN = ("no jobs.token or TRAINWATCH_TOKEN",)


def odd_log_lines(path, limit=5):
    """(count, first few) of the log lines that say error/warn/fail, less the BENIGN ones."""
    try:
        lines = pathlib.Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return 0, []
    odd = [l for l in lines if any(w in l.lower() for w in ("error", "warn", "fail", "fatal"))
           and not any(b in l for b in BENIGN)]
    return len(odd), odd[:limit]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="smoke run: 2 rounds of 3 s")
    ap.add_argument("--connections", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=2, help="seconds of wrk per set-up before round 1")
    ap.add_argument("--haproxy-threads", type=int, default=1)
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.seconds, args.warmup = 2, 3, 1

    # Clean up on SIGTERM/SIGHUP too (Ctrl-C raises KeyboardInterrupt, which also runs it): turn them into SystemExit so `finally` runs.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(1))

    work = pathlib.Path(tempfile.mkdtemp(prefix="tw-bench-replicas-"))
    tokens = [secrets.token_hex(16) for _ in range(TOKENS)]
    tokens_file = work / "tokens.txt"
    tokens_file.write_text("\n".join(tokens) + "\n")
    binary_mtime = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(os.stat(BINARY).st_mtime))
    load_before = os.getloadavg()

    pg = None
    servers = {}   # set-up -> [Serve]
    others = []    # nginx, haproxy
    bases = {}
    runs = {}
    stored = {}
    odd_logs = {}
    try:
        log(f"work dir {work}; binary {BINARY} (built {binary_mtime}); load {load_before}")
        if not (PG_BIN / "initdb").exists():
            raise RuntimeError("PostgreSQL 15 is not installed; scripts/setup.sh installs it")
        pg = Postgres()  # initdb --no-sync, scram over TCP on a free loopback port, database `trainwatch`
        for db in ("tw_single", "tw_replicas"):
            pg.psql(f"CREATE DATABASE {db}", database="postgres")
        log(f"postgres on 127.0.0.1:{pg.port} (synchronous_commit={pg.psql('SHOW synchronous_commit').strip()}, "
            f"fsync={pg.psql('SHOW fsync').strip()})")

        # A: SQLite.
        write_config(work / "sqlite.yaml", tokens, None)
        s = Serve(work / "sqlite.yaml", work / "data-sqlite", work / "sqlite.log")
        servers["sqlite"] = [s]
        bases["sqlite"] = s.base

        # B: one server on PostgreSQL. C: three replicas on another database, one config file.
        write_config(work / "pg.yaml", tokens, "TRAINWATCH_STORE_URL")
        t0 = time.monotonic()
        s = Serve(work / "pg.yaml", work / "data-pg", work / "postgres.log",
                  env=dict(os.environ, TRAINWATCH_STORE_URL=pg_url(pg.port, "tw_single")))
        servers["postgres"] = [s]
        bases["postgres"] = s.base
        log(f"postgres server ready in {time.monotonic() - t0:.1f}s")

        env_c = dict(os.environ, TRAINWATCH_STORE_URL=pg_url(pg.port, "tw_replicas"))
        servers["pg-x3"] = []
        for i in range(REPLICAS):
            t0 = time.monotonic()
            servers["pg-x3"].append(Serve(work / "pg.yaml", work / f"data-r{i}", work / f"replica-{i}.log", env=env_c))
            log(f"replica {i} ready in {time.monotonic() - t0:.1f}s")
        views = wait_for(lambda: replicas_agree(servers["pg-x3"]), timeout=30, interval=0.2,
                         what="three replicas that list each other")
        log(f"replicas see members {views[0]['replicas']['members']}")
        try:
            owned = wait_for(lambda: (o := [(v or {}).get("replicas", {}).get("owned")
                                            for v in (r.health() for r in servers["pg-x3"])])
                             and sum(x or 0 for x in o) == TOKENS and o, timeout=20, interval=0.2,
                             what=f"the replicas to own {TOKENS}")
            log(f"monitors owned per replica: {owned}")
        except AssertionError as e:
            log(f"warning: {e}")
        hap, bases["pg-x3"] = start_haproxy(work, [r.base for r in servers["pg-x3"]], args.haproxy_threads)
        others.append(hap)

        # D: nginx.
        ngx, bases["nginx"] = start_nginx(work)
        others.append(ngx)

        order = ["sqlite", "postgres", "pg-x3", "nginx"]
        runs = {name: [] for name in order}
        warm = {name: None for name in order}

        def measure(name, seconds):
            r = wrk(bases[name], tokens_file, seconds, args.connections, args.threads)
            log(f"{name:9s} {seconds:3d}s  {r['rps']:10.1f} req/s  p99 {r['p99_ms']} ms  "
                f"non-2xx {r['non2xx']}  socket errors {r['socket_errors']}")
            return r

        for name in order:  # page cache, WAL, connections, plans
            warm[name] = measure(name, args.warmup)
        for rnd in range(args.rounds):
            log(f"round {rnd + 1}/{args.rounds}")
            for name in order:
                runs[name].append(measure(name, args.seconds))

        # Durability: crash the servers (SIGKILL), then count what is stored.
        time.sleep(1.0)
        for name in ("sqlite", "postgres", "pg-x3"):
            for s in servers[name]:
                s.kill()
        stored["sqlite"] = sqlite3.connect(work / "data-sqlite" / "trainwatch.db").execute(
            "SELECT COUNT(*) FROM heartbeat_pings").fetchone()[0]
        stored["postgres"] = int(pg.psql("SELECT count(*) FROM heartbeat_pings", database="tw_single"))
        stored["pg-x3"] = int(pg.psql("SELECT count(*) FROM heartbeat_pings", database="tw_replicas"))
        for name in ("sqlite", "postgres", "pg-x3"):
            odd_logs[name] = [odd_log_lines(s.log_path) for s in servers[name]]
        odd_logs["haproxy"] = [odd_log_lines(work / "haproxy.log")]
        odd_logs["postgresql"] = [odd_log_lines(pg.dir / "log")]
    finally:
        for s in (s for group in servers.values() for s in group):
            try:
                s.kill()
            except Exception as e:  # keep cleaning up
                log(f"cleanup: {e}")
        for p in others:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if pg is not None:
            pg.discard()
        if os.environ.get("KEEP_WORK"):
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    def med(name, key):
        return statistics.median(r[key] for r in runs[name])

    ngx_rps = med("nginx", "rps")
    summary = {}
    for name, rs in runs.items():
        everything = rs + [warm[name]]
        row = {
            "median_rps": round(med(name, "rps"), 1),
            "rounds_rps": [round(r["rps"], 1) for r in rs],
            "median_p50_ms": round(med(name, "p50_ms"), 2),
            "median_p99_ms": round(med(name, "p99_ms"), 2),
            "rounds_p99_ms": [r["p99_ms"] for r in rs],
            "ratio_to_nginx": round(med(name, "rps") / ngx_rps, 3),
            "non2xx": sum(r["non2xx"] for r in everything),
            "socket_errors": sum(sum(r["socket_errors"].values()) for r in everything),
        }
        if name in stored:
            answered = sum(r["requests"] - r["non2xx"] for r in everything)
            row.update(answered_2xx=answered, stored_rows=stored[name], stored_minus_answered=stored[name] - answered,
                       in_flight_bound=args.connections * len(everything),
                       durable=stored[name] >= answered)
        summary[name] = row

    print(f"\nHeartbeat pings, {TOKENS} tokens, wrk -t{args.threads} -c{args.connections}, "
          f"{args.rounds} rounds x {args.seconds}s (alternating), {os.cpu_count()} CPUs, "
          f"load {load_before[0]:.2f} -> {os.getloadavg()[0]:.2f}\n")
    print("| set-up | median pings/s | rounds | median p99 ms | vs nginx | non-2xx | socket err | 2xx answered | rows stored |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for name, row in summary.items():
        print(f"| {name} | {row['median_rps']:,.0f} | {', '.join(f'{x:,.0f}' for x in row['rounds_rps'])} | "
              f"{row['median_p99_ms']} | {row['ratio_to_nginx']:.3f} | {row['non2xx']} | {row['socket_errors']} | "
              f"{row.get('answered_2xx', '-')} | {row.get('stored_rows', '-')} |")
    print()
    for name, groups in odd_logs.items():
        total = sum(c for c, _ in groups)
        if total:
            print(f"log lines with error/warn/fail in {name}: {total}; first: {[l for _, ls in groups for l in ls][:3]}")
    print(json.dumps({
        "bench": "heartbeat_ping_replicas", "tokens": TOKENS, "seconds": args.seconds, "rounds": args.rounds,
        "warmup_s": args.warmup, "connections": args.connections, "wrk_threads": args.threads,
        "haproxy_threads": args.haproxy_threads, "replicas": REPLICAS, "binary_built": binary_mtime,
        "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()],
        "setups": summary,
        "odd_log_lines": {k: sum(c for c, _ in v) for k, v in odd_logs.items()},
        "runs": runs, "warmup": warm,
    }))


if __name__ == "__main__":
    main()
