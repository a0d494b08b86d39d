"""What anonymous readers see: no ping bodies, source addresses or user agents, no values
a target returned, no URL credentials or queries, no notification targets; admins (a
bearer token or a dashboard session) see all of it. And text a target controls reaches
Slack escaped, never as a mention."""
import http.client
import json
import re
import ssl
import subprocess
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import wait_for
from receivers import HttpReceiver

ADMIN = "public-views-admin-token-0123"
PING_TOKEN = "public-views-ping-token-01"
PING_BODY = "Traceback: SECRET-PING-BODY at /home/alice/train.py"
USER_AGENT = "SecretAgent/9.9"
TARGET_SECRET = "TARGET-SECRET-hunter2"
RECIPIENT = "oncall-secret@example.com"
TOPIC = "ntfy-secret-topic"
# Every string here is a secret: none may appear in any anonymous answer.
SECRETS = [PING_BODY, "SECRET-PING-BODY", USER_AGENT, TARGET_SECRET, "user:pass", "key=secret", RECIPIENT, TOPIC,
           PING_TOKEN]


class TlsTarget:
    """An internal service over HTTPS that answers JSON carrying a secret and a mention."""

    def __init__(self, tmp_path):
        cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                        "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True, timeout=60)
        self.requests = []
        target = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                target.requests.append((self.path, self.headers.get("Authorization")))
                payload = json.dumps({"status": f"<!channel> {TARGET_SECRET}"}).encode()
                self.send_response(503)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(cert), str(key))
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def tls_target(tmp_path):
    target = TlsTarget(tmp_path)
    yield target
    target.close()


@pytest.fixture
def receiver():
    r = HttpReceiver()
    yield r
    r.close()


