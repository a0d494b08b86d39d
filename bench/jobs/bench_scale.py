#!/usr/bin/env python3
"""A simulated 16,384-rank job: 2,048 node agents, 8 ranks each, one report every 5 s.

    /usr/bin/python3 bench/jobs/bench_scale.py [--rounds 3] [--quick] [--bin PATH]
        [--setups sqlite,postgres,pg-x3-job,nginx]

What one run of a set-up does (each set-up is started fresh for each run, and the runs of
the set-ups alternate: A B C D, A B C D, ...):
  1. Start it: `trainwatch serve` with one declared job monitor `scale` (world_size
     16384, default thresholds), the jobs token, and its store.
  2. Open 2,048 keep-alive connections, one per simulated agent, each from its own
     loopback address (127.10.x.y: one address per node, as 2,048 hosts would be, so the
     server's max_connections_per_address bound is not what is measured).
  3. Warm-up (--warmup s), then the measured window (--seconds s): node i POSTs its report
     to /api/v1/jobs/scale/report at i x 5 s / 2048 past each 5 s period (409.6 reports/s
     spread evenly). Its 8 ranks step together like a healthy synchronous job (one step
     every 500 ms on every rank, from step 1000), with 8 GPUs, a disk and the node's
     memory, shaped like src/agent/node_report.cc's. Once a second the job monitor's state
     is read (GET /api/v1/monitors/scale?limit=1): anything but `up` after the first full
     cycle is a false alarm. Over the measured window: report latency as the generator
     sees it (p50/p99/max, from write to the last byte of the answer), the server's CPU
     seconds (utime + stime from /proc/PID/stat, all replicas; PostgreSQL's and HAProxy's
     apart), its RSS, and the generator's own CPU (getrusage). At the end of the window
     GET /api/v1/jobs/scale must show 16,384 ranks, 2,048 nodes and no finding.
  4. Kill: rank 9877 (node-1234, local rank 5) is SIGKILLed. As the real agent does
     (agent/push_plan.h: a liveness change brings the report forward), node-1234 reports
     at once: that rank alive false, process state '?', exit signal 9 (SIGKILL), gone_age;
     its 7 other ranks stop stepping (they wait in the collective). The other nodes go on.
     GET /api/v1/jobs/scale is polled every --poll-ms from the kill: "named" is the first
     answer with a finding whose ranks are [9877]; "down" the first with the monitor down
     and its incident's cause starting "rank 9877 ".
  5. Capacity burst: wrk -t1 -c32 for --burst s, POSTing the 2,048 nodes' reports in turn
     as fast as the set-up answers (reports/s and p99 at saturation).
  6. Stop it (SIGKILL), PostgreSQL databases dropped with the cluster at the end.

Set-ups:
  sqlite      one `trainwatch serve`, SQLite under --data-dir
  postgres    one `trainwatch serve`, store.url on a throwaway PostgreSQL 15 cluster
  pg-x3-job   three replicas on one PostgreSQL database behind HAProxy that sends
              /api/v1/jobs/scale* (the job's reports and its reads) to one replica, the one
              that owns the job's monitor (/healthz `owned`), everything else roundrobin.
              Until job state is shared through the store, a job's reports must all reach
              one replica (docs/scaling.md).
  pg-x3-uri   the same, HAProxy `balance uri depth 4` as docs/scaling.md suggests: all of a
              job to one replica, chosen by hash, not necessarily the monitor's owner.
  pg-x3-rr    the same, plain roundrobin for everything (once node reports are shared through
              the store).
  nginx       one nginx worker, `return 200`, taking the same POSTs: this machine's ceiling.

Prints a markdown table, then one JSON line last. Everything runs on 127.0.0.0/8; every
loop is bounded in count and time; every process started is killed at the end.
"""
import argparse
import asyncio
import json
import math
import os
import pathlib
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent / "heartbeat"))
sys.path.insert(0, str(ROOT / "tests" / "integration"))
import replicas  # noqa: E402  (Serve, replicas_agree, pg_url, odd_log_lines)
from run import start_nginx  # noqa: E402
from conftest import PG_BIN, Postgres, wait_for  # noqa: E402

sys.path.insert(0, str(ROOT.parent / "shared" / "peers"))
from wrkparse import parse_wrk  # noqa: E402
sys.path.insert(0, str(ROOT / "bench"))
from benchkit import binary_to_run, free_port, logger, run_haproxy  # noqa: E402

NODES = 2048
RANKS_PER_NODE = 8
WORLD = NODES * RANKS_PER_NODE
PERIOD_S = 5.0
STEP_S = 0.5
BASE_STEP = 1000
JOB = "scale"
TOKEN = "bench-scale-token-4b1d7c"
VICTIM_NODE, VICTIM_LOCAL = 1234, 5
VICTIM = VICTIM_NODE * RANKS_PER_NODE + VICTIM_LOCAL  # 9877
PUSH_GAP_S = 0.2  # agent/push_plan.h kMinPushGap
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
SETUPS = ("sqlite", "postgres", "pg-x3-job", "pg-x3-uri", "pg-x3-rr", "nginx")


log = logger("bench_scale")


def load1():
    return round(os.getloadavg()[0], 2)


def node_name(n):
    return f"node-{n:04d}"


