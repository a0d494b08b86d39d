#!/usr/bin/env python3
"""Pings, /healthz and checks while 10,000 slow clients hold on to `trainwatch serve`.

Each run starts the server (a heartbeat monitor and an HTTP check of a local target every
second), connects 10,000 clients from 100 loopback addresses that trickle a request header
one byte a second and reconnect when closed, and then measures, under that load:
  - /ping/{token} and /healthz with wrk (--latency): requests answered, errors, p99;
  - whether the HTTP check stayed correct: no failed check, still UP, checks went on.
Two settings, `--runs` runs each (median and spread): the descriptor limit as the server
finds and raises it, and `prlimit --nofile=1024:1024` (soft = hard: it cannot be raised).

Usage: bench/slow_clients/run.py [--runs 3] [--seconds 10] [--connections 4]
Prints a table and one JSON line last; the figures go into bench/RESULTS.md by hand.
"""
import argparse
import json
import os
import pathlib
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))  # the slow clients the test uses
sys.path.insert(0, str(ROOT.parent / "shared" / "peers"))
from slow_clients import SlowClients  # noqa: E402
from wrkparse import parse_wrk  # noqa: E402  (the peers' shared wrk parser)

BINARY = os.environ.get("TRAINWATCH_BIN", str(ROOT / "build" / "src" / "cli" / "trainwatch"))
TOKEN = "bench-slow-clients-0001"
SLOW_CLIENTS = 10_000


def start_target():
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def start_server(work, target_port, limited):
    config = work / "trainwatch.yaml"
    config.write_text(f"""monitors:
  - name: pings
    type: heartbeat
    period: 1h
    grace: 1h
    token: {TOKEN}
  - name: target
    type: http
    url: http://127.0.0.1:{target_port}/
    interval: 1s
    timeout: 5s
""")
    command = [BINARY, "serve", "-c", str(config), "--listen", "127.0.0.1:0", "--data-dir", str(work / "data")]
    if limited:
        command = ["prlimit", "--nofile=1024:1024"] + command
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=open(work / "trainwatch.log", "wb"))
    line = proc.stdout.readline().decode()
    assert "serving" in line, line
    return proc, line.strip().split(" on ")[1].rstrip("/")


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.read().decode()
    except OSError:
        return ""


def metric(text, pattern):
    match = re.search(pattern + r" ([0-9.e+]+)", text)
    return float(match.group(1)) if match else 0.0


def wait_until(predicate, limit_s):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def wrk(url, seconds, connections):
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "--latency", url],
                         capture_output=True, text=True, timeout=seconds + 60).stdout
    return parse_wrk(out)


def one_run(limited, seconds, connections):
    target = start_target()
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        proc, base = start_server(work, target.server_address[1], limited)
        clients = None
        try:
            assert wait_until(lambda: '"status":"up"' in get(base + "/api/v1/monitors/target").replace(" ", ""), 30)
            port = int(base.rsplit(":", 1)[1])
            clients = SlowClients(port, SLOW_CLIENTS, limit_s=seconds * 2 + 120).start()
            # Loaded: the server holds as many as it may and closes waiting ones for room
            # (or, with room for all, every slow client is connected).
            wait_until(lambda: metric(get(base + "/metrics"), r'trainwatch_http_connections_closed_total\{reason="room_for_new"\}') > 0
                       or metric(get(base + "/metrics"), r"trainwatch_http_connections") >= SLOW_CLIENTS * 0.9, 60)
            before = get(base + "/metrics")
            ping = wrk(f"{base}/ping/{TOKEN}", seconds, connections)
            healthz = wrk(f"{base}/healthz", seconds, connections)
            after = get(base + "/metrics")
            successes = (metric(after, r'trainwatch_checks_total\{monitor="target",result="success"\}') -
                         metric(before, r'trainwatch_checks_total\{monitor="target",result="success"\}'))
            failures = metric(after, r'trainwatch_checks_total\{monitor="target",result="failure"\}')
            up = '"status":"up"' in get(base + "/api/v1/monitors/target").replace(" ", "")
            return {
                "ping": ping, "healthz": healthz,
                "checks_ok": failures == 0 and up and successes >= seconds,  # interval 1 s over 2 x seconds
                "check_successes": successes, "check_failures": failures,
                "max_connections": metric(after, r"trainwatch_http_max_connections"),
                "open_connections": metric(after, r"trainwatch_http_connections"),
                "closed_for_room": metric(after, r'trainwatch_http_connections_closed_total\{reason="room_for_new"\}'),
                "request_timeouts": metric(after, r'trainwatch_http_connections_closed_total\{reason="request_timeout"\}'),
                "accept_failures": metric(after, r"trainwatch_http_accept_failures_total"),
                "slow_clients_connected_peak": clients.connected_peak,
                "slow_sockets_created": clients.created,
            }
        finally:
            if clients:
                clients.stop()
            proc.terminate()
            proc.wait(timeout=30)
            target.shutdown()
            target.server_close()


def summary(runs, key):
    values = [key(r) for r in runs]
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=4)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # this process holds 10,000 sockets

    results = {}
    for name, limited in (("default", False), ("prlimit-1024", True)):
        runs = [one_run(limited, args.seconds, args.connections) for _ in range(args.runs)]
        results[name] = {
            "ping_requests": summary(runs, lambda r: r["ping"]["requests"]),
            "ping_errors": summary(runs, lambda r: r["ping"]["errors_total"]),
            "ping_p99_ms": summary(runs, lambda r: r["ping"]["p99_ms"]),
            "healthz_requests": summary(runs, lambda r: r["healthz"]["requests"]),
            "healthz_errors": summary(runs, lambda r: r["healthz"]["errors_total"]),
            "healthz_p99_ms": summary(runs, lambda r: r["healthz"]["p99_ms"]),
            "checks_ok_runs": sum(r["checks_ok"] for r in runs),
            "runs": runs,
        }
        r = results[name]
        print(f"{name}: ping {r['ping_requests']} p99 {r['ping_p99_ms']} errors {r['ping_errors']}; "
              f"healthz {r['healthz_requests']} p99 {r['healthz_p99_ms']} errors {r['healthz_errors']}; "
              f"checks correct in {r['checks_ok_runs']}/{args.runs} runs; "
              f"max_connections {[x['max_connections'] for x in runs]}", flush=True)
    print(json.dumps({"fd_limit_hard": hard, "fd_limit_soft_found": soft, **results}))


if __name__ == "__main__":
    main()
