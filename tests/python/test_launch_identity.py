"""Ranks started by Slurm alone (srun, no torchrun: no RANK, no LOCAL_RANK) find their own
slots and carry Slurm's job id, restart count and node index to the agent with no
configuration; TRAINWATCH_* variables win over Slurm's."""
import json
import os
import subprocess
import textwrap

from conftest import BUILD, agent_health, free_port
from test_trainwatch import wait_for

PY = "/usr/bin/python3"
BIN = os.environ.get("TRAINWATCH_BIN", os.path.join(BUILD, "src", "cli", "trainwatch"))


def slurm_task(env, procid, **extra):
    e = dict(env)
    e.update({"SLURM_JOB_ID": "8812345", "SLURM_PROCID": str(procid), "SLURM_LOCALID": str(procid),
              "SLURM_NTASKS": "2", "SLURM_NODEID": "0", "SLURMD_NODENAME": "gpu-a01", "SLURM_RESTART_COUNT": "2"})
    e.update(extra)
    code = """
        import json, trainwatch
        tw = trainwatch.init()
        tw.step(7, loss=1.5)
        print(json.dumps(trainwatch.launch_env()))
    """
    run = subprocess.run([PY, "-c", textwrap.dedent(code)], env=e, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "trainwatch:" not in run.stderr, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_slurm_tasks_report_their_place_and_attempt_without_configuration(env):
    seen = slurm_task(env, 0)
    assert seen["launcher"] == "slurm" and seen["rank"] == 0 and seen["node_name"] == "gpu-a01"
    slurm_task(env, 1, TRAINWATCH_ATTEMPT="5", TRAINWATCH_RUN_ID="llama-v3")

    port = free_port()
    agent = subprocess.Popen([BIN, "agent", "--job", env["TRAINWATCH_JOB"], "--dir", env["TRAINWATCH_DIR"],
                              "--listen", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        h = wait_for(lambda: (lambda b: b if b and len(b["ranks"]) == 2 else None)(agent_health(port)))
    finally:
        agent.terminate()
        agent.wait(10)
    ranks = {r["rank"]: r for r in h["ranks"]}
    assert ranks[0]["local_rank"] == 0 and ranks[1]["local_rank"] == 1
    assert ranks[0]["step"] == 7 and ranks[1]["step"] == 7
    assert (ranks[0]["attempt"], ranks[0]["run_id"], ranks[0]["node_rank"]) == (2, "8812345", 0)
    assert (ranks[1]["attempt"], ranks[1]["run_id"], ranks[1]["node_rank"]) == (5, "llama-v3", 0)


def test_slurms_job_name_names_the_job_for_the_ranks_and_for_an_agent_in_the_same_environment(env):
    """sbatch --job-name "Llama 7B": neither the ranks nor the agent is told the job's name."""
    slurm = {k: v for k, v in env.items() if k != "TRAINWATCH_JOB"}
    slurm["SLURM_JOB_NAME"] = "Llama 7B"
    assert slurm_task(slurm, 0)["job"] == "llama-7b"
    slurm_task(slurm, 1)

    port = free_port()
    agent = subprocess.Popen([BIN, "agent", "--listen", f"127.0.0.1:{port}"], env=slurm,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        h = wait_for(lambda: (lambda b: b if b and len(b["ranks"]) == 2 else None)(agent_health(port)))
    finally:
        agent.terminate()
        _, err = agent.communicate(timeout=10)
    assert h["job"] == "llama-7b", h
    assert "trainwatch agent: job llama-7b on " in err, err
