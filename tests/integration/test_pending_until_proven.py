"""Before a job starts nothing pages and nothing is green: a declared job monitor is
`pending` (API and dashboard) until its first report; the node agent, up before any rank,
answers /health 200 saying no rank has started yet, so an `http` monitor on it (the docs'
uptime pattern, depends_on the job) stays up and sends nothing; the first rank makes the
job up."""
import json
import os
import re
import subprocess
import textwrap
import time
import urllib.error
import urllib.request

from conftest import BINARY, api_call, wait_for
from test_jobs import BUILD, TOKEN, Webhook

ADMIN = "pending-test-admin-token-0123456789"


def health(address):
    try:
        with urllib.request.urlopen(f"http://{address}/health", timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_a_job_is_pending_until_its_first_report_and_its_nodes_health_pages_nothing(start_server, tmp_path,
                                                                                    monkeypatch):
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    hook = Webhook()
    server = start_server(textwrap.dedent(f"""
        server:
          allow_local_channel_targets: true   # the webhook listens on loopback
        auth:
          admin_tokens: ["{ADMIN}"]
        notifications:
          - {{name: hook, type: webhook, url: "http://127.0.0.1:{hook.port}/hook"}}
        jobs:
          token: ${{TRAINWATCH_TOKEN}}
        monitors:
          - name: tiny
            type: job
            world_size: 1
            notify: [hook]
            thresholds:
              startup_timeout: 1h
        """))
    slots = tmp_path / "slots"
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"), TRAINWATCH_DIR=str(slots), TRAINWATCH_TOKEN=TOKEN)
    agent_log = tmp_path / "agent.log"
    agent = subprocess.Popen([BINARY, "agent", "--job", "tiny", "--listen", "127.0.0.1:0", "--dir", str(slots),
                              "--node", "node-a", "--report-every", "0.5", "--server", server.base],
                             env=env, stderr=open(agent_log, "wb"))
    rank = None
    try:
        address = wait_for(lambda: (m := re.search(r"on http://([0-9.:]+)/health", agent_log.read_text()))
                           and m.group(1), what="the agent's port")
        status, body = health(address)
        assert status == 200 and body["status"] == "ok", body
        assert [w["code"] for w in body["warnings"]] == ["no_ranks"], body
        assert "no rank of job 'tiny' has started on this node yet" in body["warnings"][0]["message"], body

        # The docs' uptime check of the node, added once the agent's port is known.
        check = {"name": "node-a-health", "type": "http", "url": f"http://{address}/health", "interval": "1s",
                 "retries": 0, "notify": ["hook"], "depends_on": ["tiny"],
                 "conditions": ["[STATUS] == 200", "[BODY].status == ok"]}
        status, body, _ = api_call(server, "POST", "/api/v1/monitors", check, token=ADMIN)
        assert status == 201, body
        server.wait_status("node-a-health", "up")
        # Several job checks and health checks later: the job still pending, nothing sent.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            assert server.monitor("tiny")["status"] == "pending", server.monitor("tiny")
            assert server.monitor("node-a-health")["status"] == "up", server.monitor("node-a-health")
            time.sleep(0.5)
        assert hook.alerts == [], hook.alerts
        status, page, _ = server.get("/")
        row = re.search(r'<tr [^>]*data-monitor="tiny".*?</tr>', page, re.S)
        assert row and "pill-pending" in row.group(0), row and row.group(0)

        rank = subprocess.Popen(["/usr/bin/python3", "-c", textwrap.dedent("""
            import time, trainwatch
            tw = trainwatch.init(job="tiny", rank=0, world_size=1)
            for step in range(1, 100000):
                tw.step(step)
                time.sleep(0.05)
            """)], env=env)
        server.wait_status("tiny", "up", timeout=30)
        assert server.monitor("node-a-health")["status"] == "up", server.monitor("node-a-health")
        assert hook.alerts == [], hook.alerts
    finally:
        if rank is not None:
            rank.kill()
            rank.wait(timeout=10)
        agent.terminate()
        agent.wait(timeout=10)
        hook.close()
