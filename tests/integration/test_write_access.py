"""Who may change things: every write needs an admin token, test sends are limited per
channel, wrong tokens are throttled per client address, and SIGHUP replaces tokens."""
import html
import http.client
import json
import re
import urllib.parse

from conftest import api_call, wait_for
from receivers import HttpReceiver

import pytest

TOKEN = "write-access-admin-token-0123456789"


@pytest.fixture
def receiver():
    r = HttpReceiver()
    yield r
    r.close()


def request(server, method, path, body=b"", headers=None, source="127.0.0.1"):
    """(status, parsed body, headers) of one request sent from loopback address `source`."""
    url = urllib.parse.urlsplit(server.base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10, source_address=(source, 0))
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        text = response.read().decode()
        kind = response.getheader("Content-Type", "")
        return response.status, json.loads(text) if "json" in kind and text else text, response
    finally:
        conn.close()


def login_form(server, source="127.0.0.1", headers=None):
    """(Cookie header value, csrf) of a fresh login form, opened from `source`."""
    _, page, response = request(server, "GET", "/login", headers=headers, source=source)
    csrf = html.unescape(re.search(r'name="csrf" value="([^"]+)"', page).group(1))
    return response.getheader("Set-Cookie").split(";")[0], csrf


def post_login(server, token, source="127.0.0.1", headers=None):
    cookie, csrf = login_form(server, source, headers)
    form = urllib.parse.urlencode({"token": token, "csrf": csrf}).encode()
    headers = dict(headers or {}, **{"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie})
    return request(server, "POST", "/login", form, headers, source=source)


def bearer(token):
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}


def test_test_sends_need_a_token_and_are_limited_per_channel(start_server, receiver):
    server = start_server(f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver.base}/hook"}}
  - {{name: other, type: webhook, url: "{receiver.base}/other"}}
monitors: []
auth:
  admin_tokens: ["{TOKEN}"]
""")
    status, body, _ = request(server, "POST", "/api/v1/notifications/hook/test")
    assert status == 401 and body["status"] == 401
    assert request(server, "POST", "/api/v1/notifications/hook/test", headers=bearer("not-the-admin-token"))[0] == 401
    assert receiver.all() == [], "nothing reaches the channel without a token"

    # A few go through, then the channel is held back whoever asks; the others are not.
    for _ in range(3):
        assert request(server, "POST", "/api/v1/notifications/hook/test", headers=bearer(TOKEN))[0] == 200
    status, body, response = request(server, "POST", "/api/v1/notifications/hook/test", headers=bearer(TOKEN))
    assert status == 429 and response.getheader("Content-Type").startswith("application/problem+json")
    assert int(response.getheader("Retry-After")) >= 1 and "hook" in body["detail"]
    assert len(receiver.all("/hook")) == 3
    assert request(server, "POST", "/api/v1/notifications/other/test", headers=bearer(TOKEN))[0] == 200


def test_wrong_tokens_are_throttled_per_address_even_the_right_one_after(start_server):
    server = start_server(f"""
monitors: []
auth:
  admin_tokens: ["{TOKEN}"]
""")
    spec = json.dumps({"name": "probe", "type": "tcp", "host": "127.0.0.1", "port": 9, "interval": "1h"}).encode()
    for i in range(10):
        assert request(server, "POST", "/api/v1/monitors", spec, bearer(f"guess-number-{i:04d}"))[0] == 401, i
    # Out of attempts: even the right token is not looked at.
    status, body, response = request(server, "POST", "/api/v1/monitors", spec, bearer(TOKEN))
    assert status == 429 and int(response.getheader("Retry-After")) >= 1
    assert server.get("/api/v1/monitors/probe")[0] == 404
    # Another address is not held back by this one's guesses.
    assert request(server, "POST", "/api/v1/monitors", spec, bearer(TOKEN), source="127.0.0.2")[0] == 201

    # The login page counts the same way, per address.
    for i in range(10):
        assert post_login(server, f"guess-number-{i:04d}", "127.0.0.3")[0] == 403, i
    status, _, response = post_login(server, TOKEN, "127.0.0.3")
    assert status == 429 and int(response.getheader("Retry-After")) >= 1
    assert "tw_session=" not in (response.getheader("Set-Cookie") or "")
    status, _, response = post_login(server, TOKEN, "127.0.0.4")
    assert status == 303 and "tw_session=" in response.getheader("Set-Cookie")


def test_guessing_a_token_on_reads_is_throttled_too(start_server):
    """A read shows an admin more than the public (a ping's body), so a bearer token on a
    read is an oracle unless wrong guesses count there as on writes."""
    server = start_server(f"""
monitors:
  - {{name: nightly, type: heartbeat, period: 1h, token: nightly-ping-token-0123}}
auth:
  admin_tokens: ["{TOKEN}"]
""")
    assert request(server, "POST", "/ping/nightly-ping-token-0123", b"secret-output-line")[0] == 200
    path = "/api/v1/monitors/nightly/pings"

    def body_seen(token, source):
        status, body, _ = request(server, "GET", path, headers=bearer(token), source=source)
        assert status == 200
        return [p["body"] for p in body["pings"]] == ["secret-output-line"]

    assert body_seen(TOKEN, "127.0.0.5")
    for i in range(10):
        assert not body_seen(f"guess-number-{i:04d}", "127.0.0.6"), i
    # Out of attempts on reads too: the right token now reads only the public view.
    assert not body_seen(TOKEN, "127.0.0.6")
    assert body_seen(TOKEN, "127.0.0.7")


def test_sighup_replaces_admin_and_report_tokens_and_ends_sessions(start_server):
    def config(admin, report):
        return f"""
monitors:
  - {{name: nightly, type: heartbeat, period: 1h, token: nightly-ping-token}}
auth:
  admin_tokens: ["{admin}"]
jobs:
  token: {report}
"""
    old, new = "old-admin-token-0123456789", "new-admin-token-0123456789"
    server = start_server(config(old, "old-report-token-0123"))

    status, _, response = post_login(server, old)
    assert status == 303
    session = response.getheader("Set-Cookie").split(";")[0]
    # A session may read the ping URL; so may the old token.
    assert request(server, "GET", "/api/v1/monitors/nightly", headers={"Cookie": session})[1]["ping_url"]
    assert request(server, "POST", "/api/v1/monitors/nightly/pause", headers=bearer(old))[0] == 200
    assert request(server, "POST", "/api/v1/jobs/train/report", b"{}", bearer("old-report-token-0123"))[0] != 401

    server.config_path.write_text(config(new, "new-report-token-0123"))
    server.reload()
    wait_for(lambda: "reloaded " in server.log_path.read_text(), what="the reload in the log")

    assert request(server, "POST", "/api/v1/monitors/nightly/resume", headers=bearer(old))[0] == 401
    assert request(server, "POST", "/api/v1/monitors/nightly/resume", headers=bearer(new))[0] == 200
    assert request(server, "GET", "/api/v1/monitors/nightly", headers={"Cookie": session})[1]["ping_url"] is None, \
        "a changed token set ends the sessions the old tokens opened"
    assert request(server, "POST", "/api/v1/jobs/train/report", b"{}", bearer("old-report-token-0123"))[0] == 401
    assert request(server, "POST", "/api/v1/jobs/train/report", b"{}", bearer("new-report-token-0123"))[0] != 401
    assert api_call(server, "GET", "/api/v1/monitors/nightly")[1]["status"] == "pending"


def test_over_https_cookies_carry_the_host_prefix_and_writes_from_other_origins_are_refused(start_server):
    server = start_server(f"""
monitors:
  - {{name: nightly, type: heartbeat, period: 1h, token: nightly-ping-token-0123}}
auth:
  admin_tokens: ["{TOKEN}"]
""")
    host = urllib.parse.urlsplit(server.base).netloc
    https = {"X-Forwarded-Proto": "https"}
    assert login_form(server, headers=https)[0].startswith("__Host-tw_login=")
    assert login_form(server)[0].startswith("tw_login=")

    status, _, response = post_login(server, TOKEN, headers=https)
    assert status == 303
    session = [c for c in response.headers.get_all("Set-Cookie") if c.startswith("__Host-tw_session=")][0]
    assert "Secure" in session and "Path=/" in session and "Domain" not in session
    session_id = session.split(";")[0].split("=", 1)[1]
    prefixed = f"__Host-tw_session={session_id}"
    page = request(server, "GET", "/", headers=dict(https, Cookie=prefixed))[1]
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)

    def pause(cookie, **extra):
        headers = dict(extra, Cookie=cookie, **{"X-CSRF-Token": csrf})
        return request(server, "POST", "/api/v1/monitors/nightly/pause", headers=headers)

    assert pause(prefixed, **https)[0] == 200
    assert pause(prefixed, Origin=f"https://{host}", **https)[0] == 200
    # Over HTTPS a bare name, which any plain-HTTP page of the host could plant, is not read;
    # over plain HTTP the prefixed one is not.
    assert pause(f"tw_session={session_id}", **https)[0] == 401
    assert pause(prefixed)[0] == 401
    # A browser that says the write comes from another origin is refused, and told why.
    status, body, response = pause(prefixed, Origin="http://127.0.0.1:1", **https)
    assert status == 403 and response.getheader("Content-Type").startswith("application/problem+json")
    assert "http://127.0.0.1:1" in body["detail"] and f"https://{host}" in body["detail"]
    status, body, _ = pause(prefixed, **https, **{"Sec-Fetch-Site": "same-site"})
    assert status == 403 and "Sec-Fetch-Site: same-site" in body["detail"]
