"""The server's engine, end to end: real binary, real targets, real SQLite file."""
import re
from datetime import datetime, timedelta
import subprocess

from conftest import BINARY, wait_for


def http_monitor(name, port, extra=""):
    return f"""
  - name: {name}
    type: http
    url: http://127.0.0.1:{port}/health
    interval: 200ms
    timeout: 1s
    retries: 1
    conditions:
      - "[STATUS] == 200"
      - "[BODY].status == ok"
      - "[BODY].training.overflow_steps == 0"
{extra}"""


def config(*monitors):
    return "monitors:" + "".join(monitors)


def test_health_endpoint_goes_down_with_a_cause_and_recovers(start_server, health_target):
    server = start_server(config(http_monitor("rank0-health", health_target.port)))
    up = server.wait_status("rank0-health", "up")
    assert up["last_error"] is None
    assert up["last_result"]["http_status"] == 200

    health_target.degrade()
    down = server.wait_status("rank0-health", "down")
    cause = "HTTP 503; [BODY].status == degraded, expected ok"
    assert down["last_error"] == cause
    assert down["incident"]["cause"] == cause
    assert down["incident"]["ended"] is None

    health_target.recover()
    server.wait_status("rank0-health", "up")
    # History is read from the store once the incident's end commits, just after the state.
    [incident] = wait_for(lambda: (i := server.get("/api/v1/incidents?monitor=rank0-health")[1]["incidents"])
                          and i[0]["ended"] and i, what="the incident to end in the store")
    assert incident["cause"] == cause
    assert incident["ended"] is not None and incident["duration_ms"] >= 0


def test_retries_hold_down_until_enough_failures(start_server, health_target):
    server = start_server(config(http_monitor("rank0-health", health_target.port).replace("retries: 1", "retries: 3")))
    server.wait_status("rank0-health", "up")
    health_target.degrade()
    # Three failures in a row are still up; the fourth is down.
    m = wait_for(lambda: (m := server.monitor("rank0-health")) and m["consecutive_failures"] >= 3 and m,
                 what="three failures")
    if m["consecutive_failures"] == 3:
        assert m["status"] == "up"
    server.wait_status("rank0-health", "down")


def test_misbehaving_targets_fail_with_reasons_a_person_understands(start_server, socket_target, closed_port):
    silent = socket_target("silent")
    reset = socket_target("reset")
    garbage = socket_target("garbage")
    server = start_server(f"""
monitors:
  - name: hangs
    type: http
    url: http://127.0.0.1:{silent.port}/
    interval: 500ms
    timeout: 500ms
  - name: resets
    type: http
    url: http://127.0.0.1:{reset.port}/
    interval: 200ms
  - name: garbage
    type: http
    url: http://127.0.0.1:{garbage.port}/
    interval: 200ms
  - name: closed-http
    type: http
    url: http://127.0.0.1:{closed_port}/
    interval: 200ms
  - name: closed-tcp
    type: tcp
    host: 127.0.0.1
    port: {closed_port}
    interval: 200ms
  - name: rendezvous
    type: tcp
    host: 127.0.0.1
    port: {silent.port}
    interval: 200ms
""")
    assert server.wait_status("hangs", "down")["last_error"] == "timeout after 500ms"
    assert re.match(r"(connect|connection): connection reset by peer|empty reply from server",
                    server.wait_status("resets", "down")["last_error"])
    assert server.wait_status("garbage", "down")["last_error"].startswith("invalid response")
    assert server.wait_status("closed-http", "down")["last_error"] == "connect: connection refused"
    assert server.wait_status("closed-tcp", "down")["last_error"] == "connect: connection refused"
    # A TCP check only needs the port open, even if nothing is ever said.
    server.wait_status("rendezvous", "up")
    # A hanging target delays no other monitor: fast checks start while a check of "hangs"
    # is in flight. (Their exact pace is pinned in simulated time by tests/engine; here only
    # the order of events is asserted, from the server's own start times and latencies.)
    def at(result):
        return datetime.fromisoformat(result["at"].replace("Z", "+00:00"))

    def fast_starts_during_a_hang():
        hangs = [(at(h), at(h) + timedelta(milliseconds=h["latency_ms"]))
                 for h in server.monitor("hangs")["results"]]
        fast = [at(c) for c in server.monitor("closed-tcp")["results"]]
        return sum(1 for start, end in hangs for f in fast if start < f < end) >= 2

    wait_for(fast_starts_during_a_hang, what="fast checks starting while a hanging check is in flight")


