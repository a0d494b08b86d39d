"""torch.distributed's collectives, marked for the node agent.

Each wrapped call stores which collective the rank enters and that it left (two atomic stores
in the rank's slot, trainwatch.h: tw_collective_begin/end), so the agent sees, sample by
sample, how long each rank waits in collectives: the rank that waits least while the others
wait for it is the straggler, and when a job stalls, the rank in another collective than
its peers (or at another count of them) is a collective mismatch.

What this sees: calls made through the torch.distributed module's attributes after
trainwatch.init() (`dist.all_reduce(...)`, and libraries that call them so). What it cannot
see: collectives a name bound before init() calls (`from torch.distributed import
all_reduce` earlier), those made from C++ (DDP's gradient buckets, which run inside
loss.backward()), and the wait of an async_op=True call, which happens in work.wait(). The
agent's stacks on a hang still name those.
"""
import functools
import sys

__all__ = ["watch"]

# The torch.distributed functions a rank waits in, as the tw_collective kinds they report.
_KINDS = {
    "all_reduce": 1, "broadcast": 2, "broadcast_object_list": 2, "barrier": 3, "monitored_barrier": 3,
    "all_gather": 4, "all_gather_into_tensor": 4, "_all_gather_base": 4, "all_gather_object": 4,
    "reduce_scatter": 5, "reduce_scatter_tensor": 5, "_reduce_scatter_base": 5, "reduce": 6,
    "gather": 7, "gather_object": 7, "scatter": 8, "scatter_object_list": 8, "all_to_all": 9,
    "all_to_all_single": 9, "send": 10, "recv": 11,
}
_originals = {}  # name -> the function as torch defined it, while wrapped


def _marked(fn, kind, run):
    begin, end = run._collective_begin, run._collective_end

    # Named `wrapper`: the agent's reading of a stack looks through it to the call inside
    # (jobs/rank_place.cc), so the place reads "in all_reduce (train.py:57)".
    def wrapper(*args, **kwargs):
        begin(kind)
        try:
            return fn(*args, **kwargs)
        finally:
            end()

    functools.update_wrapper(wrapper, fn)
    return wrapper


def watch(run=None):
    """Marks torch.distributed's collectives for `run` (trainwatch.init()'s when None). Called
    by init() when torch.distributed is imported by then (TRAINWATCH_COLLECTIVES=off: never);
    call it after importing torch.distributed otherwise. Calling it again re-points the
    marks at the newest run. Returns the number of functions wrapped."""
    dist = sys.modules.get("torch.distributed")
    if dist is None:
        return 0
    if run is None:
        from . import _current
        run = _current
    if run is None or not getattr(run, "enabled", False):
        return 0
    count = 0
    for name, kind in _KINDS.items():
        fn = _originals.get(name) or getattr(dist, name, None)
        if fn is None or not callable(fn):
            continue
        _originals[name] = fn
        setattr(dist, name, _marked(fn, kind, run))
        count += 1
    return count
