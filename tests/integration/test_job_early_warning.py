"""The early culprit warning (docs/failure-modes.md, `rank_suspected`) and the quiet of healthy
jobs, on real gloo jobs of 4 ranks (job_rank.py) stepping about every 0.5 s (healthy_run.py).

Two healthy jobs train side by side for 5 minutes, each step 0.25-0.75 s (±50 %), with a
45 s checkpoint and a 20 s evaluation every 2 minutes: in "tiny" every rank evaluates,
declared; in "waits" rank 0 alone evaluates, undeclared, while ranks 1-3 wait for it in
dist.barrier(). Neither shows a single finding, warning or page. Then rank 2 of "tiny" waits
in its data fetch while the others wait in all_reduce: a warning names rank 2 with its
function and line within 10 s of its last step, and the page follows at the step timeout
(60 s, the floor), as before."""
import time

import pytest

from conftest import Server, wait_for
from healthy_run import drive, start_healthy_job
from test_jobs import TOKEN, Webhook, training_up

HEALTHY_S = 300

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
  - name: waits
    type: job
    world_size: 4
    notify: [hook]
"""


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.fixture(scope="module")
def jobs(tmp_path_factory, monkeypatch_module):
    tmp = tmp_path_factory.mktemp("early")
    monkeypatch_module.setenv("TRAINWATCH_TOKEN", TOKEN)
    hook = Webhook()
    (tmp / "trainwatch.yaml").write_text(CONFIG.format(port=hook.port))
    server = Server(tmp / "trainwatch.yaml", tmp / "data", tmp / "server.log").start()
    clusters = {}
    try:
        clusters["tiny"] = start_healthy_job(tmp / "tiny", server, "tiny", "all")
        clusters["waits"] = start_healthy_job(tmp / "waits", server, "waits", "rank0")
        for c in clusters.values():
            c.hook = hook
        yield clusters
    finally:
        for c in clusters.values():
            c.close()
        server.stop()
        hook.close()


def alerts(cluster, event):
    return [a for a in cluster.hook.alerts if a.get("event") == event and a["monitor"]["name"] == cluster.name]


def test_healthy_jobs_with_checkpoints_and_evaluations_never_warn(jobs):
    seen = drive(jobs, HEALTHY_S)
    findings = {name: [(f["seen_at_s"], f["code"], f["message"]) for f in s.findings] for name, s in seen.items()}
    assert findings == {"tiny": [], "waits": []}, findings  # every job's, with when each was first seen
    for name, s in seen.items():
        assert s.statuses == {"up"}, (name, s.statuses)
        assert "checkpointing" in s.phases and s.evaluations == 2, (name, s.phases, s.evaluations)
    assert "evaluating" in seen["tiny"].phases, seen["tiny"].phases  # declared
    assert jobs["tiny"].hook.alerts == [], jobs["tiny"].hook.alerts  # the receiver of both jobs
    for name, c in jobs.items():
        j = c.job(name)
        print(f"{name}: healthy {HEALTHY_S} s with a 45 s checkpoint and two 20 s evaluations: 0 findings, "
              f"0 alerts; step timeout {j['timeouts']['step_ms'] / 1000:.0f} s, smoothed step gap "
              f"{j['timeouts']['smoothed_step_gap_ms']} ms")


def test_a_soft_hang_is_named_in_a_warning_within_ten_seconds_and_paged_at_the_timeout(jobs):
    # "waits" has shown its quiet: its 4 ranks and 2 agents leave this 2-core machine, so the
    # soft hang is timed beside the server and one job's ranks alone, as it was before.
    jobs["waits"].close()
    cluster = jobs["tiny"]
    wait_for(lambda: training_up(cluster, "tiny"), timeout=60, what="a healthy job")
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
        step_timeout = cluster.job("tiny")["timeouts"]["step_ms"] / 1000
        [page] = wait_for(lambda: alerts(cluster, "down"), timeout=step_timeout + 20, what="the page")
        paged_after = time.monotonic() - stuck
        assert page["cause"].startswith(f"rank 2 (node-b, pid {pid}) is stuck in fetch_next_shard"), page
        assert paged_after >= step_timeout - 1.0, (paged_after, step_timeout)
        print(f"soft hang: warning after {warned_after:.1f} s, page after {paged_after:.1f} s "
              f"(step timeout {step_timeout:.0f} s): {cause}")
    finally:
        cluster.remove("stuck-2")
    wait_for(lambda: training_up(cluster, "tiny"), timeout=30, what="recovery once the data fetch returns")
    assert len(alerts(cluster, "warning")) == 1, cluster.hook.alerts
