"""How a run stopped, as the ledger classifies it: a one-rank gloo job beside a sidecar agent,
ended once by CUDA's out-of-memory error and once by the scheduler's SIGTERM."""
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
