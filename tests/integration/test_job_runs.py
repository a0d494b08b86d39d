"""Runs and attempts with real gloo ranks beside a sidecar agent: a job that finished at
restart attempt 1 and is submitted again (a new run id, attempt 0) is watched as a new run,
whose SIGKILLed rank is named; two run ids at the same attempt are two runs."""
import os
import subprocess
import time

from conftest import BINARY, wait_for
from test_jobs import BUILD, HERE, PY, REPORT_EVERY, TOKEN, rendezvous_port

CONFIG = "jobs:\n  auto_create: true\n  token: ${TRAINWATCH_TOKEN}\n"


class Node:
    """One node of the job: a sidecar agent, and the ranks launched beside it, run after run,
    each launch with the launcher's identity it is given (TRAINWATCH_RUN_ID, TRAINWATCH_ATTEMPT)."""

    def __init__(self, tmp, server, job):
        self.tmp, self.server, self.job, self.ranks = tmp, server, job, []
        control = tmp / "control"
        control.mkdir()
        slots = tmp / "slots"
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "TRAINWATCH_RUN_ID", "TRAINWATCH_ATTEMPT")}
        self.env.update(PYTHONPATH=str(BUILD / "python"), TRAINWATCH_JOB=job, TRAINWATCH_DIR=str(slots),
                        TRAINWATCH_NODE="node-a", TRAINWATCH_TOKEN=TOKEN, CONTROL_DIR=str(control),
                        TRAINWATCH_REPORT_EVERY=str(REPORT_EVERY), MASTER_ADDR="127.0.0.1")
        self.agent = subprocess.Popen([BINARY, "agent", "--listen", "127.0.0.1:0", "--server", server.base,
                                       "--report-every", str(REPORT_EVERY)], env=self.env,
                                      stderr=open(tmp / "agent.log", "wb"))

    def launch(self, world, **launcher):
        """Starts `world` ranks of one launch; returns their processes once each is ready."""
        env = dict(self.env, MASTER_PORT=str(rendezvous_port()), WORLD_SIZE=str(world), **launcher)
        n = len(self.ranks)
        procs = [subprocess.Popen([PY, str(HERE / "job_rank.py")],
                                  env=dict(env, RANK=str(r), LOCAL_RANK=str(r)), stdout=subprocess.PIPE,
                                  stderr=open(self.tmp / f"rank-{n + r}.log", "wb")) for r in range(world)]
        for r, p in enumerate(procs):
            assert p.stdout.readline().decode().strip() == "ready", (self.tmp / f"rank-{n + r}.log").read_text()
        self.ranks += procs
        return procs

    def view(self):
        status, j, _ = self.server.get(f"/api/v1/jobs/{self.job}")
        return j if status == 200 else None

    def trains(self, run_id, ranks):
        j = self.view()
        ok = (j and j["status"] == "up" and len(j["ranks"]) == ranks
              and all(r["run_id"] == run_id and r["alive"] and r["step"] > 5 for r in j["ranks"]))
        return j if ok else None

    def finished(self, run_id):
        j = self.view()
        return j if j and j["phase"] == "finished" and all(r["run_id"] == run_id for r in j["ranks"]) else None

    def close(self):
        for p in self.ranks + [self.agent]:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=30)


def run_to_the_end(node, world, **launcher):
    """One launch that trains a few seconds and exits 0; returns the job once it reads finished."""
    procs = node.launch(world, MAX_STEPS="150", **launcher)
    for p in procs:
        assert p.wait(timeout=120) == 0, "a rank of the finishing run failed"
    return wait_for(lambda: node.finished(launcher["TRAINWATCH_RUN_ID"]), timeout=30, interval=0.5,
                    what="the run to read finished")


def test_a_job_run_again_after_finishing_at_attempt_1_is_a_new_watched_run(start_server, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    server = start_server(CONFIG)
    node = Node(tmp_path, server, "again")
    try:
        # torchrun's restart 1 of run rdzv-7 trains to the end.
        run_to_the_end(node, 2, TRAINWATCH_RUN_ID="rdzv-7", TRAINWATCH_ATTEMPT="1")
        # Submitted again: srun, the Slurm job id as run id, its count from 0.
        second = node.launch(2, TRAINWATCH_RUN_ID="8812345")
        wait_for(lambda: node.trains("8812345", 2), timeout=90, interval=0.5, what="the new run to train")
        victim = second[1]
        victim.kill()
        killed = time.monotonic()
        j = wait_for(lambda: (j := node.view()) and j["status"] == "down" and j, timeout=15,
                     what="down after a SIGKILL in the new run")
        elapsed = time.monotonic() - killed
        cause = j["incident"]["cause"]
        assert cause.startswith(f"rank 1 (node-a, pid {victim.pid}) "), cause
        runs = j["runs"]
        assert [r["run_id"] for r in runs] == ["rdzv-7", "8812345"], runs
        assert runs[0]["outcome"] == "finished" and runs[0]["ended"], runs[0]
        assert [a["launcher_attempt"] for a in runs[0]["attempts"]] == [1], runs[0]
        assert runs[1]["outcome"] is None and runs[1]["ended"] is None, runs[1]
        [attempt] = runs[1]["attempts"]
        assert attempt["launcher_attempt"] == 0 and attempt["run"] == 2 and attempt["outcome"] is None, attempt
        status, page, _ = server.get("/jobs/again")
        assert status == 200 and 'id="runs"' in page and '<td data-label="run id">8812345</td>' in page, page
        print(f"a new run's SIGKILL named after {elapsed:.1f} s: {cause}")
    finally:
        node.close()


def test_two_run_ids_at_the_same_attempt_are_two_runs(start_server, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    server = start_server(CONFIG)
    node = Node(tmp_path, server, "twice")
    try:
        run_to_the_end(node, 1, TRAINWATCH_RUN_ID="runA")
        node.launch(1, TRAINWATCH_RUN_ID="runB")
        j = wait_for(lambda: node.trains("runB", 1), timeout=90, interval=0.5, what="runB to train")
        runs = j["runs"]
        assert [(r["number"], r["run_id"]) for r in runs] == [(1, "runA"), (2, "runB")], runs
        assert runs[0]["outcome"] == "finished", runs[0]
        assert [[a["launcher_attempt"] for a in r["attempts"]] for r in runs] == [[0], [0]], runs
        assert [a["run_id"] for a in j["attempts"]] == ["runA", "runB"], j["attempts"]
    finally:
        node.close()
