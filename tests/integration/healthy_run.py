"""A healthy training job that does what healthy jobs do, for tests that must see it stay
quiet (the early-warning and straggler rules here; a policy that acts on alerts later):
4 ranks of job_rank.py (PyTorch, CPU, gloo) over two "nodes", each step 0.25-0.75 s (±50 %
jitter around 0.5 s), a checkpoint that takes CHECKPOINT_S, and an evaluation of EVAL_S
every EVAL_EVERY_S, in one of two shapes:

- "all": every rank evaluates, declared (trainwatch's phase "eval"), then a barrier;
- "rank0": rank 0 alone evaluates, undeclared, while ranks 1-3 wait for it in
  dist.barrier(), the most common pattern of training scripts.

    clusters = {name: start_healthy_job(tmp / name, server, name, mode) for ...}
    seen = drive(clusters, duration_s=300)   # {name: Seen}
    assert seen["j"].findings == [] and seen["j"].statuses == {"up"}

drive() polls every job's API every POLL_S, as a person watching the job page would, and
keeps every finding and status it saw; the schedule (checkpoint, evaluations) is the same
for every job, at the same instants.
"""
import time
from dataclasses import dataclass, field

from conftest import wait_for
from test_jobs import Cluster, training_up

PACE_S = 0.25       # the sleep a step; the jitter adds 0 to 0.5 s: 0.25-0.75 s, 0.5 s on average
JITTER_S = 0.5
CHECKPOINT_S = 45
CHECKPOINT_AT_S = 195
EVAL_S = 20
EVAL_EVERY_S = 120
POLL_S = 2


def start_healthy_job(tmp, server, job, mode):
    """A Cluster of job `job` whose evaluations take the shape `mode` ("all" or "rank0"),
    up and training once this returns."""
    tmp.mkdir(parents=True, exist_ok=True)
    c = Cluster(tmp, server, job=job, env_extra={"STEP_PACE": str(PACE_S), "STEP_JITTER": str(JITTER_S),
                                                 "CHECKPOINT_STEPS": str(int(CHECKPOINT_S / PACE_S))})
    c.name, c.mode = job, mode
    wait_for(lambda: training_up(c, job), timeout=120, interval=0.5, what=f"job {job} up with 4 ranks training")
    return c


@dataclass
class Seen:
    statuses: set = field(default_factory=set)
    phases: set = field(default_factory=set)
    findings: list = field(default_factory=list)  # every finding seen, at most once each, with "seen_at_s"
    evaluations: int = 0


def plan_evaluation(c, seconds):
    """Every rank of `c` evaluates at a step a few ahead of the furthest (they step together,
    so every rank reaches it, and none has passed it)."""
    step = max(r["step"] for r in c.job(c.name)["ranks"]) + 10
    (c.control / "eval.tmp").write_text(f"{step} {c.mode} {seconds}")
    (c.control / "eval.tmp").replace(c.control / "eval")


def drive(clusters, duration_s, checkpoint_at_s=CHECKPOINT_AT_S, eval_every_s=EVAL_EVERY_S, eval_s=EVAL_S):
    """Runs the schedule on every cluster at once for duration_s, polling their jobs; returns
    {name: Seen}. A healthy run is watched in real time: there is no deadline to move to."""
    seen = {name: Seen() for name in clusters}
    began = time.monotonic()
    checkpointed = False
    next_eval = eval_every_s
    while time.monotonic() - began < duration_s:
        elapsed = time.monotonic() - began
        if not checkpointed and elapsed >= checkpoint_at_s:
            for c in clusters.values():
                c.touch("checkpoint")
            checkpointed = True
        if elapsed >= next_eval:
            for name, c in clusters.items():
                plan_evaluation(c, eval_s)
                seen[name].evaluations += 1
            next_eval += eval_every_s
        for name, c in clusters.items():
            j = c.job(name)
            s = seen[name]
            s.statuses.add(j["status"])
            s.phases.add(j["phase"])
            for f in j["findings"]:
                if (f["code"], f["message"]) not in [(x["code"], x["message"]) for x in s.findings]:
                    s.findings.append({**f, "seen_at_s": round(time.monotonic() - began)})
        time.sleep(POLL_S)
    return seen
