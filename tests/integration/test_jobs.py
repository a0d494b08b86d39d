"""Job monitors end to end: real PyTorch (CPU, gloo) ranks on 127.0.0.1 reporting
through the trainwatch module, agents pushing node reports, the real server judging them.

The cluster: 4 ranks over 2 "nodes" (two `trainwatch agent` sidecars with different
TRAINWATCH_NODE and their own slot directories), reports every second, a job monitor with
a short step-timeout floor so that a hang shows in seconds. The tests run in file order on
one job (starting torch ranks costs tens of seconds here): straggler, NaN, SIGSTOP, SIGKILL.
"""
import json
import os
import pathlib
import random
import re
import shutil
import signal
import socket
import subprocess
import struct
import sys
import time
import urllib.error
import urllib.request

import pytest

from conftest import BINARY, Server, wait_for

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BUILD = ROOT / os.environ.get("TRAINWATCH_BUILD", "build")
PY = "/usr/bin/python3"
TOKEN = "s3cret-token"
REPORT_EVERY = 1.0

CONFIG = """
jobs:
  auto_create: false
  token: ${TRAINWATCH_TOKEN}
monitors:
  - name: tiny
    type: job
    world_size: 4
    thresholds:
      step_timeout_min: 3s
      startup_timeout: 2m
"""

# The same job, alerting a webhook receiver (the alerts' path): what a person is paged with.
HOOKED = """
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
  public_url: https://tw.example.org/ml/   # alerts link to the job's page under it
notifications:
  - name: hook
    type: webhook
    url: http://127.0.0.1:{port}/hook
""" + CONFIG.replace("    world_size: 4\n", "    world_size: 4\n    notify: [hook]\n")


class Webhook:
    """A local receiver that keeps every alert POSTed to it."""

    def __init__(self):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        import threading
        alerts = self.alerts = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                alerts.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def downs(self):
        return [a for a in self.alerts if a.get("event") == "down"]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def rendezvous_ports(count):
    """`count` distinct free ports for servers a test starts (MASTER_PORT, slurmctld's,
    slurmd's), below the kernel's ephemeral range (32768 up): a port bound and released
    at 0 is ephemeral, and any process's next connection or listening socket (srun's,
    slurmd's, an agent's) may take it before its server binds it. Each stays bound until
    all are chosen, so no two are the same (two picks once were: slurmctld and slurmd on
    one port, and slurmctld died on "Address already in use")."""
    held = []
    try:
        for _ in range(200 * count):
            if len(held) == count:
                break
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", random.randrange(20000, 32000)))
            except OSError:
                s.close()
                continue
            held.append(s)
        if len(held) < count:
            raise AssertionError(f"not {count} free ports between 20000 and 32000")
        return [s.getsockname()[1] for s in held]
    finally:
        for s in held:
            s.close()


def rendezvous_port():
    """One port as rendezvous_ports gives them."""
    return rendezvous_ports(1)[0]


def post(base, path, body, token=TOKEN, raw=None):
    data = raw if raw is not None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method="POST", headers={"Content-Type": "application/json"})
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


