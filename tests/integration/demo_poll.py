"""The demo's job, run for real and polled as a person watching its page would see it:
the real server on examples/demo.yaml, examples/demo_training.py's 8 ranks whose node-local
rank 0s run the node agents in process and push to it. Each poll reads the job API (its
straggler findings, rank 6's step) and the job page's live headline (the state pill and the
cause line under it). `judge` holds the demo's promise: rank 6 is named a straggler while it
straggles (after a stated detection delay), no other rank ever is, and the headline is green
the rest of the time. Used by tests/integration/test_demo_job_headline.py (about 2 min) and
bench/jobs/bench_demo_headline.py (10 min).
"""
import dataclasses
import os
import re
import signal
import subprocess
import time

from conftest import loopback_port

JOB = "demo-llm"
STRAGGLER = 6
PHASE_STEPS = 60  # examples/demo_training.py: rank 6 straggles where (step // 60) % 3 == 2
WARMUP_STEPS = 60  # the job's start-up: the ranks' warm-up steps and first windows
# A verdict needs the straggler's recent steps (20 at least, over 5 s or more: the rule's
# window), then a node report (every 2 s in the demo) and a check; at 0.5 s a step that is
# about 15 s. These delays are stated in steps of rank 6, the clock the phases run on.
DETECT_STEPS = 20
CLEAR_STEPS = 30


def straggling(step):
    return (step // PHASE_STEPS) % 3 == 2


@dataclasses.dataclass
class Poll:
    at: float  # seconds since the demo started
    step: int  # rank 6's last step, -1 before it reports
    named: list  # the ranks the job's straggler findings name
    status: str  # the job monitor's status in the API
    pill: str  # the headline's state pill on the job page (pill-up is green)
    cause: str  # the headline's cause line, "" when none
    findings: list  # every finding's message


class DemoRun:
    """One run of the demo: `start_server(config_text)` returns a started conftest.Server."""

    def __init__(self, root, build, work_dir, start_server, steps):
        self.root, self.build, self.work_dir = root, build, work_dir
        self.start_server, self.steps = start_server, steps
        self.proc = None

    def start(self):
        ports = [loopback_port(), loopback_port()]
        config = (self.root / "examples" / "demo.yaml").read_text()
        config = config.replace(":8765/", f":{ports[0]}/").replace(":8766/", f":{ports[1]}/")
        self.server = self.start_server(config)
        env = dict(os.environ, PYTHONPATH=str(self.build / "python"), TRAINWATCH_SERVER=self.server.base,
                   STEP_HEARTBEAT_URL=self.server.base + "/ping/demo-steps",
                   TRAINWATCH_DEMO_PORTS=",".join(map(str, ports)),
                   TRAINWATCH_DEMO_DIR=str(self.work_dir / "slots"))
        self.log = open(self.work_dir / "demo.log", "wb")
        self.proc = subprocess.Popen(
            ["/usr/bin/python3", str(self.root / "examples" / "demo_training.py"), "--steps", str(self.steps)],
            env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.started = time.monotonic()

    def poll(self):
        _, job, _ = self.server.get(f"/api/v1/jobs/{JOB}")
        _, page, _ = self.server.get(f"/jobs/{JOB}/live")
        pill = re.search(r'class="pill (pill-\w+)" id="job-state"', page)
        cause = re.search(r'<p class="error" id="job-cause">(.*?)</p>', page, re.S)
        steps = [r["step"] for r in job.get("ranks", []) if r["rank"] == STRAGGLER]
        return Poll(at=round(time.monotonic() - self.started, 1),
                    step=steps[0] if steps and steps[0] is not None else -1,
                    named=sorted({r for f in job.get("findings", []) if f["code"] == "straggler" for r in f["ranks"]}),
                    status=job.get("status", ""), pill=pill.group(1) if pill else "",
                    cause=cause.group(1) if cause else "", findings=[f["message"] for f in job.get("findings", [])])

    def poll_until_done(self, interval, timeout, on_poll=None):
        """Polls every `interval` s until rank 6 nears its last step (a finished rank is no
        longer judged) or the demo ends; fails after `timeout` s."""
        polls = []
        deadline = self.started + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            p = self.poll()
            polls.append(p)
            if on_poll:
                on_poll(p)
            if p.step >= self.steps - 10:
                return polls
            time.sleep(max(0.0, interval - (time.monotonic() - self.started - p.at)))
        assert self.proc.poll() is None or polls, f"the demo ended early: {self.proc.returncode}"
        assert time.monotonic() < deadline, f"the demo did not reach step {self.steps} in {timeout} s"
        return polls

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self.proc:
            self.log.close()


@dataclasses.dataclass
class Verdict:
    polls: list
    phase_polls: int = 0  # polls inside a phase, past the detection delay
    named_in_phase: int = 0  # of those, the polls that named rank 6
    missed: list = dataclasses.field(default_factory=list)  # phase polls that did not
    false_names: list = dataclasses.field(default_factory=list)  # polls naming another rank
    green_polls: int = 0  # polls outside the phases (past start-up and the clearing delay)
    not_green: list = dataclasses.field(default_factory=list)  # of those, the ones not green

    def summary(self):
        return (f"{len(self.polls)} polls; rank 6 named in {self.named_in_phase} of {self.phase_polls} polls "
                f"of its straggling phases; false names {len(self.false_names)}; headline green in "
                f"{self.green_polls - len(self.not_green)} of {self.green_polls} polls outside them")


def judge(polls):
    v = Verdict(polls)
    for p in polls:
        if any(r != STRAGGLER for r in p.named):
            v.false_names.append(p)
        if p.step < 0:
            continue
        phase_start = p.step - p.step % PHASE_STEPS
        if straggling(p.step):
            if p.step - phase_start >= DETECT_STEPS:
                v.phase_polls += 1
                if STRAGGLER in p.named:
                    v.named_in_phase += 1
                else:
                    v.missed.append(p)
        elif p.step >= WARMUP_STEPS and not (straggling(p.step - CLEAR_STEPS) and p.step >= CLEAR_STEPS):
            v.green_polls += 1
            if p.status != "up" or p.pill != "pill-up" or p.cause or p.findings:
                v.not_green.append(p)
    return v
