"""Stacks on a hang: the rank's side (docs/training.md, "Stacks on a hang").

At init() a dump of every thread's Python stack is set up to be appended, on the node
agent's request, to <dir>/<uid>/<job>.<pid>.stack, whose first line says how to ask:

- "trainwatch-stack 2 request=fifo" (the default): a native sampler thread of the trainwatch
  module (python/native/stack_sampler.h) waits on the FIFO <job>.<pid>.stackreq and dumps
  for every byte written to it. No signal reaches the rank, so a system call it is blocked
  in is never interrupted, and the dump needs no GIL.
- "trainwatch-stack 1 signal=N" (TRAINWATCH_STACK_SIGNAL=SIGUSR2, a name or number, or the
  fallback on a Python whose private dump function the sampler does not know):
  faulthandler is registered on that signal. The agent sends it only to a process that has
  the file and still catches the signal. The handler also chains to any handler the
  program registered before init(); but the signal makes a blocking call in the rank's
  main thread return EINTR.

A DataLoader worker (a child multiprocessing forks from the rank) gets a sampler of its own,
with its own files <job>.<workerpid>.stack and .stackreq, so that when the rank waits on a
worker the agent can ask the worker where it is (it finds the rank's children in /proc).
"""
import atexit
import contextlib
import faulthandler
import os
import signal
import sys

_file = None
_path = None
_signum = None  # the signal faulthandler is registered on; None with the sampler
_sampler = False  # whether the native sampler thread answers this process's FIFO
# Where register() put the files, kept through fork: a DataLoader worker's own go beside them.
_directory = None
_job = None

_SAMPLER = "sampler"  # _request_from_env(): ask through the FIFO


def _request_from_env():
    """How the agent will ask: _SAMPLER (unset or empty), a signal number, or None (off or
    unusable, said on stderr)."""
    text = (os.environ.get("TRAINWATCH_STACK_SIGNAL") or "").strip()
    if not text:
        return _SAMPLER
    if text.lower() in ("off", "0", "none", "no"):
        return None
    try:
        number = int(text)
    except ValueError:
        name = text.upper() if text.upper().startswith("SIG") else "SIG" + text.upper()
        number = getattr(signal, name, None)
        if number is None:
            sys.stderr.write(f"trainwatch: TRAINWATCH_STACK_SIGNAL={text!r} is not a signal; "
                             "stacks on a hang are off\n")
            return None
    if number in (signal.SIGKILL, signal.SIGSTOP, signal.SIGSEGV, signal.SIGFPE, signal.SIGABRT,
                  signal.SIGBUS, signal.SIGILL) or not 0 < int(number) < signal.NSIG:
        sys.stderr.write(f"trainwatch: TRAINWATCH_STACK_SIGNAL={text!r} cannot be used; stacks on a hang are off\n")
        return None
    return int(number)


def _start_sampler(path, fd, group):
    """Starts the native sampler on <path>req; returns None when it runs, else why not."""
    try:
        from . import _native
    except ImportError as exc:
        return str(exc)
    return _native._start_stack_sampler(path + "req", fd, group)


