"""Heartbeat monitors created through the API get a ping URL that works, keeps working
across replacements and restarts, and stops when the monitor is deleted."""
import urllib.parse

from conftest import Server, api_call, wait_for

TOKEN = "api-heartbeat-admin-token-0123456789"


def call(server, method, path, body=None, token=TOKEN):
    return api_call(server, method, path, body, token)[:2]


def ping(server, url):
    return server.get(urllib.parse.urlsplit(url).path)[0]


def test_api_heartbeat_gets_a_ping_url_that_receives_pings(start_server, tmp_path):
    server = start_server(f"""
monitors:
  - {{name: from-file, type: heartbeat, period: 1h, token: file-heartbeat-token}}
auth:
  admin_tokens: ["{TOKEN}"]
""")
    spec = {"name": "nightly", "type": "heartbeat", "period": "1h", "grace": "10m"}
    status, body = call(server, "POST", "/api/v1/monitors", spec)
    assert status == 201 and body["ping_url"].startswith(server.base + "/ping/"), body
    url = body["ping_url"]
    assert call(server, "GET", "/api/v1/monitors/nightly")[1]["ping_url"] == url
    assert call(server, "GET", "/api/v1/monitors/nightly", token=None)[1]["ping_url"] is None

    assert ping(server, url) == 200
    server.wait_status("nightly", "up")
    assert len(server.get("/api/v1/monitors/nightly/pings")[1]["pings"]) == 1

    # A replacement keeps the URL; another monitor's token is refused.
    status, body = call(server, "PUT", "/api/v1/monitors/nightly", dict(spec, grace="20m"))
    assert status == 200 and body["ping_url"] == url
    status, body = call(server, "POST", "/api/v1/monitors",
                        {"name": "copycat", "type": "heartbeat", "period": "1h", "token": "file-heartbeat-token"})
    assert status == 400 and "token" in body["detail"]
    assert ping(server, url) == 200

    # After a restart the same URL still reaches it.
    server.stop()
    again = Server(server.config_path, server.data_dir, tmp_path / "again.log").start()
    try:
        assert ping(again, url) == 200
        wait_for(lambda: len(again.get("/api/v1/monitors/nightly/pings")[1]["pings"]) == 3, what="3 pings stored")
        assert call(again, "DELETE", "/api/v1/monitors/nightly")[0] == 204
        assert ping(again, url) == 404
    finally:
        again.stop()
