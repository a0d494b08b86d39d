"""Watching must not change what a rank does: the real `trainwatch agent` asks a real rank
blocked in one pause() (through ctypes, as a C extension would block) for its Python stack,
again and again, and the rank stays in that one pause(), while the stack the agent sends
names the call site. The default way asks the module's sampler thread through a FIFO; no
signal reaches the rank (a signal made that pause() return EINTR)."""
import os
import pathlib
import subprocess
import textwrap

from conftest import BINARY, wait_for
from receivers import HttpReceiver

HERE = pathlib.Path(__file__).resolve().parent
BUILD = HERE.parents[1] / os.environ.get("TRAINWATCH_BUILD", "build")

RANK = textwrap.dedent("""
    import ctypes, trainwatch
    tw = trainwatch.init(job="pause", rank=0, world_size=1, status="training")
    for step in range(1, 4):
        tw.step(step)
    libc = ctypes.CDLL(None, use_errno=True)
    def wait_for_peer():
        print("pausing", flush=True)
        libc.pause()  # the call site the stack must name
        print(f"pause returned, errno {ctypes.get_errno()}", flush=True)
    wait_for_peer()
""")
PAUSE_LINE = next(n for n, line in enumerate(RANK.splitlines(), 1) if "libc.pause()" in line)
SYS_PAUSE = 34  # x86_64


def rank_with_stack(receiver, after):
    """The rank, as the first report received after `after` requests that has its stack shows it."""
    for r in receiver.all("/api/v1/jobs/pause/report")[after:]:
        for rank in r["body"].get("ranks", []):
            if rank.get("stack", {}).get("threads"):
                return rank
    return None


def test_a_rank_blocked_in_pause_stays_blocked_while_the_agent_captures_its_stack(tmp_path):
    script = tmp_path / "rank.py"
    script.write_text(RANK)
    slots = tmp_path / "slots"
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"), TRAINWATCH_DIR=str(slots))
    env.pop("TRAINWATCH_STACK_SIGNAL", None)
    rank = subprocess.Popen(["/usr/bin/python3", str(script)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    receiver = HttpReceiver()
    try:
        assert rank.stdout.readline().strip() == "pausing", rank.stderr.read()
        stack_file = slots / str(os.geteuid()) / f"pause.{rank.pid}.stack"
        assert stack_file.read_text().startswith("trainwatch-stack 2 request=fifo\n")
        # A fresh agent takes the rank's last step as now and captures once it is 1 s
        # overdue, once a step: three agents, one after the other, capture three times.
        for capture in range(3):
            seen = len(receiver.all())
            agent = subprocess.Popen([BINARY, "agent", "--job", "pause", "--listen", "127.0.0.1:0", "--dir", str(slots),
                                      "--server", receiver.base, "--report-every", "0.2", "--node", "n"],
                                     env=env, stderr=subprocess.DEVNULL)
            try:
                reported = wait_for(lambda: rank_with_stack(receiver, seen), timeout=20,
                                    what=f"capture {capture + 1}")
            finally:
                agent.terminate()
                agent.wait(timeout=10)
            stack = reported["stack"]
            innermost = stack["threads"][0]["frames"][0]
            assert innermost == {"file": str(script), "line": PAUSE_LINE, "function": "wait_for_peer"}, stack
            assert reported["syscall"] == "pause", reported  # named from the kernel's table
        assert stack_file.read_text().count("(most recent call first)") == 3
        assert rank.poll() is None, rank.communicate()
        with open(f"/proc/{rank.pid}/syscall") as f:  # readable by root or the rank's tracer
            number = f.read().split()[0]
        assert number == str(SYS_PAUSE), number  # still in that one pause()
        with open(f"/proc/{rank.pid}/status") as f:
            caught = int(next(line for line in f if line.startswith("SigCgt:")).split()[1], 16)
        assert not caught >> 11 & 1, "SIGUSR2 is caught: the rank was set up for the signal way"
    finally:
        receiver.close()
        rank.kill()
        out, err = rank.communicate(timeout=10)
    assert "pause returned" not in out, (out, err)
