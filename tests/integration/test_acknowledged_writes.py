"""A write is acknowledged only once committed, with the audit row that says who asked:
kill -9 right after the 2xx (or the form's 303) of every write route of the API and every
form of the dashboard, five times each, then restart on the same SQLite file. The write
and its audit row are there every time (docs/api.md, "Managing monitors": each answers
after the change is committed to the store).

One server is killed and started again for each try (a start costs ~40 ms); what a try
needs that is not its own write (a monitor to delete, a user to demote) is made up front.
"""
import http.client
import json
import re
import signal
import urllib.parse

import pytest

from conftest import Server
from receivers import HttpReceiver

ADMIN = "acknowledged-writes-admin-token-0123"
PING = "acknowledged-writes-ping-token-01"
BROKEN = "acknowledged-writes-broken-token"
TRIES = 5
PASSWORD = "a long first password"


def config():
    return f"""
server:
  allow_local_channel_targets: true   # the test sends go to a receiver on loopback
auth:
  admin_tokens: ["{ADMIN}"]
monitors:
  - {{name: fixed, type: tcp, host: 127.0.0.1, port: 9, interval: 1h}}
  - {{name: beat, type: heartbeat, period: 1h, grace: 1h, token: {PING}}}
  - {{name: broken, type: heartbeat, period: 1h, grace: 1h, token: {BROKEN}}}
jobs:
  auto_create: true
"""


