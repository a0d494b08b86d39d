"""A rank killed by the kernel's OOM killer is named so, every time: a 4-rank gloo job under
torchrun (--max_restarts 2) beside a sidecar agent, whose rank 3 moves itself into a memory
cgroup of 300 MB and leaks 40 MB a step. Three attempts, three kills: each page says "the
kernel's OOM killer", with the memory the rank held, and the ledger books three host_oom.

The memory cgroup is made where this machine has one to make: cgroup v2 (memory.max) or a
v1 memory hierarchy (memory.limit_in_bytes), under the test's own cgroup. Where neither
can be made (no root, a read-only cgroup file system), the test is skipped and says why;
the agent's other evidence (the kernel log, the counters) is unit-tested in
tests/agent/oom_watch_test.cc."""
import os
import pathlib
import re
import uuid

import pytest

from conftest import wait_for
from test_torchrun import torchrun_job

LIMIT_BYTES = 300 * 1024 * 1024
ROOT = pathlib.Path("/sys/fs/cgroup")


def own_cgroup(controller):
    """This process's cgroup path in the v1 hierarchy of `controller`, or in v2 ("")."""
    for line in pathlib.Path("/proc/self/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        if (controller and controller in controllers.split(",")) or (not controller and number == "0"):
            return path
    return None


def make_memory_cgroup():
    """A fresh memory cgroup limited to LIMIT_BYTES without swap: its cgroup.procs path, or
    raises OSError saying why none can be made."""
    name = f"trainwatch-oom-{uuid.uuid4().hex[:8]}"
    v1 = own_cgroup("memory")
    if v1 is not None and (ROOT / "memory").is_dir():
        group = ROOT / "memory" / v1.lstrip("/") / name
        group.mkdir()
        (group / "memory.limit_in_bytes").write_text(str(LIMIT_BYTES))
        swap = group / "memory.memsw.limit_in_bytes"
        if swap.exists():
            swap.write_text(str(LIMIT_BYTES))
        return group
    v2 = own_cgroup("")
    if v2 is not None and (ROOT / "cgroup.controllers").exists():
        parent = ROOT / v2.lstrip("/")
        if "memory" not in (parent / "cgroup.subtree_control").read_text().split():
            raise OSError(f"the memory controller is not enabled for the children of {parent}")
        group = parent / name
        group.mkdir()
        (group / "memory.max").write_text(str(LIMIT_BYTES))
        (group / "memory.swap.max").write_text("0")
        return group
    raise OSError("no cgroup v2 nor v1 memory hierarchy under /sys/fs/cgroup")


@pytest.fixture
def memory_cgroup():
    try:
        group = make_memory_cgroup()
    except OSError as e:
        pytest.skip(f"no memory cgroup can be made here: {e}")
    yield group
    wait_for(lambda: not (group / "cgroup.procs").read_text().strip(), timeout=30,
             what="the cgroup's processes to be gone")
    group.rmdir()


def test_a_rank_killed_by_the_oom_killer_is_named_so_three_times_of_three(start_server, tmp_path, monkeypatch,
                                                                          memory_cgroup):
    with torchrun_job(start_server, tmp_path, monkeypatch, max_restarts=2) as (server, hook, control, trains):
        wait_for(lambda: trains(0), timeout=120, interval=0.5, what="the first attempt to train")
        # Every attempt's rank 3 moves itself into the cgroup and leaks until it is killed.
        (control / "leak-3").write_text(str(memory_cgroup / "cgroup.procs"))
        downs = wait_for(lambda: len(hook.downs()) >= 3 and hook.downs(), timeout=300, interval=0.5,
                         what="three pages, one an attempt")
        for down in downs[:3]:
            assert re.match(r"rank 3 \(node-a, pid \d+\) was killed by SIGKILL \(the kernel's OOM killer\) at step \d+ "
                            r"while training, \d+ MB resident when last seen, without reporting an error",
                            down["cause"]), down["cause"]
        j = wait_for(lambda: (j := server.get("/api/v1/jobs/tiny")[1]) and len(j["interruptions"]) >= 3 and j,
                     timeout=30, what="three interruptions in the ledger")
        assert [i["cause"] for i in j["interruptions"][:3]] == ["host_oom"] * 3, j["interruptions"]
        (control / "leak-3").unlink()
        print("OOM kills:", [d["cause"] for d in downs[:3]])
