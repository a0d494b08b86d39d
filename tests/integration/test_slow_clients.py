"""Slow and numerous clients cannot blind the server.

The real binary runs under `prlimit --nofile=1024:1024` (systemd's default soft limit,
here also the hard one, so the server cannot raise it) while 10,000 slow clients from
100 loopback addresses trickle request headers at it. Pings, /healthz and an HTTP check
of a healthy local target must keep working: the connection bound leaves descriptors to
the checks, a new connection takes the slot of the one waiting longest for a request, and
a header trickled one byte a second is dropped at the 10 s request deadline.
"""
import errno
import re
import resource
import socket
import subprocess
import time
import urllib.parse
import http.client

import pytest

from conftest import BINARY, Server, wait_for
from slow_clients import SlowClients  # 100 clients from each address: under the per-address cap

TOKEN = "slow-clients-ping-0001"
SLOW_CLIENTS = 10_000
LOAD_SECONDS = 60          # the load thread's own bound; stop() ends it sooner
MAX_SOCKETS_CREATED = 400_000  # every reconnect counts; the loop stops here whatever happens


def config(target_port):
    return f"""
monitors:
  - name: pings
    type: heartbeat
    period: 1h
    grace: 1h
    token: {TOKEN}
  - name: target
    type: http
    url: http://127.0.0.1:{target_port}/health
    interval: 1s
    timeout: 5s
"""


class LimitedServer(Server):
    """`trainwatch serve` under a soft and hard descriptor limit of 1,024."""

    def start(self):
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            ["prlimit", "--nofile=1024:1024", BINARY, "serve", "-c", str(self.config_path),
             "--listen", "127.0.0.1:0", "--data-dir", str(self.data_dir)],
            stdout=subprocess.PIPE, stderr=self.log)
        line = self.proc.stdout.readline().decode()
        assert "serving" in line, f"server did not start: {line!r}"
        self.base = line.strip().split(" on ")[1].rstrip("/")
        return self


def request(base, path):
    """(status, body) of one request on a fresh connection; (None, reason) when it fails."""
    url = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read().decode()
    except OSError as error:
        return None, repr(error)
    finally:
        conn.close()


def metric(text, pattern):
    match = re.search(pattern + r" ([0-9.e+]+)", text)
    return float(match.group(1)) if match else None


@pytest.fixture
def many_descriptors():
    """This process holds 10,000 sockets: raise its own soft limit to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < SLOW_CLIENTS + 1_000:
        pytest.skip(f"the hard descriptor limit {hard} is too low for {SLOW_CLIENTS} clients")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_pings_healthz_and_checks_work_under_10000_slow_clients_at_1024_descriptors(
        tmp_path, health_target, many_descriptors):
    config_path = tmp_path / "trainwatch.yaml"
    config_path.write_text(config(health_target.port))
    server = LimitedServer(config_path, tmp_path / "data", tmp_path / "server.log").start()
    clients = None
    try:
        server.wait_status("target", "up")
        port = int(urllib.parse.urlsplit(server.base).port)
        clients = SlowClients(port, SLOW_CLIENTS, limit_s=LOAD_SECONDS, max_created=MAX_SOCKETS_CREATED).start()
        wait_for(lambda: clients.created >= SLOW_CLIENTS, timeout=60, what="10,000 slow clients to connect")
        _, before = request(server.base, "/metrics")
        successes_before = metric(before, r'trainwatch_checks_total\{monitor="target",result="success"\}')

        # A bounded run of pings and /healthz while the slow clients stay on.
        failures = []
        for i in range(30):
            status, body = request(server.base, f"/ping/{TOKEN}")
            if status != 200:
                failures.append(("ping", i, status, body))
            status, body = request(server.base, "/healthz")
            if status != 200:
                failures.append(("healthz", i, status, body))
            if len(failures) >= 3:
                break  # a hung server costs 10 s a request: three are proof enough
        assert not failures, failures

        # Checks keep running and keep passing: several more successes, no failure.
        wait_for(lambda: (metric(request(server.base, "/metrics")[1],
                                 r'trainwatch_checks_total\{monitor="target",result="success"\}') or 0)
                 >= (successes_before or 0) + 3, timeout=30, what="checks of the target to go on")
        status, after = request(server.base, "/metrics")
        assert status == 200
        assert metric(after, r'trainwatch_checks_total\{monitor="target",result="failure"\}') == 0
        assert server.monitor("target")["status"] == "up"
        # The load was real: the server had to close waiting clients to make room.
        assert (metric(after, r'trainwatch_http_connections_closed_total\{reason="room_for_new"\}') or 0) > 0
        log = (tmp_path / "server.log").read_text()
        assert "descriptor limit" in log  # the limit and the bound it led to are logged
    finally:
        if clients:
            clients.stop()
        server.stop()


def test_a_header_trickled_one_byte_a_second_is_dropped_at_the_request_deadline(start_server):
    server = start_server("monitors: []\n")
    url = urllib.parse.urlsplit(server.base)
    s = socket.create_connection((url.hostname, url.port))
    s.settimeout(1.0)
    header = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"x" * 100
    closed = False
    # One byte a second; the server should close at its 10 s request deadline. The idle
    # keep-alive allowance is 60 s, so a close within 30 s can only be the request
    # deadline: this waits for an event with a generous bound, it measures no duration.
    give_up = time.monotonic() + 30
    try:
        for byte in header:
            if time.monotonic() > give_up:
                break
            try:
                s.sendall(bytes([byte]))
                if s.recv(1) == b"":
                    closed = True
                    break
            except socket.timeout:
                continue  # nothing from the server this second: send the next byte
            except OSError as error:
                closed = error.errno in (errno.ECONNRESET, errno.EPIPE)
                break
    finally:
        s.close()
    assert closed, "the server kept a connection whose header never ended"