class Client:
    """Requests on fresh connections, redirects not followed: a 303 is the form's answer."""

    def __init__(self, server):
        url = urllib.parse.urlsplit(server.base)
        self.host, self.port = url.hostname, url.port
        self.cookie = None
        self.csrf = None

    def request(self, method, path, body=None, headers=None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=20)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.read().decode(errors="replace"), response.headers
        finally:
            conn.close()

    def api(self, method, path, body=None, token=ADMIN):
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        status, text, _ = self.request(method, path, json.dumps(body) if body is not None else None, headers)
        return status, json.loads(text) if text and text.lstrip().startswith(("{", "[")) else text

    def log_in(self, fields):
        """A dashboard session (login form with the admin token, or a user's name and password)."""
        status, page, headers = self.request("GET", "/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        cookie = headers["Set-Cookie"].split(";")[0]
        status, text, headers = self.request(
            "POST", "/login", urllib.parse.urlencode(dict(fields, csrf=csrf)),
            {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"})
        if status != 303:
            return False
        self.cookie = [c for c in headers.get_all("Set-Cookie") if c.startswith("tw_session=")][0].split(";")[0]
        page = self.request("GET", "/", headers={"Cookie": self.cookie})[1]
        self.csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        return True

    def form(self, path, fields=None):
        body = urllib.parse.urlencode(dict(fields or {}, csrf=self.csrf))
        status, text, _ = self.request("POST", path, body, {"Cookie": self.cookie,
                                                            "Content-Type": "application/x-www-form-urlencoded"})
        return status, text


class Crashing:
    """The server under test: killed with SIGKILL and started again on the same files."""

    def __init__(self, tmp_path, text):
        path = tmp_path / "trainwatch.yaml"
        path.write_text(text)
        self.args = (path, tmp_path / "data", tmp_path / "server.log")
        self.server = Server(*self.args).start()
        self.client = Client(self.server)

    def kill_and_restart(self):
        self.server.proc.send_signal(signal.SIGKILL)
        self.server.proc.wait(timeout=20)
        self.server.log.close()
        self.server = Server(*self.args).start()
        self.client = Client(self.server)

    def stop(self):
        self.server.stop()

    def audit_actions(self):
        actions, before = [], None
        while True:
            status, body = self.client.api("GET", "/api/v1/audit?limit=1000" + (f"&before={before}" if before else ""))
            assert status == 200, body
            actions += [e["action"] for e in body["entries"]]
            if len(body["entries"]) < 1000:
                return actions
            before = body["entries"][-1]["id"]


def monitor(c, name):
    status, body = c.api("GET", f"/api/v1/monitors/{name}")
    return body if status == 200 else None


def channels(c):
    return {ch["name"]: ch for ch in c.api("GET", "/api/v1/notifications")[1]["notifications"]}


def users(c):
    return {u["name"]: u for u in c.api("GET", "/api/v1/users")[1]["users"]}


def tokens(c):
    return {t["name"]: t for t in c.api("GET", "/api/v1/tokens")[1]["tokens"]}


def windows(c):
    return {w["id"]: w for w in c.api("GET", "/api/v1/maintenance")[1]["windows"]}


def updates(c, incident):
    return [u["text"] for u in c.api("GET", f"/api/v1/incidents/{incident}")[1]["updates"]]


class Writes:
    """Each write route: what one try sends, and what must be there after the restart."""

    def __init__(self, crashing, receiver):
        self.crashing = crashing
        self.hook = f"{receiver.base}/hook"
        self.incident = None

    @property
    def c(self):
        return self.crashing.client

    def prepare(self):
        """What the tries act on, made and committed before the first kill."""
        c = self.c
        assert c.api("POST", f"/ping/{BROKEN}/fail", token=None)[0] == 200
        incidents = c.api("GET", "/api/v1/incidents?monitor=broken")[1]["incidents"]
        self.incident = incidents[0]["id"]
        for i in range(TRIES):
            for prefix in ("put", "del", "form-edit", "form-del"):
                assert c.api("POST", "/api/v1/monitors", {"name": f"{prefix}-{i}", "type": "tcp", "host": "127.0.0.1",
                                                          "port": 9, "interval": "1h"})[0] == 201
            for prefix in ("put", "del", "test", "form-edit", "form-del", "form-test"):
                assert c.api("POST", "/api/v1/notifications", {"name": f"{prefix}-{i}", "type": "webhook",
                                                               "url": self.hook})[0] == 201
            for prefix in ("patch", "pw", "del", "form-role", "form-pw", "form-del"):
                assert c.api("POST", "/api/v1/users", {"name": f"{prefix}-{i}", "role": "viewer",
                                                       "password": PASSWORD})[0] == 201
        assert c.api("POST", "/api/v1/users", {"name": "owner", "role": "editor", "password": PASSWORD})[0] == 201

    def window(self, tag):
        status, body = self.c.api("POST", "/api/v1/maintenance", {"tags": [tag], "daily": "01:00-02:00"})
        assert status == 201, body
        return body["id"]

    def token(self, name):
        status, body = self.c.api("POST", "/api/v1/tokens", {"name": name, "owner": "owner"})
        assert status == 201, body
        return body["id"]

    def routes(self):
        """(name, act(i) -> (status, audited action or None), check(i) -> what is missing or None)."""
        c = lambda: self.c
        tcp = lambda name, port=9: {"name": name, "type": "tcp", "host": "127.0.0.1", "port": port, "interval": "1h"}
        paused = lambda name: (monitor(c(), name) or {}).get("status") == "paused"

        def api(method, path, body=None, token=ADMIN, audited=True):
            status, _ = c().api(method, path, body, token)
            return status, f"{method} {path}" if audited else None

        def form(path, fields=None):
            return c().form(path, fields)[0], f"POST {path}"

        # The fourth try pauses a paused monitor: that changes nothing, and is recorded all the same.
        pauses = ["pause", "resume", "pause", "pause", "resume"]

        def pause_try(path_of, form_try):
            def act(i):
                return form(path_of(pauses[i])) if form_try else api("POST", path_of(pauses[i]))

            def check(i):
                want = pauses[i] == "pause"
                return None if paused("fixed") == want else f"fixed is not {'paused' if want else 'running'}"
            return act, check

        window_ids, form_window_ids, token_ids, form_token_ids = {}, {}, {}, {}

        def window_gone(ids):
            return lambda i: None if ids[i] not in windows(c()) else f"window {ids[i]} still there"

        def token_revoked(name):
            return lambda i: None if tokens(c())[f"{name}-{i}"]["revoked"] else f"token {name}-{i} not revoked"

        return [
            ("POST /api/v1/monitors", lambda i: api("POST", "/api/v1/monitors", tcp(f"made-{i}")),
             lambda i: None if monitor(c(), f"made-{i}") else f"made-{i} is missing"),
            ("PUT /api/v1/monitors/{name}", lambda i: api("PUT", f"/api/v1/monitors/put-{i}", tcp(f"put-{i}", 10)),
             lambda i: None if monitor(c(), f"put-{i}")["target"].endswith(":10") else f"put-{i} not replaced"),
            ("DELETE /api/v1/monitors/{name}", lambda i: api("DELETE", f"/api/v1/monitors/del-{i}"),
             lambda i: None if monitor(c(), f"del-{i}") is None else f"del-{i} still there"),
            ("POST /api/v1/monitors/{name}/pause|resume", *pause_try(lambda a: f"/api/v1/monitors/fixed/{a}", False)),
            ("POST /api/v1/maintenance",
             lambda i: api("POST", "/api/v1/maintenance", {"tags": [f"made-{i}"], "daily": "01:00-02:00"}),
             lambda i: None if any(w["tags"] == [f"made-{i}"] for w in windows(c()).values()) else "window missing"),
            ("DELETE /api/v1/maintenance/{id}",
             lambda i: (window_ids.__setitem__(i, self.window(f"del-{i}")),
                        api("DELETE", f"/api/v1/maintenance/{window_ids[i]}"))[1],
             window_gone(window_ids)),
            ("POST /api/v1/incidents/{id}/updates",
             lambda i: api("POST", f"/api/v1/incidents/{self.incident}/updates",
                           {"status": "identified", "text": f"api update {i}"}),
             lambda i: None if f"api update {i}" in updates(c(), self.incident) else "update missing"),
            ("POST /api/v1/notifications",
             lambda i: api("POST", "/api/v1/notifications", {"name": f"made-{i}", "type": "webhook", "url": self.hook}),
             lambda i: None if f"made-{i}" in channels(c()) else f"channel made-{i} missing"),
            ("PUT /api/v1/notifications/{name}",
             lambda i: api("PUT", f"/api/v1/notifications/put-{i}",
                           {"name": f"put-{i}", "type": "webhook", "url": self.hook, "timeout": "7s"}),
             lambda i: None if channels(c())[f"put-{i}"]["settings"].get("timeout") == "7s" else "not replaced"),
            ("DELETE /api/v1/notifications/{name}", lambda i: api("DELETE", f"/api/v1/notifications/del-{i}"),
             lambda i: None if f"del-{i}" not in channels(c()) else f"channel del-{i} still there"),
            ("POST /api/v1/notifications/{name}/test", lambda i: api("POST", f"/api/v1/notifications/test-{i}/test"),
             lambda i: None),
            ("POST /api/v1/users",
             lambda i: api("POST", "/api/v1/users", {"name": f"made-{i}", "role": "viewer", "password": PASSWORD}),
             lambda i: None if f"made-{i}" in users(c()) else f"user made-{i} missing"),
            ("PATCH /api/v1/users/{name} (role)", lambda i: api("PATCH", f"/api/v1/users/patch-{i}", {"role": "editor"}),
             lambda i: None if users(c())[f"patch-{i}"]["role"] == "editor" else f"patch-{i} not an editor"),
            ("PATCH /api/v1/users/{name} (password)",
             lambda i: api("PATCH", f"/api/v1/users/pw-{i}", {"password": f"new password number {i}"}),
             lambda i: None if Client(self.crashing.server).log_in({"name": f"pw-{i}",
                                                                     "password": f"new password number {i}"})
             else f"pw-{i} cannot log in with the new password"),
            ("DELETE /api/v1/users/{name}", lambda i: api("DELETE", f"/api/v1/users/del-{i}"),
             lambda i: None if f"del-{i}" not in users(c()) else f"user del-{i} still there"),
            ("POST /api/v1/tokens", lambda i: api("POST", "/api/v1/tokens", {"name": f"made-{i}", "owner": "owner"}),
             lambda i: None if f"made-{i}" in tokens(c()) else f"token made-{i} missing"),
            ("DELETE /api/v1/tokens/{id}",
             lambda i: (token_ids.__setitem__(i, self.token(f"revoke-{i}")),
                        api("DELETE", f"/api/v1/tokens/{token_ids[i]}"))[1],
             token_revoked("revoke")),
            ("POST /ping/{token}[/start|/fail|/log|/0]",
             lambda i: api("POST", f"/ping/{PING}" + ["", "/start", "/log", "/fail", "/0"][i], f"ping {i}",
                           token=None, audited=False),
             lambda i: None if any(p["body"] == f'"ping {i}"' for p in
                                   c().api("GET", "/api/v1/monitors/beat/pings?limit=1000")[1]["pings"])
             else f"ping {i} missing"),
            ("POST /api/v1/jobs/{job}/report",
             lambda i: api("POST", f"/api/v1/jobs/job-{i}/report",
                           {"schema": 1, "node": "node-a", "report_every_ms": 60000,
                            "ranks": [{"rank": 0, "world_size": 1, "pid": 1, "alive": True, "status": "training",
                                       "step": 10 + i}]},
                           token=None, audited=False),
             lambda i: None if c().api("GET", f"/api/v1/jobs/job-{i}")[0] == 200 else f"job-{i} missing"),
            # The dashboard's forms.
            ("form POST /monitors",
             lambda i: form("/monitors", {"name": f"form-made-{i}", "type": "tcp", "host": "127.0.0.1", "port": "9",
                                          "interval": "1h"}),
             lambda i: None if monitor(c(), f"form-made-{i}") else f"form-made-{i} missing"),
            ("form POST /monitors/{name}/pause|resume", *pause_try(lambda a: f"/monitors/fixed/{a}", True)),
            ("form POST /monitors/{name}/edit",
             lambda i: form(f"/monitors/form-edit-{i}/edit", {"spec": json.dumps(tcp(f"form-edit-{i}", 11))}),
             lambda i: None if monitor(c(), f"form-edit-{i}")["target"].endswith(":11") else "not edited"),
            ("form POST /monitors/{name}/delete", lambda i: form(f"/monitors/form-del-{i}/delete"),
             lambda i: None if monitor(c(), f"form-del-{i}") is None else f"form-del-{i} still there"),
            ("form POST /incidents/{id}/updates",
             lambda i: form(f"/incidents/{self.incident}/updates", {"status": "monitoring", "text": f"form update {i}"}),
             lambda i: None if f"form update {i}" in updates(c(), self.incident) else "update missing"),
            ("form POST /maintenance",
             lambda i: form("/maintenance", {"tags": f"form-made-{i}", "daily": "01:00-02:00"}),
             lambda i: None if any(w["tags"] == [f"form-made-{i}"] for w in windows(c()).values())
             else "window missing"),
            ("form POST /maintenance/{id}/delete",
             lambda i: (form_window_ids.__setitem__(i, self.window(f"form-del-{i}")),
                        form(f"/maintenance/{form_window_ids[i]}/delete"))[1],
             window_gone(form_window_ids)),
            ("form POST /notifications",
             lambda i: form("/notifications", {"name": f"form-made-{i}", "type": "webhook", "settings": "",
                                               "secrets": f"url: {self.hook}"}),
             lambda i: None if f"form-made-{i}" in channels(c()) else "channel missing"),
            ("form POST /notifications/{name}/edit",
             lambda i: form(f"/notifications/form-edit-{i}/edit", {"name": f"form-edit-{i}", "type": "webhook", "settings": "timeout: 9s",
                                                                    "secrets": ""}),
             lambda i: None if channels(c())[f"form-edit-{i}"]["settings"].get("timeout") == "9s" else "not edited"),
            ("form POST /notifications/{name}/delete", lambda i: form(f"/notifications/form-del-{i}/delete"),
             lambda i: None if f"form-del-{i}" not in channels(c()) else "channel still there"),
            ("form POST /notifications/{name}/test", lambda i: form(f"/notifications/form-test-{i}/test"),
             lambda i: None),
            ("form POST /settings/tokens",
             lambda i: form("/settings/tokens", {"name": f"form-made-{i}", "role": "viewer", "expires": "7d",
                                                 "owner": "owner"}),
             lambda i: None if f"form-made-{i}" in tokens(c()) else "token missing"),
            ("form POST /settings/tokens/{id}/revoke",
             lambda i: (form_token_ids.__setitem__(i, self.token(f"form-revoke-{i}")),
                        form(f"/settings/tokens/{form_token_ids[i]}/revoke"))[1],
             token_revoked("form-revoke")),
            ("form POST /settings/users",
             lambda i: form("/settings/users", {"name": f"form-made-{i}", "role": "viewer", "password": PASSWORD}),
             lambda i: None if f"form-made-{i}" in users(c()) else "user missing"),
            ("form POST /settings/users/{name}/role",
             lambda i: form(f"/settings/users/form-role-{i}/role", {"role": "editor"}),
             lambda i: None if users(c())[f"form-role-{i}"]["role"] == "editor" else "not an editor"),
            ("form POST /settings/users/{name}/password",
             lambda i: form(f"/settings/users/form-pw-{i}/password", {"password": f"form password number {i}"}),
             lambda i: None if Client(self.crashing.server).log_in({"name": f"form-pw-{i}",
                                                                     "password": f"form password number {i}"})
             else "cannot log in with the new password"),
            ("form POST /settings/users/{name}/delete", lambda i: form(f"/settings/users/form-del-{i}/delete"),
             lambda i: None if f"form-del-{i}" not in users(c()) else "user still there"),
        ]


@pytest.fixture
def receiver():
    r = HttpReceiver()
    yield r
    r.close()


def test_every_write_acknowledged_before_a_kill_9_is_there_after_the_restart_with_its_audit_row(tmp_path, receiver):
    crashing = Crashing(tmp_path, config())
    writes = Writes(crashing, receiver)
    try:
        writes.prepare()
        lost, unaudited, refused = [], [], []
        audited = {}
        for name, act, check in writes.routes():
            for i in range(TRIES):
                if name.startswith("form "):
                    assert crashing.client.log_in({"token": ADMIN})
                status, action = act(i)
                if status not in (200, 201, 204, 303):
                    refused.append(f"{name} try {i}: {status}")
                    continue
                crashing.kill_and_restart()  # right after the acknowledgement
                if (missing := check(i)) is not None:
                    lost.append(f"{name} try {i}: {missing}")
                if action is not None:
                    audited[action] = audited.get(action, 0) + 1
                    if crashing.audit_actions().count(action) < audited[action]:
                        unaudited.append(f"{name} try {i}: no audit row for {action}")
        assert (refused, lost, unaudited) == ([], [], []), \
            f"refused: {refused}; {len(lost)} acknowledged writes lost: {lost}; " \
            f"{len(unaudited)} without their audit row: {unaudited}"
    finally:
        crashing.stop()