def node_addr(n):
    """Node n's own loopback source address: 127.10.0.1 ... 127.10.8.0."""
    k = n + 1
    return f"127.10.{k // 256}.{k % 256}"


# ---------------------------------------------------------------- the simulated job

class Job:
    """The job's ranks as a function of time: all step together every STEP_S from t0;
    after `kill_at`, the victim is gone and its node's other ranks stop stepping."""

    def __init__(self, t0):
        self.t0 = t0
        self.kill_at = None
        self.gpus = [{"index": i, "name": "NVIDIA H100 80GB HBM3", "lost": False,
                      "memory_used_bytes": 61_000_000_000 + i * 1_000_000, "memory_total_bytes": 85_520_809_984,
                      "ecc_uncorrected": 0, "last_xid": 0, "last_xid_critical": False, "xid_count": 0}
                     for i in range(8)]

    def step_at(self, t):
        return BASE_STEP + int((t - self.t0) / STEP_S)

    def body(self, n, seq, now):
        killed = self.kill_at is not None and now >= self.kill_at and n == VICTIM_NODE
        frozen_at = self.kill_at if killed else now
        step = self.step_at(frozen_at)
        step_t = self.t0 + (step - BASE_STEP) * STEP_S  # when the current step began
        elapsed = now - self.t0
        loss = 2.0 + 1.5 * math.exp(-step / 3000.0)
        ranks = []
        for local in range(RANKS_PER_NODE):
            rank = n * RANKS_PER_NODE + local
            r = {"rank": rank, "local_rank": local, "world_size": WORLD, "pid": 200_000 + rank,
                 "alive": True, "state": "R", "status": "training", "step": step,
                 "step_reports": step + 1, "last_step_age_ms": int((now - step_t) * 1000),
                 "max_step_gap_ms": int(STEP_S * 1000), "overflow_total": 0, "overflow_consecutive": 0,
                 "samples": step * 64, "tokens": step * 64 * 4096, "cpu_s": round(300 + elapsed * 0.97, 2),
                 "attempt": 0, "run_id": "bench-scale", "node_rank": n, "nonfinite_total": 0,
                 "loss": round(loss + 0.001 * local, 5), "loss_scale": 65536.0, "grad_norm": 1.1,
                 "checkpoint": {"state": "ok", "step": 800, "begin_age_ms": 600_000 + int(elapsed * 1000),
                                "duration_ms": 20_000, "last_ok_step": 800,
                                "last_ok_age_ms": 580_000 + int(elapsed * 1000)}}
            if killed:
                r["state"] = "S"
                r["syscall"] = "futex"
                if local == VICTIM_LOCAL:
                    r.update(alive=False, state="?", gone_age_ms=int((now - self.kill_at) * 1000),
                             exit={"signal": 9, "signal_name": "SIGKILL", "core_dumped": False, "oom_killed": False})
                    del r["cpu_s"]
            ranks.append(r)
        report = {"schema": 1, "job": JOB, "node": node_name(n), "seq": seq, "final": False,
                  "agent_pid": 100_000 + n, "report_every_ms": int(PERIOD_S * 1000), "ranks": ranks,
                  "gpus": self.gpus, "disks": [{"name": "ckpt", "path": "/ckpt", "ok": True, "error": "",
                                                 "free_bytes": 9_000_000_000_000, "total_bytes": 15_000_000_000_000}],
                  "memory": {"available_bytes": 1_500_000_000_000, "total_bytes": 2_000_000_000_000}}
        return json.dumps(report, separators=(",", ":")).encode()


