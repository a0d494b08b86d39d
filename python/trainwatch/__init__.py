"""trainwatch: report a training rank's progress to the node's trainwatch agent.

    import trainwatch
    tw = trainwatch.init(job="llama-7b", health_port=8765)
    for step, batch in enumerate(loader):
        ...
        tw.step(step, loss=loss.item(), loss_scale=scale, overflow=overflow, tokens=n)
        if step % save_every == 0:
            with tw.checkpoint(step):
                engine.save_checkpoint(out_dir, step)

Monitoring never stops training: nothing here raises into the training loop after init,
bad input gives one line on stderr and a run that reports less (or nothing).
"""
import atexit
import os
import sys
import traceback

from ._ping import ping, flush_pings
from . import _stacks

try:
    from . import _native
except ImportError as exc:  # no extension built: keep training, say so once
    _native = None
    _native_error = str(exc)

__all__ = ["init", "ping", "Run", "flush_pings", "launch_env", "watch_collectives"]

# {word: number}, from the table the agent and the server read (reporter/slot_layout.h).
_STATUS = dict(_native.RANK_STATUSES) if _native is not None else {}
_current = None
_owner_pid = None  # the process whose rank _current reports; a forked child is not it
# Local rank 0 runs the node's agent; the others wait this long before they compete for the
# role, so that the agent lives in local rank 0 whenever it starts with its peers.
_AGENT_ROLE_DEFER_S = 3.0


class _NoOpHandle:
    """Stands in for the extension when it is missing; every call does nothing."""

    enabled = False
    open_status = -1

    def __init__(self, **_):
        pass

    def step(self, step, **_):
        pass

    def _set_step_ping(self, every, cb):
        pass

    def _set_status(self, code):
        pass

    def _checkpoint_begin(self, step, path):
        pass

    def _checkpoint_end(self, ok, nbytes):
        pass

    def _error(self, text):
        pass

    def gauge(self, name, value):
        return False

    def _colossal(self, stage, oom, compiled):
        pass

    def _collective_begin(self, kind):
        pass

    def _collective_end(self):
        pass

    def _set_phase(self, code):
        pass


_Base = _native.Handle if _native is not None else _NoOpHandle


class _Checkpoint:
    __slots__ = ("_run", "_step", "_path", "_bytes")

    def __init__(self, run, step, path):
        self._run, self._step, self._path, self._bytes = run, step, path, 0

    def set_bytes(self, nbytes):
        self._bytes = int(nbytes)

    def __enter__(self):
        self._run._checkpoint_begin(int(self._step), None if self._path is None else str(self._path))
        return self

    def __exit__(self, exc_type, exc, tb):
        ok = exc_type is None
        self._run._checkpoint_end(ok, self._bytes)
        if not ok:
            self._run.error(exc if exc is not None else exc_type)
        elif self._run._checkpoint_url:
            ping(self._run._checkpoint_url, {"step": self._step})
        return False  # never swallow the exception


_PHASES = {"train": 0, "eval": 1, "warmup": 2}
_COLLECTIVE_KINDS = {"other": 0, "all_reduce": 1, "broadcast": 2, "barrier": 3, "all_gather": 4,
                     "reduce_scatter": 5, "reduce": 6, "gather": 7, "scatter": 8, "all_to_all": 9, "send": 10,
                     "recv": 11}


class _Phase:
    """Returned by Run.phase(): the phase is set already; leaving a `with` block restores the
    one before."""
    __slots__ = ("_run", "_before")

    def __init__(self, run, before):
        self._run, self._before = run, before

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self._run.phase(self._before)
        return False


class _Collective:
    __slots__ = ("_run", "_kind")

    def __init__(self, run, kind):
        self._run, self._kind = run, kind

    def __enter__(self):
        self._run._collective_begin(self._kind)
        return self

    def __exit__(self, exc_type, exc, tb):
        self._run._collective_end()
        return False


