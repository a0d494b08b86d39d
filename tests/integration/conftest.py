"""Fixtures that run the real `trainwatch` binary and real local targets on loopback.

Every server binds port 0; every wait polls the API with a deadline instead of sleeping
for a fixed time, so a fast machine finishes fast and a slow one does not flake.
"""
import json
import os
import pathlib
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("TRAINWATCH_BIN", str(ROOT / "build" / "src" / "cli" / "trainwatch"))


def wait_for(predicate, timeout=15.0, interval=0.05, what="condition"):
    """Polls `predicate` until it returns a truthy value; fails the test after `timeout`."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}; last value: {last!r}")


class Server:
    """One `trainwatch serve` process on a config file and a data dir."""

    def __init__(self, config_path, data_dir, log_path, listen="127.0.0.1:0"):
        self.listen = listen
        self.config_path = config_path
        self.data_dir = data_dir
        self.log_path = log_path
        self.proc = None
        self.base = None

    def start(self):
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [BINARY, "serve", "-c", str(self.config_path), "--listen", self.listen, "--data-dir", str(self.data_dir)],
            stdout=subprocess.PIPE, stderr=self.log)
        line = self.proc.stdout.readline().decode()
        assert "serving" in line, f"server did not start: {line!r}; log: {pathlib.Path(self.log_path).read_text()}"
        self.base = line.strip().split(" on ")[1].rstrip("/")
        return self

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=20)
        self.log.close()

    def reload(self):
        self.proc.send_signal(signal.SIGHUP)

    def get(self, path):
        """(status, parsed JSON or text, headers) of a GET."""
        try:
            with urllib.request.urlopen(self.base + path, timeout=10) as response:
                return response.status, decode(response), response.headers
        except urllib.error.HTTPError as error:
            return error.code, decode(error), error.headers

    def monitor(self, name):
        return self.get(f"/api/v1/monitors/{name}")[1]

    def wait_status(self, name, status, timeout=15.0):
        return wait_for(lambda: (m := self.monitor(name)) and m.get("status") == status and m,
                        timeout=timeout, what=f"{name} to be {status}")


def api_call(server, method, path, body=None, token=None, raw=None):
    """(status, decoded JSON or None, headers) of one API request; `raw` sends a body as is."""
    data = raw.encode() if raw is not None else json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(server.base + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read().decode()
            return response.status, json.loads(text) if text else None, response.headers
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read().decode() or "null"), error.headers


def decode(response):
    body = response.read()
    kind = response.headers.get("Content-Type", "")
    return json.loads(body) if "json" in kind else body.decode()


@pytest.fixture
def start_server(tmp_path):
    """start_server(yaml_text) -> a running Server; every one started is stopped at the end.
    `listen` fixes the address where the config must name it (a single sign-on redirect URL)."""
    servers = []

    def start(config_text, data_dir=None, listen="127.0.0.1:0"):
        config = tmp_path / "trainwatch.yaml"
        config.write_text(config_text)
        server = Server(config, data_dir or tmp_path / "data", tmp_path / "server.log", listen).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


class HealthTarget:
    """The seeds' rank-0 /health endpoint, whose answer a test can change."""

    def __init__(self):
        self.status = 200
        self.body = {"status": "ok", "training": {"status": "training", "step": 10, "overflow_steps": 0},
                     "stalled": False}
        target = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                payload = json.dumps(target.body).encode()
                self.send_response(target.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def degrade(self):
        self.status = 503
        self.body = dict(self.body, status="degraded")

    def recover(self):
        self.status = 200
        self.body = dict(self.body, status="ok")

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def health_target():
    target = HealthTarget()
    yield target
    target.close()


class SocketTarget:
    """A listener that misbehaves: 'silent' accepts and never answers; 'reset' accepts and
    resets the connection; 'garbage' answers bytes that are not HTTP."""

    def __init__(self, mode):
        self.mode = mode
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.held = []
        self.running = True
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while self.running:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.mode == "silent":
                self.held.append(conn)
            elif self.mode == "reset":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.close()
            elif self.mode == "garbage":
                try:
                    conn.recv(4096)
                    conn.sendall(b"\x00\xffnot http at all\r\n\r\n")
                finally:
                    conn.close()

    def close(self):
        self.running = False
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.fixture
def socket_target():
    targets = []

    def make(mode):
        target = SocketTarget(mode)
        targets.append(target)
        return target

    yield make
    for target in targets:
        target.close()


@pytest.fixture
def closed_port():
    """A port on 127.0.0.1 with nothing listening."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# PostgreSQL 15 from Debian (scripts/setup.sh), for the tests of store.url.
PG_BIN = pathlib.Path("/usr/lib/postgresql/15/bin")
PASSWORD = "pg-secret-3141"


def loopback_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Postgres:
    """One cluster in a temp dir, run as the postgres user; password auth over TCP."""

    def __init__(self):
        # Not under pytest's tmp_path: its parents are root's alone, and the server runs as postgres.
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="tw-pg-"))
        subprocess.run(["chown", "postgres", str(self.dir)], check=True)
        self.port = loopback_port()
        pwfile = self.dir / "pw"
        pwfile.write_text(PASSWORD + "\n")
        subprocess.run(["chown", "postgres", str(pwfile)], check=True)
        self.as_postgres([str(PG_BIN / "initdb"), "-D", str(self.dir / "data"), "-U", "postgres", "--no-sync",
                          "--auth-host=scram-sha-256", "--auth-local=trust", f"--pwfile={pwfile}"])
        self.start()
        self.psql("CREATE DATABASE trainwatch", database="postgres")

    def as_postgres(self, argv):
        done = subprocess.run(["runuser", "-u", "postgres", "--"] + argv, capture_output=True, text=True)
        assert done.returncode == 0, f"{argv[0]} failed: {done.stdout}{done.stderr}"
        return done.stdout

    def psql(self, sql, database="trainwatch"):
        """What one statement prints, unaligned and without headers."""
        return self.as_postgres(["psql", "-h", str(self.dir), "-p", str(self.port), "-U", "postgres", "-d", database,
                                 "-q", "-At", "-c", sql])

    def start(self):
        self.as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(self.dir / "data"), "-l", str(self.dir / "log"), "-w",
                          "-o", f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.dir}",
                          "start"])

    def stop(self, mode="fast"):
        self.as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(self.dir / "data"), "-m", mode, "-w", "stop"])

    def discard(self):
        """Stops the server at once, whatever state it is in, and removes its folder."""
        subprocess.run(["runuser", "-u", "postgres", "--", str(PG_BIN / "pg_ctl"), "-D", str(self.dir / "data"),
                        "-m", "immediate", "-w", "stop"], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, password=PASSWORD):
        return f"postgresql://postgres:{password}@127.0.0.1:{self.port}/trainwatch?sslmode=disable"


@pytest.fixture
def postgres():
    if not (PG_BIN / "initdb").exists():
        pytest.fail("PostgreSQL 15 is not installed; scripts/setup.sh installs it")
    pg = Postgres()
    yield pg
    pg.discard()


@pytest.fixture
def start_replicas(tmp_path, postgres, monkeypatch):
    """start_replicas(count, admin_token) -> `count` running replicas on one real PostgreSQL,
    each with its own data dir, sharing one config (a canary monitor and the admin token);
    every one started is stopped at the end."""
    started = []

    def start(count, admin_token):
        monkeypatch.setenv("TRAINWATCH_STORE_URL", postgres.url())
        path = tmp_path / "replicas.yaml"
        path.write_text(f"""
server:
  allow_local_channel_targets: true   # the tests' receivers listen on loopback
store:
  url: ${{TRAINWATCH_STORE_URL}}
auth:
  admin_tokens: ["{admin_token}"]
monitors:
  - {{name: canary, type: tcp, host: 127.0.0.1, port: 9, interval: 1h}}
""")
        for i in range(count):
            started.append(Server(path, tmp_path / f"data-{i}", tmp_path / f"replica-{i}.log").start())
        return started[-count:]

    yield start
    for replica in started:
        replica.stop()
