"""A real one-node Slurm cluster, started here (munged, slurmctld and slurmd with their own
key and config in a temp dir): `srun -n 4` of the gloo job script, with only the server's
URL set for trainwatch, is one job of 4 ranks named from Slurm's own variables."""
import os
import socket
import subprocess

import pytest

from conftest import wait_for
from test_jobs import BUILD, HERE, PY, rendezvous_port, rendezvous_ports

SLURM_CONF = """ClusterName=twtest
SlurmctldHost={host}
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
AuthInfo=socket={dir}/munge/socket
CredType=cred/munge
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SlurmUser=root
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
NodeName={host} CPUs=2
PartitionName=debug Nodes={host} Default=YES OverSubscribe=YES
"""


@pytest.fixture
def slurm_conf_extra():
    """Lines added to slurm.conf; a test module overrides it (Prolog=, Epilog=)."""
    return ""


@pytest.fixture
def slurm(tmp_path, slurm_conf_extra):
    """The cluster's environment (SLURM_CONF); every daemon is stopped afterwards."""
    d = tmp_path / "slurm"
    (d / "munge").mkdir(parents=True, mode=0o700)
    for sub in ("state", "spool"):
        (d / sub).mkdir()
    d.chmod(0o755)
    key = d / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    daemons = []
    env = dict(os.environ, SLURM_CONF=str(d / "slurm.conf"))
    try:
        daemons.append(subprocess.Popen(
            ["munged", "--foreground", "--force", f"--key-file={key}", f"--socket={d}/munge/socket",
             f"--pid-file={d}/munge/pid", f"--log-file={d}/munge/log", f"--seed-file={d}/munge/seed"],
            stderr=subprocess.DEVNULL))
        wait_for(lambda: (d / "munge" / "socket").exists(), timeout=10, what="munged's socket")
        ctld_port, slurmd_port = rendezvous_ports(2)
        (d / "slurm.conf").write_text(SLURM_CONF.format(host=socket.gethostname(), dir=d, ctld_port=ctld_port,
                                                        slurmd_port=slurmd_port) + slurm_conf_extra)
        daemons.append(subprocess.Popen(["slurmctld", "-D", "-f", str(d / "slurm.conf")], env=env,
                                        stderr=subprocess.DEVNULL))
        daemons.append(subprocess.Popen(["slurmd", "-D", "-f", str(d / "slurm.conf")], env=env,
                                        stderr=subprocess.DEVNULL))

        def idle():
            out = subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True)
            return out.returncode == 0 and out.stdout.strip() == "idle"

        wait_for(idle, timeout=30, interval=0.5, what="the Slurm node to be idle")
        yield env
    finally:
        for p in reversed(daemons):
            p.terminate()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()


def test_srun_of_four_tasks_is_one_job_of_four_ranks_named_by_slurm(slurm, start_server, tmp_path, monkeypatch):
    monkeypatch.delenv("TRAINWATCH_TOKEN", raising=False)  # only the URL: no token, no job name
    server = start_server("jobs:\n  auto_create: true\n")
    env = {k: v for k, v in slurm.items() if not k.startswith(("TRAINWATCH_", "RANK", "LOCAL_RANK", "WORLD_SIZE"))}
    control = tmp_path / "control"
    control.mkdir()
    env.update(TRAINWATCH_SERVER=server.base, TRAINWATCH_DIR=str(tmp_path / "slots"),  # a private slot dir
               PYTHONPATH=str(BUILD / "python"), CONTROL_DIR=str(control), MAX_STEPS="200",
               TRAINWATCH_REPORT_EVERY="1", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(rendezvous_port()))
    # Two CPUs here: four tasks only with --overcommit.
    # --kill-on-bad-exit: a task that fails ends the step, instead of leaving the others in
    # the rendezvous.
    srun = subprocess.Popen(["srun", "--overcommit", "--kill-on-bad-exit=1", "--job-name", "Llama 7B", "-n", "4", PY,
                             str(HERE / "job_rank.py")], env=env,
                            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "srun.log", "wb"),
                            start_new_session=True)
    try:
        def four_ranks():
            assert srun.poll() is None, (tmp_path / "srun.log").read_text()[-3000:]
            status, j, _ = server.get("/api/v1/jobs/llama-7b")  # SLURM_JOB_NAME, made a valid name
            return j if status == 200 and len(j["ranks"]) == 4 and all(r["step"] > 2 for r in j["ranks"]) else None

        j = wait_for(four_ranks, timeout=120, interval=0.5, what="one job with 4 ranks")
        assert [r["rank"] for r in j["ranks"]] == [0, 1, 2, 3]
        assert {r["node"] for r in j["ranks"]} == {socket.gethostname()}, "SLURMD_NODENAME names the node"
        run_ids = {r["run_id"] for r in j["ranks"]}
        assert len(run_ids) == 1 and next(iter(run_ids)).isdigit(), f"SLURM_JOB_ID is the run id: {run_ids}"
        assert {r["attempt"] for r in j["ranks"]} == {0}
        assert len(server.get("/api/v1/jobs")[1]["jobs"]) == 1
        assert srun.wait(timeout=120) == 0, (tmp_path / "srun.log").read_text()[-3000:]
    finally:
        if srun.poll() is None:
            os.killpg(srun.pid, 9)
            srun.wait(timeout=30)
