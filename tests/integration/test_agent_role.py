"""The node agent hosted inside the ranks (trainwatch.init(server=...)) as the ranks end one
by one: the agent role passes from the rank that ends to a live one, and ranks that exit 0
make the job finished, never stuck, lost or down. Real PyTorch (gloo, CPU) ranks, the real
server on loopback, a webhook receiver for what would page someone."""
import time

from conftest import Server, wait_for
from test_jobs import TOKEN, Cluster, Webhook

LINGER_S = 3
# Longer than the linger: a rank that sleeps after its last step while it still says
# "training" is a stall by the rule once this passes, so it must outlast the linger.
STEP_TIMEOUT_S = LINGER_S + 5
SILENT_AFTER_S = 3
CHECK_EVERY_S = 1
# Every timeout that could judge the job once its ranks have ended: a stall needs the step
# timeout past the last step, a silent node node_silent_after past its last report, and the
# verdict then waits for the next check. Twice the sum of the longest of them and a check
# covers each several times over; the server's defaults (60 s and 3 reports) would make this
# the 90 s the scenario was first seen in, for no more evidence.
QUIET_WINDOW_S = 2 * (max(STEP_TIMEOUT_S, SILENT_AFTER_S) + CHECK_EVERY_S) + 2

CONFIG = f"""
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - name: hook
    type: webhook
    url: http://127.0.0.1:{{port}}/hook
jobs:
  auto_create: false
  token: ${{TRAINWATCH_TOKEN}}
monitors:
  - name: fin
    type: job
    world_size: 2
    interval: {CHECK_EVERY_S}s
    notify: [hook]
    thresholds:
      step_timeout: {STEP_TIMEOUT_S}s
      node_silent_after: {SILENT_AFTER_S}s
      startup_timeout: 2m
"""


def test_ranks_that_exit_0_one_after_the_other_finish_the_job_without_an_alert(tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    hook = Webhook()
    (tmp_path / "trainwatch.yaml").write_text(CONFIG.replace("{port}", str(hook.port)))
    server = Server(tmp_path / "trainwatch.yaml", tmp_path / "data", tmp_path / "server.log").start()
    # Local rank 0 hosts the agent; rank 1 stays LINGER_S after the last step, still "training"
    # as far as it said, as a rank does that saves, logs or tears down after its peer left.
    c = Cluster(tmp_path, server, in_process=True, nodes=1, ranks_per_node=2, job="fin", report_every=1,
                env_extra={"MAX_STEPS": "150", "LINGER_S_1": str(LINGER_S)})
    try:
        host = c.procs[0]
        wait_for(lambda: (j := c.job("fin")) and j.get("nodes") and j["nodes"][0]["agent_pid"] == host.pid,
                 timeout=60, what="the agent reporting from local rank 0")
        # Rank 0 ends: its agent's last report, then the role passes to rank 1, whose agent
        # reports (not a final report) while it lingers. Rank 0's process may still be
        # tearing torch down by then: the role goes when its agent stops, not at its exit.
        successor = c.procs[1]
        j = wait_for(lambda: (j := c.job("fin")) and j["nodes"][0]["agent_pid"] == successor.pid
                     and not j["nodes"][0]["final"] and j, timeout=120, interval=0.05,
                     what="rank 1 to take the agent over")
        ranks = {r["rank"]: r for r in j["ranks"]}
        assert ranks[0]["status"] == "finished" and ranks[1]["status"] == "training", j["ranks"]
        assert host.wait(timeout=60) == 0
        assert successor.wait(timeout=60) == 0
        ended = time.monotonic()
        j = wait_for(lambda: (j := c.job("fin")) and j.get("phase") == "finished" and j, timeout=10,
                     what="the job to read finished")
        assert j["nodes"][0]["final"] is True
        # Nothing may page while every timeout that could fire has time to.
        while time.monotonic() - ended < QUIET_WINDOW_S:
            j = c.job("fin")
            assert j["status"] != "down" and not j.get("incident") and j["phase"] == "finished", j
            time.sleep(0.25)
        assert hook.downs() == [], hook.alerts
        assert all(f["severity"] == "warning" for f in j["findings"]) and not any(
            f["code"] in ("node_silent", "job_stalled", "rank_stuck", "monitoring_lost") for f in j["findings"]), j
    finally:
        c.close()
        server.stop()
        hook.close()
