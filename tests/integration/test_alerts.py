"""Alerts end to end: the real binary, a real SQLite file, real receivers on loopback."""
import hashlib
import hmac
import json
import signal
import subprocess
import threading
from datetime import datetime, timedelta, timezone

import pytest

from conftest import BINARY, Server, wait_for
from receivers import HttpReceiver, SmtpReceiver


@pytest.fixture
def receiver():
    r = HttpReceiver()
    yield r
    if r.hang is not None:
        r.hang.set()
    r.close()


def monitor(name, port, notify=None, extra=""):
    lines = f"""
  - name: {name}
    type: http
    url: http://127.0.0.1:{port}/health
    interval: 200ms
    timeout: 1s
    conditions: ["[STATUS] == 200", "[BODY].status == ok"]
"""
    if notify:
        lines += f"    notify: [{', '.join(notify)}]\n"
    return lines + extra


def deliveries(server, query=""):
    status, body, _ = server.get("/api/v1/deliveries?limit=1000" + query)
    assert status == 200
    return body["deliveries"]


def test_down_and_recovery_reach_every_provider_in_its_shape(start_server, health_target, receiver):
    smtp = SmtpReceiver(username="alice", password="s3cret")
    try:
        base = receiver.base
        server = start_server(f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: slack, type: slack, webhook_url: "{base}/slack/T000/B000/XXXX"}}
  - {{name: discord, type: discord, webhook_url: "{base}/discord"}}
  - {{name: hook, type: webhook, url: "{base}/hook", secret: "hook-key", headers: {{X-Team: ml}}}}
  - {{name: pd, type: pagerduty, routing_key: "R0UTING", url: "{base}/pd"}}
  - {{name: am, type: alertmanager, url: "{base}/am", labels: {{team: ml}}}}
  - {{name: ntfy, type: ntfy, url: "{base}/ntfy", topic: training}}
  - {{name: tg, type: telegram, url: "{base}/tg", bot_token: "123:SECRETTOKEN", chat_id: "-100"}}
  - name: mail
    type: email
    smtp_url: smtp://127.0.0.1:{smtp.port}
    starttls: "off"
    username: alice
    password: s3cret
    from: trainwatch@example.com
    to: [oncall@example.com, ml@example.com]
