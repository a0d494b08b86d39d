"""Views shared between readers (the dashboard's monitors table, the monitor list) are kept
one copy per audience: whoever built the copy before, each reader gets the copy built for
their own role, right after another role's reader built theirs (docs/api.md, "How fresh a
read is"). A ping's body reaches viewers and up, never an anonymous reader; credentials in
a monitor's URL reach editors and admins, never a viewer."""
import http.client
import urllib.parse
import urllib.request

from conftest import api_call, wait_for

ADMIN = "audience-copies-admin-token-0123"
PING = "audience-copies-ping-token-0001"
BODY_SECRET = "SECRET-TAIL-OF-TRAIN-LOG"
URL_SECRET = "user:hunter2"
AUDIENCES = ["public", "viewer", "editor", "admin"]
PAGES = ["/", "/api/v1/monitors"]


def config():
    return f"""
auth:
  admin_tokens: ["{ADMIN}"]
monitors:
  - {{name: nightly, type: heartbeat, period: 1h, grace: 1h, token: {PING}}}
  - {{name: internal, type: http, url: "http://{URL_SECRET}@127.0.0.1:9/x", interval: 1h}}
  - {{name: switch, type: tcp, host: 127.0.0.1, port: 9, interval: 1h}}
"""


def tokens_of_each_role(server):
    tokens = {"public": None, "admin": ADMIN}
    for role in ("viewer", "editor"):
        status, body, _ = api_call(server, "POST", "/api/v1/users",
                                   {"name": role + "-user", "role": role, "password": f"{role}'s long password"},
                                   token=ADMIN)
        assert status == 201, body
        status, body, _ = api_call(server, "POST", "/api/v1/tokens", {"name": "t", "owner": role + "-user"},
                                   token=ADMIN)
        assert status == 201, body
        tokens[role] = body["token"]
    return tokens


def read(server, path, token):
    url = urllib.parse.urlsplit(server.base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {token}"} if token else {})
        response = conn.getresponse()
        text = response.read().decode()
        assert response.status == 200, (path, response.status, text)
        return text
    finally:
        conn.close()


def shows(text):
    """What of the secrets a page shows."""
    return {"ping body": BODY_SECRET in text, "url credentials": URL_SECRET in text}


def allowed(audience, page="/api/v1/monitors"):
    # The dashboard's table shows no target at all.
    return {"ping body": audience != "public", "url credentials": audience in ("editor", "admin") and page != "/"}


class StateMover:
    """Moves the server's state generation, so the next read of each copy rebuilds it."""

    def __init__(self, server):
        self.server = server
        self.paused = False

    def move(self):
        self.paused = not self.paused
        status, body, _ = api_call(self.server, "POST",
                                   f"/api/v1/monitors/switch/{'pause' if self.paused else 'resume'}", token=ADMIN)
        assert status == 200, body


def start(start_server):
    server = start_server(config())
    request = urllib.request.Request(f"{server.base}/ping/{PING}/fail", data=BODY_SECRET.encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
    server.wait_status("nightly", "down")
    wait_for(lambda: shows(read(server, "/api/v1/monitors", ADMIN)) == allowed("admin"),
             what="the admin's copy with every secret")
    return server


def test_each_shared_view_reads_as_its_own_audience_right_after_another_built_it(start_server):
    server = start(start_server)
    tokens = tokens_of_each_role(server)
    mover = StateMover(server)
    for page in PAGES:
        for first in AUDIENCES:
            for then in AUDIENCES:
                mover.move()
                assert shows(read(server, page, tokens[first])) == allowed(first, page), (page, first)
                assert shows(read(server, page, tokens[then])) == allowed(then, page), \
                    f"{page} read as {then} right after {first} built it"


def test_anonymous_reads_of_the_dashboard_right_after_a_viewers_never_show_a_ping_body(start_server):
    server = start(start_server)
    tokens = tokens_of_each_role(server)
    mover = StateMover(server)
    leaked, hidden = 0, 0
    for _ in range(100):
        mover.move()
        assert BODY_SECRET in read(server, "/", tokens["viewer"])
        leaked += BODY_SECRET in read(server, "/", None)
        mover.move()
        assert BODY_SECRET not in read(server, "/", None)
        hidden += BODY_SECRET not in read(server, "/", tokens["viewer"])
    assert (leaked, hidden) == (0, 0), \
        f"{leaked} anonymous reads showed the viewer's copy, {hidden} viewer reads the public copy"