class Run(_Base):
    """One rank's reporter. `step()` is implemented in C (METH_FASTCALL)."""

    _checkpoint_url = None
    _failed = False
    _phase = "train"

    def status(self, name):
        """Set initializing|training|checkpointing|evaluating|finished|failed."""
        if _native is None:
            return  # no extension: nothing to report to (said once at import)
        code = _STATUS.get(name)
        if code is None:
            sys.stderr.write(f"trainwatch: unknown status {name!r}; expected one of {', '.join(_STATUS)}\n")
            return
        if name == "failed":
            self._failed = True
        self._set_status(code)

    def error(self, exc):
        """Record an exception (or any text) as this rank's last error; status is unchanged."""
        try:
            if isinstance(exc, BaseException):
                text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            elif isinstance(exc, type):
                text = exc.__name__
            else:
                text = str(exc)
            self._error(text)
        except Exception:  # monitoring never raises into training
            pass

    def phase(self, name):
        """Declare what the job does now: "train" (the default), "eval" or "warmup". Steps in
        "eval" or "warmup" are never a straggler or a throughput drop, and an evaluation is a
        pause, not a hang, within the time the job's evaluations have taken before. Sets it at
        once (one store); as a context manager, `with tw.phase("eval"):`, restores the phase
        before on the way out."""
        code = _PHASES.get(name)
        if code is None:
            sys.stderr.write(f"trainwatch: unknown phase {name!r}; expected one of {', '.join(_PHASES)}\n")
            return _Phase(self, self._phase)
        before, self._phase = self._phase, name
        self._set_phase(code)
        return _Phase(self, before)

    def collective(self, kind="other"):
        """Context manager marking a collective the module cannot wrap itself (a library's own
        communication, a custom barrier): `with tw.collective("all_reduce"): ...`. Kinds:
        all_reduce, broadcast, barrier, all_gather, reduce_scatter, reduce, gather, scatter,
        all_to_all, send, recv, other."""
        return _Collective(self, _COLLECTIVE_KINDS.get(kind, 0))

    def checkpoint(self, step, path=None):
        """Context manager: status checkpointing inside; ok/failed and a heartbeat ping after."""
        return _Checkpoint(self, step, path)

    def colossalai(self, pipeline_stage=None, oom_events=0, kernels_compiled=None):
        """ColossalAI's fields: pipeline stage, Gemini OOM events (added), kernels compiled."""
        self._colossal(pipeline_stage, int(oom_events), kernels_compiled)


def _env_int(name, default):
    text = os.environ.get(name)
    if text is None or text == "":
        return default
    try:
        return int(text)
    except ValueError:
        sys.stderr.write(f"trainwatch: {name}={text!r} is not a number; using {default}\n")
        return default


def _env_float(name, default):
    text = os.environ.get(name)
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        sys.stderr.write(f"trainwatch: {name}={text!r} is not a number; using {default}\n")
        return default


def launch_env():
    """What the launcher's variables say about this process: a dict with launcher ("torchrun",
    "slurm", "kubernetes" or ""), run_id, node_name and job ("" when unknown), and rank, local_rank,
    world_size, node_rank, attempt (None when no variable gives one). TRAINWATCH_RUN_ID,
    TRAINWATCH_ATTEMPT, TRAINWATCH_NODE_RANK and TRAINWATCH_NODE win over every launcher's;
    docs/training.md has the table. Read by the same code as the slot's identity."""
    if _native is None:
        return {"launcher": "", "run_id": "", "node_name": "", "job": "", "rank": None, "local_rank": None,
                "world_size": None, "node_rank": None, "attempt": None}
    return _native.launch_env()