class Cluster:
    def __init__(self, tmp, server, in_process=False, env_extra=None, nodes=2, ranks_per_node=2, job="tiny",
                 report_every=REPORT_EVERY):
        self.tmp, self.server, self.procs, self.agents = tmp, server, {}, []
        self.control = tmp / "control"
        self.control.mkdir(exist_ok=True)
        base_env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
        base_env.update(PYTHONPATH=str(BUILD / "python"), TRAINWATCH_JOB=job, TRAINWATCH_TOKEN=TOKEN,
                        CONTROL_DIR=str(self.control), TRAINWATCH_REPORT_EVERY=str(report_every),
                        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(rendezvous_port()),
                        WORLD_SIZE=str(nodes * ranks_per_node))
        base_env.update(env_extra or {})
        for n in range(nodes):
            node = f"node-{'ab'[n]}"
            slots = tmp / f"slots-{node}"
            env = dict(base_env, TRAINWATCH_DIR=str(slots), TRAINWATCH_NODE=node)
            if in_process:
                env["IN_PROCESS_SERVER"] = server.base
            else:
                log = open(tmp / f"agent-{node}.log", "wb")
                self.agents.append(subprocess.Popen(
                    [BINARY, "agent", "--job", job, "--listen", "127.0.0.1:0", "--dir", str(slots),
                     "--server", server.base, "--report-every", str(report_every)], env=env, stderr=log))
            for local in range(ranks_per_node):
                rank = n * ranks_per_node + local
                log = open(tmp / f"rank-{rank}.log", "wb")
                self.procs[rank] = subprocess.Popen([PY, str(HERE / "job_rank.py")],
                                                    env=dict(env, RANK=str(rank), LOCAL_RANK=str(local)),
                                                    stdout=subprocess.PIPE, stderr=log)
        for rank, p in self.procs.items():
            line = p.stdout.readline().decode().strip()
            assert line == "ready", f"rank {rank} did not start: {(tmp / f'rank-{rank}.log').read_text()}"

    def job(self, name="tiny"):
        return self.server.get(f"/api/v1/jobs/{name}")[1]

    def touch(self, name):
        (self.control / name).write_text("")

    def remove(self, name):
        (self.control / name).unlink(missing_ok=True)

    def first_nan_step(self, rank):
        """The step at which the rank first reported NaN since its nan-<rank> file appeared."""
        path = self.control / f"nan-{rank}.first"
        return int(path.read_text()) if path.exists() else None

    def close(self):
        for p in list(self.procs.values()) + self.agents:
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.kill()
            p.wait()


def training_up(cluster, name="tiny"):
    j = cluster.job(name)
    ok = (j.get("status") == "up" and len(j.get("ranks", [])) == 4 and j.get("phase") == "training"
          and all(r["status"] == "training" for r in j["ranks"]))
    return j if ok else None


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("jobs")
    # The servers and agents of this module read it; later modules must not (a server
    # that finds it asks every node report for it).
    saved_token = os.environ.get("TRAINWATCH_TOKEN")
    os.environ["TRAINWATCH_TOKEN"] = TOKEN
    hook = Webhook()
    (tmp / "trainwatch.yaml").write_text(HOOKED.replace("{port}", str(hook.port)))
    server = Server(tmp / "trainwatch.yaml", tmp / "data", tmp / "server.log").start()
    c = Cluster(tmp, server)
    c.hook = hook
    try:
        wait_for(lambda: training_up(c), timeout=90, interval=0.5, what="the job to be up with 4 ranks training")
        yield c
    finally:
        c.close()
        server.stop()
        hook.close()
        if saved_token is None:
            os.environ.pop("TRAINWATCH_TOKEN", None)
        else:
            os.environ["TRAINWATCH_TOKEN"] = saved_token


def checks_of(server, monitor):
    """Checks of `monitor` since the server started, from its /metrics."""
    text = server.get("/metrics")[1]
    return sum(float(n) for n in re.findall(rf'^trainwatch_checks_total{{monitor="{monitor}",result="\w+"}} (\S+)$',
                                            text, re.M))


def findings(job, code):
    return [f for f in job["findings"] if f["code"] == code]


def test_straggler_is_a_warning_naming_the_slow_rank_and_never_down(cluster):
    wait_for(lambda: training_up(cluster), timeout=30, what="a healthy job")
    cluster.touch("slow-3")
    try:
        started = time.monotonic()
        statuses = set()

        def straggler():
            j = cluster.job()
            statuses.add(j["status"])
            return findings(j, "straggler")

        # Findings change once per check; on a loaded machine the straggler's window fills slowly.
        [f] = wait_for(straggler, timeout=120, interval=0.5, what="a straggler finding")
        assert f["severity"] == "warning" and f["ranks"] == [3], f
        assert f["message"].startswith("rank 3 (node-b, pid "), f["message"]
        assert statuses == {"up"}, statuses
        assert cluster.hook.downs() == [], "a straggler is a warning, never a page"
        print(f"straggler named after {time.monotonic() - started:.1f} s: {f['message']}")
    finally:
        cluster.remove("slow-3")


