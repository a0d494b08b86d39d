"""Heartbeat pings from a background thread: never raise into training, never block a step.

The queue is bounded (64); when it is full the ping is dropped and one warning is printed,
because a ping service that is down must not grow memory in a training process.
"""
import os
import queue
import sys
import threading
import urllib.parse
import urllib.request

_MAX_QUEUED = 64
_queue = queue.Queue(maxsize=_MAX_QUEUED)
_thread = None
_lock = threading.Lock()
_warned_full = False
_warned_failed = False
timeout_s = 5.0


def _worker():
    global _warned_failed
    while True:
        url = _queue.get()
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as r:
                r.read(1024)
        except Exception as exc:
            if not _warned_failed:
                _warned_failed = True
                sys.stderr.write(f"trainwatch: heartbeat ping to {url} failed: {exc} (further failures not shown)\n")
        finally:
            _queue.task_done()


def ping(url, params=None):
    """Queue a GET of url (with optional query params). Returns at once; never raises."""
    global _thread, _warned_full
    try:
        if not url:
            return False
        if params:
            sep = "&" if "?" in url else "?"
            url = url + sep + urllib.parse.urlencode(params)
        with _lock:
            if _thread is None:
                _thread = threading.Thread(target=_worker, name="trainwatch-ping", daemon=True)
                _thread.start()
        _queue.put_nowait(url)
        return True
    except queue.Full:
        if not _warned_full:
            _warned_full = True
            sys.stderr.write(f"trainwatch: {_MAX_QUEUED} heartbeat pings queued; dropping new ones\n")
        return False
    except Exception:
        return False


def _forget_in_child():
    """After os.fork(), in the child: the worker thread exists only in the parent, so the
    queue it would drain starts afresh (else flush_pings at the child's exit waits for it)."""
    global _queue, _thread, _lock
    _queue = queue.Queue(maxsize=_MAX_QUEUED)
    _thread = None
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)


def flush_pings(timeout=2.0):
    """Wait up to timeout seconds for queued pings (at exit, so the last one goes out)."""
    import time
    deadline = time.monotonic() + timeout
    while _queue.unfinished_tasks and time.monotonic() < deadline:
        time.sleep(0.01)
