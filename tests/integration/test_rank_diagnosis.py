"""Naming the rank when no single rank stands out, on a real gloo job of 4 ranks over two
"nodes" (job_rank.py, sidecar agents, reports every second) stepping about every 0.12 s:

- a straggler: rank 3 sleeps twice its step time every step from step 60 on, which costs it
  no CPU (a throttled GPU's wait does not either), while the others wait for it in
  all_reduce: a warning names rank 3, within 30 of its steps, and no other rank, ever;
  never a page;
- a collective mismatch: rank 1 enters a broadcast while ranks 0, 2 and 3 enter all_reduce:
  a warning names rank 1, both collectives and their lines, and says mismatch, within 10 s;
  the page, at the step timeout, says the same. The job hangs for good: it goes last.
"""
import re
import time

import pytest

from conftest import Server, wait_for
from test_jobs import TOKEN, Cluster, Webhook, training_up

PACE_S = 0.1
STEP_TIMEOUT_S = 20

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
    thresholds:
      step_timeout_min: {timeout}s
"""


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, monkeypatch_module):
    tmp = tmp_path_factory.mktemp("diagnosis")
    monkeypatch_module.setenv("TRAINWATCH_TOKEN", TOKEN)
    hook = Webhook()
    (tmp / "trainwatch.yaml").write_text(CONFIG.format(port=hook.port, timeout=STEP_TIMEOUT_S))
    server = Server(tmp / "trainwatch.yaml", tmp / "data", tmp / "server.log").start()
    c = Cluster(tmp, server, env_extra={"STEP_PACE": str(PACE_S)})
    c.hook = hook
    try:
        wait_for(lambda: training_up(c), timeout=90, interval=0.5, what="the job to be up with 4 ranks training")
        yield c
    finally:
        c.close()
        server.stop()
        hook.close()


def rank_step(job, rank):
    return next(r["step"] for r in job["ranks"] if r["rank"] == rank)


def alerts(cluster, event):
    return [a for a in cluster.hook.alerts if a.get("event") == event]


def test_a_straggler_is_named_by_rank_within_thirty_steps_and_no_other_rank_ever(cluster):
    # Past step 60, and past the steps of each process's warm-up the rule leaves out.
    wait_for(lambda: (j := training_up(cluster)) and min(r["step"] for r in j["ranks"]) > 60, timeout=60,
             interval=0.5, what="every rank past step 60")
    cluster.touch("sleep2x-3")
    try:
        began = rank_step(cluster.job(), 3)
        named, statuses = set(), set()

        def straggler():
            j = cluster.job()
            statuses.add(j["status"])
            found = [f for f in j["findings"] if f["code"] == "straggler"]
            for f in found:
                named.update(f["ranks"])
            return (j, found) if 3 in named else None

        j, found = wait_for(straggler, timeout=120, interval=0.5, what="a straggler finding naming rank 3")
        steps = rank_step(j, 3) - began
        [f] = [f for f in found if f["ranks"] == [3]]
        assert f["severity"] == "warning", f
        assert re.match(r"rank 3 \(node-b, pid \d+\) is a straggler: [\d.]+ ms a step to reach the collective, "
                        r"[\d.]+x the job median \([\d.]+ ms\) over the last \d+ s$", f["message"]), f
        assert steps <= 30, (steps, f)
        # It stays named while it straggles, alone, and nobody is paged.
        watched_until = time.monotonic() + 15
        while time.monotonic() < watched_until:
            straggler()
            time.sleep(0.5)
        assert named == {3}, named
        assert statuses == {"up"}, statuses
        assert alerts(cluster, "down") == [], cluster.hook.alerts
        print(f"straggler named after {steps} of its steps: {f['message']}")
    finally:
        cluster.remove("sleep2x-3")
    wait_for(lambda: (j := training_up(cluster)) and not [f for f in j["findings"] if f["code"] == "straggler"],
             timeout=90, interval=0.5, what="the straggler finding to clear once rank 3 keeps pace")


def test_a_collective_mismatch_is_named_in_a_warning_and_the_page(cluster):
    wait_for(lambda: training_up(cluster), timeout=60, what="a healthy job")
    pid = cluster.procs[1].pid
    cluster.touch("mismatch-1")  # rank 1's next step enters broadcast; the others all_reduce
    began = time.monotonic()
    [warning] = wait_for(lambda: alerts(cluster, "warning"), timeout=30, interval=0.1, what="the warning")
    warned_after = time.monotonic() - began
    cause = warning["cause"]
    assert cause.startswith(f"rank 1 (node-a, pid {pid}) is in broadcast (job_rank.py:"), cause
    assert ", likely a collective mismatch at step " in cause, cause
    assert "; ranks 0,2-3 are in all_reduce (job_rank.py:" in cause, cause
    assert warned_after <= 10.0, (warned_after, cause)
    [page] = wait_for(lambda: alerts(cluster, "down"), timeout=STEP_TIMEOUT_S + 30, what="the page")
    lines = re.findall(r"\(job_rank\.py:(\d+)\)", cause)
    assert page["cause"].startswith(f"rank 1 (node-a, pid {pid}) is in broadcast (job_rank.py:{lines[0]}), "
                                    "a collective mismatch at step "), page["cause"]
    assert f"; ranks 0,2-3 are in all_reduce (job_rank.py:{lines[1]})" in page["cause"], page["cause"]
    j = cluster.job()
    assert j["findings"][0]["code"] == "collective_mismatch" and j["findings"][0]["ranks"] == [1], j["findings"]
    print(f"mismatch: warned after {warned_after:.1f} s: {cause}; page: {page['cause']}")