NAN_CAUSE = re.compile(r"rank (\d+) \(([\w-]+), pid (\d+)\) has reported non-finite losses since step (\d+) "
                       r"\(\d\d:\d\d:\d\d UTC\): (\d+) so far, NaN at step (\d+)")


def rank_view(job, rank):
    return next(r for r in job["ranks"] if r["rank"] == rank)


def test_one_nan_loss_is_a_finding_not_a_page(cluster):
    """One bad batch: rank 0 reports a NaN loss at one step, then finite ones. The job page
    shows it as a warning naming that step; nobody is paged."""
    wait_for(lambda: training_up(cluster), timeout=60, what="a healthy job")
    cluster.remove("nan-once-0.step")
    cluster.touch("nan-once-0")
    step_file = cluster.control / "nan-once-0.step"
    bad = int(wait_for(lambda: step_file.exists() and step_file.read_text(), timeout=10, what="the NaN step"))
    statuses = set()

    def finding():
        j = cluster.job()
        statuses.add(j["status"])
        return [f for f in j["findings"] if f["code"] == "loss_not_finite"]

    [f] = wait_for(finding, timeout=15, interval=0.2, what="the NaN's finding")
    assert f["severity"] == "warning" and f["ranks"] == [0], f
    assert re.match(rf"rank 0 \(node-a, pid {cluster.procs[0].pid}\) reported (a non-finite loss|non-finite losses "
                    rf"from step) (at step )?{bad} ", f["message"]), f
    # A few checks more: the warning stays, the job never goes down.
    until = time.monotonic() + 5
    while time.monotonic() < until:
        finding()
        time.sleep(0.5)
    assert statuses == {"up"}, statuses
    assert cluster.hook.downs() == [], cluster.hook.downs()
    assert rank_view(cluster.job(), 0)["nonfinite_first_step"] == bad
    cluster.remove("nan-once-0.step")


def test_nan_loss_on_rank_0_is_down(cluster):
    wait_for(lambda: training_up(cluster), timeout=60, what="a healthy job")
    cluster.remove("nan-0.first")
    cluster.touch("nan-0")
    started = time.monotonic()
    try:
        first = wait_for(lambda: cluster.first_nan_step(0), timeout=10, what="rank 0's first NaN step")
        j = wait_for(lambda: (j := cluster.job()) and j["status"] == "down" and j, timeout=15, what="down on NaN")
        elapsed = time.monotonic() - started
        cause = j["incident"]["cause"]
        # The alert names the step where the NaN began, not the step of the report that carried it.
        m = NAN_CAUSE.match(cause)
        assert m, cause
        rank, node, pid, since, count, now = m.groups()
        assert (rank, node, int(pid)) == ("0", "node-a", cluster.procs[0].pid), cause
        assert int(since) == first, (cause, first)
        assert int(count) >= 1 and int(now) >= first, cause
        assert j["findings"][0]["code"] == "loss_not_finite" and j["findings"][0]["ranks"] == [0], j["findings"]
        [alert] = wait_for(lambda: cluster.hook.downs(), timeout=10, what="the DOWN webhook")
        assert alert["monitor"]["name"] == "tiny" and alert["cause"] == cause, alert
        # It links to the job's page under server.public_url, a page this server serves.
        assert alert["url"] == "https://tw.example.org/ml/jobs/tiny", alert
        assert cluster.server.get("/jobs/tiny")[0] == 200
        # The count goes on rising in the job's view while the NaNs go on; the first step stays.
        later = wait_for(lambda: (j := cluster.job()) and rank_view(j, 0)["nonfinite_total"] > int(count) and j,
                         timeout=10, what="a rising count of non-finite losses")
        assert rank_view(later, 0)["nonfinite_first_step"] == first, rank_view(later, 0)
        print(f"NaN loss: down after {elapsed:.1f} s: {cause}")
    finally:
        cluster.remove("nan-0")
    j = wait_for(lambda: training_up(cluster), timeout=30, what="recovery after the NaN stops")
    # Recovered, the rank still shows what happened; the others never had a NaN.
    r0 = rank_view(j, 0)
    assert r0["nonfinite_total"] >= 1 and r0["nonfinite_first_step"] == first and r0["loss"] != "NaN", r0
    assert all(rank_view(j, r)["nonfinite_total"] == 0 for r in (1, 2, 3)), j["ranks"]
    status, metrics, _ = cluster.server.get("/metrics")
    line = re.search(r'^trainwatch_job_rank_nonfinite_losses_total\{training_job="tiny",rank="0",node="node-a"\} (\d+)$',
                     metrics, re.M)
    assert status == 200 and line and int(line.group(1)) >= r0["nonfinite_total"], metrics[-2000:]
    cluster.remove("nan-0.first")


