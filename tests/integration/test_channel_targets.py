"""Where a channel sends is an admin's business: viewers and editors never read a
channel's target, settings or what its receiver answered, and an editor's test send says
only its status and a fixed reason. A channel cannot reach this host (loopback,
link-local, the host's own addresses, a name that resolves there) unless the config says
`server.allow_local_channel_targets: true` (docs/operations.md, "Users and single sign-on")."""
import http.client
import pathlib
import re
import subprocess
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import api_call, wait_for

ADMIN = "channel-targets-admin-token-0123"
BODY_SECRET = "INTERNAL-SERVICE-SECRET-BODY"


class InternalService:
    """A service that listens on every address of this host and answers 500 with a body."""

    def __init__(self):
        self.hits = 0
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                service.hits += 1
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                payload = f"error: {BODY_SECRET} (db password hunter2)".encode()
                self.send_response(500)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("0.0.0.0", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def internal():
    service = InternalService()
    yield service
    service.close()


def own_address():
    """An address of this host's own interfaces other than loopback, if it has one."""
    out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"], capture_output=True, text=True).stdout
    found = re.findall(r"inet (\d+\.\d+\.\d+\.\d+)/", out)
    return found[0] if found else None


def config(allow_local, port):
    return f"""
server:
  allow_local_channel_targets: {"true" if allow_local else "false"}
auth:
  admin_tokens: ["{ADMIN}"]
notifications:
  - {{name: loopback, type: webhook, url: "http://127.0.0.1:{port}/hook"}}
  - {{name: by-name, type: webhook, url: "http://localhost:{port}/hook"}}
  - {{name: metadata, type: webhook, url: "http://169.254.169.254/latest/meta-data/"}}
  - {{name: mail, type: email, smtp_url: "smtp://127.0.0.1:{port}", from: tw@example.com, to: [oncall@example.com],
      starttls: "off"}}
monitors: []
"""


def role_tokens(server):
    tokens = {"admin": ADMIN}
    for role in ("viewer", "editor"):
        status, body, _ = api_call(server, "POST", "/api/v1/users",
                                   {"name": role, "role": role, "password": f"{role}'s long password"}, token=ADMIN)
        assert status == 201, body
        status, body, _ = api_call(server, "POST", "/api/v1/tokens", {"name": "t", "owner": role}, token=ADMIN)
        assert status == 201, body
        tokens[role] = body["token"]
    return tokens


def request(server, method, path, body=None, headers=None):
    url = urllib.parse.urlsplit(server.base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read().decode(errors="replace"), response.headers
    finally:
        conn.close()


def session(server, token):
    """(cookie, csrf) of a dashboard session opened with `token`."""
    _, page, headers = request(server, "GET", "/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    status, _, headers = request(server, "POST", "/login", urllib.parse.urlencode({"csrf": csrf, "token": token}),
                                 {"Cookie": headers["Set-Cookie"].split(";")[0],
                                  "Content-Type": "application/x-www-form-urlencoded"})
    assert status == 303
    cookie = [c for c in headers.get_all("Set-Cookie") if c.startswith("tw_session=")][0].split(";")[0]
    page = request(server, "GET", "/", headers={"Cookie": cookie})[1]
    return cookie, re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def send_test(server, token, channel):
    status, body, _ = api_call(server, "POST", f"/api/v1/notifications/{channel}/test", token=token)
    return status, body


def test_only_admins_read_a_channels_target_and_editors_read_only_a_test_sends_status(start_server, internal):
    server = start_server(config(True, internal.port))
    tokens = role_tokens(server)

    # The channel list: targets, settings and secrets' states for admins only.
    for role in ("viewer", "editor"):
        listed = api_call(server, "GET", "/api/v1/notifications/loopback", token=tokens[role])[1]
        assert listed["target"] is None and "settings" not in listed and "secrets" not in listed, (role, listed)
    assert api_call(server, "GET", "/api/v1/notifications/loopback", token=ADMIN)[1]["target"] == \
        f"http://127.0.0.1:{internal.port}"

    # The edit page, whose form holds the settings: 403 below admin, with none of them.
    api_call(server, "POST", "/api/v1/notifications",
             {"name": "made", "type": "email", "smtp_url": "smtp://mail.example.com", "from": "tw@example.com",
              "to": ["secret-recipient@example.com"], "username": "smtp-user-name"}, token=ADMIN)
    for role in ("viewer", "editor"):
        cookie, _ = session(server, tokens[role])
        status, page, _ = request(server, "GET", "/notifications/made/edit", headers={"Cookie": cookie})
        assert status == 403, (role, status)
        assert "secret-recipient" not in page and "smtp-user-name" not in page
        listing = request(server, "GET", "/notifications", headers={"Cookie": cookie})[1]
        assert "secret-recipient" not in listing and f"127.0.0.1:{internal.port}" not in listing, role
    cookie, _ = session(server, ADMIN)
    status, page, _ = request(server, "GET", "/notifications/made/edit", headers={"Cookie": cookie})
    assert status == 200 and "secret-recipient@example.com" in page

    # An editor's test send: the status and a fixed reason, nothing of the body.
    status, body = send_test(server, tokens["editor"], "loopback")
    assert status == 502 and body["status"] == 500 and body["reason"] == "the receiver refused it", body
    assert body["error"] is None and BODY_SECRET not in str(body), body
    cookie, csrf = session(server, tokens["editor"])
    status, page, _ = request(server, "POST", "/notifications/loopback/test", urllib.parse.urlencode({"csrf": csrf}),
                              {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"})
    assert status == 200 and "the receiver refused it" in page and BODY_SECRET not in page
    # An admin reads what the receiver said.
    status, body = send_test(server, ADMIN, "loopback")
    assert status == 502 and BODY_SECRET in body["error"], body


def test_a_channel_cannot_reach_this_host_unless_the_config_allows_it(start_server, internal):
    server = start_server(config(False, internal.port))
    refused = "not sent: the target is on this host"
    for channel in ("loopback", "by-name", "metadata", "mail"):
        status, body = send_test(server, ADMIN, channel)
        assert status == 502 and body["reason"] == refused, (channel, body)
        assert "allow_local_channel_targets" in body["error"], body
    address = own_address()
    if address:
        api_call(server, "POST", "/api/v1/notifications",
                 {"name": "own", "type": "webhook", "url": f"http://{address}:{internal.port}/hook"}, token=ADMIN)
        status, body = send_test(server, ADMIN, "own")
        assert status == 502 and body["reason"] == refused and "an address of this host" in body["error"], body
    assert internal.hits == 0, "a refused target must not even be connected to"
    # The same channel once the config allows this host: it reaches the service.
    server.config_path.write_text(config(True, internal.port))
    server.reload()
    wait_for(lambda: "reloaded" in pathlib.Path(server.log_path).read_text(), what="the reload")
    status, body = send_test(server, ADMIN, "by-name")
    assert status == 502 and body["reason"] == "the receiver refused it", body
    assert internal.hits == 1
