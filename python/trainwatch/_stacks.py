"""Stacks on a hang: the rank's side (docs/training.md, "Stacks on a hang").

At init() faulthandler is registered on TRAINWATCH_STACK_SIGNAL (default SIGUSR2) to append
a dump of every thread's Python stack to <dir>/<uid>/<job>.<pid>.stack, whose first line
names the signal. The node agent sends that signal only to a process that has the file and
still catches the signal, then reads what was appended. faulthandler writes from the C
signal handler, so a rank stuck in Python, or holding the GIL in C code, still answers, and
it chains to any handler the program registered for the signal before init().
"""
import contextlib
import faulthandler
import os
import signal
import sys

_file = None
_path = None
_signum = None


def _signal_from_env():
    text = (os.environ.get("TRAINWATCH_STACK_SIGNAL") or "SIGUSR2").strip()
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


def register(directory, job):
    """Registers the dump; on any failure says so in one line and training goes on."""
    global _file, _path, _signum
    if _file is not None:
        return
    number = _signal_from_env()
    if number is None:
        return
    path = os.path.join(directory, str(os.geteuid()), f"{job}.{os.getpid()}.stack")
    stream = None
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        stream = os.fdopen(fd, "a")
        if os.environ.get("TRAINWATCH_GROUP"):
            os.fchmod(fd, 0o640)  # the group's agent reads it, as it reads the slot file
        os.ftruncate(fd, 0)
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
        if stream is not None:  # no file left behind for the agent to signal through
            with contextlib.suppress(OSError):
                stream.close()
                os.unlink(path)
        return
    _file, _path, _signum = stream, path, number


def _forget_in_child():
    """After os.fork(), in the child: the stack file is the parent's (its name holds the
    parent's pid), so the child's exit must not remove it."""
    global _file, _path, _signum
    _file = _path = _signum = None


os.register_at_fork(after_in_child=_forget_in_child)


def unregister():
    """At exit: the agent stops asking (no file), and a request already on its way finds the
    disposition register() left under faulthandler (ignored, or the program's own handler)."""
    global _file, _path, _signum
    if _file is None:
        return
    try:
        os.unlink(_path)
    except OSError:
        pass
    faulthandler.unregister(_signum)
    try:
        _file.close()
    except OSError:
        pass
    _file = _path = _signum = None
