#!/usr/bin/python3
"""A short run of `trainwatch serve` under ThreadSanitizer (scripts/tsan.sh runs it):
   scripts/tsan_smoke.py BINARY
Starts the server on examples/demo.yaml (port 0, a temporary data dir), reads /healthz,
/metrics, the API and a status page from several threads at once, sends a heartbeat ping,
reloads a changed config with SIGHUP, and stops it with SIGTERM. Fails when the server
does not answer, exits other than 0, or writes a ThreadSanitizer report (TSAN_OPTIONS from
scripts/tsan.sh ends the process on the first one)."""
import json
import pathlib
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent


def wait_for(predicate, what, timeout=60.0):
    # TSan slows the server down 5-15x; the deadline is generous, the polling quick.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def request(base, path, method="GET", body=None):
    req = urllib.request.Request(base + path, data=body, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def main(binary):
    with tempfile.TemporaryDirectory(prefix="trainwatch-tsan-") as tmp:
        tmp = pathlib.Path(tmp)
        config = tmp / "demo.yaml"
        demo = (ROOT / "examples/demo.yaml").read_text()
        config.write_text(demo)
        log_path = tmp / "server.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen([binary, "serve", "-c", str(config), "--listen", "127.0.0.1:0",
                                     "--data-dir", str(tmp / "data")], stdout=subprocess.PIPE, stderr=log)
        try:
            exercise(proc, config, demo)
            rc = proc.wait(timeout=60)
        except BaseException:
            # A TSan report ends the server, and the client then fails first: show the log.
            sys.stderr.write(log_path.read_text(errors="replace")[-20000:])
            raise
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        log = log_path.read_text(errors="replace")
        if "ThreadSanitizer" in log or rc != 0:
            sys.stderr.write(log[-20000:])
            raise AssertionError(f"trainwatch serve exited {rc}" +
                                 (", with a ThreadSanitizer report" if "ThreadSanitizer" in log else ""))
    print("tsan smoke: serve answered, pinged, reloaded and stopped cleanly")


def exercise(proc, config, demo):
    """Requests, a ping and a reload while the engine runs; ends with SIGTERM."""
    line = proc.stdout.readline().decode()
    assert "serving" in line, f"server did not start: {line!r}"
    base = line.strip().split(" on ")[1].rstrip("/")

    status, body = request(base, "/healthz")
    assert status == 200, (status, body)
    # Readers on several threads at once, while the engine runs its checks.
    paths = ["/healthz", "/metrics", "/api/v1/monitors", "/api/v1/incidents",
             "/api/v1/monitors/demo-steps", "/status/ml-training", "/"]
    errors = []

    def reader():
        for _ in range(5):
            for path in paths:
                code, _ = request(base, path)
                if code != 200:
                    errors.append((path, code))

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    status, body = request(base, "/ping/demo-steps", method="POST", body=b"step 20")
    assert status == 200, ("ping", status, body)
    for t in threads:
        t.join()
    assert not errors, errors
    wait_for(lambda: json.loads(request(base, "/api/v1/monitors/demo-steps")[1]).get("status") == "up",
             "the ping to mark demo-steps up")
    _, metrics = request(base, "/metrics")
    assert "trainwatch_" in metrics, metrics[:200]

    # A reload that adds a monitor, answered while checks and requests run.
    config.write_text(demo.replace("monitors:\n", "monitors:\n  - name: tsan-added\n"
                                   "    type: heartbeat\n    period: 1m\n    grace: 1m\n", 1))
    proc.send_signal(signal.SIGHUP)
    wait_for(lambda: request(base, "/api/v1/monitors/tsan-added")[0] == 200, "the reload")
    proc.send_signal(signal.SIGTERM)


if __name__ == "__main__":
    main(sys.argv[1])