monitors:{monitor("rank0-health", health_target.port, ["slack", "discord", "hook", "pd", "am", "ntfy", "tg", "mail"])}
""")
        server.wait_status("rank0-health", "up")
        health_target.degrade()
        server.wait_status("rank0-health", "down")
        wait_for(lambda: len(receiver.accepted()) >= 7 and smtp.messages, what="a DOWN on every channel")
        health_target.recover()
        server.wait_status("rank0-health", "up")
        wait_for(lambda: len(receiver.accepted()) >= 14 and len(smtp.messages) >= 2, what="a recovery on every channel")

        cause = "HTTP 503; [BODY].status == degraded, expected ok"
        [slack_down, slack_up] = [r["body"] for r in receiver.accepted("/slack/T000/B000/XXXX")]
        assert slack_down["blocks"][0] == {"type": "header", "text": {"type": "plain_text", "text": "🔴 DOWN: rank0-health"}}
        assert slack_down["blocks"][1]["text"] == {"type": "mrkdwn", "text": cause}
        fields = [f["text"] for b in slack_down["blocks"] if "fields" in b for f in b["fields"]]
        assert "*HTTP status*\n503" in fields
        assert any(f.startswith("*Response*\n{\"status\": \"degraded\"") for f in fields), fields
        assert slack_up["blocks"][0]["text"]["text"].startswith("✅ UP: rank0-health after ")

        [discord_down, _] = [r["body"] for r in receiver.accepted("/discord")]
        assert discord_down["embeds"][0]["title"] == "🔴 DOWN: rank0-health"

        [hook_down, hook_up] = receiver.accepted("/hook")
        assert hook_down["body"]["schema"] == "trainwatch.alert.v1"
        assert hook_down["body"]["event"] == "down" and hook_up["body"]["event"] == "up"
        assert hook_down["body"]["cause"] == cause
        assert hook_down["body"]["check"]["http_status"] == 503
        assert hook_up["body"]["incident_id"] == hook_down["body"]["incident_id"]
        assert hook_up["body"]["duration_ms"] >= 0
        expected = "sha256=" + hmac.new(b"hook-key", hook_down["raw"], hashlib.sha256).hexdigest()
        assert hook_down["headers"]["X-Trainwatch-Signature"] == expected
        assert hook_down["headers"]["X-Team"] == "ml"

        [pd_down, pd_up] = [r["body"] for r in receiver.accepted("/pd/v2/enqueue")]
        incident = str(hook_down["body"]["incident_id"])
        assert (pd_down["event_action"], pd_down["dedup_key"]) == ("trigger", incident)
        assert (pd_up["event_action"], pd_up["dedup_key"]) == ("resolve", incident)
        assert pd_down["routing_key"] == "R0UTING" and pd_down["payload"]["severity"] == "critical"

        am_posts = [r["body"] for r in receiver.accepted("/am/api/v2/alerts")]
        [am_down, am_up] = [am_posts[0], am_posts[-1]]
        assert am_down[0]["labels"] == {"alertname": "TrainwatchMonitorDown", "monitor": "rank0-health",
                                        "severity": "critical", "source": "trainwatch", "monitor_type": "http",
                                        "incident": incident, "team": "ml"}
        # Firing until a few re-send periods ahead (re-sent while down), resolved by the recovery.
        assert am_down[0]["endsAt"] > am_down[0]["startsAt"]
        assert am_up[0]["labels"] == am_down[0]["labels"]
        assert am_up[0]["endsAt"] >= am_up[0]["startsAt"]

        [ntfy_down, _] = [r["body"] for r in receiver.accepted("/ntfy")]
        assert (ntfy_down["topic"], ntfy_down["priority"]) == ("training", 5)
        [tg_down, _] = [r["body"] for r in receiver.accepted("/tg/bot123:SECRETTOKEN/sendMessage")]
        assert tg_down["chat_id"] == "-100" and tg_down["parse_mode"] == "HTML"

        rcpts, sender, mail = smtp.messages[0]
        assert rcpts == ["oncall@example.com", "ml@example.com"] and sender == "trainwatch@example.com"
        assert mail["Subject"] == "🔴 DOWN: rank0-health"
        parts = {p.get_content_type(): p.get_content() for p in mail.walk() if not p.is_multipart()}
        assert cause in parts["text/plain"] and "HTTP status: 503" in parts["text/plain"]
        assert "<h2" in parts["text/html"] and "degraded" in parts["text/html"]

        # Secrets appear neither in the API nor in the log.
        _, channels, _ = server.get("/api/v1/notifications")
        text = json.dumps(channels)
        for secret in ["SECRETTOKEN", "R0UTING", "hook-key", "s3cret", "XXXX"]:
            assert secret not in text
            assert secret not in server.log_path.read_text()
        # The receiver has answered; the server records the outcome a moment later.
        wait_for(lambda: 'trainwatch_notifications_total{channel="pd",result="delivered"} 2' in server.get("/metrics")[1],
                 what="the metric to count both PagerDuty deliveries")
        _, channels, _ = server.get("/api/v1/notifications")
        assert {c["name"]: c["health"] for c in channels["notifications"]}["slack"] == "ok"
    finally:
        smtp.close()


def test_receiver_down_then_back_gets_everything_in_order(start_server, health_target, receiver):
    port = receiver.port
    server = start_server(f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver.base}/hook", default: true}}
monitors:{monitor("a", health_target.port)}{monitor("b", health_target.port)}
""")
    server.wait_status("a", "up")
    server.wait_status("b", "up")
    receiver.close()  # the receiver goes away: connection refused
    for _ in range(2):
        health_target.degrade()
        server.wait_status("a", "down")
        server.wait_status("b", "down")
        health_target.recover()
        server.wait_status("a", "up")
        server.wait_status("b", "up")
    wait_for(lambda: any(d["attempts"] >= 2 for d in deliveries(server)), what="retries against a dead receiver")
    back = HttpReceiver(port)  # back on the same port
    try:
        wait_for(lambda: len(back.accepted()) == 8, timeout=30, what="all 8 alerts after the receiver came back")
        ids = [r["body"]["delivery_id"] for r in back.accepted()]
        assert ids == sorted(ids), "one channel delivers in order"
        for name in "ab":
            events = [r["body"]["event"] for r in back.accepted() if r["body"]["monitor"]["name"] == name]
            assert events == ["down", "up", "down", "up"]
        wait_for(lambda: all(d["status"] == "delivered" for d in deliveries(server)), what="all recorded as delivered")
    finally:
        back.close()


def test_sighup_reloads_the_channels(start_server, health_target, receiver):
    second = HttpReceiver()
    try:
        server = start_server(f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver.base}/old", default: true}}
  - {{name: gone, type: webhook, url: "{second.base}/gone"}}
