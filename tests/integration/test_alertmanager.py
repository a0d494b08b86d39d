"""An alertmanager channel against a real Alertmanager (Debian's prometheus-alertmanager):
an incident stays a firing alert for as long as it lasts, well past Alertmanager's
resolve_timeout and across a restart of trainwatch, without any remind_every, and the
recovery resolves it."""
import json
import os
import socket
import subprocess
import time
import urllib.request

import pytest

from conftest import wait_for

ALERTMANAGER = "/usr/bin/prometheus-alertmanager"
RESOLVE_TIMEOUT_S = 5
HOLD_S = 2 * RESOLVE_TIMEOUT_S + 2  # the alert must outlive resolve_timeout and the first endsAt (4 x 2s)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Alertmanager:
    def __init__(self, tmp):
        (tmp / "am").mkdir()
        config = tmp / "am" / "alertmanager.yml"
        config.write_text(f"""
global:
  resolve_timeout: {RESOLVE_TIMEOUT_S}s
route:
  receiver: nobody
receivers:
  - name: nobody
""")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(tmp / "am" / "alertmanager.log", "wb")
        self.proc = subprocess.Popen(
            [ALERTMANAGER, f"--config.file={config}", f"--storage.path={tmp / 'am' / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--cluster.listen-address="],
            stdout=self.log, stderr=self.log)
        wait_for(self.ready, timeout=20, what="Alertmanager to be ready")

    def ready(self):
        assert self.proc.poll() is None, "Alertmanager exited; see am/alertmanager.log"
        try:
            with urllib.request.urlopen(self.base + "/-/ready", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def alerts(self, monitor):
        """The alerts Alertmanager holds as not yet resolved for `monitor`."""
        with urllib.request.urlopen(self.base + "/api/v2/alerts", timeout=5) as r:
            return [a for a in json.loads(r.read()) if a["labels"].get("monitor") == monitor]

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.log.close()


@pytest.fixture
def alertmanager(tmp_path):
    if not os.path.exists(ALERTMANAGER):
        pytest.skip("prometheus-alertmanager is not installed")
    am = Alertmanager(tmp_path)
    yield am
    am.close()


def config(am, target_port):
    return f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: am, type: alertmanager, url: "{am.base}", resend_every: 2s, labels: {{team: ml}}}}
monitors:
  - name: rank0-health
    type: http
    url: http://127.0.0.1:{target_port}/health
    interval: 500ms
    timeout: 1s
    notify: [am]
    conditions: ["[STATUS] == 200", "[BODY].status == ok"]
"""


def stays_active(am, seconds):
    """Polls Alertmanager for `seconds`: the alert must be active at every look."""
    deadline = time.monotonic() + seconds
    looks = 0
    while time.monotonic() < deadline:
        alerts = am.alerts("rank0-health")
        assert [a["status"]["state"] for a in alerts] == ["active"], alerts
        looks += 1
        time.sleep(0.5)
    return looks


def test_an_open_incident_stays_firing_past_resolve_timeout_and_a_restart_until_recovery(
        start_server, health_target, alertmanager):
    server = start_server(config(alertmanager, health_target.port))
    server.wait_status("rank0-health", "up")
    health_target.degrade()
    server.wait_status("rank0-health", "down")
    [alert] = wait_for(lambda: alertmanager.alerts("rank0-health"), what="the alert in Alertmanager")
    assert alert["labels"]["team"] == "ml" and alert["labels"]["alertname"] == "TrainwatchMonitorDown"
    incident = alert["labels"]["incident"]

    assert stays_active(alertmanager, HOLD_S / 2) > 5
    # A restart of trainwatch: the open incident's alert goes on being re-sent.
    server.stop()
    server = start_server(config(alertmanager, health_target.port))
    assert stays_active(alertmanager, HOLD_S / 2 + 4) > 5
    [alert] = alertmanager.alerts("rank0-health")
    assert alert["labels"]["incident"] == incident

    # Re-sends are not notifications: the API shows the DOWN only.
    _, body, _ = server.get("/api/v1/deliveries?limit=100")
    assert [d["kind"] for d in body["deliveries"]] == ["down"]

    health_target.recover()
    server.wait_status("rank0-health", "up")
    wait_for(lambda: not alertmanager.alerts("rank0-health"), what="the alert resolved in Alertmanager")
