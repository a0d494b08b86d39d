"""depends_on end to end: a node's /health check depends on the job's; one page, not two."""
from conftest import api_call, wait_for
from receivers import HttpReceiver

TOKEN = "deps-test-admin-token-0123456789"


def test_a_lost_target_pages_once_naming_the_dependent_monitor(start_server, health_target):
    receiver = HttpReceiver()
    try:
        url = f"http://127.0.0.1:{health_target.port}/health"
        # The child needs four failures, the parent one: the parent is DOWN first. The
        # parent's page waits 2 s (notify_after), so it names the child that fell with it.
        server = start_server(f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver.base}/hook"}}
monitors:
  - {{name: job, type: http, url: "{url}", interval: 200ms, timeout: 1s, notify: [hook], notify_after: 2s,
     conditions: ["[STATUS] == 200"]}}
  - {{name: node-1, type: http, url: "{url}", interval: 200ms, timeout: 1s, retries: 3, notify: [hook],
     depends_on: [job], conditions: ["[STATUS] == 200"]}}
status_pages:
  - {{slug: nodes, title: Nodes, groups: [{{name: Nodes, monitors: [node-1]}}]}}
  - {{slug: all, title: Everything, groups: [{{name: All, monitors: [job, node-1]}}]}}
auth:
  admin_tokens: ["{TOKEN}"]
""")
        server.wait_status("job", "up")
        server.wait_status("node-1", "up")
        assert server.monitor("node-1")["depends_on"] == ["job"]

        health_target.degrade()
        server.wait_status("node-1", "down")
        [alert] = wait_for(lambda: receiver.accepted("/hook"), what="the job's page")
        body = alert["body"]
        assert body["event"] == "down" and body["monitor"]["name"] == "job"
        assert body["affected"] == ["node-1"]
        assert any(f["value"] == "node-1" for f in body["fields"])

        status, listed, _ = api_call(server, "GET", "/api/v1/incidents?monitor=node-1")
        assert status == 200
        [incident] = listed["incidents"]
        assert incident["caused_by"] == "job" and incident["ended"] is None
        status, listed, _ = api_call(server, "GET", "/api/v1/incidents?monitor=job")
        assert listed["incidents"][0]["caused_by"] is None
        # A public status page names the cause only when it shows that monitor too: the
        # page's owner left the job off "nodes".
        [on_nodes] = server.get("/api/v1/status/nodes")[1]["ongoing_incidents"]
        assert on_nodes["monitor"] == "node-1" and "caused_by" not in on_nodes
        assert "caused by" not in server.get("/status/nodes")[1]
        on_all = {i["monitor"]: i for i in server.get("/api/v1/status/all")[1]["ongoing_incidents"]}
        assert on_all["node-1"]["caused_by"] == "job"
        # The child's failure went into no outbox: nothing more is on its way.
        status, rows, _ = api_call(server, "GET", "/api/v1/deliveries?limit=100")
        assert [(d["monitor"], d["kind"]) for d in rows["deliveries"]] == [("job", "down")]
        assert len(receiver.accepted()) == 1

        # The API refuses what the file would, as problem+json.
        spec = {"name": "node-2", "type": "http", "url": url, "interval": "1s"}
        for bad, words in [(["ghost"], "found 'ghost'; expected the name of a monitor"),
                           (["node-2"], "the monitor itself")]:
            status, problem, headers = api_call(server, "POST", "/api/v1/monitors", dict(spec, depends_on=bad), TOKEN)
            assert status == 400 and headers["Content-Type"].startswith("application/problem+json")
            assert words in problem["detail"], problem
        assert api_call(server, "POST", "/api/v1/monitors", dict(spec, depends_on=["job"]), TOKEN)[0] == 201
        node3 = dict(spec, name="node-3", depends_on=["node-2"])
        assert api_call(server, "POST", "/api/v1/monitors", node3, TOKEN)[0] == 201
        status, problem, _ = api_call(server, "PUT", "/api/v1/monitors/node-2", dict(spec, depends_on=["node-3"]), TOKEN)
        assert status == 400 and "found the cycle node-2 -> node-3 -> node-2" in problem["detail"], problem
        # A monitor another depends on is not removed from under it.
        status, problem, _ = api_call(server, "DELETE", "/api/v1/monitors/node-2", None, TOKEN)
        assert status == 409 and "'node-3' depends on 'node-2'" in problem["detail"]
    finally:
        receiver.close()
