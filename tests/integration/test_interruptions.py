"""How a run stopped, as the ledger classifies it: a one-rank gloo job beside a sidecar agent,
ended once by CUDA's out-of-memory error and once by the scheduler's SIGTERM; and a rank
SIGKILLed and restarted at once, before the server's once-a-second analysis could see it down."""
import os
import signal
import subprocess

import pytest

from conftest import BINARY, wait_for
from test_jobs import BUILD, HERE, PY, REPORT_EVERY, TOKEN, process_events_allowed, rendezvous_port

CONFIG = "jobs:\n  auto_create: true\n  token: ${TRAINWATCH_TOKEN}\n"


@pytest.mark.parametrize("ending", ["gpu_oom", "preempted"])
def test_the_ledger_names_how_the_run_stopped(ending, start_server, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    server = start_server(CONFIG)
    slots, control = tmp_path / "slots", tmp_path / "control"
    control.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
    env.update(PYTHONPATH=str(BUILD / "python"), TRAINWATCH_JOB="solo", TRAINWATCH_DIR=str(slots),
               TRAINWATCH_NODE="node-a", TRAINWATCH_TOKEN=TOKEN, CONTROL_DIR=str(control),
               TRAINWATCH_REPORT_EVERY=str(REPORT_EVERY), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(rendezvous_port()),
               WORLD_SIZE="1", RANK="0", LOCAL_RANK="0")
    agent = subprocess.Popen([BINARY, "agent", "--listen", "127.0.0.1:0", "--server", server.base,
                              "--report-every", str(REPORT_EVERY)], env=env,
                             stderr=open(tmp_path / "agent.log", "wb"))
    rank = subprocess.Popen([PY, str(HERE / "job_rank.py")], env=env, stdout=subprocess.DEVNULL,
                            stderr=open(tmp_path / "rank.log", "wb"))
    try:
        def job():
            status, j, _ = server.get("/api/v1/jobs/solo")
            return j if status == 200 else None

        wait_for(lambda: (j := job()) and j["status"] == "up" and j["ranks"] and j["ranks"][0]["step"] > 5,
                 timeout=90, interval=0.5, what="the job to train")
        if ending == "gpu_oom":
            (control / "oom-0").write_text("")
        else:
            rank.send_signal(signal.SIGTERM)
        rank.wait(timeout=30)
        j = wait_for(lambda: (j := job()) and j["interruptions"] and j, timeout=30, what="the interruption")
        i = j["interruptions"][0]
        if ending == "gpu_oom":
            assert i["cause"] == "gpu_oom" and i["code"] == "rank_failed", i
            assert i["detail"].startswith("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"), i
        else:
            assert i["cause"] == ("preempted" if process_events_allowed() else "vanished"), i
        table = server.get("/api/v1/interruptions")[1]
        assert table["causes"] == [{"cause": i["cause"], "count": 1, "share": 1.0, "gpu_hours_lost": 0.0}], table
    finally:
        if rank.poll() is None:
            rank.kill()
            rank.wait(timeout=30)
        agent.terminate()
        agent.wait(timeout=30)


def test_a_kill_restarted_at_once_is_still_an_interruption(start_server, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    server = start_server(CONFIG)
    control = tmp_path / "control"
    control.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
    env.update(PYTHONPATH=str(BUILD / "python"), TRAINWATCH_JOB="solo", TRAINWATCH_DIR=str(tmp_path / "slots"),
               TRAINWATCH_NODE="node-a", TRAINWATCH_TOKEN=TOKEN, CONTROL_DIR=str(control),
               TRAINWATCH_REPORT_EVERY=str(REPORT_EVERY), MASTER_ADDR="127.0.0.1", WORLD_SIZE="1", RANK="0",
               LOCAL_RANK="0")
    agent = subprocess.Popen([BINARY, "agent", "--listen", "127.0.0.1:0", "--server", server.base,
                              "--report-every", str(REPORT_EVERY)], env=env,
                             stderr=open(tmp_path / "agent.log", "wb"))

    def start_rank(attempt, gate=None):
        # As a launcher restarts it: its restart count, and a fresh rendezvous.
        extra = {"START_GATE": str(gate)} if gate else {}
        return subprocess.Popen([PY, str(HERE / "job_rank.py")],
                                env={**env, **extra, "TRAINWATCH_ATTEMPT": str(attempt),
                                     "MASTER_PORT": str(rendezvous_port())},
                                stdout=subprocess.PIPE, stderr=open(tmp_path / f"rank{attempt}.log", "wb"))

    def job():
        status, j, _ = server.get("/api/v1/jobs/solo")
        return j if status == 200 else None

    rank = start_rank(0)
    # The restart, its Python and torch loaded beforehand, waits at the gate for the kill.
    gate = control / "go"
    restart = start_rank(1, gate)
    try:
        assert restart.stdout.readline() == b"gated\n"
        wait_for(lambda: (j := job()) and j["status"] == "up" and j["ranks"] and j["ranks"][0]["step"] > 5,
                 timeout=90, interval=0.5, what="the job to train")
        assert not job()["interruptions"]
        rank.kill()
        rank.wait(timeout=30)  # dead, so its slot is free for the restart to claim
        gate.write_text("")  # at once: the restart can report before any verdict shows the kill
        rank = restart
        wait_for(lambda: (j := job()) and len(j["attempts"]) == 2 and j["ranks"][0]["step"] > 5, timeout=30,
                 interval=0.5, what="attempt 2 to train")
        # The ledger closes the interruption once attempt 2 trains; wait for that, not a fixed time.
        wait_for(lambda: (j := job()) and j["interruptions"] and j["interruptions"][0]["resumed_at"], timeout=30,
                 interval=0.5, what="the interruption to close")
        j = job()
        assert len(j["interruptions"]) == 1, j
        i = j["interruptions"][0]
        assert i["attempt"] == 1 and i["restarted"] and i["resumed_at"], i
        # How attempt 1 ended is what the agent could tell: the SIGKILL it saw (a process gone,
        # without process events), or, where the restart took the rank's slot before the agent
        # read it, nothing: the rank last seen running, then relaunched.
        seen_dead = ("signal", "SIGKILL") if process_events_allowed() else ("vanished", "exit status unknown")
        assert (i["cause"], i["detail"]) in (seen_dead, ("requeued", "relaunched while its ranks ran")), i
        table = server.get("/api/v1/interruptions")[1]
        assert [c["cause"] for c in table["causes"]] == [i["cause"]] and table["causes"][0]["count"] == 1, table
        assert table["causes"][0]["gpu_hours_lost"] > 0, table
    finally:
        for process in (rank, restart):
            if process.poll() is None:
                process.kill()
                process.wait(timeout=30)
        agent.terminate()
        agent.wait(timeout=30)
