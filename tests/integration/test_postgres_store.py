"""The real binary on a real PostgreSQL server (store.url) that this test starts itself.

State, pings and incidents live in the database: a restarted serve finds them. A wrong
password stops serve with one line that does not show the password. While the server
is down no ping is acknowledged (503, /healthz degraded); once it is back, serve commits
again without a restart.
"""
import http.client
import os
import subprocess
import threading
import urllib.parse

from conftest import BINARY, PASSWORD, Server, wait_for

TOKEN = "pg-ping-token-0001"

CONFIG = f"""
store:
  url: ${{TRAINWATCH_STORE_URL}}
monitors:
  - name: ckpt
    type: heartbeat
    period: 1s
    grace: 1s
    token: {TOKEN}
"""


def start(tmp_path, url, monkeypatch):
    monkeypatch.setenv("TRAINWATCH_STORE_URL", url)
    path = tmp_path / "trainwatch.yaml"
    path.write_text(CONFIG)
    return Server(path, tmp_path / "data", tmp_path / "server.log").start()


def request(server, path, method="GET", headers=None):
    url = urllib.parse.urlsplit(server.base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        conn.request(method, path, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def ping(server):
    return request(server, f"/ping/{TOKEN}", method="POST")[0]


def test_state_pings_and_incidents_live_in_postgres_across_restarts(tmp_path, postgres, monkeypatch):
    server = start(tmp_path, postgres.url(), monkeypatch)
    try:
        for _ in range(2):
            assert ping(server) == 200
        # A header sent as Latin-1 (byte 0xE9), which no text column of PostgreSQL takes as is.
        assert request(server, f"/ping/{TOKEN}", "POST", {"User-Agent": "caf\xe9-cron/1.0"})[0] == 200
        server.wait_status("ckpt", "up")
        down = server.wait_status("ckpt", "down", timeout=10)
        incident_id = down["incident"]["id"]
        [incident] = server.get("/api/v1/incidents")[1]["incidents"]
        assert incident["id"] == incident_id
    finally:
        server.stop()
    assert not (tmp_path / "data" / "trainwatch.db").exists(), "SQLite was used instead of PostgreSQL"
    log = (tmp_path / "server.log").read_text()
    assert PASSWORD not in log

    server = Server(server.config_path, tmp_path / "data", tmp_path / "server.log").start()
    try:
        again = server.wait_status("ckpt", "down")
        assert again["incident"]["id"] == incident_id
        assert [i["id"] for i in server.get("/api/v1/incidents")[1]["incidents"]] == [incident_id]
        assert len(server.get("/api/v1/monitors/ckpt/pings")[1]["pings"]) == 3
    finally:
        server.stop()


def test_a_wrong_password_is_one_line_without_the_password_and_exit_non_zero(tmp_path, postgres):
    path = tmp_path / "trainwatch.yaml"
    path.write_text(CONFIG)
    env = dict(os.environ, TRAINWATCH_STORE_URL=postgres.url("wrong-" + PASSWORD))
    done = subprocess.run([BINARY, "serve", "-c", str(path), "--listen", "127.0.0.1:0"], env=env,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert PASSWORD not in output
    errors = [line for line in output.splitlines() if "error" in line]
    assert len(errors) == 1, output
    assert "authentication failed" in errors[0] and f"127.0.0.1:{postgres.port}" in errors[0], errors[0]


def test_a_stopped_database_refuses_pings_and_serve_recovers_when_it_returns(tmp_path, postgres, monkeypatch):
    server = start(tmp_path, postgres.url(), monkeypatch)
    answers = []
    stop = threading.Event()
    loader = threading.Thread(target=lambda: load())

    def load():
        while not stop.is_set():
            answers.append(ping(server))

    try:
        assert ping(server) == 200
        loader.start()
        wait_for(lambda: len(answers) > 20, what="pings under load")
        postgres.stop()
        stopped_at = len(answers)
        wait_for(lambda: 503 in answers[stopped_at:], what="a ping refused with 503")
        refused_from = stopped_at + answers[stopped_at:].index(503)
        health, body, _ = server.get("/healthz")
        assert health == 503 and body["status"] == "degraded", body
        wait_for(lambda: len(answers) > refused_from + 20, what="more pings while the database is down")
        down_answers = answers[refused_from:]
        # Never 200; a loop this quick may also meet the per-URL rate limit (429).
        assert set(down_answers) <= {503, 429} and 503 in down_answers, \
            f"pings answered {set(down_answers)} while the database was down"

        postgres.start()
        back_from = len(answers)
        wait_for(lambda: 200 in answers[back_from:], timeout=20, what="pings answered 200 again")
        wait_for(lambda: server.get("/healthz")[0] == 200, what="/healthz healthy again")
    finally:
        stop.set()
        if loader.is_alive():
            loader.join()  # before the server stops: a ping cut off by the stop is no finding
        server.stop()
    assert PASSWORD not in (tmp_path / "server.log").read_text()
