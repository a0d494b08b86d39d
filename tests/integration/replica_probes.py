"""What the replica tests ask of `trainwatch serve` replicas, and a node agent that reports
to one of them: shared by test_replicas.py and test_job_holders.py."""
import threading
import time

from conftest import api_call


def health(server):
    """The replica's /healthz body, or None when it does not answer 200."""
    status, body, _ = server.get("/healthz")
    return body if status == 200 else None


def all_see(replicas, count):
    """Every replica's /healthz, once all of them list `count` members and agree."""
    views = [health(r) for r in replicas]
    if any(v is None or len(v["replicas"]["members"]) != count for v in views):
        return None
    members = {tuple(v["replicas"]["members"]) for v in views}
    return views if len(members) == 1 else None


def job(server, name="llama"):
    """The job's API answer through `server`, or None when it does not answer 200."""
    status, body, _ = server.get(f"/api/v1/jobs/{name}")
    return body if status == 200 else None


class NodeAgent:
    """A node's agent as the server sees it: its one rank's report every second to
    `server`, stepping, until told its rank died (`alive = False`: it steps no more, and
    reports the SIGKILL). When its replica stops answering, later reports go to
    `fallback` (None: it keeps trying the same one)."""

    def __init__(self, node, rank, token, job_name="llama", pid_base=4000):
        self.node, self.rank, self.token, self.job_name = node, rank, token, job_name
        self.pid = pid_base + rank
        self.server = self.fallback = None
        self.alive = True
        self.statuses = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def report(self, step):
        rank = {"rank": self.rank, "pid": self.pid, "alive": self.alive, "status": "training",
                "step": step, "step_reports": step + 1, "last_step_age_ms": 50}
        if not self.alive:
            rank["exit"] = {"signal": 9, "signal_name": "SIGKILL"}
        return {"schema": 1, "node": self.node, "report_every_ms": 1000, "ranks": [rank]}

    def run(self):
        started = time.monotonic()
        step = 0
        while not self.stopped.wait(1.0):
            if self.alive:
                step = int((time.monotonic() - started) * 10)
            try:
                status, _, _ = api_call(self.server, "POST", f"/api/v1/jobs/{self.job_name}/report",
                                        self.report(step), token=self.token)
            except OSError:  # its replica was killed
                status = None
                if self.fallback is not None:
                    self.server = self.fallback
            self.statuses.append(status)
