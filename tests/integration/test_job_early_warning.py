"""The early culprit warning (docs/failure-modes.md, `rank_suspected`), on a real gloo job of
4 ranks (job_rank.py) stepping about every 0.5 s.

It trains healthily for 5 minutes, each step 0.25-0.75 s (±50 %), with one 45 s
checkpoint: no warning and no page. Then rank 2 waits in its data fetch while the others
wait in all_reduce: a warning names rank 2 with its function and line within 10 s of its
last step, and the page follows at the step timeout (60 s, the floor), as before."""
import time

import pytest

from conftest import Server, wait_for
from test_jobs import TOKEN, Cluster, Webhook, training_up

HEALTHY_S = 300
CHECKPOINT_AT_S = 120
PACE_S = 0.25  # the sleep a step; the jitter adds 0 to 0.5 s: 0.25-0.75 s, 0.5 s on average
CHECKPOINT_S = 45

CONFIG = """
jobs:
  auto_create: false
  token: ${{TRAINWATCH_TOKEN}}
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - name: hook
    type: webhook
    url: http://127.0.0.1:{port}/hook
monitors:
  - name: tiny
    type: job
    world_size: 4
    notify: [hook]
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, monkeypatch_module):
    tmp = tmp_path_factory.mktemp("early")
    monkeypatch_module.setenv("TRAINWATCH_TOKEN", TOKEN)
    hook = Webhook()
    (tmp / "trainwatch.yaml").write_text(CONFIG.format(port=hook.port))
    server = Server(tmp / "trainwatch.yaml", tmp / "data", tmp / "server.log").start()
    c = Cluster(tmp, server, env_extra={"STEP_PACE": str(PACE_S), "STEP_JITTER": str(2 * PACE_S),
                                        "CHECKPOINT_STEPS": str(int(CHECKPOINT_S / PACE_S))})
    c.hook = hook
    try:
        wait_for(lambda: training_up(c), timeout=90, interval=0.5, what="the job to be up with 4 ranks training")
        yield c
    finally:
        c.close()
        server.stop()
        hook.close()


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def alerts(cluster, event):
    return [a for a in cluster.hook.alerts if a.get("event") == event]


def test_a_healthy_jittery_run_with_a_long_checkpoint_never_warns(cluster):
    began = time.monotonic()
    checkpointed = False
    phases, statuses = set(), set()
    while time.monotonic() - began < HEALTHY_S:
        if not checkpointed and time.monotonic() - began >= CHECKPOINT_AT_S:
            cluster.touch("checkpoint")
            checkpointed = True
        j = cluster.job()
        phases.add(j["phase"])
        statuses.add(j["status"])
        time.sleep(2)  # a healthy run is watched in real time: there is no deadline to move to
    j = cluster.job()
    assert "checkpointing" in phases, phases  # the 45 s checkpoint was seen
    assert statuses == {"up"}, statuses
    assert cluster.hook.alerts == [], cluster.hook.alerts
    assert not [f for f in j["findings"] if f["code"] == "rank_suspected"], j["findings"]
    print(f"healthy {HEALTHY_S} s with a {CHECKPOINT_S} s checkpoint: 0 warnings, 0 pages; "
          f"step timeout {j['timeouts']['step_ms'] / 1000:.0f} s, smoothed step gap "
          f"{j['timeouts']['smoothed_step_gap_ms']} ms")


def test_a_soft_hang_is_named_in_a_warning_within_ten_seconds_and_paged_at_the_timeout(cluster):
    wait_for(lambda: training_up(cluster), timeout=60, what="a healthy job")
    cluster.touch("stuck-2")  # rank 2's next step never comes: it waits in fetch_next_shard
    stuck = time.monotonic()
    pid = cluster.procs[2].pid
    try:
        [warning] = wait_for(lambda: alerts(cluster, "warning"), timeout=30, interval=0.1,
                             what="a warning naming the stuck rank")
        warned_after = time.monotonic() - stuck
        cause = warning["cause"]
        assert cause.startswith(f"rank 2 (node-b, pid {pid}) is likely stuck in fetch_next_shard (job_rank.py:"), cause
        assert "ranks 0-1,3 are in all_reduce (job_rank.py:" in cause, cause
        assert warned_after <= 10.0, (warned_after, cause)
        step_timeout = cluster.job()["timeouts"]["step_ms"] / 1000
        [page] = wait_for(lambda: alerts(cluster, "down"), timeout=step_timeout + 20, what="the page")
        paged_after = time.monotonic() - stuck
        assert page["cause"].startswith(f"rank 2 (node-b, pid {pid}) is stuck in fetch_next_shard"), page
        assert paged_after >= step_timeout - 1.0, (paged_after, step_timeout)
        print(f"soft hang: warning after {warned_after:.1f} s, page after {paged_after:.1f} s "
              f"(step timeout {step_timeout:.0f} s): {cause}")
    finally:
        cluster.remove("stuck-2")
    wait_for(lambda: training_up(cluster), timeout=30, what="recovery once the data fetch returns")
    assert len(alerts(cluster, "warning")) == 1, cluster.hook.alerts