def test_a_new_nan_is_reported_at_once_not_at_the_next_interval(start_server, tmp_path, monkeypatch):
    """A node reporting every 30 s: the first NaN reaches the server in a moment, not at the
    next scheduled report. One rank, the agent inside it."""
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    server = start_server("jobs:\n  auto_create: true\n  token: ${TRAINWATCH_TOKEN}\n")
    c = Cluster(tmp_path, server, in_process=True, nodes=1, ranks_per_node=1, job="prompt", report_every=30)
    try:
        # The agent reports at its start and again at once when the rank turns to training;
        # the next scheduled report is then 30 s away.
        wait_for(lambda: (j := c.job("prompt")) and j.get("ranks") and rank_view(j, 0)["status"] == "training",
                 timeout=60, what="the rank to be training")
        c.touch("nan-0")
        touched = time.monotonic()
        first = wait_for(lambda: c.first_nan_step(0), timeout=10, what="the first NaN step")
        r0 = wait_for(lambda: (r := rank_view(c.job("prompt"), 0)) and r["nonfinite_total"] and r,
                      timeout=5, what="the NaN in a report sent at once")
        elapsed = time.monotonic() - touched
        assert r0["nonfinite_first_step"] == first, (r0, first)
        print(f"NaN reported {elapsed:.2f} s after it began (report interval 30 s)")
    finally:
        c.close()


