#!/usr/bin/python3
"""DNS and ICMP checks per CPU-second: trainwatch beside Prometheus' blackbox_exporter,
in the same run, against the same targets on loopback.

- DNS: dnsmasq on a free port answers `web.test A`. trainwatch runs MONITORS dns monitors
  at a 250 ms interval asking it; blackbox_exporter's `dns` prober asks the same question,
  driven through /probe by wrk.
- ICMP: echo to 127.0.0.1. trainwatch's icmp monitors send one echo request per check
  (count: 1), as blackbox's `icmp` prober does.

CPU is utime+stime of the trainwatch or blackbox_exporter process only (/proc/PID/stat);
dnsmasq and the kernel's echo replies are the same for both. Each side is measured in
WINDOWS consecutive windows of WINDOW_S seconds; the script reports each side's median
checks per CPU-second, the spread (min-max) and the ratio of medians.

Usage: /usr/bin/python3 bench/probes/bench_probes.py   (about 80 s; binds 127.0.0.1 only)
Prints one JSON line last.
"""
import json
import os
import pathlib
import re
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
PEERS = pathlib.Path(os.environ.get("TRAINWATCH_PEERS", ROOT.parent / "shared" / "peers"))
sys.path.insert(0, str(PEERS))
from wrkparse import parse_wrk  # noqa: E402  (the peers' own wrk parser, imported, not copied)

BINARY = os.environ.get("TRAINWATCH_BIN", str(ROOT / "build" / "src" / "cli" / "trainwatch"))
TCK = os.sysconf("SC_CLK_TCK")
MONITORS = 200
INTERVAL = "250ms"
WINDOWS = 3
WINDOW_S = 5
WARMUP_S = 3