def post_bytes(host, path, body):
    return (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {TOKEN}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


# ---------------------------------------------------------------- a small HTTP/1.1 client

class Http(asyncio.Protocol):
    """One keep-alive connection, one request at a time; the answer's arrival time is taken
    in data_received, not when the waiting coroutine resumes."""

    def __init__(self):
        self.transport = None
        self.buf = bytearray()
        self.waiter = None
        self.lost = False

    def connection_made(self, transport):
        self.transport = transport

    def connection_lost(self, exc):
        self.lost = True
        if self.waiter and not self.waiter.done():
            self.waiter.set_exception(ConnectionError(f"connection lost: {exc}"))

    def data_received(self, data):
        self.buf += data
        if self.waiter is None or self.waiter.done():
            return
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return
        lines = bytes(self.buf[:end]).decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        start = end + 4
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body, pos = bytearray(), start
            while True:
                eol = self.buf.find(b"\r\n", pos)
                if eol < 0:
                    return
                size = int(bytes(self.buf[pos:eol]).split(b";")[0], 16)
                if len(self.buf) < eol + 2 + size + 2:
                    return
                body += self.buf[eol + 2:eol + 2 + size]
                pos = eol + 2 + size + 2
                if size == 0:
                    break
            used = pos
        else:
            n = int(headers.get("content-length", "0"))
            if len(self.buf) < start + n:
                return
            body, used = bytes(self.buf[start:start + n]), start + n
        del self.buf[:used]
        self.waiter.set_result((status, bytes(body), headers, time.monotonic()))

    async def request(self, data, timeout):
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(data)
        return await asyncio.wait_for(self.waiter, timeout)


async def connect(host, port, source=None):
    loop = asyncio.get_running_loop()
    _, proto = await asyncio.wait_for(
        loop.create_connection(Http, host, port, local_addr=(source, 0) if source else None), 10)
    return proto


class Getter:
    """GETs over one keep-alive connection, reconnecting when it closes."""

    def __init__(self, base):
        hostport = base.split("//")[1]
        self.host, port = hostport.rsplit(":", 1)
        self.port = int(port)
        self.conn = None

    async def get(self, path, timeout=10):
        if self.conn is None or self.conn.lost:
            self.conn = await connect(self.host, self.port)
        req = f"GET {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n\r\n".encode()
        t = time.monotonic()
        status, body, headers, done = await self.conn.request(req, timeout)
        if headers.get("connection", "").lower() == "close":
            self.conn.transport.close()
            self.conn = None
        return status, body, done - t

    def close(self):
        if self.conn is not None and self.conn.transport is not None:
            self.conn.transport.close()


# ---------------------------------------------------------------- /proc readings

def proc_cpu_s(pid):
    try:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime
    except (OSError, IndexError, ValueError):
        return 0.0


def proc_rss_mb(pid):
    out = {}
    try:
        for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                out[k] = round(int(v.split()[0]) / 1024, 1)
    except OSError:
        pass
    return out


def children(pid):
    try:
        out = []
        for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
            out += [int(x) for x in (task / "children").read_text().split()]
        return out
    except OSError:
        return []


class Setup:
    """A running set-up: its base URL and the PIDs whose CPU counts as the server's."""

    def __init__(self, name):
        self.name = name
        self.base = None
        self.server_pids = []   # trainwatch (or the nginx worker)
        self.proxy_pids = []    # haproxy
        self.db_pid = None      # the postmaster: its children are summed at each reading
        self.procs = []         # to kill at the end
        self.serves = []
        self.note = ""

    def cpu(self):
        out = {"server": sum(proc_cpu_s(p) for p in self.server_pids),
               "proxy": sum(proc_cpu_s(p) for p in self.proxy_pids), "db": 0.0}
        if self.db_pid:
            out["db"] = proc_cpu_s(self.db_pid) + sum(proc_cpu_s(c) for c in children(self.db_pid))
        return out

    def rss(self):
        return [proc_rss_mb(p) for p in self.server_pids]

    def stop(self):
        for s in self.serves:
            try:
                s.kill()
            except Exception as e:  # keep cleaning up
                log(f"cleanup: {e}")
        for p in self.procs:
            kids = children(p.pid)  # nginx's worker outlives a SIGKILLed master: end it by its pid
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(10)
            for k in kids:
                try:
                    os.kill(k, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def write_config(path, store_env, job=None, world=None, server=None):
    lines = []
    if server:
        lines += ["server:"] + [f"  {k}: {v}" for k, v in server.items()]
    if store_env:
        lines += ["store:", f"  url: ${{{store_env}}}"]
    lines += ["jobs:", "  token: ${TRAINWATCH_TOKEN}", "monitors:", f"  - name: {job or JOB}", "    type: job",
              f"    world_size: {world or WORLD}"]
    path.write_text("\n".join(lines) + "\n")


def start_haproxy(work, tag, backends, mode, owner=None, checks=False):
    """mode 'job': /api/v1/jobs/scale* to backend `owner`, the rest roundrobin; 'uri':
    balance uri depth 4; 'rr': roundrobin. With `checks`, each replica is checked through
    /healthz as docs/operations.md suggests, so a dead one is taken out."""
    port = free_port()
    cfg = work / f"haproxy-{tag}.cfg"
    check = " check inter 2s fall 2 rise 2" if checks else ""
    servers = "\n".join(f"  server r{i} {b.split('//')[1]}{check}" for i, b in enumerate(backends))
    if checks:
        servers = ("  option httpchk GET /healthz\n  http-check expect status 200\n  option redispatch\n  retries 3\n"
                   + servers)
    if mode == "job":
        routing = (f"  acl job path_beg /api/v1/jobs\n  use_backend owner if job\n  default_backend replicas\n"
                   f"backend owner\n  server r{owner} {backends[owner].split('//')[1]}\n"
                   f"backend replicas\n  balance roundrobin\n{servers}\n")
    elif mode == "uri":
        routing = f"  default_backend replicas\nbackend replicas\n  balance uri depth 4\n{servers}\n"
    else:
        routing = f"  default_backend replicas\nbackend replicas\n  balance roundrobin\n{servers}\n"
    cfg.write_text(f"""global
  nbthread 1
  maxconn 8192
defaults
  mode http
  option http-keep-alive
  http-reuse always
  maxconn 8192
  timeout connect 5s
  timeout client 60s
  timeout server 30s
  timeout http-keep-alive 60s
frontend fe
  bind 127.0.0.1:{port}
{routing}""")
    return run_haproxy(cfg, work / f"haproxy-{tag}.log", port), f"http://127.0.0.1:{port}"


def start_setup(name, work, tag, pg, binary, job=None, world=None, checks=False, server=None):
    """Starts set-up `name` with one job monitor (`job`, `world` ranks; by default this
    bench's); `checks`: HAProxy checks the replicas (start_haproxy); `server`: keys of the
    config's server: section."""
    s = Setup(name)
    env = dict(os.environ, TRAINWATCH_TOKEN=TOKEN)
    try:
        if name == "nginx":
            (work / tag).mkdir()
            proc, s.base = start_nginx(work / tag)
            s.procs.append(proc)
            workers = wait_for(lambda: children(proc.pid), timeout=10, interval=0.1, what="nginx worker")
            s.server_pids = [proc.pid] + workers
            return s
        if name == "sqlite":
            write_config(work / f"{tag}.yaml", None, job, world, server)
            srv = replicas.Serve(work / f"{tag}.yaml", work / f"data-{tag}", work / f"{tag}.log", env=env)
            s.serves.append(srv)
            s.base, s.server_pids = srv.base, [srv.proc.pid]
            return s
        db = tag.replace("-", "_")
        pg.psql(f"CREATE DATABASE {db}", database="postgres")
        s.db_pid = int((pg.dir / "data" / "postmaster.pid").read_text().split()[0])
        env["TRAINWATCH_STORE_URL"] = replicas.pg_url(pg.port, db)
        write_config(work / f"{tag}.yaml", "TRAINWATCH_STORE_URL", job, world, server)
        count = 1 if name == "postgres" else 3
        for i in range(count):
            srv = replicas.Serve(work / f"{tag}.yaml", work / f"data-{tag}-{i}", work / f"{tag}-{i}.log", env=env)
            s.serves.append(srv)
        s.server_pids = [x.proc.pid for x in s.serves]
        if count == 1:
            s.base = s.serves[0].base
            return s
        wait_for(lambda: replicas.replicas_agree(s.serves), timeout=30, interval=0.2,
                 what="three replicas that list each other")
        owned = wait_for(lambda: (o := [((v or {}).get("replicas") or {}).get("owned")
                                        for v in (r.health() for r in s.serves)]) and sum(x or 0 for x in o) == 1 and o,
                         timeout=20, interval=0.2, what="one replica to own the job monitor")
        owner = owned.index(1)
        mode = {"pg-x3-job": "job", "pg-x3-uri": "uri", "pg-x3-rr": "rr"}[name]
        proc, s.base = start_haproxy(work, tag, [x.base for x in s.serves], mode, owner, checks)
        s.procs.append(proc)
        s.proxy_pids = [proc.pid]
        s.note = f"owner r{owner}"
        return s
    except BaseException:
        s.stop()
        raise


# ---------------------------------------------------------------- one run

def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, max(0, math.ceil(p / 100 * len(v)) - 1))]


