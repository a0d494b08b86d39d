"""Slot files that cannot hurt training, with real ranks (Python processes using the
module in a step loop), the node agent, a second local user and a full tmpfs.

Needs root for the tmpfs mount and the second user; those tests are skipped otherwise."""
import glob
import json
import os
import random
import shutil
import subprocess
import tempfile
import textwrap
import threading
import urllib.error
import urllib.request

import pytest

from conftest import PKG, free_port
from test_trainwatch import get_health, wait_for

PY = "/usr/bin/python3"
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a tmpfs mount, a second user)")

# A rank that trains until its stdin closes, printing its step every 50 steps.
STEP_LOOP = """
    import sys, threading, time, trainwatch
    kw = {kwargs}
    tw = trainwatch.init(**kw)
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    step = 0
    while not stop.is_set():
        tw.step(step, loss=1.0 / (step + 1))
        if step % 50 == 0:
            print(step, flush=True)
        step += 1
        time.sleep(0.001)
    print("done", step, flush=True)
"""


class Rank:
    """A training process; its stdout lines are collected on a thread so reads never block."""

    def __init__(self, env, prefix=(), **kwargs):
        code = textwrap.dedent(STEP_LOOP.format(kwargs=repr(kwargs)))
        self.p = subprocess.Popen(list(prefix) + [PY, "-c", code], env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.err = []
        threading.Thread(target=self._collect, args=(self.p.stdout, self.lines), daemon=True).start()
        threading.Thread(target=self._collect, args=(self.p.stderr, self.err), daemon=True).start()

    @staticmethod
    def _collect(stream, into):
        for line in stream:
            into.append(line)

    def last_step(self):
        steps = [int(l) for l in self.lines if l.strip().isdigit()]
        return steps[-1] if steps else -1

    def finish(self):
        """Closes stdin (the loop's stop signal); returns (exit code, stderr text)."""
        try:
            self.p.stdin.close()
        except BrokenPipeError:
            pass
        rc = self.p.wait(timeout=60)
        wait_for(lambda: any(l.startswith("done") for l in self.lines) or rc != 0, limit=10)
        return rc, "".join(self.err)

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(timeout=30)


def health(port):
    """GET /health; (0, None) while the agent is not listening yet."""
    try:
        return get_health(port)
    except urllib.error.HTTPError:
        raise
    except OSError:
        return 0, None


def reasons(health, code):
    return [r["message"] for r in health["reasons"] if r["code"] == code]


def test_truncated_slot_file_under_running_ranks_and_agent(env):
    port = free_port()
    lead = Rank(env, rank=0, local_rank=0, world_size=2, health_port=port, health_host="127.0.0.1")
    other = Rank(env, rank=1, local_rank=1, world_size=2)
    try:
        wait_for(lambda: (lambda r: r[0] == 200 and r[1]["training"]["workers_alive"] == 2)(health(port)))
        # Wherever the layout puts it (docs/training.md: TRAINWATCH_DIR/<uid>/<job>.slots).
        (slot_file,) = glob.glob(os.path.join(env["TRAINWATCH_DIR"], "**", "pytest.slots"), recursive=True)
        os.truncate(slot_file, 0)
        before = (lead.last_step(), other.last_step())

        # The agent (inside the lead rank) says what happened instead of crashing.
        status, h = wait_for(lambda: (lambda r: r if r[1] and reasons(r[1], "slot_file_malformed") else None)(
            health(port)))
        assert status == 503
        assert slot_file in reasons(h, "slot_file_malformed")[0], h
        # Both ranks keep training.
        wait_for(lambda: lead.last_step() > before[0] + 100 and other.last_step() > before[1] + 100)
        assert lead.p.poll() is None and other.p.poll() is None
    finally:
        results = [lead.finish(), other.finish()] if lead.p.poll() is None and other.p.poll() is None else None
        lead.kill()
        other.kill()
    assert results is not None, "a rank died: %s %s" % (lead.p.returncode, other.p.returncode)
    for rc, err in results:
        assert rc == 0, err
        # One line each: the rank says once that its reports no longer reach the agent.
        assert err.count("was shrunk by another process") == 1, err


def test_a_removed_slot_folder_names_the_ranks_that_still_run(env):
    """A cleanup that deletes the slot folder under running ranks (rm -rf TRAINWATCH_DIR/<uid>)
    leaves them writing into memory nobody can see, while a rank started afterwards makes a
    new file and reads as usual. The agent names each rank still running without its slot,
    with its pid and the path, for as long as it runs, rather than going quiet about it."""
    port = free_port()
    lead = Rank(env, rank=0, local_rank=0, world_size=3, health_port=port, health_host="127.0.0.1")
    other = Rank(env, rank=1, local_rank=1, world_size=3)
    later = None
    try:
        wait_for(lambda: (lambda r: r[0] == 200 and r[1]["training"]["workers_alive"] == 2)(health(port)))
        (slot_file,) = glob.glob(os.path.join(env["TRAINWATCH_DIR"], "**", "pytest.slots"), recursive=True)
        shutil.rmtree(os.path.dirname(slot_file))
        later = Rank(env, rank=2, local_rank=2, world_size=3)

        def removed(expected):
            status, h = health(port)
            if not h or [r["rank"] for r in h["ranks"]] != [2]:
                return None
            notes = reasons(h, "slot_removed")
            return (status, notes) if len(notes) == expected else None

        status, notes = wait_for(lambda: removed(2))
        assert status == 503, notes
        for rank, proc in ((0, lead), (1, other)):
            said = f"rank {rank} (pid {proc.p.pid}) still runs, but its slot file {slot_file} was removed"
            assert any(n.startswith(said) for n in notes), notes
        # Once rank 1 has finished, only rank 0 is still unseen.
        assert other.finish()[0] == 0
        _, notes = wait_for(lambda: removed(1))
        assert notes[0].startswith(f"rank 0 (pid {lead.p.pid}) still runs"), notes
        assert lead.p.poll() is None and later.p.poll() is None
    finally:
        for r in (lead, other, later):
            if r is not None:
                r.kill()


@ROOT_ONLY
def raw_health(port):
    """GET /health as bytes (status, body): what a client parses, before any decoding."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_random_bytes_over_a_slot_are_no_rank_and_health_stays_utf8_json(env, seed):
    port = free_port()
    lead = Rank(env, rank=0, local_rank=0, world_size=2, health_port=port, health_host="127.0.0.1")
    try:
        wait_for(lambda: (lambda r: r[0] == 200 and r[1]["training"]["workers_alive"] == 1)(health(port)))
        (slot_file,) = glob.glob(os.path.join(env["TRAINWATCH_DIR"], "**", "pytest.slots"), recursive=True)
        # Slot 5 of the layout (docs/training.md): a 128-byte header, then 1024 bytes a slot.
        with open(slot_file, "r+b") as f:
            f.seek(128 + 5 * 1024)
            f.write(random.Random(seed).randbytes(1024))

        def noted():
            status, body = raw_health(port)
            h = json.loads(body.decode("utf-8"))  # strict: a byte that is not UTF-8 fails here
            notes = [w["message"] for w in h["warnings"] if w["code"] == "slot_invalid"]
            return (status, h, notes) if notes else None

        status, h, notes = wait_for(noted)
        assert notes[0].startswith(f"slot 5 of {slot_file} is invalid ("), notes
        assert [r["rank"] for r in h["ranks"]] == [0], h["ranks"]
        assert status == 200 and not h["reasons"], h["reasons"]
        # Said once in the agent's log (the lead's stderr), however often it is sampled.
        before = lead.last_step()
        wait_for(lambda: lead.last_step() > before + 100)
        assert sum("slot 5 of" in line for line in lead.err) == 1, lead.err
    finally:
        lead.finish()


def test_full_dev_shm_rank_trains_on_and_prints_one_line(env, tmp_path):
    mnt = tmp_path / "tiny-shm"
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=1777", "tmpfs", str(mnt)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here: " + mounted.stderr.strip())
    try:
        # Fill it as DataLoader workers' shared tensors would.
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            for _ in range(10_000):  # 64 KiB fills in 16 writes; the bound only guards the loop
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
        run_env = dict(env, TRAINWATCH_DIR=str(mnt / "trainwatch"))
        r = Rank(run_env, rank=0, local_rank=0, world_size=1)
        try:
            wait_for(lambda: r.last_step() >= 200 or r.p.poll() is not None)
            assert r.p.poll() is None, "the rank died: %s" % "".join(r.err)
            rc, err = r.finish()
        finally:
            r.kill()
        assert rc == 0, err
        lines = [l for l in err.splitlines() if l.startswith("trainwatch:")]
        assert len(lines) == 1, err
        assert "no room for the slot file" in lines[0] and "training continues" in lines[0], lines
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.fixture
def shared_dir():
    """A slot directory another user can reach (pytest's tmp_path is private to root), and
    beside it a copy of the package: the build folder may sit in a clone only root can
    enter (mktemp -d makes 0700 folders), as it does in a fresh-clone CI run."""
    d = tempfile.mkdtemp(prefix="tw-shared-")
    os.chmod(d, 0o755)
    shutil.copytree(PKG, os.path.join(d, "python"), ignore=shutil.ignore_patterns("__pycache__"))
    yield os.path.join(d, "slots")
    shutil.rmtree(d, ignore_errors=True)


@ROOT_ONLY
def test_second_user_reports_alongside_root_under_umask_022(env, shared_dir):
    root_port, nobody_port = free_port(), free_port()
    os.umask(0o022)
    root_env = dict(env, TRAINWATCH_DIR=shared_dir)
    nobody_env = dict(root_env, TRAINWATCH_JOB="pytest-nobody", HOME="/nonexistent",
                      PYTHONPATH=os.path.join(os.path.dirname(shared_dir), "python"))
    root_rank = Rank(root_env, rank=0, local_rank=0, world_size=1, health_port=root_port,
                     health_host="127.0.0.1")
    try:
        wait_for(lambda: health(root_port)[0] == 200)  # root's rank made the shared directory first
        nobody_rank = Rank(nobody_env, prefix=["runuser", "-u", "nobody", "--"], rank=0, local_rank=0,
                           world_size=1, health_port=nobody_port, health_host="127.0.0.1")
        try:
            wait_for(lambda: nobody_rank.p.poll() is not None or health(nobody_port)[0] == 200)
            assert nobody_rank.p.poll() is None, "".join(nobody_rank.err)
            status, h = get_health(nobody_port)
            assert status == 200, "".join(nobody_rank.err) + json.dumps(h)
            assert h["training"]["workers_alive"] == 1
            assert os.stat(os.path.join(shared_dir, "65534")).st_uid == 65534
            assert oct(os.stat(shared_dir).st_mode & 0o7777) == "0o1777"
            assert oct(os.stat(os.path.join(shared_dir, "65534", "pytest-nobody.slots")).st_mode & 0o777) == "0o600"
            assert get_health(root_port)[0] == 200
        finally:
            nobody_rank.kill()
    finally:
        root_rank.kill()


def _one_line_and_trains_on(env):
    r = Rank(env, rank=0, local_rank=0, world_size=1)
    try:
        wait_for(lambda: r.last_step() >= 100 or r.p.poll() is not None)
        rc, err = r.finish()
    finally:
        r.kill()
    assert rc == 0, err
    lines = [l for l in err.splitlines() if l.startswith("trainwatch:")]
    assert len(lines) == 1, err
    return lines[0]


def test_symlinked_user_directory_is_refused_with_one_line(env, tmp_path):
    top = tmp_path / "slots"
    top.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, top / str(os.geteuid()))
    line = _one_line_and_trains_on(env)
    assert "is a symlink" in line and "training continues" in line, line
    assert os.listdir(elsewhere) == []


@ROOT_ONLY
def test_foreign_owned_user_directory_is_refused_with_one_line(env, tmp_path):
    top = tmp_path / "slots"
    top.mkdir()
    mine = top / str(os.geteuid())
    mine.mkdir(mode=0o700)
    os.chown(mine, 65534, 65534)
    line = _one_line_and_trains_on(env)
    assert "is owned by uid 65534" in line and "training continues" in line, line
