"""Alert benchmark: N monitors go down at once; every notification must reach a local
receiver within 5 s of its monitor's state change, while one more channel hangs (accepts
connections, never answers) without slowing the others.

Usage: /usr/bin/python3 bench/alerts/bench_alerts.py [BINARY] [MONITORS]
Prints a Markdown table row set for bench/RESULTS.md.

How: N TCP monitors (interval 1s) check one listening socket; closing it makes every
check fail at once (connection refused). Channels: `fast-a` and `fast-b` (webhooks to one
HTTP/1.1 keep-alive receiver on loopback; `fast-b` words its alerts with a `template:`, so
the two side by side show what rendering a template costs) and `hang` (a socket that
never answers, 10 s timeout). Each notification's latency is the receiver's wall time minus the event's `at`
(the failing check's start), both on this host's clock.
"""
import json
import os
import pathlib
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build" / "src" / "cli" / "trainwatch")
MONITORS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
TARGET_S = 5.0

received = {"fast-a": [], "fast-b": []}
lock = threading.Lock()


class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        now = time.time()
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with lock:
            received[self.path.strip("/")].append((now, body))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port = httpd.server_address[1]

    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(1024)  # accepted by the kernel, never read or answered

    target = socket.socket()
    target.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    target.bind(("127.0.0.1", 0))
    target.listen(4096)
    target_port = target.getsockname()[1]
    stop_accepting = threading.Event()

    def accept_loop():
        target.settimeout(0.2)
        while not stop_accepting.is_set():
            try:
                conn, _ = target.accept()
                conn.close()
            except OSError:
                pass

    threading.Thread(target=accept_loop, daemon=True).start()

    work = pathlib.Path(tempfile.mkdtemp(prefix="tw-bench-alerts-"))
    monitors = "".join(f"  - {{name: m{i:04d}, type: tcp, host: 127.0.0.1, port: {target_port}, interval: 1s, timeout: 1s}}\n"
                       for i in range(MONITORS))
    (work / "c.yaml").write_text(f"""
server:
  max_checks_in_flight: 2000
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: fast-a, type: webhook, url: "http://127.0.0.1:{port}/fast-a", default: true}}
  - {{name: fast-b, type: webhook, url: "http://127.0.0.1:{port}/fast-b", default: true,
      template: "{{{{state}}}}: {{{{monitor}}}} ({{{{cause}}}}){{{{#incident_id}}}} #{{{{incident_id}}}}{{{{/incident_id}}}}"}}
  - {{name: hang, type: webhook, url: "http://127.0.0.1:{hang.getsockname()[1]}/hook", default: true, timeout: 10s}}
monitors:
{monitors}""")
    log = open(work / "server.log", "wb")
    proc = subprocess.Popen([BINARY, "serve", "-c", str(work / "c.yaml"), "--listen", "127.0.0.1:0",
                             "--data-dir", str(work / "data")], stdout=subprocess.PIPE, stderr=log)
    line = proc.stdout.readline().decode()
    base = line.strip().split(" on ")[1].rstrip("/")

    def up_count():
        with urllib_open(base + "/api/v1/monitors") as r:
            return sum(1 for m in json.loads(r.read())["monitors"] if m["status"] == "up")

    deadline = time.time() + 60
    while up_count() < MONITORS and time.time() < deadline:
        time.sleep(0.2)

    went_down = time.time()
    stop_accepting.set()
    target.close()  # every check now fails: connection refused

    deadline = time.time() + 60
    while time.time() < deadline:
        with lock:
            if all(len(v) >= MONITORS for v in received.values()):
                break
        time.sleep(0.05)
    all_done = time.time()
    with urllib_open(base + "/api/v1/notifications") as r:
        channels = {c["name"]: c for c in json.loads(r.read())["notifications"]}
    with urllib_open(base + "/metrics") as r:
        rss = [l for l in r.read().decode().splitlines() if l.startswith("process_resident_memory_bytes")]
    proc.terminate()
    proc.wait(timeout=30)

    print(f"monitors: {MONITORS}, channels: fast-a, fast-b (templated) (receiver on loopback), hang (never answers)")
    for name, rows in received.items():
        latencies = []
        for wall, body in rows:
            latencies.append(wall - (datetime.fromisoformat(body["at"].replace("Z", "+00:00")).timestamp()))
        latencies.sort()
        downs = sum(1 for _, b in rows if b["event"] == "down")
        if name == "fast-b":  # the template's text arrived, rendered
            assert all(b["text"].startswith("down: m") for _, b in rows if b["event"] == "down"), rows[0][1]["text"]
        p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]
        ok = len(latencies) >= MONITORS and latencies[-1] <= TARGET_S
        print(f"| {name}: DOWN alerts received | {downs} of {MONITORS} | all within {TARGET_S:.0f} s of the state change |"
              f" p50 {p(0.5):.2f} s, p99 {p(0.99):.2f} s, max {latencies[-1]:.2f} s | {'✔' if ok else '✘'} |")
    print(f"| last alert received after the target closed | {all_done - went_down:.2f} s | |")
    hang_state = channels["hang"]
    print(f"| hang channel meanwhile | in_flight={hang_state['in_flight']}, queued={hang_state['queued']},"
          f" delivered={hang_state['totals']['delivered']} | others unaffected |")
    print(f"| server RSS at the end | {float(rss[0].split()[1]) / 2**20:.0f} MiB | |" if rss else "")


def urllib_open(url):
    import urllib.request
    return urllib.request.urlopen(url, timeout=30)


if __name__ == "__main__":
    main()