def test_oversized_body_fails_the_check_and_the_server_stays_up(start_server, health_target):
    health_target.body = {"status": "ok", "padding": "x" * (2 * 1024 * 1024)}
    server = start_server(config(http_monitor("big", health_target.port)))
    down = server.wait_status("big", "down")
    assert down["last_error"] == "body over 1 MiB"
    assert server.get("/healthz")[0] == 200


def test_restart_keeps_state_and_open_incident_and_reports_nothing_twice(start_server, health_target, tmp_path):
    text = config(http_monitor("rank0-health", health_target.port))
    health_target.degrade()
    server = start_server(text)
    first = server.wait_status("rank0-health", "down")["incident"]
    server.stop()

    again = start_server(text, data_dir=tmp_path / "data")
    m = again.monitor("rank0-health")
    assert m["status"] == "down"
    assert m["incident"]["id"] == first["id"]
    # Still failing after the restart: still one incident, not a second.
    wait_for(lambda: len(again.monitor("rank0-health")["results"]) >= 3, what="checks after restart")
    assert len(again.get("/api/v1/incidents")[1]["incidents"]) == 1

    health_target.recover()
    again.wait_status("rank0-health", "up")
    # The state is the engine's at once; the incident's end is history, read from the
    # store once its write commits (a millisecond or so later).
    [incident] = wait_for(lambda: (i := again.get("/api/v1/incidents")[1]["incidents"]) and i[0]["ended"] and i,
                          what="the incident to end in the store")
    assert incident["id"] == first["id"]


def test_metrics_expose_state_checks_and_durations(start_server, health_target, closed_port):
    server = start_server(config(http_monitor("rank0-health", health_target.port)) + f"""
  - name: chat-server
    type: tcp
    host: 127.0.0.1
    port: {closed_port}
    interval: 200ms
""")
    server.wait_status("rank0-health", "up")
    server.wait_status("chat-server", "down")
    status, text, headers = server.get("/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4")
    assert 'trainwatch_monitor_up{monitor="rank0-health",type="http"} 1' in text
    assert 'trainwatch_monitor_up{monitor="chat-server",type="tcp"} 0' in text
    assert re.search(r'trainwatch_checks_total\{monitor="chat-server",result="failure"\} [1-9]', text)
    assert 'trainwatch_check_duration_seconds_bucket{type="http",le="+Inf"}' in text
    assert re.search(r"^process_resident_memory_bytes \d+", text, re.M)


def test_api_errors_are_problem_json(start_server, health_target):
    server = start_server(config(http_monitor("rank0-health", health_target.port)))
    status, body, headers = server.get("/api/v1/monitors/nope")
    assert status == 404 and headers["Content-Type"] == "application/problem+json"
    assert body["detail"] == "no monitor named 'nope'"
    status, body, _ = server.get("/api/v1/monitors/rank0-health?limit=abc")
    assert status == 400 and "limit" in body["detail"]
    status, body, _ = server.get("/api/v1/incidents?before=-1")
    assert status == 400
    status, body, _ = server.get("/nothing/here")
    assert status == 404


def test_results_page_with_limit_and_before(start_server, health_target):
    server = start_server(config(http_monitor("rank0-health", health_target.port)))
    wait_for(lambda: len(server.monitor("rank0-health")["results"]) >= 4, what="four results")
    first_page = server.get("/api/v1/monitors/rank0-health?limit=2")[1]["results"]
    assert len(first_page) == 2
    older = server.get(f"/api/v1/monitors/rank0-health?limit=2&before={first_page[-1]['at']}")[1]["results"]
    assert older and older[0]["at"] < first_page[-1]["at"]


def test_sighup_reload_keeps_unchanged_monitors_and_refuses_a_bad_file(start_server, health_target, closed_port):
    server = start_server(config(http_monitor("rank0-health", health_target.port)))
    up = server.wait_status("rank0-health", "up")
    server.config_path.write_text(config(http_monitor("rank0-health", health_target.port)) + f"""
  - name: added
    type: tcp
    host: 127.0.0.1
    port: {closed_port}
    interval: 200ms
""")
    server.reload()
    server.wait_status("added", "down")
    assert server.monitor("rank0-health")["since"] == up["since"]

    server.config_path.write_text("monitors:\n  - name: broken\n    type: http\n    intervall: 5s\n")
    server.reload()
    wait_for(lambda: "reload of" in server.log_path.read_text(), what="the refusal in the log")
    assert "intervall: unknown key" in server.log_path.read_text()
    names = [m["name"] for m in server.get("/api/v1/monitors")[1]["monitors"]]
    assert names == ["added", "rank0-health"]


