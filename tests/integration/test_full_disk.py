"""A data directory that fills up: the real binary on a small tmpfs the test mounts.

While the disk is full nothing may be acknowledged that is not stored: pings get a 503
problem, /healthz says degraded, /metrics counts the failed writes and the log names
the reason. A monitor that goes DOWN meanwhile is not shown DOWN before its incident and
its alert are stored; once space returns, the alert goes out and the incident is in the
API, and a restart keeps both.
"""
import errno
import os
import re
import subprocess
import urllib.parse
import http.client

import pytest

from conftest import Server, wait_for
from receivers import HttpReceiver

TOKEN = "full-disk-ping-0001"
DISK_BYTES = 8 * 1024 * 1024
MAX_PINGS_TO_FILL = 3000  # pings sent at most while waiting for the store to refuse one


@pytest.fixture
def small_disk(tmp_path):
    """A tmpfs of DISK_BYTES mounted for this test only (needs root); unmounted after."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES},mode=0755", "tmpfs", str(mount_point)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (root needed): {mounted.stderr.strip()}")
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(disk):
    """Writes a filler file until the tmpfs has not one byte left."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f:
        for size in (65536, 4096, 1):
            for _ in range(DISK_BYTES // size + 1):  # bounded: the disk holds fewer
                try:
                    if f.write(b"\0" * size) < size:
                        break
                except OSError as error:
                    assert error.errno == errno.ENOSPC
                    break
    return filler


def request(server, path, method="GET", body=None):
    url = urllib.parse.urlsplit(server.base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        conn.request(method, path, body=body)
        response = conn.getresponse()
        return response.status, response.read().decode(), response.headers
    finally:
        conn.close()


def metric(server, name, labels=""):
    status, text, _ = request(server, "/metrics")
    assert status == 200
    match = re.search(rf"^{re.escape(name)}{re.escape(labels)} ([0-9.e+]+)$", text, re.M)
    return float(match.group(1)) if match else None


def config(receiver_base, target_port):
    return f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver_base}/hook"}}
monitors:
  - name: trainer
    type: http
    url: http://127.0.0.1:{target_port}/health
    interval: 200ms
    timeout: 1s
    conditions: ["[STATUS] == 200"]
    notify: [hook]
  - name: nightly
    type: heartbeat
    period: 1h
    grace: 1h
    token: {TOKEN}
"""


@pytest.fixture
def receiver():
    r = HttpReceiver()
    yield r
    r.close()


def start(tmp_path, disk, text):
    path = tmp_path / "trainwatch.yaml"
    path.write_text(text)
    return Server(path, disk / "data", tmp_path / "server.log").start()


def refuse_writes(server, disk):
    """Fills the disk, then pings until the store refuses one; returns that answer."""
    fill(disk)
    for i in range(MAX_PINGS_TO_FILL):
        status, body, headers = request(server, f"/ping/{TOKEN}", method="POST", body=f"ping {i} " + "x" * 2000)
        if status != 200:
            return status, body, headers
    raise AssertionError(f"{MAX_PINGS_TO_FILL} pings were all answered 200 on a full disk")


def down_deliveries(receiver):
    return [r for r in receiver.accepted("/hook") if r["body"].get("event") == "down"]


def test_full_disk_refuses_pings_says_degraded_and_delivers_the_down_once_space_returns(
        tmp_path, small_disk, receiver, health_target):
    server = start(tmp_path, small_disk, config(receiver.base, health_target.port))
    try:
        server.wait_status("trainer", "up")
        assert request(server, f"/ping/{TOKEN}")[0] == 200
        assert server.get("/healthz")[0] == 200

        status, body, headers = refuse_writes(server, small_disk)
        assert status == 503
        assert headers.get("Content-Type", "").startswith("application/problem+json")
        assert "not stored" in body

        health, reason, _ = server.get("/healthz")
        assert health == 503
        assert reason["status"] == "degraded"
        assert "full" in reason["reason"]
        assert metric(server, "trainwatch_store_write_failures_total", '{reason="disk_full"}') > 0
        assert metric(server, "trainwatch_store_writable") == 0
        assert metric(server, "trainwatch_pings_refused_total") >= 1
        wait_for(lambda: "database or disk is full" in (tmp_path / "server.log").read_text(),
                 what="a log line naming the reason")

        # The target fails while the disk is full: the change is decided, not stored.
        health_target.degrade()
        wait_for(lambda: metric(server, "trainwatch_state_changes_waiting") == 1, what="the DOWN to wait for the store")
        assert server.get("/api/v1/incidents")[1]["incidents"] == []
        assert server.monitor("trainer").get("incident") is None, "an incident shown that the store does not hold"
        for _ in range(5):  # every ping while full is refused, none acknowledged
            assert request(server, f"/ping/{TOKEN}")[0] == 503
        assert down_deliveries(receiver) == []

        (small_disk / "filler").unlink()

        wait_for(lambda: down_deliveries(receiver), what="the DOWN alert once space returned")
        [incident] = wait_for(lambda: server.get("/api/v1/incidents")[1]["incidents"], what="the stored incident")
        assert incident["monitor"] == "trainer"
        assert server.wait_status("trainer", "down")["incident"]["id"] == incident["id"]
        wait_for(lambda: server.get("/healthz")[0] == 200, what="/healthz healthy again")
        assert request(server, f"/ping/{TOKEN}")[0] == 200
    finally:
        server.stop()

    # A restart keeps the incident and does not send the DOWN again.
    server = Server(server.config_path, small_disk / "data", tmp_path / "server.log").start()
    try:
        assert server.wait_status("trainer", "down")["incident"]["id"] == incident["id"]
        assert [i["id"] for i in server.get("/api/v1/incidents")[1]["incidents"]] == [incident["id"]]
        assert len(down_deliveries(receiver)) == 1
    finally:
        server.stop()


def test_a_down_decided_on_a_full_disk_is_delivered_after_a_restart(tmp_path, small_disk, receiver, health_target):
    server = start(tmp_path, small_disk, config(receiver.base, health_target.port))
    try:
        server.wait_status("trainer", "up")
        assert refuse_writes(server, small_disk)[0] == 503
        health_target.degrade()
        wait_for(lambda: metric(server, "trainwatch_state_changes_waiting") == 1, what="the DOWN to wait for the store")
    finally:
        server.stop()  # with the disk still full
    (small_disk / "filler").unlink()

    server = Server(server.config_path, small_disk / "data", tmp_path / "server.log").start()
    try:
        wait_for(lambda: down_deliveries(receiver), what="the DOWN alert after the restart")
        [incident] = wait_for(lambda: server.get("/api/v1/incidents")[1]["incidents"], what="the stored incident")
        assert server.wait_status("trainer", "down")["incident"]["id"] == incident["id"]
    finally:
        server.stop()


def test_data_dir_and_database_are_private_whatever_the_umask(tmp_path, start_server):
    old = os.umask(0)
    try:
        server = start_server(f"monitors:\n  - {{name: nightly, type: heartbeat, period: 1h, token: {TOKEN}}}\n",
                              data_dir=tmp_path / "fresh" / "data")
    finally:
        os.umask(old)
    assert request(server, f"/ping/{TOKEN}")[0] == 200  # the WAL and its index exist now
    data = tmp_path / "fresh" / "data"
    assert data.stat().st_mode & 0o777 == 0o700
    files = sorted(p.name for p in data.iterdir())
    assert "trainwatch.db" in files and "trainwatch.db-wal" in files, files
    for name in files:
        assert (data / name).stat().st_mode & 0o777 == 0o600, name
