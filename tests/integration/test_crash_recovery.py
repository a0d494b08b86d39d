"""kill -9 at the worst moments: the real binary, a real SQLite file, real peers.

What was acknowledged survives: every ping answered 200 is in the store after a restart,
and an alert whose delivery was cut off is delivered after the restart, any duplicate
carrying the same delivery_id.
"""
import signal

import pytest

from conftest import Server, wait_for
from ping_load import PingLoad, stored_ping_bodies
from receivers import HoldingReceiver

TOKEN = "crash-ping-token-0001"
PINGERS = 4
MAX_PINGS_PER_PINGER = 2000   # bounded even if the kill never comes
ACKED_BEFORE_KILL = 400       # the kill comes once this many pings were answered 200
LOAD_SECONDS = 30             # and the load stops after this long whatever happens


def start(tmp_path, text):
    path = tmp_path / "trainwatch.yaml"
    path.write_text(text)
    return Server(path, tmp_path / "data", tmp_path / "server.log").start()


def kill(server):
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(timeout=20)
    server.log.close()


def restart(server, tmp_path):
    return Server(server.config_path, tmp_path / "data", tmp_path / "server.log").start()


def test_kill_9_under_ping_load_loses_no_acknowledged_ping(tmp_path):
    server = start(tmp_path, f"""
monitors:
  - {{name: steps, type: heartbeat, period: 1h, grace: 1h, token: {TOKEN}}}
""")
    load = PingLoad(server, TOKEN, PINGERS, MAX_PINGS_PER_PINGER, LOAD_SECONDS)
    try:
        wait_for(lambda: len(load.acked()) >= ACKED_BEFORE_KILL, timeout=LOAD_SECONDS, what="pings under load")
        kill(server)
    finally:
        load.stop()
    answered = load.acked()
    assert len(answered) >= ACKED_BEFORE_KILL

    server = restart(server, tmp_path)
    try:
        assert server.monitor("steps")["heartbeat"]["last_ping"] is not None
    finally:
        server.stop()
    stored = stored_ping_bodies(tmp_path / "data" / "trainwatch.db", "steps")
    lost = [body for body in answered if body not in stored]
    assert lost == [], f"{len(lost)} of {len(answered)} acknowledged pings lost, e.g. {lost[:5]}"


@pytest.fixture
def holding_receiver():
    r = HoldingReceiver()
    yield r
    r.close()


def test_kill_9_during_an_alert_delivery_delivers_it_after_restart_with_the_same_delivery_id(
        tmp_path, holding_receiver, health_target):
    server = start(tmp_path, f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{holding_receiver.base}/hook"}}
monitors:
  - name: trainer
    type: http
    url: http://127.0.0.1:{health_target.port}/health
    interval: 200ms
    timeout: 1s
    conditions: ["[STATUS] == 200"]
    notify: [hook]
""")
    server.wait_status("trainer", "up")
    health_target.degrade()
    [first] = wait_for(lambda: holding_receiver.arrivals("down"), what="the DOWN delivery to arrive (and be held)")
    kill(server)  # while the receiver holds the request open
    holding_receiver.release.set()

    server = restart(server, tmp_path)
    try:
        wait_for(lambda: len(holding_receiver.arrivals("down")) >= 2, what="the DOWN delivered again after the restart")
        wait_for(lambda: [d for d in server.get("/api/v1/deliveries?limit=100")[1]["deliveries"]
                          if d.get("status") == "delivered"], what="the delivery recorded as delivered")
        downs = holding_receiver.arrivals("down")
        ids = {d["body"]["delivery_id"] for d in downs}
        assert ids == {first["body"]["delivery_id"]}, downs
        assert {d["headers"].get("X-Trainwatch-Delivery") for d in downs} == {str(first["body"]["delivery_id"])}
        assert {d["body"]["incident_id"] for d in downs} == {first["body"]["incident_id"]}
        assert server.monitor("trainer")["status"] == "down"
    finally:
        server.stop()
