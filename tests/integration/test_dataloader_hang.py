"""A hang inside a DataLoader worker, end to end: two real PyTorch ranks (CPU, gloo) on one
node, each reading through a DataLoader with one worker process; rank 1's worker waits in
the dataset's __getitem__ while rank 0 waits in all_reduce. The agent asks the overdue rank
and its worker for their stacks (the trainwatch module runs a sampler in each worker), and
the job's DOWN names the worker's pid and the line of __getitem__ it is at, not the
DataLoader's own __next__ every worker hang shares."""
import os
import subprocess
import time

import pytest

from conftest import BINARY, Server, wait_for
from test_jobs import BUILD, HERE, PY, REPORT_EVERY, TOKEN, rendezvous_port

SCRIPT = HERE / "dataloader_rank.py"
CONFIG = """
jobs:
  auto_create: false
  token: ${TRAINWATCH_TOKEN}
monitors:
  - name: loader
    type: job
    world_size: 2
    thresholds:
      step_timeout_min: 3s
      startup_timeout: 2m
"""


def line_of(marker):
    [number] = [n for n, text in enumerate(SCRIPT.read_text().splitlines(), 1) if marker in text]
    return number


@pytest.fixture
def job(tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    (tmp_path / "trainwatch.yaml").write_text(CONFIG)
    server = Server(tmp_path / "trainwatch.yaml", tmp_path / "data", tmp_path / "server.log").start()
    control, slots = tmp_path / "control", tmp_path / "slots"
    control.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
    env.update(PYTHONPATH=str(BUILD / "python"), TRAINWATCH_JOB="loader", TRAINWATCH_DIR=str(slots),
               TRAINWATCH_NODE="node-a", CONTROL_DIR=str(control), TRAINWATCH_REPORT_EVERY=str(REPORT_EVERY),
               MASTER_ADDR="127.0.0.1", MASTER_PORT=str(rendezvous_port()), WORLD_SIZE="2")
    procs = [subprocess.Popen([BINARY, "agent", "--job", "loader", "--listen", "127.0.0.1:0", "--dir", str(slots),
                               "--server", server.base, "--report-every", str(REPORT_EVERY)],
                              env=env, stderr=open(tmp_path / "agent.log", "wb"))]
    ranks = [subprocess.Popen([PY, str(SCRIPT)], env=dict(env, RANK=str(r), LOCAL_RANK=str(r)),
                              stdout=subprocess.PIPE, stderr=open(tmp_path / f"rank-{r}.log", "wb"))
             for r in range(2)]
    procs += ranks
    try:
        for r, p in enumerate(ranks):
            assert p.stdout.readline().strip() == b"ready", (tmp_path / f"rank-{r}.log").read_text()
        yield server, control, ranks
    finally:
        (control / "stuck-1").unlink(missing_ok=True)
        for p in procs:
            p.kill()
            p.wait()
        server.stop()


def test_a_hang_in_a_dataloader_worker_names_the_worker_and_its_getitem_line(job):
    server, control, ranks = job

    def api():
        return server.get("/api/v1/jobs/loader")[1]

    def training():
        j = api()
        return j.get("status") == "up" and len(j.get("ranks", [])) == 2 and \
            all(r["status"] == "training" for r in j["ranks"]) and j

    wait_for(training, timeout=60, interval=0.5, what="the job up with 2 ranks training")
    (control / "stuck-1").write_text("")
    stuck = time.monotonic()
    j = wait_for(lambda: (j := api()) and j["status"] == "down" and j, timeout=30, interval=0.5,
                 what="down naming the DataLoader worker")
    worker = int((control / "worker-1").read_text())
    where = f"waiting for DataLoader worker (pid {worker}) in __getitem__ (dataloader_rank.py:" \
            f"{line_of('# the worker waits here')})"
    cause = j["incident"]["cause"]
    assert cause.startswith(f"rank 1 (node-a, pid {ranks[1].pid}) is stuck {where} at step "), cause
    assert "rank 0 is in all_reduce (dataloader_rank.py:" in cause, cause
    stack = {r["rank"]: r for r in j["ranks"]}[1]["stack"]
    assert stack["place"] == where, stack
    [child] = stack["children"]
    assert child["pid"] == worker and child["threads"][0]["frames"][0]["function"] == "__getitem__", child
    status, page, _ = server.get("/jobs/loader")
    assert status == 200 and f"Child process {worker}:\n  __getitem__  " in page, page[-3000:]
    print(f"down after {time.monotonic() - stuck:.1f} s: {cause}")
