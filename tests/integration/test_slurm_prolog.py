"""The shipped Slurm prolog and epilog (deploy/slurm/) on the real one-node cluster of
test_slurm.py: the prolog starts a node agent for a 2-task `srun` job, the ranks report
only into their slots, the agent pushes them to the server, which shows the job under its
Slurm name and id; the epilog stops that agent when the job ends."""
import os
import socket
import subprocess

import pytest

from conftest import ROOT, wait_for
from test_jobs import BUILD, HERE, PY, rendezvous_port
from test_slurm import slurm  # noqa: F401  (the cluster fixture, with the lines below)


@pytest.fixture
def slurm_conf_extra(tmp_path):
    """slurmd runs the shipped scripts; a wrapper only says where this test's env file is."""
    lines = ""
    for script in ("prolog", "epilog"):
        wrapper = tmp_path / f"{script}-wrapper.sh"
        wrapper.write_text(f"#!/bin/sh\nexport TRAINWATCH_SLURM_ENV={tmp_path / 'slurm.env'}"
                           f" SLURM_CONF={tmp_path / 'slurm' / 'slurm.conf'}\n"
                           f"exec /bin/bash {ROOT / 'deploy' / 'slurm' / (script + '.sh')}\n")
        wrapper.chmod(0o755)
        lines += f"{script.capitalize()}={wrapper}\n"
    return lines


def test_the_prolog_starts_an_agent_for_the_job_and_the_epilog_stops_it(slurm, start_server, tmp_path,  # noqa: F811
                                                                        monkeypatch):
    monkeypatch.delenv("TRAINWATCH_TOKEN", raising=False)
    server = start_server("jobs:\n  auto_create: true\n")
    slots, run_dir = tmp_path / "slots", tmp_path / "run"
    (tmp_path / "slurm.env").write_text(
        f"TRAINWATCH_SERVER={server.base}\nTRAINWATCH_DIR={slots}\nTRAINWATCH_SLURM_RUN_DIR={run_dir}\n"
        f"TRAINWATCH_AGENT={BUILD / 'src' / 'cli' / 'trainwatch-agent'}\nTRAINWATCH_AGENT_ARGS='--report-every 1'\n")
    control = tmp_path / "control"
    control.mkdir()
    env = {k: v for k, v in slurm.items() if not k.startswith(("TRAINWATCH_", "RANK", "LOCAL_RANK", "WORLD_SIZE"))}
    env.update(TRAINWATCH_DIR=str(slots), PYTHONPATH=str(BUILD / "python"), CONTROL_DIR=str(control),
               MAX_STEPS="100000", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(rendezvous_port()))
    srun = subprocess.Popen(["srun", "--overcommit", "--kill-on-bad-exit=1", "--job-name", "Llama 7B", "-n", "2", PY,
                             str(HERE / "job_rank.py")], env=env, stdout=subprocess.DEVNULL,
                            stderr=open(tmp_path / "srun.log", "wb"), start_new_session=True)
    try:
        pid_file = wait_for(lambda: next(run_dir.glob("*.pid"), None), timeout=60, what="the prolog's agent")
        slurm_job_id = pid_file.stem
        agent_pid = int(pid_file.read_text())

        def two_ranks():
            assert srun.poll() is None, (tmp_path / "srun.log").read_text()[-3000:]
            status, j, _ = server.get("/api/v1/jobs/llama-7b")
            return j if status == 200 and len(j["ranks"]) == 2 and all(r["step"] > 2 for r in j["ranks"]) else None

        j = wait_for(two_ranks, timeout=120, interval=0.5, what="the job's 2 ranks through the prolog's agent")
        assert {r["run_id"] for r in j["ranks"]} == {slurm_job_id}
        assert {r["node"] for r in j["ranks"]} == {socket.gethostname()}
        assert os.readlink(f"/proc/{agent_pid}/exe") == str(BUILD / "src" / "cli" / "trainwatch-agent")

        subprocess.run(["scancel", slurm_job_id], env=env, check=True, timeout=30)
        srun.wait(timeout=60)
        wait_for(lambda: not pid_file.exists() and not os.path.exists(f"/proc/{agent_pid}/exe"), timeout=60,
                 interval=0.5, what="the epilog to stop the agent")
    finally:
        if srun.poll() is None:
            os.killpg(srun.pid, 9)
            srun.wait(timeout=30)