monitors:{monitor("a", health_target.port, notify=["hook", "gone"])}
""")
        server.wait_status("a", "up")
        server.config_path.write_text(f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver.base}/new", default: true}}
  - {{name: added, type: webhook, url: "{second.base}/added"}}
monitors:{monitor("a", health_target.port, notify=["hook", "added"])}
""")
        server.reload()

        def channels():
            return {c["name"] for c in server.get("/api/v1/notifications")[1]["notifications"]}
        wait_for(lambda: channels() == {"hook", "added"}, what="the reloaded channel list")
        health_target.degrade()
        server.wait_status("a", "down")
        # The monitor's new `notify` counts too, though its check did not change.
        wait_for(lambda: receiver.accepted("/new") and second.accepted("/added"), what="the DOWN on both reloaded channels")
        assert not receiver.all("/old") and not second.all("/gone")
    finally:
        second.close()


def test_500_then_429_with_retry_after_then_delivered(start_server, health_target, receiver):
    receiver.answer(500)
    receiver.answer(429, {"Retry-After": "2"})
    server = start_server(f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver.base}/hook", default: true}}
monitors:{monitor("a", health_target.port)}
""")
    server.wait_status("a", "up")
    health_target.degrade()
    wait_for(lambda: receiver.accepted(), timeout=20, what="the DOWN after a 500 and a 429")
    tries = receiver.all()
    assert [t["status"] for t in tries] == [500, 429, 200]
    assert tries[2]["at"] - tries[1]["at"] >= 1.9, "Retry-After: 2 was honoured"
    [d] = wait_for(lambda: [d for d in deliveries(server) if d["status"] == "delivered"], what="recorded as delivered")
    assert (d["attempts"], d["http_status"]) == (3, 200)


def test_4xx_is_permanent_and_garbage_is_a_recorded_failure(start_server, health_target, receiver, socket_target):
    receiver.answer(404)
    garbage = socket_target("garbage")
    server = start_server(f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: gone, type: webhook, url: "{receiver.base}/hook"}}
  - {{name: junk, type: webhook, url: "http://127.0.0.1:{garbage.port}/hook"}}
monitors:{monitor("a", health_target.port, ["gone", "junk"])}
""")
    server.wait_status("a", "up")
    health_target.degrade()
    failed = wait_for(lambda: [d for d in deliveries(server, "&channel=gone") if d["status"] == "failed"],
                      what="the 404 recorded as failed")
    assert failed[0]["attempts"] == 1 and failed[0]["last_error"].startswith("HTTP 404")
    junk = wait_for(lambda: [d for d in deliveries(server, "&channel=junk") if d["last_error"]],
                    what="the garbage answer recorded")
    assert junk[0]["status"] == "pending", junk[0]  # retried: a receiver answering garbage may recover
    assert "HTTP/0.9" in junk[0]["last_error"] or "weird" in junk[0]["last_error"].lower(), junk[0]
    _, channels, _ = server.get("/api/v1/notifications")
    assert {c["name"]: c["health"] for c in channels["notifications"]}["junk"] == "failing"


def test_killed_during_delivery_then_restarted_loses_nothing(start_server, health_target, receiver, tmp_path):
    receiver.hang = threading.Event()  # accept the request, never answer
    config = f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver.base}/hook", default: true, timeout: 30s}}
