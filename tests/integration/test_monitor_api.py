"""Monitor management through the API: token required, API monitors persist beside YAML ones."""

from conftest import api_call, wait_for

TOKEN = "api-test-admin-token-0123456789"


def call(server, method, path, body=None, token=TOKEN):
    return api_call(server, method, path, body, token)[:2]


def config(port):
    return f"""
monitors:
  - name: from-yaml
    type: http
    url: http://127.0.0.1:{port}/health
    interval: 200ms
auth:
  admin_tokens: ["{TOKEN}"]
"""


def test_create_pause_resume_replace_delete_and_persist(start_server, health_target, tmp_path):
    server = start_server(config(health_target.port))
    spec = {"name": "from-api", "type": "http", "url": f"http://127.0.0.1:{health_target.port}/health", "interval": "200ms"}

    assert call(server, "POST", "/api/v1/monitors", spec, token=None)[0] == 401
    assert call(server, "POST", "/api/v1/monitors", spec, token="wrong-token-wrong-token")[0] == 401
    status, body = call(server, "POST", "/api/v1/monitors", dict(spec, interval="5x"))
    assert status == 400 and "interval" in body["detail"]
    assert call(server, "POST", "/api/v1/monitors", dict(spec, url="http://x/${HOME}"))[0] == 400  # no env in API specs

    assert call(server, "POST", "/api/v1/monitors", spec)[0] == 201
    assert call(server, "POST", "/api/v1/monitors", spec)[0] == 409
    server.wait_status("from-api", "up")

    assert call(server, "PUT", "/api/v1/monitors/from-yaml", spec)[0] == 409      # YAML ones are read-only
    assert call(server, "DELETE", "/api/v1/monitors/from-yaml")[0] == 409
    assert call(server, "POST", "/api/v1/monitors/from-yaml/pause")[0] == 200     # but can be paused
    server.wait_status("from-yaml", "paused")
    assert call(server, "POST", "/api/v1/monitors/from-yaml/resume")[0] == 200
    server.wait_status("from-yaml", "up")

    assert call(server, "PUT", "/api/v1/monitors/from-api", dict(spec, interval="300ms"))[0] == 200
    wait_for(lambda: server.monitor("from-api").get("interval_ms") == 300, what="the new interval")

    # After a restart the API monitor is still there, beside the YAML one.
    server.stop()
    server.start()
    server.wait_status("from-api", "up")
    assert call(server, "DELETE", "/api/v1/monitors/from-api")[0] == 204
    wait_for(lambda: server.get("/api/v1/monitors/from-api")[0] == 404, what="the monitor to go")
    assert call(server, "POST", "/api/v1/monitors/nope/pause")[0] == 404


def test_a_monitor_created_through_the_api_alerts_its_channels(start_server, health_target, closed_port):
    from receivers import HttpReceiver
    hook = HttpReceiver()
    try:
        server = start_server(config(health_target.port) + f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - name: hook
    type: webhook
    url: {hook.base}/hook
""")
        spec = {"name": "api-down", "type": "tcp", "host": "127.0.0.1", "port": closed_port, "interval": "200ms",
                "notify": ["hook"]}
        status, body = call(server, "POST", "/api/v1/monitors", spec)
        assert status == 201, body
        down = wait_for(lambda: hook.accepted("/hook"), what="the API monitor's DOWN on its channel")[0]["body"]
        assert down["event"] == "down" and down["monitor"]["name"] == "api-down", down
    finally:
        hook.close()