def register(directory, job):
    """Registers the dump; on any failure says so in one line and training goes on."""
    global _file, _path, _signum, _sampler, _directory, _job
    if _file is not None:
        return
    request = _request_from_env()
    if request is None:
        return
    path = os.path.join(directory, str(os.geteuid()), f"{job}.{os.getpid()}.stack")
    group = bool(os.environ.get("TRAINWATCH_GROUP"))
    stream, started = None, False
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        stream = os.fdopen(fd, "a")
        if group:
            os.fchmod(fd, 0o640)  # the group's agent reads it, as it reads the slot file
        os.ftruncate(fd, 0)
        if request == _SAMPLER:
            why = _start_sampler(path, fd, group)
            started = why is None
            if started:  # the header last: the agent asks only once the FIFO is there
                stream.write("trainwatch-stack 2 request=fifo\n")
                stream.flush()
                _file, _path, _sampler = stream, path, True
                _directory, _job = directory, job
                # Its own exit hook too: the thread must be gone before finalisation frees
                # what it reads, even when trainwatch's other exit work fails first.
                atexit.register(unregister)
                return
            sys.stderr.write(f"trainwatch: stacks on a hang fall back to SIGUSR2 ({why})\n")
            request = int(signal.SIGUSR2)
        number = request
        stream.write(f"trainwatch-stack 1 signal={number}\n")
        stream.flush()
        # faulthandler chains by restoring the previous disposition and raising the signal
        # again: with no handler before it, that default action would kill the rank. And
        # unregistering (at exit, or in the interpreter's finalisation) puts the previous
        # disposition back: ignoring the signal first makes that "ignore", so a request on
        # its way while the rank exits cannot kill it.
        previous = signal.getsignal(number)
        if previous == signal.SIG_DFL:
            signal.signal(number, signal.SIG_IGN)
        chain = previous not in (signal.SIG_DFL, signal.SIG_IGN)
        faulthandler.register(number, file=stream, all_threads=True, chain=chain)
    except (OSError, ValueError, RuntimeError) as exc:  # ValueError: init() off the main thread
        sys.stderr.write(f"trainwatch: stacks on a hang are off: {exc}\n")
        if started:
            from . import _native
            _native._stop_stack_sampler()
        if stream is not None:  # no file left behind for the agent to signal through
            with contextlib.suppress(OSError):
                stream.close()
                os.unlink(path)
        return
    _file, _path, _signum = stream, path, number


def _forget_in_child():
    """After os.fork(), in the child: the stack file and FIFO are the parent's (their names
    hold the parent's pid), so the child's exit must not remove them. The native module's
    own fork handler has already closed the child's copy of the FIFO: only the parent's
    sampler thread reads it, and the child has none.

    When the parent had a sampler, the child is offered one of its own: a child made by
    multiprocessing (its module is loaded then) runs its after-fork hooks at the start of
    its bootstrap, once it knows its Process object and before its target runs; the
    interpreter is whole there, unlike here, and a child that exec()s something else
    (subprocess) never gets that far. Registering it here, in the child, rather than at
    init() spares programs that never use multiprocessing the import."""
    global _file, _path, _signum, _sampler
    offer = _sampler
    _file = _path = _signum = None
    _sampler = False
    util = sys.modules.get("multiprocessing.util")
    if offer and util is not None:
        util.register_after_fork(sys.modules[__name__], _start_in_dataloader_worker)


os.register_at_fork(after_in_child=_forget_in_child)


def _start_in_dataloader_worker(_module):
    """In a child multiprocessing forked: when it is a DataLoader worker, starts its own
    sampler on <job>.<pid>.stack. Other children (a Pool's, a user's Process) are left alone.
    A worker ends in os._exit(), so atexit never runs there: multiprocessing's finalizers,
    run at the end of the child's bootstrap, remove its files (a worker killed by a signal
    leaves them; the agent only asks children of live ranks, and the FIFO has no reader)."""
    import multiprocessing
    from multiprocessing import util
    target = getattr(multiprocessing.current_process(), "_target", None)
    in_torch_data = (getattr(target, "__module__", None) or "").startswith("torch.utils.data")
    if _file is not None or _job is None or not in_torch_data:
        return
    register(_directory, _job)
    if _sampler:
        util.Finalize(None, unregister, exitpriority=0)


def unregister():
    """At exit: the agent stops asking (no file). The sampler thread is ended before the
    interpreter is finalised, its FIFO removed; a signal already on its way finds the
    disposition register() left under faulthandler (ignored, or the program's own handler)."""
    global _file, _path, _signum, _sampler
    if _file is None:
        return
    try:
        os.unlink(_path)
    except OSError:
        pass
    if _sampler:
        from . import _native
        _native._stop_stack_sampler()
    else:
        faulthandler.unregister(_signum)
    try:
        _file.close()
    except OSError:
        pass
    _file = _path = _signum = None
    _sampler = False
