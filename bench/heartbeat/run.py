#!/usr/bin/env python3
"""Heartbeat ping throughput: wrk against `trainwatch serve` (/ping/{token}, 10,000
distinct tokens, durability on: every 200 is committed with synchronous=FULL) and, in
the same run, against nginx (one worker, `return 200 "OK"`) as this machine's ceiling.

Usage: bench/heartbeat/run.py [--seconds 10] [--rounds 2] [--connections 128]
Prints one JSON line last; the figures go into bench/RESULTS.md by hand.
"""
import argparse
import json
import os
import pathlib
import secrets
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT.parent / "shared" / "peers"))
from wrkparse import parse_wrk  # noqa: E402  (the peers' shared wrk parser)
sys.path.insert(0, str(ROOT / "bench"))
from benchkit import free_port  # noqa: E402

BINARY = os.environ.get("TRAINWATCH_BIN", str(ROOT / "build" / "src" / "cli" / "trainwatch"))
TOKENS = 10_000




def start_trainwatch(work, tokens):
    config = work / "trainwatch.yaml"
    lines = ["monitors:"]
    for i, token in enumerate(tokens):
        lines += [f"  - name: hb{i}", "    type: heartbeat", "    period: 1d", f"    token: {token}"]
    config.write_text("\n".join(lines) + "\n")
    proc = subprocess.Popen([BINARY, "serve", "-c", str(config), "--listen", "127.0.0.1:0",
                             "--data-dir", str(work / "data")],
                            stdout=subprocess.PIPE, stderr=open(work / "trainwatch.log", "wb"))
    line = proc.stdout.readline().decode()
    assert "serving" in line, line
    return proc, line.strip().split(" on ")[1].rstrip("/")


def start_nginx(work, location='return 200 "OK";', ready_path="/"):
    """nginx on a free loopback port answering every path with `location` (by default
    `return 200`): (process, base URL), once `ready_path` answers."""
    port = free_port()
    conf = work / "nginx.conf"
    conf.write_text(f"""
worker_processes 1;
daemon off;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  client_body_temp_path {work}/body;
  proxy_temp_path {work}/proxy;
  fastcgi_temp_path {work}/fastcgi;
  uwsgi_temp_path {work}/uwsgi;
  scgi_temp_path {work}/scgi;
  server {{
    listen 127.0.0.1:{port};
    location / {{ {location} }}
  }}
}}
""")
    proc = subprocess.Popen(["nginx", "-c", str(conf), "-p", str(work)])
    deadline = time.monotonic() + 10
    import urllib.request
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}{ready_path}", timeout=1).read()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port}"


def wrk(base, tokens_file, seconds, connections, threads):
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency",
                          "-s", str(HERE / "ping.lua"), base + "/"],
                         capture_output=True, text=True, env=dict(os.environ, TOKENS_FILE=str(tokens_file)),
                         check=True).stdout
    return parse_wrk(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--connections", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    work = pathlib.Path(tempfile.mkdtemp(prefix="tw-bench-heartbeat-"))
    tokens = [secrets.token_hex(16) for _ in range(TOKENS)]
    tokens_file = work / "tokens.txt"
    tokens_file.write_text("\n".join(tokens) + "\n")
    tw, tw_base = start_trainwatch(work, tokens)
    ngx, ngx_base = start_nginx(work)
    runs = {"trainwatch": [], "nginx": []}
    try:
        wrk(tw_base, tokens_file, 2, args.connections, args.threads)  # warm-up: page cache, WAL
        for _ in range(args.rounds):
            runs["nginx"].append(wrk(ngx_base, tokens_file, args.seconds, args.connections, args.threads))
            runs["trainwatch"].append(wrk(tw_base, tokens_file, args.seconds, args.connections, args.threads))
    finally:
        ngx.terminate()
        ngx.wait()
        tw.terminate()
        tw.wait()
    # Durability check: every answered ping of every run (and the warm-up) is a row.
    stored = sqlite3.connect(work / "data" / "trainwatch.db").execute("SELECT COUNT(*) FROM heartbeat_pings").fetchone()[0]
    answered = sum(r["requests"] - r["non2xx"] for r in runs["trainwatch"])
    shutil.rmtree(work, ignore_errors=True)

    def med(name, key):
        return statistics.median(r[key] for r in runs[name])

    result = {
        "bench": "heartbeat_ping", "tokens": TOKENS, "seconds": args.seconds, "rounds": args.rounds,
        "connections": args.connections, "wrk_threads": args.threads,
        "trainwatch_rps": med("trainwatch", "rps"), "trainwatch_p50_ms": med("trainwatch", "p50_ms"),
        "trainwatch_p99_ms": med("trainwatch", "p99_ms"),
        "trainwatch_errors": sum(r["errors_total"] for r in runs["trainwatch"]),
        "nginx_rps": med("nginx", "rps"), "nginx_p50_ms": med("nginx", "p50_ms"), "nginx_p99_ms": med("nginx", "p99_ms"),
        "ratio": round(med("trainwatch", "rps") / med("nginx", "rps"), 3),
        "stored_rows": stored, "answered_in_measured_runs": answered,
        "runs": runs,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