def test_check_command_reports_every_error_with_file_line_col(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("""server:
  listen: 127.0.0.1:8080
monitors:
  - name: Rank0
    type: http
    url: ftp://example
    interval: 5x
    conditions:
      - "[BOD].status == ok"
  - name: chat
    type: tcp
    host: 127.0.0.1
    port: 70000
    timout: 3s
  - name: chat
    type: smoke-signal
""")
    run = subprocess.run([BINARY, "check", str(path)], capture_output=True, text=True)
    assert run.returncode != 0
    lines = run.stderr.strip().splitlines()
    p = str(path)
    expected = [
        f"{p}:4:11: monitors[0].name: found 'Rank0'",
        f"{p}:7:15: monitors[0].interval: found '5x'; expected a duration",
        f"{p}:6:10: monitors[0].url: found 'ftp://example'; expected an http:// or https:// URL",
        f"{p}:9:9: monitors[0].conditions[0]:",
        f"{p}:13:11: monitors[1].port: found '70000'; expected a whole number from 1 to 65535",
        f"{p}:14:5: monitors[1].timout: unknown key",
        f"{p}:16:11: monitors[2].type: found 'smoke-signal'; expected one of: http, tcp",
    ]
    for want in expected:
        assert any(line.startswith(want) for line in lines), f"missing {want!r} in:\n" + "\n".join(lines)


def test_check_command_accepts_the_documented_example():
    run = subprocess.run([BINARY, "check", "examples/rank0-and-chat-server.yaml"], capture_output=True, text=True,
                         cwd=str(__import__("conftest").ROOT))
    assert run.returncode == 0, run.stderr


def test_a_reload_that_would_empty_the_installation_is_refused(start_server, tmp_path):
    """An editor truncates before it writes: a SIGHUP in between must not drop every monitor."""
    server = start_server("monitors:\n  - {name: nightly, type: heartbeat, period: 1h, token: nightly-token-0123}\n")
    assert server.get("/ping/nightly-token-0123")[0] == 200

    server.config_path.write_text("")
    server.reload()
    wait_for(lambda: "is empty; expected a YAML mapping" in server.log_path.read_text(), what="the refusal")
    server.config_path.write_text("jobs:\n  auto_create: true\n")
    server.reload()
    wait_for(lambda: "has no `monitors:` key while the running config has 1 monitors" in server.log_path.read_text(),
             what="the second refusal")
    assert [m["name"] for m in server.get("/api/v1/monitors")[1]["monitors"]] == ["nightly"]
    assert server.get("/ping/nightly-token-0123")[0] == 200

    # Said on purpose, it is applied.
    server.config_path.write_text("monitors: []\n")
    server.reload()
    wait_for(lambda: server.get("/api/v1/monitors")[1]["monitors"] == [], what="the emptied list")

    empty = tmp_path / "empty.yaml"
    empty.write_text("\n# nothing yet\n")
    run = subprocess.run([BINARY, "check", str(empty)], capture_output=True, text=True)
    assert run.returncode == 1
    assert f"{empty}:1:1: file: is empty" in run.stderr
    no_key = tmp_path / "jobs-only.yaml"
    no_key.write_text("jobs:\n  auto_create: true\n")
    run = subprocess.run([BINARY, "check", str(no_key)], capture_output=True, text=True)
    assert run.returncode == 0 and "warning: no `monitors:` key" in run.stderr


def test_a_reload_names_each_changed_key_it_can_apply_only_at_a_restart(start_server):
    """A SIGHUP applies the file, or says which key still holds its start value: never silence."""
    server = start_server("monitors:\n  - {name: nightly, type: heartbeat, period: 1h, token: nightly-token-0123}\n")
    server.config_path.write_text(
        "store:\n  url: postgresql://trainwatch@db.example/trainwatch\n"
        "server:\n  max_connections_per_address: 16\n"
        "retention:\n  raw: 30d\n"
        "monitors:\n  - {name: nightly, type: heartbeat, period: 1h, token: nightly-token-0123}\n"
        "  - {name: hourly, type: heartbeat, period: 1h, token: hourly-token-01234}\n")
    server.reload()
    wait_for(lambda: len(server.get("/api/v1/monitors")[1]["monitors"]) == 2, what="the reload applied")
    log = server.log_path.read_text()
    restart = "but is read only at start; restart trainwatch serve to apply it"
    assert f"reload: store.url changed in {server.config_path}, {restart}" in log, log
    assert f"reload: server.max_connections_per_address changed in {server.config_path}, {restart}" in log, log
    assert "retention.raw changed" not in log  # applied: the next prune keeps thirty days
    # Still the SQLite store it started with: pings are answered and kept.
    assert server.get("/ping/hourly-token-01234")[0] == 200
