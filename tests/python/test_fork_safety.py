"""os.fork() inside a rank (a DataLoader worker, a subprocess helper): the child never
reports as its parent and its exit never waits on the agent, wherever the agent runs.
Real processes: a rank that forks, its children, the agent inside it or beside it."""
import json
import subprocess
import textwrap

import pytest

from conftest import free_port
from test_trainwatch import PY, get_health, start_agent, wait_for

# A rank that forks a child that exits 0 and one that raises (each after a step of its own,
# which must go nowhere), times each child from fork to its reaping, steps once more and
# waits for stdin to close. A child forked before trainwatch.init() is timed first: what
# an exit costs this interpreter on this machine (a loaded one takes seconds to finalise
# any Python child), which the children after init() may exceed by under a second.
FORKING_RANK = """
    import json, os, sys, time, trainwatch

    def child(how):
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            if how != "baseline":
                tw.step(999, loss=2.0)
            if how == "raise":
                raise RuntimeError("the child failed on purpose")
            sys.exit(0)
        _, status = os.waitpid(pid, 0)
        return {{"seconds": time.monotonic() - started, "code": os.waitstatus_to_exitcode(status)}}

    baseline = child("baseline")
    tw = trainwatch.init(rank=0, world_size=1, **{kwargs})
    for s in range(5):
        tw.step(s, loss=1.0)
    print(json.dumps([baseline, child("exit"), child("raise")]), flush=True)
    tw.step(5, loss=1.0)
    print("stepped", flush=True)
    sys.stdin.read()
"""


def run_forking_rank(env, **kwargs):
    code = textwrap.dedent(FORKING_RANK.format(kwargs=repr(kwargs)))
    return subprocess.Popen([PY, "-c", code], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def rank_0(port):
    status, h = get_health(port)
    return next((r for r in h["ranks"] if r["rank"] == 0), None)


@pytest.mark.parametrize("placement", ["in the rank", "beside the rank"])
def test_forked_children_never_report_as_their_parent_and_exit_at_once(env, placement):
    if placement == "in the rank":
        port = free_port()
        p = run_forking_rank(env, health_port=port, health_host="127.0.0.1")
    else:
        port = start_agent(env)
        p = run_forking_rank(env)
    try:
        # A child that hung in the agent's teardown would leave this line unwritten.
        timed = json.loads(p.stdout.readline() or "null")
        assert timed is not None, p.stderr.read() if p.poll() is not None else "no line"
        baseline, children = timed[0], timed[1:]
        assert [c["code"] for c in children] == [0, 1], children
        assert all(c["seconds"] < baseline["seconds"] + 1.0 for c in children), timed
        print(f"child exits ({placement}): {[round(c['seconds'], 3) for c in timed]} s (baseline first)")
        assert p.stdout.readline().strip() == "stepped"
        # The parent is still the one training, at its own step, with no child's error.
        r = wait_for(lambda: (r := rank_0(port)) and r["step"] == 5 and r)
        assert r["status"] == "training" and r["alive"] and r["pid"] == p.pid and not r["error"], r
    finally:
        p.stdin.close()
        rc = p.wait(timeout=60)
    assert rc == 0
    if placement == "beside the rank":  # the parent's own exit still says finished
        r = wait_for(lambda: (r := rank_0(port)) and r["status"] == "finished" and r)
        assert r["pid"] == p.pid
