"""A slot folder deleted under a running job (a cleanup of /dev/shm, an `rm -rf` of
TRAINWATCH_DIR): the ranks train on, but their node's agent can no longer see them. The job
(API and page) names each rank with its slot file (`slot_removed`, a warning) and, while
their last report ages past the step timeout, never calls them hung nor the job stalled.
Real PyTorch ranks (gloo, CPU), the agent beside them, and the server."""
import glob
import html
import os
import shutil

from conftest import wait_for
from test_jobs import TOKEN, Cluster, checks_of, findings, rank_view

CONFIG = """
jobs:
  auto_create: false
  token: ${TRAINWATCH_TOKEN}
monitors:
  - name: unseen
    type: job
    world_size: 2
    thresholds:
      step_timeout_min: 3s
      startup_timeout: 2m
"""


def test_ranks_whose_slot_folder_is_removed_are_named_and_never_called_hung(start_server, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    server = start_server(CONFIG)
    c = Cluster(tmp_path, server, nodes=1, ranks_per_node=2, job="unseen")
    try:
        j = wait_for(lambda: (j := c.job("unseen")) and j.get("status") == "up" and len(j["ranks"]) == 2
                     and all(r["status"] == "training" and r["step"] > 5 for r in j["ranks"]) and j,
                     timeout=90, interval=0.5, what="the job to be up with 2 ranks training")
        (folder,) = glob.glob(str(tmp_path / "slots-node-a" / "*"))  # TRAINWATCH_DIR/<uid>
        shutil.rmtree(folder)
        slot_file = os.path.join(folder, "unseen.slots")

        seen = {}

        def named():
            seen["job"] = job = c.job("unseen")
            found = {f["ranks"][0]: f for f in findings(job, "slot_removed")}
            return (job, found) if set(found) == {0, 1} else None

        try:
            j, found = wait_for(named, timeout=30, interval=0.5, what="both ranks named as unwatched")
        except AssertionError:
            raise AssertionError(f"the job after the folder went: {seen['job']}") from None
        for rank in (0, 1):
            said = f"rank {rank} (node-a, pid {c.procs[rank].pid}) cannot be watched: its slot file {slot_file} "
            assert found[rank]["message"].startswith(said), found[rank]
            assert found[rank]["severity"] == "warning", found[rank]

        # Their last report ages past the step timeout, checked by the server all the while.
        step_timeout_ms = j["timeouts"]["step_ms"]
        wait_for(lambda: all(rank_view(c.job("unseen"), r)["last_step_age_ms"] > 2 * step_timeout_ms
                             for r in (0, 1)),
                 timeout=2 * step_timeout_ms / 1000 + 30, interval=0.5, what="the last steps to age past the timeout")
        checks = checks_of(server, "unseen")
        wait_for(lambda: checks_of(server, "unseen") >= checks + 2, timeout=30, what="two more checks of the job")
        j = c.job("unseen")
        assert j["status"] == "up", j.get("incident")
        codes = {f["code"] for f in j["findings"]}
        assert not codes & {"rank_hung", "job_stalled", "rank_stuck", "node_silent"}, j["findings"]
        assert {f["ranks"][0] for f in findings(j, "slot_removed")} == {0, 1}, j["findings"]
        assert all(p.poll() is None for p in c.procs.values()), "the ranks train on"
        # The job page says it too, with the file.
        status, page, _ = server.get("/jobs/unseen")
        assert status == 200 and "cannot be watched: its slot file " + slot_file in html.unescape(page)
    finally:
        c.close()