async def drive(setup, args, is_peer):
    """Warm-up, measured window and (not for the peer) the kill; returns the figures."""
    host, port = setup.base.split("//")[1].rsplit(":", 1)
    port = int(port)
    conns = [None] * NODES

    # Each agent connects when its first report is due, as the real one does (a server
    # closes a connection whose first request does not come within 10 s of the accept).
    t0 = time.monotonic() + 0.5
    job = Job(t0 - 600.0)  # the job has been training for 10 min
    warm_end = t0 + args.warmup
    meas_end = warm_end + args.seconds
    kill_at = None if is_peer else meas_end + 1.0  # 1 s after the window
    job.kill_at = kill_at
    send_end = meas_end + (0.5 if is_peer else 1.0 + args.detect_timeout)
    stop = asyncio.Event()

    samples = []  # (sent, latency_s, status, lag_s, node)
    errors = []
    killed_report = {}

    async def node_loop(n):
        conn = conns[n]
        seq = 0
        k = 0
        last_sent = None
        victim = n == VICTIM_NODE and kill_at is not None
        kill_sent = False
        while k < 100_000 and not stop.is_set():
            due = t0 + n * PERIOD_S / NODES + k * PERIOD_S
            if victim and not kill_sent and due > kill_at:
                due = max(kill_at, (last_sent or 0) + PUSH_GAP_S)
                is_kill = True
            else:
                is_kill = False
                k += 1
            if due >= send_end:
                break
            delay = due - time.monotonic()
            if delay > 0:
                try:
                    await asyncio.wait_for(stop.wait(), delay)
                    break
                except asyncio.TimeoutError:
                    pass
            now = time.monotonic()
            seq += 1
            data = post_bytes(f"{host}:{port}", f"/api/v1/jobs/{JOB}/report", job.body(n, seq, now))
            sent = time.monotonic()
            try:
                if conn is None or conn.lost:
                    if seq > 1:
                        errors.append((sent, n, "reconnected"))
                    conn = await connect(host, port, node_addr(n))
                status, _, headers, done = await conn.request(data, args.request_timeout)
                samples.append((sent, done - sent, status, sent - due, n))
                if headers.get("connection", "").lower() == "close":
                    conn.transport.close()
            except (ConnectionError, OSError, asyncio.TimeoutError) as e:
                errors.append((sent, n, repr(e)))
                if conn is not None and conn.transport is not None:
                    conn.transport.close()
                conn = None
            last_sent = sent
            if is_kill:
                kill_sent = True
                killed_report.update(sent=sent, due=due, acked=samples[-1][0] + samples[-1][1]
                                     if samples and samples[-1][4] == n else None)
        conns[n] = conn

    getter = Getter(setup.base)   # the healthy polls' connection
    prober = Getter(setup.base)   # the job's detail and the kill's polls: one request at a time each
    polls = []  # (t, status) of the monitor during warm-up and window
    cpu = {}
    detail = {}
    detect = {}

    async def job_summary(g, timeout):
        """The job's line in GET /api/v1/jobs: monitor status, incident, verdict cause, findings."""
        status, body, lat = await g.get("/api/v1/jobs", timeout=timeout)
        if status != 200:
            return status, None, lat
        return status, next((j for j in json.loads(body).get("jobs", json.loads(body).get("items", []))
                             if j.get("name") == JOB), None), lat

    async def healthy_polls():
        # Healthy: the job's summary once a second until the window ends.
        t = t0 + 1.0
        for _ in range(int(args.warmup + args.seconds) + 2):
            await asyncio.sleep(max(0, t - time.monotonic()))
            if time.monotonic() >= meas_end:
                break
            t = max(t + 1.0, time.monotonic())
            if is_peer:
                continue
            asked = time.monotonic() - t0
            try:
                status, j, lat = await job_summary(getter, max(0.5, meas_end - time.monotonic()))
                state = (j or {}).get("status", status)
                if j and (j.get("findings") or {}).get("down"):
                    state = f"{state}, down findings: {j.get('cause')}"
                polls.append((asked, state, lat, (j or {}).get("findings")))
            except (ConnectionError, OSError, asyncio.TimeoutError, ValueError) as e:
                polls.append((asked, repr(e), None, None))

    async def cpu_marks():
        await asyncio.sleep(max(0, warm_end - time.monotonic()))
        cpu["start"] = (time.monotonic(), setup.cpu(), resource.getrusage(resource.RUSAGE_SELF), load1())
        await asyncio.sleep(max(0, meas_end - time.monotonic()))
        cpu["end"] = (time.monotonic(), setup.cpu(), resource.getrusage(resource.RUSAGE_SELF), load1())
        cpu["rss"] = setup.rss()
        if is_peer:
            return
        # The kill: the job's summary every poll_ms from the kill on (the list, not the job's
        # detail: that carries all 2,048 nodes, MBs, and polling it would load the server).
        await asyncio.sleep(max(0, kill_at - time.monotonic()))
        deadline = kill_at + args.detect_timeout
        nxt = kill_at
        for _ in range(int(args.detect_timeout * 1000 / args.poll_ms) + 2):
            if time.monotonic() > deadline or ("named" in detect and "down" in detect):
                break
            await asyncio.sleep(max(0, nxt - time.monotonic()))
            nxt += args.poll_ms / 1000
            try:
                status, j, lat = await job_summary(prober, max(0.5, deadline - time.monotonic()))
            except (ConnectionError, OSError, asyncio.TimeoutError, ValueError) as e:
                detect.setdefault("errors", []).append(repr(e))
                continue
            at = time.monotonic()
            detect["polls"] = detect.get("polls", 0) + 1
            detect["poll_ms_max"] = max(detect.get("poll_ms_max", 0), round(lat * 1000, 1))
            if status != 200 or j is None:
                detect.setdefault("errors", []).append(status)
                continue
            if f"rank {VICTIM} (" in (j.get("cause") or "") and "named" not in detect:
                detect["named"] = at
                detect["verdict_cause"] = j.get("cause")
            if j.get("status") == "down" and "down" not in detect:
                detect["down"] = at
                detect["cause"] = (j.get("incident") or {}).get("cause")
        # Then once the job's detail: every rank and node there, and what its findings name.
        try:
            status, body, lat = await prober.get(f"/api/v1/jobs/{JOB}", timeout=30)
            if status != 200:
                raise ValueError(f"HTTP {status}: {body[:120]!r}")
            j = json.loads(body)
            detail.update(status=status, bytes=len(body), latency_ms=round(lat * 1000, 1),
                          monitor=j.get("status"), ranks=j.get("rank_count"), nodes=len(j.get("nodes", [])),
                          findings=[(f["code"], f["severity"], f["ranks"][:8]) for f in j.get("findings", [])][:6],
                          rank_health=j.get("rank_health"), phase=j.get("phase"))
        except Exception as e:  # noqa: BLE001 (recorded, the run goes on)
            detail.update(error=repr(e))
        stop.set()

    tasks = [asyncio.ensure_future(node_loop(n)) for n in range(NODES)]
    side = [asyncio.ensure_future(healthy_polls()), asyncio.ensure_future(cpu_marks())]
    try:
        await asyncio.wait_for(asyncio.gather(*side), send_end - time.monotonic() + 60)
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), args.request_timeout + 10)
    finally:
        stop.set()
        for t in tasks + side:
            t.cancel()
        for c in conns:
            if c is not None and c.transport is not None:
                c.transport.close()
        getter.close()
        prober.close()
        await asyncio.sleep(0.1)

    # Figures.
    window = [s for s in samples if warm_end <= s[0] < meas_end]
    warm = [s for s in samples if s[0] < warm_end]
    lat = [s[1] * 1000 for s in window if s[2] == 200]
    failed = len([e for e in errors if warm_end <= e[0] < meas_end and e[2] != "reconnected"])
    # Over every report of the window: one not answered 200 within the agent's timeout
    # counts as the timeout itself (the agent gave up then).
    lat_all = lat + [args.request_timeout * 1000] * (failed + len([s for s in window if s[2] != 200]))
    lags = [s[3] * 1000 for s in samples if s[0] < meas_end]
    (ta, ca, ra, la), (tb, cb, rb, lb) = cpu["start"], cpu["end"]
    span = tb - ta
    ok = len(lat)
    gen_cpu = (rb.ru_utime + rb.ru_stime) - (ra.ru_utime + ra.ru_stime)
    out = {
        "window_s": round(span, 2),
        "reports": len(window) + failed, "ok": ok, "non200": len(window) - ok,
        "errors": len([e for e in errors if e[0] < meas_end]),
        "errors_first": [e[2] for e in errors[:3]],
        "rate": round((len(window) + failed) / span, 1),
        "p50_ms": round(pct(lat, 50), 3) if lat else None,
        "p99_ms": round(pct(lat_all, 99), 3) if lat_all else None,
        "p99_answered_ms": round(pct(lat, 99), 3) if lat else None,
        "failed": failed,
        "max_ms": round(max(lat), 3) if lat else None,
        "warmup_p99_ms": round(pct([s[1] * 1000 for s in warm], 99), 3) if warm else None,
        "lag_p99_ms": round(pct(lags, 99), 2) if lags else None,
        "lag_max_ms": round(max(lags), 2) if lags else None,
        "load_window": [la, lb],
        "server_cpu_s": round(cb["server"] - ca["server"], 3),
        "proxy_cpu_s": round(cb["proxy"] - ca["proxy"], 3),
        "db_cpu_s": round(cb["db"] - ca["db"], 3),
        "gen_cpu_s": round(gen_cpu, 3),
        "rss": cpu.get("rss"),
    }
    # Answers that arrived within the window (the rate the set-up kept up with), and the
    # median latency of each 5 s slice of it: a queue that grows shows as a rising series.
    out["answered_rate"] = round(len([s for s in samples if ta <= s[0] + s[1] < tb and s[2] == 200]) / span, 1)
    out["p50_by_slice_ms"] = [round(pct([s[1] * 1000 for s in window if warm_end + i * 5 <= s[0] < warm_end + i * 5 + 5], 50)
                                    or 0, 1) for i in range(int(args.seconds // 5))]
    out["server_cores"] = round(out["server_cpu_s"] / span, 3)
    # CPU per report sent in the window (a report the agent gave up on was still read and,
    # mostly, applied by the server).
    sent = max(1, out["reports"])
    out["answered_pct"] = round(100.0 * ok / sent, 1)
    out["server_us_per_report"] = round(out["server_cpu_s"] / sent * 1e6, 1)
    out["other_cores"] = round((out["proxy_cpu_s"] + out["db_cpu_s"]) / span, 3)
    out["gen_cores"] = round(gen_cpu / span, 3)
    out["gen_us_per_report"] = round(gen_cpu / sent * 1e6, 1)
    if not is_peer:
        first_full = PERIOD_S + 2.0
        out["healthy_polls"] = len(polls)
        out["false_alarms"] = [(round(t, 1), st) for t, st, _, _ in polls
                               if t > first_full and isinstance(st, str) and (st == "down" or "down findings" in st)]
        out["poll_failures"] = len([1 for _, _, lat, _ in polls if lat is None])
        out["not_up"] = [(round(t, 1), st) for t, st, lat, _ in polls if t > first_full and lat is not None and st != "up"][:5]
        out["warnings_seen"] = max([(f or {}).get("warning", 0) for _, _, _, f in polls] or [0])
        out["early_polls"] = [st for t, st, _, _ in polls if t <= first_full]
        out["poll_p99_ms"] = round(pct([x * 1000 for _, _, x, _ in polls if x is not None], 99) or 0, 1)
        out["detail"] = detail
        out["kill_report"] = {k: round(v - kill_at, 3) if v else v for k, v in killed_report.items()}
        out["named_s"] = round(detect["named"] - kill_at, 2) if "named" in detect else None
        out["down_s"] = round(detect["down"] - kill_at, 2) if "down" in detect else None
        out["named_from_report_s"] = (round(detect["named"] - killed_report["sent"], 2)
                                      if "named" in detect and killed_report.get("sent") else None)
        out["verdict_cause"] = detect.get("verdict_cause")
        out["cause"] = detect.get("cause")
        out["detect_polls"] = detect.get("polls")
        out["detect_poll_ms_max"] = detect.get("poll_ms_max")
        out["detect_errors"] = detect.get("errors", [])[:3]
    return out


def http_stats(base):
    """Each serve's own connection counters (/metrics), read directly, not through HAProxy."""
    wanted = ("trainwatch_http_connections ", 'trainwatch_http_connections_refused_total{reason="per_address"}',
              'trainwatch_http_connections_closed_total{reason="request_timeout"}')
    try:
        with urllib.request.urlopen(base + "/metrics", timeout=20) as r:
            text = r.read().decode()
    except (urllib.error.URLError, OSError) as e:
        return {"error": repr(e)}
    return {line.split(" ")[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line.startswith(wanted)}


def burst(setup, work, seconds, job):
    """wrk -t1 -c32 POSTing every node's report in turn, as fast as the set-up answers."""
    bodies = work / "bodies.txt"
    if not bodies.exists():
        now = time.monotonic()
        bodies.write_text("\n".join(job.body(n, 1, now).decode() for n in range(NODES)) + "\n")
    lua = work / "report.lua"
    lua.write_text(f"""
local bodies = {{}}
for line in io.lines("{bodies}") do bodies[#bodies + 1] = line end
local i = 0
local headers = {{["Authorization"] = "Bearer {TOKEN}", ["Content-Type"] = "application/json"}}
request = function()
  i = i % #bodies + 1
  return wrk.format("POST", "/api/v1/jobs/{JOB}/report", headers, bodies[i])
end
""")
    c0 = setup.cpu()
    t = time.monotonic()
    try:
        out = subprocess.run(["wrk", "-t1", "-c32", f"-d{seconds}s", "--timeout", "3s", "--latency", "-s", str(lua),
                              setup.base + "/"], capture_output=True, text=True, timeout=seconds + 20).stdout
    except subprocess.TimeoutExpired:  # run() has killed wrk
        return {"error": f"wrk did not finish within {seconds + 20} s"}
    span = time.monotonic() - t
    c1 = setup.cpu()
    r = parse_wrk(out)
    cpu_s = sum(c1.values()) - sum(c0.values())
    return {"rps": round(r["rps"], 1), "p99_ms": r["p99_ms"], "p50_ms": r["p50_ms"], "non2xx": r["non2xx"],
            "socket_errors": sum(r["socket_errors"].values()),
            "cpu_us_per_report": round(cpu_s / max(1, r["requests"]) * 1e6, 1), "cores": round(cpu_s / span, 2)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=float, default=10.0, help="seconds of reports before the window")
    ap.add_argument("--seconds", type=float, default=20.0, help="the measured window")
    ap.add_argument("--burst", type=int, default=5, help="seconds of the capacity burst (0: none)")
    ap.add_argument("--detect-timeout", type=float, default=15.0, help="s from the kill to give up naming it")
    ap.add_argument("--poll-ms", type=int, default=100)
    ap.add_argument("--request-timeout", type=float, default=3.0,
                    help="per report, s: the agent's own (agent/report_pusher.h PushOptions.timeout)")
    ap.add_argument("--setups", default="sqlite,postgres,pg-x3-job,nginx")
    ap.add_argument("--bin", default=None, help="the trainwatch binary (default: a copy of build's, taken at start)")
    ap.add_argument("--nodes", type=int, default=2048, help="simulated agents (exploration; the figures use 2048)")
    ap.add_argument("--period", type=float, default=5.0, help="report interval, s (exploration; figures: 5)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 round, 8 s warm-up, 10 s window, 3 s burst")
    args = ap.parse_args()
    global NODES, PERIOD_S, VICTIM_NODE, VICTIM
    NODES, PERIOD_S = max(2, min(args.nodes, 32_768)), args.period  # kMaxNodesPerJob
    VICTIM_NODE = min(VICTIM_NODE, NODES - 1)
    VICTIM = VICTIM_NODE * RANKS_PER_NODE + VICTIM_LOCAL
    if args.quick:
        args.rounds, args.warmup, args.seconds, args.burst = 1, 8.0, 10.0, 3
    setups = [s for s in args.setups.split(",") if s]
    for s in setups:
        if s not in SETUPS:
            ap.error(f"unknown set-up {s}; known: {', '.join(SETUPS)}")
    if "nginx" not in setups:
        setups.append("nginx")  # the peer is always in the run
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(1))

    head = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h %s"], capture_output=True,
                          text=True).stdout.strip()[:90]
    work = pathlib.Path(tempfile.mkdtemp(prefix="tw-bench-scale-"))
    args.bin, binary_built = binary_to_run(args.bin, work)
    replicas.BINARY = args.bin
    load_before = os.getloadavg()
    log(f"work dir {work}; binary {args.bin} (built {binary_built}); HEAD {head}; load {load_before}")
    pg = None
    runs = {s: [] for s in setups}
    bursts = {s: [] for s in setups}
    odd = {}
    current = None
    try:
        if any(s != "sqlite" and s != "nginx" for s in setups):
            if not (PG_BIN / "initdb").exists():
                raise RuntimeError("PostgreSQL 15 is not installed; scripts/setup.sh installs it")
            pg = Postgres()
            log(f"postgres on 127.0.0.1:{pg.port} (synchronous_commit={pg.psql('SHOW synchronous_commit').strip()})")
        for rnd in range(args.rounds):
            for name in setups:
                tag = f"{name}-{rnd}"
                t = time.monotonic()
                current = start_setup(name, work, tag, pg, args.bin)
                log(f"round {rnd + 1}/{args.rounds} {name}: up in {time.monotonic() - t:.1f}s at {current.base} "
                    f"{current.note}; load {load1()}")
                r = asyncio.run(drive(current, args, name == "nginx"))
                r["note"] = current.note
                r["http_stats"] = [http_stats(srv.base) for srv in current.serves]
                runs[name].append(r)
                log(f"  {name}: {r['rate']} reports/s, p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms, "
                    f"server {r['server_us_per_report']} us/report ({r['server_cores']} cores), "
                    f"gen {r['gen_cores']} cores, lag p99 {r['lag_p99_ms']} ms, errors {r['errors']}, "
                    f"named {r.get('named_s')} s, down {r.get('down_s')} s, false {r.get('false_alarms')}, "
                    f"load {r['load_window']}")
                if name != "nginx":
                    log(f"  detail {r['detail']}; cause {r['cause']}")
                if args.burst:
                    b = burst(current, work, args.burst, Job(time.monotonic() - 600.0))
                    bursts[name].append(b)
                    log(f"  burst: {b}")
                for i, srv in enumerate(current.serves):
                    c, first = replicas.odd_log_lines(srv.log_path, limit=3)
                    if c:
                        odd.setdefault(name, []).append((c, first))
                current.stop()
                current = None
    finally:
        if current is not None:
            current.stop()
        if pg is not None:
            pg.discard()
        if os.environ.get("KEEP_WORK"):
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    def med(name, key, src=runs):
        vals = [r[key] for r in src[name] if r.get(key) is not None]
        return statistics.median(vals) if vals else None

    def runs_of(name, key, src=None, fmt="{}"):
        return ", ".join(fmt.format(r.get(key)) if r.get(key) is not None else "–" for r in (src or runs)[name])

    def ratio(a, b, fmt="{:.1f}"):
        return fmt.format(a / b) if a is not None and b else "–"

    timeout_ms = args.request_timeout * 1000
    print(f"\n16,384-rank job: {NODES} nodes x {RANKS_PER_NODE} ranks, a report every {PERIOD_S:g} s "
          f"({NODES / PERIOD_S:.1f}/s), {args.rounds} runs x ({args.warmup:g} s warm-up + {args.seconds:g} s window), "
          f"agent timeout {args.request_timeout:g} s, {os.cpu_count()} CPUs, load {load_before[0]:.2f} -> "
          f"{os.getloadavg()[0]:.2f}, binary {args.bin} built {binary_built}\n")
    print("Medians of the runs (each run's value in brackets). p99 over every report sent in the window: one not "
          f"answered 200 within {args.request_timeout:g} s counts as {timeout_ms:.0f} ms.\n")
    print("| set-up | answered % | p50 ms | p99 ms | p99 vs nginx | server cores | server µs/report | vs nginx | "
          "PG+HAProxy cores | RSS MB | rank named s | DOWN s | false DOWN | burst reports/s | vs nginx | load |")
    print("|---|---|---|---|---:|---|---|---:|---:|---:|---|---|---:|---|---:|---|")
    ngx = {k: med("nginx", k) for k in ("p99_ms", "server_us_per_report")} if runs.get("nginx") else {}
    ngx_burst = med("nginx", "rps", bursts) if bursts.get("nginx") else None
    summary = {}
    for name in setups:
        rs = runs[name]
        if not rs:
            continue
        row = {k: med(name, k) for k in ("answered_pct", "p50_ms", "p99_ms", "server_us_per_report", "server_cores",
                                         "other_cores", "named_s", "down_s", "gen_cores", "gen_us_per_report",
                                         "lag_p99_ms", "rate", "answered_rate")}
        row["rss_mb"] = max(max((x.get("VmRSS", 0) for x in r["rss"]), default=0) for r in rs)
        row["false_down"] = sum(len(r.get("false_alarms") or []) for r in rs)
        row["failed"] = sum(r["failed"] + r["non200"] for r in rs)
        row["burst_rps"] = med(name, "rps", bursts) if bursts[name] else None
        row["load"] = [x for r in rs for x in r["load_window"]]
        summary[name] = row
        peer = name == "nginx"
        p99 = row["p99_ms"]
        p99_text = "≥ timeout" if p99 is not None and p99 >= timeout_ms else str(p99)
        named = "-" if peer else f"{row['named_s']} ({runs_of(name, 'named_s')})"
        burst_text = "-" if row["burst_rps"] is None else f"{row['burst_rps']:,.0f} ({runs_of(name, 'rps', bursts, '{:,.0f}')})"
        us = row["server_us_per_report"]
        print(f"| {name} | {row['answered_pct']} ({runs_of(name, 'answered_pct')}) | {row['p50_ms']} | "
              f"{p99_text} ({runs_of(name, 'p99_ms')}) | {ratio(p99, ngx.get('p99_ms'), '{:,.0f}')} | "
              f"{row['server_cores']} ({runs_of(name, 'server_cores')}) | "
              f"{us:,.0f} ({runs_of(name, 'server_us_per_report', None, '{:,.0f}')}) | "
              f"{ratio(us, ngx.get('server_us_per_report'))} | {row['other_cores']} | {row['rss_mb']} | {named} | "
              f"{'-' if peer else row['down_s']} | {'-' if peer else row['false_down']} | {burst_text} | "
              f"{ratio(row['burst_rps'], ngx_burst, '{:.3f}')} | {min(row['load'])}–{max(row['load'])} |")
    print()
    for name, row in summary.items():
        print(f"{name}: generator {row['gen_cores']} cores ({row['gen_us_per_report']} µs/report), schedule lag p99 "
              f"{row['lag_p99_ms']} ms, sent {row['rate']}/s, answered {row['answered_rate']}/s, "
              f"not answered 200 in time: {row['failed']}")
    for name, lines in odd.items():
        print(f"log lines with error/warn/fail in {name}: {sum(c for c, _ in lines)}; first: {lines[0][1][:2]}")
    print(json.dumps({"bench": "jobs_scale", "nodes": NODES, "ranks_per_node": RANKS_PER_NODE, "period_s": PERIOD_S,
                      "rounds": args.rounds, "warmup_s": args.warmup, "window_s": args.seconds, "burst_s": args.burst,
                      "binary": args.bin, "binary_built": binary_built, "head": head,
                      "load_before": [round(x, 2) for x in load_before],
                      "load_after": [round(x, 2) for x in os.getloadavg()],
                      "summary": summary, "runs": runs, "bursts": bursts}, default=str))


if __name__ == "__main__":
    main()