def test_sigstop_is_down_within_the_step_timeout_naming_the_rank_and_sigcont_recovers(cluster):
    j = wait_for(lambda: training_up(cluster), timeout=60, what="a healthy job")
    step_timeout = j["timeouts"]["step_ms"] / 1000
    victim = cluster.procs[1]
    victim.send_signal(signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        j = wait_for(lambda: (j := cluster.job()) and j["status"] == "down" and j, timeout=step_timeout + REPORT_EVERY + 5,
                     what="down after SIGSTOP")
        elapsed = time.monotonic() - stopped
        # Justified timing: "DOWN within the learned step timeout" is the behaviour under test,
        # and the timeout is learned from real ranks; + one report interval and the 1 s check.
        assert elapsed <= step_timeout + REPORT_EVERY + 1.5, (elapsed, step_timeout)
        cause = j["incident"]["cause"]
        assert cause.startswith(f"rank 1 (node-a, pid {victim.pid}) is stopped (process state T)"), cause
        print(f"SIGSTOP: down after {elapsed:.1f} s (step timeout {step_timeout:.0f} s): {cause}")
    finally:
        victim.send_signal(signal.SIGCONT)
    wait_for(lambda: training_up(cluster), timeout=30, what="recovery after SIGCONT")
    # The incident's close is written by the store's batching writer: wait for the commit.
    wait_for(lambda: cluster.server.get("/api/v1/incidents?monitor=tiny")[1]["incidents"][0]["ended"] is not None,
             timeout=10, what="the SIGSTOP incident to be closed")


def test_a_rank_stuck_in_python_is_named_with_its_function_while_the_others_wait(cluster):
    """The soft hang: rank 2 waits in its data loader, ranks 0, 1, 3 in all_reduce. Every
    per-rank counter reads the same; the agents' stacks tell them apart."""
    j = wait_for(lambda: training_up(cluster), timeout=60, what="a healthy job")
    step_timeout = j["timeouts"]["step_ms"] / 1000
    cluster.touch("stuck-2")
    stuck = time.monotonic()
    try:
        j = wait_for(lambda: (j := cluster.job()) and j["status"] == "down" and j,
                     timeout=step_timeout + 15, what="down naming the stuck rank")
        elapsed = time.monotonic() - stuck
        timeout_then_ms = j["timeouts"]["step_ms"]  # learned: it moves while the job trains
        cause = j["incident"]["cause"]
        pid = cluster.procs[2].pid
        assert cause.startswith(f"rank 2 (node-b, pid {pid}) is stuck in fetch_next_shard (job_rank.py:"), cause
        assert "ranks 0-1,3 are in all_reduce (job_rank.py:" in cause, cause
        assert j["findings"][0]["code"] == "rank_stuck" and j["findings"][0]["ranks"] == [2]
        assert elapsed <= step_timeout + 10, (elapsed, step_timeout)
        # The API carries each rank's stack; the job page folds them under where each rank is.
        ranks = {r["rank"]: r for r in j["ranks"]}
        assert ranks[2]["stack"]["place"].startswith("in fetch_next_shard"), ranks[2]["stack"]
        assert ranks[0]["stack"]["threads"][0]["frames"][0]["function"] == "all_reduce", ranks[0]["stack"]
        assert ranks[2]["syscall"] == "clock_nanosleep", ranks[2]
        # Native frames from the real eu-stack beside the Python ones: the main thread first,
        # asleep in libc under time.sleep.
        if shutil.which("eu-stack"):
            native = ranks[2]["stack"]["native"]
            assert native, ranks[2]["stack"]
            assert native["threads"][0]["tid"] == pid, native
            frames = native["threads"][0]["frames"]
            assert any(f["module"].startswith("libc") for f in frames), frames
        status, page, _ = cluster.server.get("/jobs/tiny")
        assert status == 200 and "rank 2 (node-b) in fetch_next_shard" in page, page[-3000:]
        if shutil.which("eu-stack"):
            assert "native frames</summary>" in page, page[-3000:]
        print(f"stuck rank: down after {elapsed:.1f} s (step timeout {step_timeout:.0f} s): {cause}")
    finally:
        cluster.remove("stuck-2")
    j = wait_for(lambda: training_up(cluster), timeout=30, what="recovery once the data loader returns")
    # One page for the hang, naming rank 2.
    downs = [a for a in cluster.hook.downs() if "fetch_next_shard" in a["cause"]]
    assert len(downs) == 1, cluster.hook.downs()
    # Training again: the hang's stacks stay with its interruption, on the API and the page.
    [hang] = [i for i in j["interruptions"] if i["code"] == "rank_stuck"]
    # The ledger dates the hang from its last step: detecting it took at least the timeout.
    assert hang["detect_ms"] >= timeout_then_ms, (hang, timeout_then_ms)
    culprit, waiting = hang["stacks"][0], hang["stacks"][1]
    assert culprit["culprit"] and culprit["ranks"] == [2], hang["stacks"]
    assert culprit["place"].startswith("in fetch_next_shard (job_rank.py:"), culprit
    assert "fetch_next_shard" in [f["function"] for f in culprit["frames"]], culprit
    assert waiting["ranks"] == [0, 1, 3] and waiting["place"].startswith("in all_reduce"), waiting
    if shutil.which("eu-stack"):  # the culprit's native frames are kept with its Python ones
        assert any(f["module"].startswith("libc") for f in culprit["native"]), culprit
    status, page, _ = cluster.server.get("/jobs/tiny")
    assert status == 200 and "stacks when it stopped" in page and "the others waited for it" in page
    if shutil.which("eu-stack"):
        assert "  native:\n" in page, page[-3000:]


def process_events_allowed():
    """Whether this kernel lets us subscribe to process events, as the agent does
    (agent/exit_watch.h): root in the initial network namespace."""
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 11) as s:  # NETLINK_CONNECTOR
            s.bind((0, 1))  # CN_IDX_PROC
            listen = struct.pack("I", 1)  # PROC_CN_MCAST_LISTEN
            connector = struct.pack("IIIIHH", 1, 1, 0, 0, len(listen), 0) + listen
            s.send(struct.pack("IHHII", 16 + len(connector), 3, 0, 0, 0) + connector)
        return True
    except OSError:
        return False