def fetch(server, path, headers=None, method="GET", body=None):
    """(status, body text, headers) of one request on a fresh connection."""
    url = urllib.parse.urlsplit(server.base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read().decode(errors="replace"), response.headers
    finally:
        conn.close()


def login(server):
    """A dashboard session's cookie header, logged in with the admin token."""
    status, page, headers = fetch(server, "/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    login_cookie = headers["Set-Cookie"].split(";")[0]
    status, _, headers = fetch(server, "/login", method="POST", body=urllib.parse.urlencode({"csrf": csrf, "token": ADMIN}),
                               headers={"Cookie": login_cookie, "Content-Type": "application/x-www-form-urlencoded"})
    assert status == 303, status
    session = [c for c in headers.get_all("Set-Cookie") if c.startswith("tw_session=")][0]
    return session.split(";")[0]


PATHS = ["/api/v1/monitors", "/api/v1/monitors/internal-api", "/api/v1/monitors/nightly",
         "/api/v1/monitors/nightly/pings", "/api/v1/incidents", "/api/v1/incidents?monitor=internal-api",
         "/api/v1/notifications", "/api/v1/deliveries", "/api/v1/status/public", "/status/public",
         "/status/public/feed.atom", "/",
         "/monitors/internal-api", "/monitors/nightly", "/notifications", "/badge/internal-api/status.svg",
         "/badge/nightly/uptime-30d.svg", "/metrics"]


def test_public_views_keep_secrets_that_admins_see(start_server, tls_target, receiver, closed_port):
    server = start_server(f"""
auth:
  admin_tokens: ["{ADMIN}"]
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: mail, type: email, smtp_url: "smtp://127.0.0.1:{closed_port}", from: tw@example.com, to: ["{RECIPIENT}"]}}
  - {{name: phone, type: ntfy, url: "{receiver.base}/ntfy", topic: {TOPIC}}}
  - {{name: team, type: slack, webhook_url: "{receiver.base}/slack/T000/B000/XXXX"}}
monitors:
  - name: internal-api
    type: http
    url: "https://user:pass@127.0.0.1:{tls_target.port}/x?key=secret"
    tls_verify: false
    interval: 200ms
    conditions:
      - "[BODY].status == ok"
    notify: [team]
  - name: nightly
    type: heartbeat
    period: 1h
    grace: 1h
    token: {PING_TOKEN}
status_pages:
  - slug: public
    title: Training
    groups:
      - name: All
        monitors: [internal-api, nightly]
""")
    status, _, _ = fetch(server, f"/ping/{PING_TOKEN}/fail", method="POST", body=PING_BODY,
                         headers={"User-Agent": USER_AGENT})
    assert status == 200
    server.wait_status("internal-api", "down")
    # The check really reached the target with the URL's credentials and query.
    assert any(path == "/x?key=secret" and auth for path, auth in tls_target.requests), tls_target.requests
    wait_for(lambda: server.get("/api/v1/incidents?monitor=internal-api")[1]["incidents"], what="the incident stored")
    wait_for(lambda: server.get("/api/v1/incidents?monitor=nightly")[1]["incidents"], what="the fail ping's incident")

    anonymous = {path: fetch(server, path) for path in PATHS}
    for path, (status, body, _) in anonymous.items():
        assert status == 200, (path, status, body[:300])
        for secret in SECRETS:
            assert secret not in body, f"{path} shows {secret!r} to anybody: {body[:2000]}"

    # What the public reads instead: the condition and its expectation, the URL without its secrets.
    monitor = json.loads(anonymous["/api/v1/monitors/internal-api"][1])
    assert monitor["last_error"] == "HTTP 503; [BODY].status == (redacted), expected ok"
    assert monitor["target"] == f"https://***@127.0.0.1:{tls_target.port}/x?***"
    [ping] = json.loads(anonymous["/api/v1/monitors/nightly/pings"][1])["pings"]
    assert ping["body"] is None and ping["source"] is None and ping["user_agent"] is None
    channels = {c["name"]: c for c in json.loads(anonymous["/api/v1/notifications"][1])["notifications"]}
    assert channels["mail"]["target"] is None and channels["phone"]["target"] is None

    # An admin reads all of it, with a bearer token or through a dashboard session.
    bearer = {"Authorization": f"Bearer {ADMIN}"}
    _, body, _ = fetch(server, "/api/v1/monitors/internal-api", headers=bearer)
    monitor = json.loads(body)
    assert TARGET_SECRET in monitor["last_error"] and TARGET_SECRET in monitor["incident"]["cause"]
    assert monitor["target"] == f"https://user:pass@127.0.0.1:{tls_target.port}/x?key=secret"
    _, body, _ = fetch(server, "/api/v1/monitors", headers=bearer)
    assert "user:pass" in body and TARGET_SECRET in body
    _, body, _ = fetch(server, "/api/v1/monitors/nightly/pings", headers=bearer)
    [ping] = json.loads(body)["pings"]
    assert ping["body"] == PING_BODY and ping["source"] == "127.0.0.1" and ping["user_agent"] == USER_AGENT
    _, body, _ = fetch(server, "/api/v1/notifications", headers=bearer)
    assert RECIPIENT in body and TOPIC in body
    session = {"Cookie": login(server)}
    for path, secrets in [("/monitors/nightly", [PING_BODY]), ("/monitors/internal-api", [TARGET_SECRET, "user:pass"]),
                          ("/", [TARGET_SECRET]), ("/notifications", [RECIPIENT, TOPIC])]:
        _, body, _ = fetch(server, path, headers=session)
        for secret in secrets:
            assert secret in body, f"an admin should see {secret!r} on {path}"

    # The status page is public even to an admin: it never quotes the target.
    _, body, _ = fetch(server, "/status/public", headers=session)
    assert TARGET_SECRET not in body

    # Alerts go to the team's own channel with what the target said, but escaped: the
    # target's "<!channel>" must not notify everyone.
    [down] = wait_for(lambda: receiver.accepted("/slack/T000/B000/XXXX"), what="the DOWN on Slack")[:1]
    text = down["body"]["text"]
    assert TARGET_SECRET in text, text
    assert "<!channel>" not in down["raw"].decode(), down["raw"]
    assert "&lt;!channel&gt;" in text, text
