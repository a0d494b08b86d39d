"""Stacks on a hang, the rank's side. By default trainwatch.init() starts the native sampler
thread: a byte written to the FIFO beside the stack file appends every thread's stack, and
no signal is ever sent. With TRAINWATCH_STACK_SIGNAL it registers faulthandler on that
signal instead: the signal the agent sends appends every thread's stack to the rank's stack
file and never stops the rank, and a handler the program had keeps running."""
import os
import signal
import stat
import subprocess
import textwrap

from test_trainwatch import PY, wait_for

RANK = """
import os, signal, sys, time, trainwatch
handled = []
if os.environ.get("OWN_HANDLER"):
    signal.signal(signal.SIGUSR2, lambda *a: handled.append(1))
tw = trainwatch.init(job="j", rank=0, world_size=1)
def fetch_next_shard():
    print("ready", flush=True)  # from inside, so every dump asked for from now on has it
    while not os.path.exists(os.environ["RELEASE"]):
        time.sleep(0.05)
tw.step(1)
fetch_next_shard()
print("handled", len(handled), flush=True)
"""


def start_rank(env, tmp_path):
    env = dict(env, RELEASE=str(tmp_path / "release"))
    p = subprocess.Popen([PY, "-c", textwrap.dedent(RANK)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready", p.stderr.read()
    return p


def stack_file(env, pid):
    return os.path.join(env["TRAINWATCH_DIR"], str(os.geteuid()), f"j.{pid}.stack")


def signal_env(env):
    """The opt-in signal way (the default is the sampler)."""
    return dict(env, TRAINWATCH_STACK_SIGNAL="SIGUSR2")


def ask_for_stack(path, pid):
    """What the agent does: read the header, write to the FIFO or send the signal it names,
    wait for the dump."""
    with open(path) as f:
        header = f.readline()
    size = os.path.getsize(path)
    if header == "trainwatch-stack 2 request=fifo\n":
        fd = os.open(path + "req", os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, b"x")
        os.close(fd)
    else:
        assert header.startswith("trainwatch-stack 1 signal="), header
        os.kill(pid, int(header.rsplit("=", 1)[1]))

    def dump():
        with open(path) as f:
            f.seek(size)
            text = f.read()
        # The main thread's outermost frame, the script's top level, is written last (by
        # the sampler, before its end line).
        text = text.replace("trainwatch-stack end\n", "")
        return text if text.rstrip().endswith("in <module>") else None

    return wait_for(dump, limit=10)


def finish(p, tmp_path):
    (tmp_path / "release").write_text("")
    out, err = p.communicate(timeout=30)
    return p.returncode, out, err


def test_the_default_sampler_dumps_on_a_fifo_request_and_catches_no_signal(env, tmp_path):
    p = start_rank(env, tmp_path)
    path = stack_file(env, p.pid)
    assert signal.SIGUSR2 not in caught_signals(p.pid)
    assert stat.S_ISFIFO(os.stat(path + "req").st_mode) and os.stat(path + "req").st_mode & 0o777 == 0o600
    for _ in range(3):  # hang after hang: a dump each time, the rank still alive
        dump = ask_for_stack(path, p.pid)
        assert "in fetch_next_shard" in dump and "in <module>" in dump, dump
    code, out, err = finish(p, tmp_path)
    assert code == 0 and "handled 0" in out and err == "", (code, out, err)
    assert not os.path.exists(path) and not os.path.exists(path + "req"), "the files outlived a clean exit"


FORKING_RANK = """
import os, time, trainwatch
tw = trainwatch.init(job="j", rank=0, world_size=1)
tw.step(1)
pid = os.fork()
if pid == 0:  # a DataLoader worker: it lives on while the parent is asked
    # Python runs here only after the fork handlers: the child is as it will stay.
    open(os.environ["RELEASE"] + ".child", "w").close()
    time.sleep(30)
    os._exit(0)
print(pid, flush=True)
while not os.path.exists(os.environ["RELEASE"]):
    time.sleep(0.05)
os.kill(pid, 9)
os.waitpid(pid, 0)
print("done", flush=True)
"""


def test_a_forked_child_holds_no_fifo_and_only_the_parent_answers(env, tmp_path):
    p = subprocess.Popen([PY, "-c", textwrap.dedent(FORKING_RANK)], env=dict(env, RELEASE=str(tmp_path / "release")),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    child = int(p.stdout.readline())
    # fork() returns in the parent before the child has run its fork handlers: look at the
    # child's descriptors once it runs its own code.
    wait_for(lambda: os.path.exists(tmp_path / "release.child"))
    path = stack_file(env, p.pid)
    held = [os.readlink(f"/proc/{child}/fd/{fd}") for fd in os.listdir(f"/proc/{child}/fd")]
    assert not any(link.endswith(".stackreq") for link in held), held
    dump = ask_for_stack(path, p.pid)
    assert dump.count("(most recent call first)") == 1 and "in <module>" in dump, dump
    code, out, err = finish(p, tmp_path)
    assert code == 0 and "done" in out, (code, out, err)
    assert not os.path.exists(path + "req")


def test_the_signal_dumps_every_thread_and_the_rank_trains_on(env, tmp_path):
    env = signal_env(env)
    p = start_rank(env, tmp_path)
    path = stack_file(env, p.pid)
    dump = ask_for_stack(path, p.pid)
    assert "in fetch_next_shard" in dump and "in <module>" in dump, dump
    dump = ask_for_stack(path, p.pid)  # a second hang: a second dump, the rank still alive
    assert "in fetch_next_shard" in dump, dump
    code, out, err = finish(p, tmp_path)
    assert code == 0 and "handled 0" in out, (code, out, err)
    assert not os.path.exists(path), "the stack file outlived a clean exit"


def test_a_handler_the_program_had_still_runs(env, tmp_path):
    p = start_rank(dict(signal_env(env), OWN_HANDLER="1"), tmp_path)
    dump = ask_for_stack(stack_file(env, p.pid), p.pid)
    assert "in fetch_next_shard" in dump, dump
    code, out, err = finish(p, tmp_path)
    assert code == 0 and "handled 1" in out, (code, out, err)


def test_off_and_bad_values_register_nothing_and_training_goes_on(env, tmp_path):
    for value, said in (("off", ""), ("SIGNOPE", "is not a signal"), ("9", "cannot be used")):
        p = start_rank(dict(env, TRAINWATCH_STACK_SIGNAL=value), tmp_path)
        assert not os.path.exists(stack_file(env, p.pid))
        code, out, err = finish(p, tmp_path)
        os.unlink(tmp_path / "release")
        assert code == 0, (value, err)
        assert said in err and err.count("trainwatch:") <= 1, (value, err)


BUSY_RANK = """
import os, tempfile, trainwatch
tw = trainwatch.init(job="j", rank=0, world_size=1)
print("ready", flush=True)
for step in range(1, 4001):
    tw.step(step, loss=1.0 / step)
    if step % 500 == 0:
        with tw.checkpoint(step, os.environ["CKPT"]):
            with open(os.environ["CKPT"], "wb") as f:
                f.write(b"x" * 65536)
                os.fsync(f.fileno())
print("done", flush=True)
"""


def caught_signals(pid):
    """SigCgt of /proc/PID/status as a set of signal numbers; empty once the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            mask = next(int(line.split()[1], 16) for line in f if line.startswith("SigCgt:"))
    except (OSError, StopIteration):
        return set()
    return {n for n in range(1, 65) if mask >> (n - 1) & 1}


def test_requests_during_steps_checkpoints_and_exit_never_kill_the_rank(env, tmp_path):
    """Asked again and again, the way the agent asks (the file exists and the signal is
    caught, then send), from the first step through checkpoints to interpreter shutdown."""
    env = signal_env(env)
    p = subprocess.Popen([PY, "-c", textwrap.dedent(BUSY_RANK)], env=dict(env, CKPT=str(tmp_path / "ckpt")),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready", p.stderr.read()
    path, sent = stack_file(env, p.pid), 0
    for _ in range(200_000):  # bounded; the rank finishes in a few seconds
        if p.poll() is not None:
            break
        if os.path.exists(path) and signal.SIGUSR2 in caught_signals(p.pid):
            try:
                os.kill(p.pid, signal.SIGUSR2)
                sent += 1
            except ProcessLookupError:
                break
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0 and "done" in out, (p.returncode, out, err)
    assert sent > 50, f"only {sent} requests reached the rank"
    assert not os.path.exists(path)


def test_fifo_requests_during_steps_checkpoints_and_exit_never_kill_the_rank(env, tmp_path):
    """The sampler asked again and again, the way the agent asks (open the FIFO without
    waiting, write a byte), from the first step through checkpoints to interpreter shutdown,
    while the thread is being stopped and after."""
    p = subprocess.Popen([PY, "-c", textwrap.dedent(BUSY_RANK)], env=dict(env, CKPT=str(tmp_path / "ckpt")),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready", p.stderr.read()
    fifo, sent = stack_file(env, p.pid) + "req", 0
    for _ in range(200_000):  # bounded; the rank finishes in a few seconds
        if p.poll() is not None:
            break
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # not there yet, or nobody listens any more (ENXIO)
            continue
        try:
            os.write(fd, b"x")
            sent += 1
        except OSError:  # EAGAIN: requests waiting already; EPIPE: the sampler just ended
            pass
        os.close(fd)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0 and "done" in out and err == "", (p.returncode, out, err)
    assert sent > 50, f"only {sent} requests reached the rank"
    assert not os.path.exists(fifo)


LOADING_RANK = """
import os, time, torch, trainwatch
from torch.utils.data import DataLoader, Dataset
tw = trainwatch.init(job="j", rank=0, world_size=1)
class Slow(Dataset):
    def __len__(self):
        return 4
    def __getitem__(self, i):
        print(os.getpid(), flush=True)
        while not os.path.exists(os.environ["RELEASE"]):
            time.sleep(0.05)
        return i
for i, _ in enumerate(DataLoader(Slow(), num_workers=1)):
    tw.step(i)
print("done", flush=True)
"""


def test_a_dataloader_worker_answers_on_its_own_files_and_removes_them(env, tmp_path):
    p = subprocess.Popen([PY, "-c", textwrap.dedent(LOADING_RANK)], env=dict(env, RELEASE=str(tmp_path / "release")),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    worker = int(p.stdout.readline())
    assert worker != p.pid
    path = stack_file(env, worker)
    assert wait_for(lambda: os.path.exists(path) and os.path.getsize(path) > 0, limit=10), "the worker has no stack file"
    assert stat.S_ISFIFO(os.stat(path + "req").st_mode)
    dump = ask_for_stack(path, worker)
    assert "in __getitem__" in dump and "_worker_loop" in dump, dump
    assert os.path.exists(stack_file(env, p.pid)), "the rank's own file is gone"
    code, out, err = finish(p, tmp_path)
    assert code == 0 and "done" in out and "trainwatch" not in err, (code, out, err)
    assert not os.path.exists(path) and not os.path.exists(path + "req"), "the worker's files outlived it"


SUBPROCESS_RANK = """
import multiprocessing, os, subprocess, sys, trainwatch
tw = trainwatch.init(job="j", rank=0, world_size=1)
# multiprocessing is loaded, so each child is offered a sampler: exec() must drop it, and a
# Process that is no DataLoader worker must decline it.
subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], preexec_fn=lambda: None, check=True)
def own_file_absent():
    path = os.path.join(os.path.dirname(os.environ["STACK"]), f"j.{os.getpid()}.stack")
    sys.exit(1 if os.path.exists(path) else 0)
child = multiprocessing.get_context("fork").Process(target=own_file_absent)
child.start()
child.join()
assert child.exitcode == 0, "a plain Process got a stack file"
print(sorted(os.listdir(os.path.dirname(os.environ["STACK"]))), flush=True)
"""


def test_children_that_are_no_dataloader_workers_get_no_stack_file(env, tmp_path):
    own = stack_file(env, 0)
    out = subprocess.run([PY, "-c", textwrap.dedent(SUBPROCESS_RANK)], env=dict(env, STACK=own),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    child, listing = out.stdout.splitlines()
    assert f"j.{child}.stack" not in listing and listing.count(".stack'") == 1 and out.stderr == "", out