# Starts and ends short processes for argv[1] seconds, as a busy host does (a build,
# DataLoader workers); says "busy" once 500 have come and gone.
CHURN = """
import os, sys, time
end, n = time.monotonic() + float(sys.argv[1]), 0
while time.monotonic() < end:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    n += 1
    if n == 100:  # churning: on a loaded 2-core host 500 forks can take more than the 5 s
        print("busy", flush=True)
"""


def test_sigkill_is_down_naming_the_killed_rank_not_its_peers(cluster):
    """Killed while the host starts and ends processes by the hundred a second: each is
    two process events the agent's queue holds until its next sample, and the rank's exit
    must not be lost among them (the kernel's default queue holds about 256)."""
    wait_for(lambda: training_up(cluster), timeout=60, what="a healthy job")
    churns = [subprocess.Popen([PY, "-c", CHURN, "5"], stdout=subprocess.PIPE, text=True) for _ in range(3)]
    try:
        assert [c.stdout.readline().strip() for c in churns] == ["busy"] * 3
        victim = cluster.procs[2]
        victim.kill()
        killed = time.monotonic()
        j = wait_for(lambda: (j := cluster.job()) and j["status"] == "down" and j, timeout=15,
                     what="down after SIGKILL")
        elapsed = time.monotonic() - killed
    finally:
        for c in churns:
            c.kill()
            c.wait(10)
    cause = j["incident"]["cause"]
    # The agent (root here) hears from the kernel how the rank ended; elsewhere it cannot say.
    how = "was killed by SIGKILL" if process_events_allowed() else "vanished"
    assert cause.startswith(f"rank 2 (node-b, pid {victim.pid}) {how} at step "), cause
    alert = wait_for(lambda: [a for a in cluster.hook.downs() if a["cause"] == cause], timeout=15 - elapsed,
                     what="the DOWN webhook naming rank 2")[0]
    assert alert["monitor"]["type"] == "job"
    # The peers fail a moment later with gloo's "Connection closed by peer"; they are named
    # as consequences, never as the cause.
    j = wait_for(lambda: (j := cluster.job()) and len(findings(j, "rank_failed")) == 3 and j, timeout=15,
                 what="the peers to fail")
    assert j["findings"][0]["code"] == "rank_gone" and j["findings"][0]["ranks"] == [2]
    if process_events_allowed():
        assert next(r for r in j["ranks"] if r["rank"] == 2)["exit"]["signal_name"] == "SIGKILL", j["ranks"]
    print(f"SIGKILL: down after {elapsed:.1f} s: {cause}")
    status, metrics, _ = cluster.server.get("/metrics")
    assert 'trainwatch_job_rank_alive{training_job="tiny",rank="2",node="node-b"} 0' in metrics
    status, series, _ = cluster.server.get("/api/v1/jobs/tiny/series?metric=step_time")
    assert status == 200 and {s["key"] for s in series["series"]} == {"rank 0", "rank 1", "rank 2", "rank 3"}


