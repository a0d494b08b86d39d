#!/usr/bin/env python3
"""The dashboard's server-side render time and page weight, for N monitors with history.

For each binary and each monitor count: a config of N TCP monitors (a third against a
listening port, so up; the rest against a closed one, so down), one day of generated
history (bench/web/generate_history.py: one result a minute, hourly and daily rollups,
incidents), then `GET /` timed to its last byte over loopback. The list's rows are cached
for about a second (http::FreshCache), so every timed request comes after that has passed:
each one renders the whole page. Reports the median of `--runs` renders with the spread,
and the page weight: the HTML plus every script and stylesheet it names, as a first load
fetches them (no compression: the server sends none).

Usage: bench/web/dashboard_render.py --bin before=PATH --bin after=PATH [--monitors 10,1000] [--runs 3]
"""
import argparse
import http.client
import pathlib
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import benchkit  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent


def listener():
    """A TCP port that accepts (and closes) every connection: the 'up' monitors' target."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(512)

    def serve():
        while True:
            try:
                conn, _ = s.accept()
                conn.close()
            except OSError:
                return
    threading.Thread(target=serve, daemon=True).start()
    return s


def write_config(path, count, up_port):
    lines = ["monitors:"]
    for i in range(count):
        port = up_port if i % 3 == 0 else 1
        tag = ["training", "inference", "data"][i % 3]
        lines.append(f"  - {{name: m{i:04d}, type: tcp, host: 127.0.0.1, port: {port}, interval: 1h, "
                     f"timeout: 1s, tags: [{tag}]}}")
    path.write_text("\n".join(lines) + "\n")


def start(binary, config, data, log):
    proc = subprocess.Popen([binary, "serve", "-c", str(config), "--listen", "127.0.0.1:0", "--data-dir", str(data)],
                            stdout=subprocess.PIPE, stderr=open(log, "ab"))
    line = proc.stdout.readline().decode()
    if "serving" not in line:
        raise RuntimeError(f"server did not start: {line!r}: {pathlib.Path(log).read_text()[-2000:]}")
    host, port = re.search(r"http://([\d.]+):(\d+)", line).groups()
    return proc, host, int(port)


def get(host, port, path):
    """(seconds to the last byte, status, body bytes)."""
    conn = http.client.HTTPConnection(host, port, timeout=60)
    t0 = time.perf_counter()
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    elapsed = time.perf_counter() - t0
    conn.close()
    return elapsed, response.status, body


def page_weight(host, port):
    _, status, html = get(host, port, "/")
    assert status == 200, status
    text = html.decode()
    assets = re.findall(r'<script src="([^"]+)"', text) + re.findall(r'<link rel="stylesheet" href="([^"]+)"', text)
    sizes = {"html": len(html)}
    for path in sorted(set(assets)):
        _, status, body = get(host, port, path)
        sizes[path] = len(body) if status == 200 else 0
    return sizes


def measure(binary, count, runs, work):
    config = work / f"bench-{count}.yaml"
    data = work / f"data-{count}-{pathlib.Path(binary).name}"
    log = work / "server.log"
    up = listener()
    write_config(config, count, up.getsockname()[1])
    proc, _, _ = start(binary, config, data, log)  # migrates the schema
    proc.terminate()
    proc.wait()
    subprocess.run([sys.executable, str(HERE / "generate_history.py"), "--db", str(data / "trainwatch.db"),
                    "--monitors", str(count), "--raw-days", "1"], check=True)
    proc, host, port = start(binary, config, data, log)
    try:
        # Every monitor checked once (interval 1h: each is checked within its first 10 s).
        time.sleep(12)
        get(host, port, "/")  # warms the read connections
        times = []
        for _ in range(runs):
            time.sleep(1.2)  # past the rows' cache age: this request renders them
            elapsed, status, body = get(host, port, "/")
            assert status == 200, status
            times.append(elapsed * 1000)
        weight = page_weight(host, port)
        rows = body.decode().count("data-monitor=")
    finally:
        proc.terminate()
        proc.wait()
        up.close()
    return times, weight, rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", action="append", required=True, help="LABEL=PATH, repeatable")
    p.add_argument("--monitors", default="10,1000")
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    counts = [int(c) for c in args.monitors.split(",")]
    print(f"load average at start: {benchkit.load_avg()}", file=sys.stderr)
    print("| binary | monitors | rows shown | render ms, median (min–max) | page weight: HTML + JS + CSS |")
    print("| --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        for spec in args.bin:
            label, binary = spec.split("=", 1)
            for count in counts:
                times, weight, rows = measure(binary, count, args.runs, work)
                total = sum(weight.values())
                parts = ", ".join(f"{k} {v:,}" for k, v in weight.items())
                print(f"| {label} | {count:,} | {rows:,} | {statistics.median(times):.1f} "
                      f"({min(times):.1f}–{max(times):.1f}) | {total:,} B ({parts}) |", flush=True)
    print(f"load average at end: {benchkit.load_avg()}", file=sys.stderr)


if __name__ == "__main__":
    main()
