"""Cached views are fresh: the monitor list, the dashboard's table and the status pages show a
change of state at the first read after it was acknowledged, however often they were read
before it (docs/api.md, "How fresh a read is"). Each read below is the first one after the
change: a client polling them gets the change at its next poll, not the one after.
"""
import urllib.request

from conftest import api_call

TOKEN = "fresh-views-admin-token-0123456789"
PING = "fresh-ckpt-token-0001"


def config():
    return f"""
monitors:
  - name: ckpt
    type: heartbeat
    period: 1h
    grace: 1h
    token: {PING}
status_pages:
  - slug: ml
    title: ML
    groups:
      - name: Training
        monitors: [ckpt]
auth:
  admin_tokens: ["{TOKEN}"]
"""


def ping(server, suffix=""):
    request = urllib.request.Request(f"{server.base}/ping/{PING}{suffix}", data=b"disk full", method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status


def listed(server):
    status, body, _ = server.get("/api/v1/monitors")
    assert status == 200, body
    return {m["name"]: m["status"] for m in body["monitors"]}


def status_page(server):
    status, body, _ = server.get("/api/v1/status/ml")
    assert status == 200, body
    return body["banner"]["code"], body["groups"][0]["monitors"][0]["status"]


def read_every_view(server):
    """What each cached view says now; reading them also fills their caches."""
    return {
        "list": listed(server).get("ckpt"),
        "status page": status_page(server),
        "status page html": "Major outage" in server.get("/status/ml")[1],
        "dashboard, down only": "ckpt" in server.get("/?state=down")[1],
    }


def test_the_first_read_after_a_fail_ping_shows_the_monitor_down_in_every_view(start_server):
    server = start_server(config())
    assert ping(server) == 200
    assert server.monitor("ckpt")["status"] == "up"
    # Read each view a few times while up, as a polling client does.
    for _ in range(3):
        assert read_every_view(server) == {"list": "up", "status page": ("operational", "up"),
                                           "status page html": False, "dashboard, down only": False}

    assert ping(server, "/fail") == 200
    assert read_every_view(server) == {"list": "down", "status page": ("major_outage", "down"),
                                       "status page html": True, "dashboard, down only": True}

    assert ping(server) == 200
    assert read_every_view(server) == {"list": "up", "status page": ("operational", "up"),
                                       "status page html": False, "dashboard, down only": False}


def test_a_deleted_monitor_is_gone_from_every_list_at_the_first_read(start_server, health_target):
    server = start_server(config())
    spec = {"name": "from-api", "type": "http", "url": f"http://127.0.0.1:{health_target.port}/health",
            "interval": "1h"}
    assert api_call(server, "POST", "/api/v1/monitors", spec, TOKEN)[0] == 201
    assert "from-api" in listed(server)  # created is listed at once too
    for _ in range(3):
        assert "from-api" in server.get("/")[1]

    assert api_call(server, "DELETE", "/api/v1/monitors/from-api", token=TOKEN)[0] == 204
    assert "from-api" not in listed(server)
    assert "from-api" not in server.get("/")[1]