# The measured case: the agent lives in local rank 0, which dies 0.1-0.4 s after
# the victim; its last report on the way out still blames the victim.
# A known race, not yet fixed: when rank 0's error reaches a job check before the agent
# has seen the victim's pid vanish, that check blames rank 0, and the incident keeps that
# cause. The attribution has to wait for the dying agent's last report; until it does,
# this test fails now and then, and must not turn the whole run red.
def test_agent_in_rank_0_sends_a_last_report_that_blames_the_killed_rank(start_server, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    server = start_server("jobs:\n  auto_create: true\n  token: ${TRAINWATCH_TOKEN}\n")
    c = Cluster(tmp_path, server, in_process=True, nodes=1, job="inproc")
    try:
        # Mid-training, as measured (the agent drops a dead slot that never
        # stepped and started well before the live ranks as a previous run's).
        wait_for(lambda: (j := c.job("inproc")) and j.get("status") == "up" and len(j["ranks"]) == 2
                 and all(r["step"] > 5 for r in j["ranks"]), timeout=60, what="the auto-created job to be training")
        victim = c.procs[1]
        victim.kill()
        c.procs[0].wait(timeout=30)  # rank 0 fails on the closed connection and exits
        j = wait_for(lambda: (j := c.job("inproc")) and j["status"] == "down" and j, timeout=15, what="down")
        cause = j["incident"]["cause"]
        # "was killed by SIGKILL" where the agent hears process events (root), else "vanished".
        assert cause.startswith((f"rank 1 (node-a, pid {victim.pid}) vanished",
                                 f"rank 1 (node-a, pid {victim.pid}) was killed by SIGKILL")), cause
        assert "rank 0 failed after it" in cause, cause
        assert j["nodes"][0]["final"] is True
    finally:
        c.close()


def test_the_rank_hosting_its_nodes_agent_killed_is_named_with_its_signal(start_server, tmp_path, monkeypatch):
    """The agent lives in local rank 0 of each node (trainwatch.init(server=...)); node-a's
    rank 0 is SIGKILLed and its agent dies with it. Its peers fail on the closed connection
    within a second; rank 1, which waited for node-a's agent role, takes it as it exits and
    sends the node's last report: rank 0's death, with the signal its zombie still shows."""
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    server = start_server("jobs:\n  auto_create: true\n  token: ${TRAINWATCH_TOKEN}\n")
    c = Cluster(tmp_path, server, in_process=True, job="hosted")
    try:
        wait_for(lambda: (j := c.job("hosted")) and j.get("status") == "up" and len(j["ranks"]) == 4
                 and all(r["step"] > 5 for r in j["ranks"]), timeout=90, what="the auto-created job to train")
        victim = c.procs[0]
        victim.kill()
        killed = time.monotonic()
        j = wait_for(lambda: (j := c.job("hosted")) and j["status"] == "down" and not j["findings"][0]["code"]
                     .startswith("node_") and j, timeout=15, interval=0.2, what="down naming a rank")
        elapsed = time.monotonic() - killed
        cause = j["incident"]["cause"]
        assert cause.startswith(f"rank 0 (node-a, pid {victim.pid}) was killed by SIGKILL at step "), cause
        assert elapsed <= 10, (elapsed, cause)
        print(f"agent host SIGKILLed: named after {elapsed:.1f} s: {cause}")
    finally:
        c.close()


def report(node="node-x", **extra):
    body = {"schema": 1, "node": node, "ranks": [{"rank": 0, "status": "training", "step": 1, "step_reports": 1}]}
    body.update(extra)
    return body


def test_bad_reports_are_refused_saying_why(start_server, monkeypatch):
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    server = start_server(CONFIG)
    path = "/api/v1/jobs/tiny/report"
    status, body = post(server.base, path, report(), token="wrong")
    assert status == 401 and body["detail"] == "the bearer token is not the server's"
    status, body = post(server.base, path, report(), token=None)
    assert status == 401
    status, body = post(server.base, "/api/v1/jobs/nope/report", report())
    assert status == 404 and "jobs.auto_create is off" in body["detail"]
    status, body = post(server.base, path, None, raw=b"{not json")
    assert status == 400 and body["detail"].startswith("the body is not valid JSON")
    status, body = post(server.base, path, report(schema=7))
    assert status == 400 and body["detail"] == "schema: unknown version 7; this server reads version 1"
    status, body = post(server.base, path, None, raw=b'{"schema":1,"node":"a","pad":"' + b"x" * 600_000 + b'"}')
    assert status == 413
    status, body = post(server.base, path, report())
    assert status == 200 and body == {"job": "tiny", "node": "node-x", "accepted": True}
    # The same rank from a second node is a finding, not a crash.
    assert post(server.base, path, report(node="node-y"))[0] == 200
    # Readers show the verdict of the job's last check (every second), not of this report.
    claimed = wait_for(lambda: findings(server.get("/api/v1/jobs/tiny")[1], "rank_claimed_twice"), timeout=10,
                       what="the next check to name the rank claimed twice")
    assert [f["ranks"] for f in claimed] == [[0]]
    status, body, _ = server.get("/api/v1/jobs/tiny/series?metric=watts")
    assert status == 400 and body["detail"] == "metric: expected step_time, loss, tokens_per_s or gpu_mem"


def test_a_restarted_server_resumes_its_jobs_from_their_last_reports(tmp_path, monkeypatch):
    """Reports answered 200 are stored, and so are the job's attempts and interruptions: a
    server killed and started again shows the job's nodes, ranks and steps at once, its
    auto-created monitor, and the interruption it had opened, before any new report; the
    downtime is not taken for the nodes' silence, and the next attempt closes the
    interruption as a restart."""
    monkeypatch.setenv("TRAINWATCH_TOKEN", TOKEN)
    config = tmp_path / "trainwatch.yaml"
    config.write_text("jobs:\n  auto_create: true\n  token: ${TRAINWATCH_TOKEN}\n")
    server = Server(config, tmp_path / "data", tmp_path / "server.log").start()

    def send(node, rank, step, attempt=0, killed=False):
        r = {"rank": rank, "pid": 100 + rank + 10 * attempt, "status": "training", "step": step,
             "step_reports": step + 1, "last_step_age_ms": 10, "world_size": 2, "attempt": attempt}
        if killed:
            r.update(alive=False, gone_age_ms=10, exit={"signal": 9, "signal_name": "SIGKILL"})
        body = {"schema": 1, "node": node, "report_every_ms": 1000, "ranks": [r]}
        assert post(server.base, "/api/v1/jobs/resumed/report", body) == (
            200, {"job": "resumed", "node": node, "accepted": True})

    try:
        send("node-a", 0, 42)
        send("node-b", 1, 42)
        server.wait_status("resumed", "up", timeout=10)
        send("node-b", 1, 42, killed=True)
        server.wait_status("resumed", "down", timeout=10)
        wait_for(lambda: server.get("/api/v1/jobs/resumed")[1]["interruptions"], timeout=5,
                 what="the interruption recorded")
        server.stop(signal.SIGKILL)
        time.sleep(3)  # longer than the nodes' silence limit (3 reports of 1 s)
        server.start()
        status, job, _ = server.get("/api/v1/jobs/resumed")
        assert status == 200, job
        assert sorted(n["name"] for n in job["nodes"]) == ["node-a", "node-b"]
        assert sorted((r["rank"], r["step"]) for r in job["ranks"]) == [(0, 42), (1, 42)]
        assert server.monitor("resumed")["type"] == "job"
        [before] = job["interruptions"]
        assert (before["cause"], before["detail"], before["resumed_at"]) == ("signal", "SIGKILL", None), before
        # Two analyses of the job since the start, rather than a guess at how long they take.
        wait_for(lambda: checks_of(server, "resumed") >= 2, timeout=10, what="two checks of the job since the start")
        assert server.monitor("resumed")["status"] == "down", "rank 1 is still dead"
        assert len(server.get("/api/v1/jobs/resumed")[1]["interruptions"]) == 1, "the same interruption, not a new one"

        for step in (40, 41):  # the launcher restarts both ranks from the checkpoint at step 40
            send("node-a", 0, step, attempt=1)
            send("node-b", 1, step, attempt=1)
        server.wait_status("resumed", "up", timeout=10)
        job = wait_for(lambda: (j := server.get("/api/v1/jobs/resumed")[1])["interruptions"][0]["resumed_at"] and j,
                       timeout=5, what="the interruption closed")
        assert [a["number"] for a in job["attempts"]] == [1, 2], job["attempts"]
        [after] = job["interruptions"]
        assert after["restarted"] and after["failed_at"] == before["failed_at"], after
    finally:
        server.stop()