monitors:{monitor("a", health_target.port)}
"""
    server = start_server(config)
    server.wait_status("a", "up")
    health_target.degrade()
    wait_for(lambda: any(d["attempts"] == 1 and d["status"] == "pending" for d in deliveries(server)),
             what="the DOWN in flight")
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(timeout=10)
    receiver.hang.set()       # the receiver works again (the killed attempt may land too)
    receiver.hang = None
    restarted = Server(tmp_path / "trainwatch.yaml", tmp_path / "data", tmp_path / "server2.log").start()
    try:
        wait_for(lambda: any(r["body"]["event"] == "down" for r in receiver.accepted()), what="the DOWN re-sent")
        [d] = wait_for(lambda: [d for d in deliveries(restarted) if d["status"] == "delivered"],
                       what="the DOWN recorded as delivered")
        assert d["attempts"] == 2  # at-least-once: the attempt that was in flight is sent again
    finally:
        restarted.stop()


def test_maintenance_holds_then_releases_and_notify_after_damps_flaps(start_server, health_target, receiver):
    now = datetime.now(timezone.utc)
    end_at = now + timedelta(seconds=8)
    end = end_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    start = (now - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    damped_monitor = monitor("damped", health_target.port, extra="    notify_after: 1h\n")
    server = start_server(f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver.base}/hook", default: true}}
maintenance:
  - {{monitors: [held], start: "{start}", end: "{end}"}}
monitors:{monitor("held", health_target.port)}{damped_monitor}
""")
    server.wait_status("held", "up")
    server.wait_status("damped", "up")
    health_target.degrade()
    server.wait_status("held", "down")
    server.wait_status("damped", "down")
    health_target.recover()
    server.wait_status("held", "up")
    server.wait_status("damped", "up")
    # The flap of `damped` ended before notify_after: both its alerts are cancelled.
    damped = wait_for(lambda: (ds := deliveries(server, "&monitor=damped")) and len(ds) == 2 and
                      all(d["status"] == "cancelled" for d in ds) and ds, what="the flap cancelled")
    assert {d["kind"] for d in damped} == {"down", "up"}
    # `held` went down and back up inside its window: nothing is sent for it either.
    wait_for(lambda: (ds := deliveries(server, "&monitor=held")) and len(ds) == 2 and
             all(d["status"] == "cancelled" for d in ds), what="the held DOWN cancelled by its recovery")

    # Down again and still down when the window ends: notified then, not before.
    health_target.degrade()
    server.wait_status("held", "down")
    [held] = wait_for(lambda: [d for d in deliveries(server, "&monitor=held") if d["status"] == "pending"],
                      what="the new DOWN in the outbox")
    if datetime.now(timezone.utc) < end_at - timedelta(seconds=1):
        assert held["attempts"] == 0 and receiver.all() == [], "held inside the window"
    [down] = wait_for(lambda: receiver.accepted(), timeout=20, what="the DOWN released at the window's end")
    assert down["body"]["monitor"]["name"] == "held" and down["body"]["event"] == "down"
    assert datetime.now(timezone.utc) >= end_at.replace(microsecond=0)


def test_test_endpoint_and_notify_test_command(start_server, receiver, tmp_path):
    receiver.answer(503, times=1)
    token = "alerts-test-admin-token-0123456789"
    server = start_server(f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver.base}/hook"}}
monitors: []
auth:
  admin_tokens: ["{token}"]
""")
    import urllib.request
    import urllib.error

    def post(path, authorization=f"Bearer {token}"):
        request = urllib.request.Request(server.base + path, method="POST", data=b"")
        if authorization:
            request.add_header("Authorization", authorization)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    # A test send reaches people: without an admin token nothing goes out.
    assert post("/api/v1/notifications/hook/test", authorization=None)[0] == 401
    assert receiver.all() == []
    status, body = post("/api/v1/notifications/hook/test")
    assert status == 502 and body["error"].startswith("HTTP 503")
    status, body = post("/api/v1/notifications/hook/test")
    assert status == 200 and body["delivered"] is True
    assert receiver.accepted()[0]["body"]["event"] == "test"
    assert post("/api/v1/notifications/nope/test")[0] == 404

    cli = subprocess.run([BINARY, "notify-test", "--config", str(server.config_path), "hook"],
                         capture_output=True, text=True, timeout=30)
    assert cli.returncode == 0, cli.stderr
    assert "hook (webhook, http://127.0.0.1:" in cli.stdout and "delivered" in cli.stdout
    assert len(receiver.accepted()) == 2


def test_bad_channel_config_is_reported_with_its_position(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("""monitors: []
notifications:
  - name: x
    type: pagerdoody
  - name: y
    type: email
    smtp_url: smtp://mail:25
    to: [oncall@example.com]
""")
    result = subprocess.run([BINARY, "check", str(config)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert f"{config}:4:11: notifications.x.type: found 'pagerdoody'; expected one of: slack," in result.stderr
    assert f"{config}:5:5: notifications.y.from: missing; expected a value" in result.stderr


def test_a_missed_heartbeat_is_alerted_without_its_token(start_server, receiver):
    server = start_server(f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver.base}/hook", default: true}}
monitors:
  - name: deepspeed-checkpoint
    type: heartbeat
    period: 1s
    grace: 1s
    token: secret-ping-token
""")
    assert server.get("/ping/secret-ping-token")[0] == 200  # up; then silence
    server.wait_status("deepspeed-checkpoint", "up")
    [down] = wait_for(lambda: receiver.accepted(), timeout=20, what="the missed heartbeat alerted")
    body = down["body"]
    assert body["event"] == "down" and body["monitor"]["type"] == "heartbeat"
    assert body["cause"].startswith("no ping"), body["cause"]
    assert {"label": "Expected every", "value": "1s (+1s grace)"} in body["fields"]
    assert "secret-ping-token" not in down["raw"].decode()