def init(job=None, *, dir=None, rank=None, local_rank=None, world_size=None, health_port=None,
         health_host=None, checkpoint_dir=None, nvme_path=None, stall_after_s=600.0, gpu_memory_pct=95.0,
         disk_free_gb=10.0, host_memory_free_gb=1.0, ping_every=None, nvml_library=None, status="training",
         server=None, node=None, report_every=None):
    """Open this rank's slot and return its Run.

    The job is `job`, else TRAINWATCH_JOB, else Slurm's job name (SLURM_JOB_NAME, made a
    valid name), else "default"; the agent started without --job takes the same.

    Rank, local rank and world size come from RANK, LOCAL_RANK, WORLD_SIZE (or Slurm's
    SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS) unless given; the run id, restart attempt and
    node index from torchrun, Slurm or the TRAINWATCH_* variables (launch_env()). With
    health_port, one local rank also runs the node agent (GET /health, /metrics) on C++
    threads. Heartbeats: CHECKPOINT_HEARTBEAT_URL after each good checkpoint, and
    STEP_HEARTBEAT_URL / THROUGHPUT_HEARTBEAT_URL every `ping_every` steps (default 100,
    TRAINWATCH_PING_EVERY), from rank 0.

    With server (or TRAINWATCH_SERVER), one local rank runs the agent (even without
    health_port) and it pushes node reports to that trainwatch server every report_every
    seconds (default 5, TRAINWATCH_REPORT_EVERY), with TRAINWATCH_TOKEN as bearer token and
    node (or TRAINWATCH_NODE, default the host name) as this node's name; it sends a last
    report as the process exits, failed or not. Local rank 0 takes the agent role (a lock
    beside the slot file; another local rank 3 s after its own init() when nobody holds it),
    and the next live local rank takes it over when its holder's process ends, so the node
    is watched until its last rank ends.

    When torch.distributed is imported by then, its collectives are marked for the agent
    (watch_collectives(); TRAINWATCH_COLLECTIVES=off leaves them alone): how long each rank
    waits in them names a straggler, and which one it waits in names a collective mismatch.

    A child made with os.fork() (a DataLoader worker, a helper) reports nothing: the Run
    belongs to the process that made it, and the child's exit leaves the parent's status,
    agent and pings alone.

    The slot lives in dir (or TRAINWATCH_DIR, default /dev/shm/trainwatch) under
    <dir>/<uid>/<job>.slots, 0600 in a 0700 directory of this user's own (0640/0750 and
    readable by TRAINWATCH_GROUP when set). When that directory is refused (a symlink,
    someone else's) or /dev/shm is full, one line goes to stderr and training goes on
    without reporting; a slot file cut short later never stops training (docs/training.md).

    Stacks on a hang: on the agent's request a native sampler thread (no Python thread, no
    GIL) dumps every thread's Python stack, without sending the rank any signal, so no
    blocking call of the rank is interrupted. TRAINWATCH_STACK_SIGNAL=SIGUSR2 (or another
    signal) asks through faulthandler on that signal instead, as before; "off" disables
    stacks (docs/training.md, "Stacks on a hang").
    """
    global _current, _owner_pid
    if _native is None:
        sys.stderr.write(f"trainwatch: native extension not available ({_native_error}); "
                         "training continues without trainwatch reporting\n")
    launch = launch_env()
    job = job or os.environ.get("TRAINWATCH_JOB") or launch["job"] or "default"
    directory = dir or os.environ.get("TRAINWATCH_DIR") or "/dev/shm/trainwatch"
    run = Run(job=job, dir=directory, rank=rank, local_rank=local_rank, world_size=world_size)
    global_rank = rank if rank is not None else (launch["rank"] or 0)
    my_local_rank = local_rank if local_rank is not None else launch["local_rank"]
    if my_local_rank is None:
        my_local_rank = global_rank

    if global_rank == 0:
        run._checkpoint_url = os.environ.get("CHECKPOINT_HEARTBEAT_URL") or None
        step_url = os.environ.get("STEP_HEARTBEAT_URL") or os.environ.get("THROUGHPUT_HEARTBEAT_URL")
        every = ping_every if ping_every is not None else _env_int("TRAINWATCH_PING_EVERY", 100)
        if step_url and every > 0:
            run._set_step_ping(every, lambda: ping(step_url))

    server = server or os.environ.get("TRAINWATCH_SERVER") or None
    if (health_port is not None or server) and _native is not None:
        host = health_host or os.environ.get("TRAINWATCH_HEALTH_HOST") or "0.0.0.0"
        report_s = report_every if report_every is not None else _env_float("TRAINWATCH_REPORT_EVERY", 5.0)
        _native.start_agent(job, directory, host, int(health_port) if health_port is not None else -1,
                            server=server, token=os.environ.get("TRAINWATCH_TOKEN") or None,
                            node=node or launch["node_name"] or None, report_every_s=float(report_s),
                            checkpoint_dir=checkpoint_dir or os.environ.get("CHECKPOINT_DIR"),
                            nvme_path=nvme_path or os.environ.get("NVME_PATH"),
                            stall_after_s=float(stall_after_s), gpu_memory_pct=float(gpu_memory_pct),
                            disk_free_gb=float(disk_free_gb), host_memory_free_gb=float(host_memory_free_gb),
                            nvml_library=nvml_library, take_over=True,
                            defer_s=0.0 if my_local_rank == 0 else _AGENT_ROLE_DEFER_S)
    if status:
        run.status(status)
    if run.enabled:
        _stacks.register(directory, job)
    if _current is None:
        _install_hooks()
    _current = run
    _owner_pid = os.getpid()
    if os.environ.get("TRAINWATCH_COLLECTIVES", "on") != "off":
        watch_collectives(run)
    return run


def watch_collectives(run=None):
    """Marks torch.distributed's collectives for the agent (trainwatch/_collectives.py says
    what it sees and what not); init() calls it when torch.distributed is already imported.
    Returns how many functions it wrapped (0 without torch.distributed or a working Run)."""
    from . import _collectives
    try:
        return _collectives.watch(run)
    except Exception as exc:  # monitoring never stops training
        sys.stderr.write(f"trainwatch: collectives not marked: {exc!r}\n")
        return 0


def _owned():
    """Whether this process is the one whose rank _current reports (not a forked child)."""
    return _owner_pid == os.getpid()


def _install_hooks():
    previous = sys.excepthook

    def excepthook(exc_type, exc, tb):
        run = _current
        if run is not None and _owned():
            try:
                run.error(exc)
                run.status("failed")
            except Exception:
                pass
        previous(exc_type, exc, tb)

    sys.excepthook = excepthook
    atexit.register(_at_exit)


def _at_exit():
    if not _owned():  # a forked child: its parent's rank goes on; nothing here is the child's
        return
    run = _current
    if run is not None and not run._failed:
        try:
            run.status("finished")
        except Exception:
            pass
    flush_pings(2.0)
    if _native is not None:
        _native.stop_agent()
    _stacks.unregister()


# `trainwatch.deepspeed.watch(engine)` after a plain `import trainwatch`, as the docs write
# it: each helper module loads on first use (PEP 562), so importing trainwatch imports
# neither a helper nor, through it, a framework.
_FRAMEWORK_HELPERS = ("colossalai", "deepspeed", "huggingface", "lightning")


def __getattr__(name):
    if name in _FRAMEWORK_HELPERS:
        import importlib

        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
