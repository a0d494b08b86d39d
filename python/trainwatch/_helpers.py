"""Shared bits of the framework helpers: finding the Run, reading values that may be
tensors, and wrapping a bound method so the wrapper can never break the framework."""
import functools
import sys


def current_run(run):
    """The Run to report through: the one given, else trainwatch.init()'s, else a new one."""
    if run is not None:
        return run
    from . import _current, init
    return _current if _current is not None else init()


def as_float(value):
    """float() of a number, a 0-d tensor or a one-element tensor; None when not a number.
    (A CUDA tensor synchronises here; the frameworks have synchronised for the overflow check
    already, so this adds no stall of its own.)"""
    if value is None:
        return None
    try:
        if hasattr(value, "detach"):
            value = value.detach()
        return float(value)
    except (TypeError, ValueError, RuntimeError):
        return None


def first_attr(obj, *paths):
    """The first dotted attribute path that exists on obj, else None."""
    for path in paths:
        cur = obj
        for name in path.split("."):
            cur = getattr(cur, name, None)
            if cur is None:
                break
        if cur is not None:
            return cur
    return None


def wrap_method(obj, name, after):
    """Replaces obj.name by a wrapper that calls the original, then after(result, args,
    kwargs). An exception in `after` is reported once on stderr and never reaches the
    framework; the original's own exceptions pass through untouched. Returns an undo."""
    original = getattr(obj, name)
    warned = []

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        result = original(*args, **kwargs)
        try:
            after(result, args, kwargs)
        except Exception as exc:  # monitoring never raises into training
            if not warned:
                warned.append(True)
                sys.stderr.write(f"trainwatch: reporting after {type(obj).__name__}.{name} failed: {exc!r}\n")
        return result

    setattr(obj, name, wrapper)
    return lambda: setattr(obj, name, original) if getattr(obj, name) is wrapper else None
