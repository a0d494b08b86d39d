"""A cleanup script deletes SQLite's WAL under a running server: the real binary, a real
SQLite file, pings and a node report over HTTP, then kill -9 and a restart.

From the moment the WAL is gone nothing may be acknowledged: /healthz says degraded and
names the file within STORE_NOTICES_WITHIN (the store checks its files around every
transaction, and each second while idle), pings and reports are answered 503 and a refused
report is shown nowhere, and every ping answered 200 before is still there after the
restart (the store copied the WAL it still held open into the database file).
"""
import signal
import time

from conftest import Server, api_call, wait_for
from ping_load import PingLoad, stored_ping_bodies

TOKEN = "wal-ping-token-0001"
PINGERS = 4
MAX_PINGS_PER_PINGER = 3000   # bounded even if nothing else stops the load
ACKED_BEFORE_DELETE = 300     # the WAL goes once this many pings were answered 200
REFUSED_AFTER_DEGRADED = 100  # and the load goes on until this many more were answered
LOAD_SECONDS = 60
STORE_NOTICES_WITHIN = 5.0    # generous for a loaded machine: 1 s idle, one batch under load
# Each pinger waits this long after an answer: at most 4 x 40 = 160 pings a second, under
# the per-URL rate limit (200 a second), whose 429s are not the store's refusal. The
# refusals come back at once, so unpaced pingers emptied the bucket within a second.
PAUSE_S = 0.025


def config():
    return f"""
jobs:
  auto_create: true
monitors:
  - {{name: steps, type: heartbeat, period: 1h, grace: 1h, token: {TOKEN}}}
"""


def node_report(node):
    return {"schema": 1, "node": node, "report_every_ms": 60000,
            "ranks": [{"rank": 0, "pid": 4242, "status": "training", "step": 10, "step_reports": 11,
                       "last_step_age_ms": 100}]}


def degraded(server):
    status, body, _ = server.get("/healthz")
    return status == 503 and isinstance(body, dict) and body


def test_a_deleted_wal_under_ping_load_is_noticed_refused_and_loses_no_acknowledged_ping(tmp_path):
    path = tmp_path / "trainwatch.yaml"
    path.write_text(config())
    data = tmp_path / "data"
    server = Server(path, data, tmp_path / "server.log").start()
    status, _, _ = api_call(server, "POST", "/api/v1/jobs/train/report", node_report("node-a"))
    assert status == 200

    load = PingLoad(server, TOKEN, PINGERS, MAX_PINGS_PER_PINGER, LOAD_SECONDS, pause=PAUSE_S)
    try:
        wait_for(lambda: len(load.acked()) >= ACKED_BEFORE_DELETE, timeout=LOAD_SECONDS, what="pings under load")
        (data / "trainwatch.db-wal").unlink()  # the cleanup script
        health = wait_for(lambda: degraded(server), timeout=STORE_NOTICES_WITHIN, what="/healthz degraded")
        noticed = time.monotonic()
        assert "trainwatch.db-wal" in health["reason"], health
        assert "deleted" in health["reason"], health

        # A report now is refused and shown nowhere, for a known job and a new one.
        status, problem, headers = api_call(server, "POST", "/api/v1/jobs/train/report", node_report("node-b"))
        assert status == 503, problem
        assert headers.get("Content-Type", "").startswith("application/problem+json")
        assert "not applied" in problem["detail"]
        status, job, _ = api_call(server, "GET", "/api/v1/jobs/train")
        assert status == 200
        assert sorted(n["name"] for n in job["nodes"]) == ["node-a"], job["nodes"]
        status, problem, _ = api_call(server, "POST", "/api/v1/jobs/fresh/report", node_report("node-a"))
        assert status == 503, problem
        assert api_call(server, "GET", "/api/v1/jobs/fresh")[0] == 404

        wait_for(lambda: len([a for a in load.answers() if a[0] > noticed]) >= REFUSED_AFTER_DEGRADED,
                 timeout=LOAD_SECONDS, what="pings answered after /healthz said degraded")
        assert degraded(server), "the store took writes again on the vanished file"
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait(timeout=20)
        server.log.close()
    finally:
        load.stop()
    answered = load.answers()
    after = [status for sent, status, _ in answered if sent > noticed]
    assert after and set(after) == {503}, f"answers to pings sent once degraded: {sorted(set(after))}"
    acknowledged = [body for _, status, body in answered if status == 200]
    assert len(acknowledged) >= ACKED_BEFORE_DELETE
    assert "the file" in (tmp_path / "server.log").read_text()

    server = Server(path, data, tmp_path / "server.log").start()
    try:
        assert server.get("/healthz")[0] == 200
        assert server.monitor("steps")["heartbeat"]["last_ping"] is not None
        assert api_call(server, "POST", f"/api/v1/jobs/train/report", node_report("node-b"))[0] == 200
    finally:
        server.stop()
    stored = stored_ping_bodies(data / "trainwatch.db", "steps")
    lost = [body for body in acknowledged if body not in stored]
    assert lost == [], f"{len(lost)} of {len(acknowledged)} acknowledged pings lost, e.g. {lost[:5]}"