def free_port(kind=socket.SOCK_STREAM):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_s(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TCK


def get(url):
    return urllib.request.urlopen(url, timeout=30).read().decode()


def metric_sum(text, name, result=None):
    label = f'[^}}]*result="{result}"[^}}]*' if result else "[^}]*"
    return sum(float(m.group(1)) for m in re.finditer(rf"^{name}{{{label}}} (\S+)$", text, re.M))


def stop(proc):
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_until(what, predicate, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not start")


def start_dnsmasq(tmp):
    port = free_port(socket.SOCK_DGRAM)
    proc = subprocess.Popen(["dnsmasq", "--no-daemon", "-C", "/dev/null", "--pid-file=", f"--port={port}",
                             "--listen-address=127.0.0.1", "--bind-interfaces", "--no-resolv", "--no-hosts",
                             "--local=/test/", "--address=/web.test/10.0.0.5", "--cache-size=0"],
                            stdout=subprocess.DEVNULL, stderr=open(f"{tmp}/dnsmasq.log", "ab"))
    query = struct.pack(">HHHHHH", 1, 0x0100, 1, 0, 0, 0) + b"\x03web\x04test\x00" + struct.pack(">HH", 1, 1)

    def answers():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(0.2)
            s.sendto(query, ("127.0.0.1", port))
            return len(s.recv(512)) > 12

    wait_until("dnsmasq", answers)
    return proc, port


def trainwatch_side(tmp, monitor_yaml):
    """Checks per CPU-second of trainwatch running MONITORS copies of one monitor."""
    lines = ["monitors:"]
    for i in range(MONITORS):
        lines.append(f"  - name: m{i}\n    interval: {INTERVAL}\n    timeout: 5s\n{monitor_yaml}")
    config = f"{tmp}/trainwatch.yaml"
    pathlib.Path(config).write_text("\n".join(lines) + "\n")
    data = tempfile.mkdtemp(dir=tmp)
    proc = subprocess.Popen([BINARY, "serve", "-c", config, "--listen", "127.0.0.1:0", "--data-dir", data],
                            stdout=subprocess.PIPE, stderr=open(f"{tmp}/trainwatch.log", "ab"))
    try:
        base = proc.stdout.readline().decode().strip().split(" on ")[1].rstrip("/")
        time.sleep(WARMUP_S)  # past the spread of the first checks
        windows = []
        for _ in range(WINDOWS):
            text = get(base + "/metrics")
            c0, n0, f0 = cpu_s(proc.pid), metric_sum(text, "trainwatch_checks_total"), \
                metric_sum(text, "trainwatch_checks_total", "failure")
            time.sleep(WINDOW_S)
            text = get(base + "/metrics")
            c1, n1, f1 = cpu_s(proc.pid), metric_sum(text, "trainwatch_checks_total"), \
                metric_sum(text, "trainwatch_checks_total", "failure")
            windows.append({"checks": int(n1 - n0), "failed": int(f1 - f0), "cpu_s": round(c1 - c0, 2),
                            "checks_per_cpu_s": round((n1 - n0) / max(c1 - c0, 1e-9))})
        return windows
    finally:
        stop(proc)


def blackbox_side(tmp, module, target):
    """Probes per CPU-second of blackbox_exporter, driven by wrk through /probe."""
    port = free_port()
    proc = subprocess.Popen(["prometheus-blackbox-exporter", f"--config.file={HERE}/blackbox_probes.yml",
                             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                            stdout=subprocess.DEVNULL, stderr=open(f"{tmp}/blackbox.log", "ab"))
    try:
        probe = f"http://127.0.0.1:{port}/probe?module={module}&target={target}"
        wait_until("blackbox_exporter", lambda: "probe_success 1" in get(probe))
        windows = []
        for _ in range(WINDOWS):
            c0 = cpu_s(proc.pid)
            out = subprocess.run(["wrk", "-t1", "-c8", f"-d{WINDOW_S}s", "--timeout", "5s", probe],
                                 capture_output=True, text=True, timeout=WINDOW_S + 30).stdout
            c1 = cpu_s(proc.pid)
            r = parse_wrk(out)
            windows.append({"checks": r["requests"], "failed": r["errors_total"], "cpu_s": round(c1 - c0, 2),
                            "checks_per_cpu_s": round(r["requests"] / max(c1 - c0, 1e-9))})
        windows_ok = "probe_success 1" in get(probe)
        return windows if windows_ok else [dict(w, failed=-1) for w in windows]
    finally:
        stop(proc)


def summary(windows):
    rates = [w["checks_per_cpu_s"] for w in windows]
    return {"median": statistics.median(rates), "min": min(rates), "max": max(rates),
            "checks": sum(w["checks"] for w in windows), "failed": sum(w["failed"] for w in windows),
            "windows": windows}


def main():
    tmp = tempfile.mkdtemp(prefix="tw_bench_probes_")
    results = {}
    dnsmasq, dns_port = start_dnsmasq(tmp)
    try:
        dns_yaml = (f"    type: dns\n    query: web.test\n    resolver: 127.0.0.1:{dns_port}\n"
                    "    conditions:\n      - \"[BODY] == 10.0.0.5\"")
        results["dns"] = {"trainwatch": summary(trainwatch_side(tmp, dns_yaml)),
                          "blackbox_exporter": summary(blackbox_side(tmp, "dns_a", f"127.0.0.1:{dns_port}"))}
        print("dns:", {k: {x: v[x] for x in ("median", "min", "max", "failed")} for k, v in results["dns"].items()},
              flush=True)
    finally:
        stop(dnsmasq)
    icmp_yaml = "    type: icmp\n    host: 127.0.0.1\n    count: 1"
    results["icmp"] = {"trainwatch": summary(trainwatch_side(tmp, icmp_yaml)),
                       "blackbox_exporter": summary(blackbox_side(tmp, "icmp", "127.0.0.1"))}
    print("icmp:", {k: {x: v[x] for x in ("median", "min", "max", "failed")} for k, v in results["icmp"].items()},
          flush=True)
    for kind in ("dns", "icmp"):
        ours, peer = results[kind]["trainwatch"]["median"], results[kind]["blackbox_exporter"]["median"]
        results[kind]["ratio"] = round(ours / peer, 2)
    subprocess.run(["rm", "-rf", tmp])
    print(json.dumps({"bench": "probes", "nproc": os.cpu_count(), "monitors": MONITORS, "interval": INTERVAL,
                      "window_s": WINDOW_S, **results}))


if __name__ == "__main__":
    main()
