#!/usr/bin/python3
"""Replica takeover under load: SIGKILL a random one of three `trainwatch serve` replicas
20 times, and count what was lost, doubled and how long its monitors went unchecked.

Set-up, all on 127.0.0.1 and all started here:
  - a throwaway PostgreSQL 15 (tests/integration/conftest.py's Postgres, its defaults:
    fsync and synchronous_commit on);
  - three replicas of one config on fixed ports (a restarted replica comes back on its
    port), behind HAProxy (roundrobin, `option httpchk GET /healthz`, redispatch);
  - {heartbeats} heartbeat monitors (period 1d) pinged through HAProxy by a paced Python
    load loop that counts every 2xx answer per token;
  - {http} HTTP monitors at 1 s against a Python target that records every hit; a flipper
    turns one target down or up about once a second (each held >= 3 s), so state changes
    and their alerts happen throughout, kills included;
  - one webhook channel on every HTTP monitor, to a receiver that records every arrival
    (delivery_id, event, time) and holds each request 0.2 s, so that some alert is now
    and then in flight when its sender is killed.

Each kill: a random replica gets SIGKILL. Takeover time = from the kill to the first hit
at the target of each HTTP monitor that replica owned (owners computed by rendezvous
hashing as the replicas do, cross-checked with its /healthz `owned`); the last of them is
the kill's figure. `dropped` = when both survivors' /healthz stopped listing it. Once
every orphan was checked again (or 25 s passed), the replica is restarted on its port,
and the next kill waits until all three list each other and it owns monitors again.

At the end: flipping stops, every target is up, the outbox drains, the ping load stops,
every replica is SIGKILLed, and PostgreSQL is read:
  - pings: acked 2xx per token vs rows of heartbeat_pings per monitor; lost = acked but
    not stored (must be 0); extra = stored without a 2xx (answers cut by a kill).
  - alerts: every incident must have its `down` delivery, every closed one its `up`; every
    delivery must have reached the receiver (missing must be 0); a delivery_id received
    twice is a duplicate, "in flight" when its first copy arrived within 2.5 s before a
    kill and the second after it.
  - incidents that overlap on one monitor, or that opened while the target was up
    (false DOWN);
  - incidents whose `up` reached the receiver before their `down` (must be 0).

Usage: /usr/bin/python3 bench/heartbeat/kills.py [--kills 20] [--quick] [--seed N]
       [--binary PATH]   (default: a copy of build/src/cli/trainwatch taken at start)
Prints a markdown table, then one JSON line last. Bounded: at most --max-seconds (900)
for the kills, then a drain of at most 60 s; everything started is killed on exit.
"""
import argparse
import http.client
import json
import os
import pathlib
import random
import secrets
import selectors
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
from conftest import PG_BIN, Postgres, wait_for  # noqa: E402
from rendezvous import owner_of  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from benchkit import binary_to_run, free_port, load_avg, logger, run_haproxy  # noqa: E402

REPLICAS = 3
RECEIVER_HOLD_S = 0.2
IN_FLIGHT_WINDOW_S = 2.5


log = logger("kills.py")


class Server(ThreadingHTTPServer):
    # A takeover starts its orphans' checks at once (and a restart its alerts): a listen
    # backlog of 5, Python's default, would drop SYNs and fail checks that trainwatch made right.
    request_queue_size = 1024
    daemon_threads = True


class Target:
    """The HTTP monitors' service: GET /<name> answers 500 while <name> is failing, else
    200; every hit is recorded (monotonic time). Flips are recorded in wall time."""

    def __init__(self):
        self.hits = {}
        self.failing = set()
        self.flips = []  # (wall time, name, failing after)
        self.lock = threading.Lock()
        target = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                name = self.path.strip("/")
                now = time.monotonic()
                with target.lock:
                    target.hits.setdefault(name, []).append(now)
                    status = 500 if name in target.failing else 200
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                except OSError:  # the checking replica was killed meanwhile
                    self.close_connection = True

            def log_message(self, *args):
                pass

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def set_failing(self, name, failing):
        with self.lock:
            (self.failing.add if failing else self.failing.discard)(name)
            self.flips.append((time.time(), name, failing))

    def first_hit_after(self, name, t):
        with self.lock:
            return next((h for h in self.hits.get(name, []) if h > t), None)

    def failing_near(self, name, wall, before=2.5, after=0.5):
        """Whether `name` was failing at some moment of [wall - before, wall + after]."""
        with self.lock:
            flips = [(t, f) for t, n, f in self.flips if n == name]
        state = False
        for t, f in flips:
            if t <= wall - before:
                state = f  # its state when the window opens
            elif state:
                return True
            elif t <= wall + after:
                state = f
            else:
                break
        return state

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class Receiver:
    """The webhook: records every POST on arrival (monotonic time, delivery_id, event,
    monitor, incident), holds it RECEIVER_HOLD_S, answers 200."""

    def __init__(self):
        self.arrivals = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                at = time.monotonic()
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                entry = {"at": at, "delivery_id": body.get("delivery_id"), "event": body.get("event"),
                         "monitor": (body.get("monitor") or {}).get("name"), "incident_id": body.get("incident_id"),
                         "answered": False}
                with receiver.lock:
                    receiver.arrivals.append(entry)
                time.sleep(RECEIVER_HOLD_S)
                try:
                    self.send_response(200)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    self.wfile.flush()
                    entry["answered"] = True
                except OSError:
                    pass

            def log_message(self, *args):
                pass

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def all(self):
        with self.lock:
            return list(self.arrivals)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class Replica:
    """One `trainwatch serve` on a fixed port, which a restart reuses."""

    def __init__(self, index, binary, config, work, env):
        self.index = index
        self.binary = binary
        self.config = config
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.data_dir = work / f"data-r{index}"
        self.log_path = work / f"replica-{index}.log"
        self.env = env
        self.proc = None
        self.starts = 0

    def start(self, timeout=60):
        log_file = open(self.log_path, "ab")
        self.proc = subprocess.Popen([self.binary, "serve", "-c", str(self.config), "--listen",
                                      f"127.0.0.1:{self.port}", "--data-dir", str(self.data_dir)],
                                     stdout=subprocess.PIPE, stderr=log_file, env=self.env)
        log_file.close()
        self.starts += 1
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        line = ""
        while time.monotonic() < deadline and not line:
            if sel.select(timeout=0.5):
                line = self.proc.stdout.readline().decode()
                break
            if self.proc.poll() is not None:
                break
        sel.close()
        if "serving" not in line:
            self.kill()
            raise RuntimeError(f"replica {self.index} did not start: {line!r}; "
                               f"log tail: {self.log_path.read_bytes()[-1500:].decode(errors='replace')}")
        proc = self.proc
        threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def health(self):
        try:
            with urllib.request.urlopen(self.base + "/healthz", timeout=3) as r:
                return json.loads(r.read())
        except (urllib.error.URLError, OSError, ValueError):
            return None


def agreed_views(replicas, count):
    """Every replica's /healthz once all list `count` members, the same ones."""
    views = [r.health() for r in replicas]
    if any(v is None or len(v.get("replicas", {}).get("members", [])) != count for v in views):
        return None
    return views if len({tuple(sorted(v["replicas"]["members"])) for v in views}) == 1 else None


def start_haproxy(work, replicas):
    port = free_port()
    cfg = work / "haproxy.cfg"
    servers = "\n".join(f"  server r{r.index} 127.0.0.1:{r.port} check" for r in replicas)
    cfg.write_text(f"""global
  nbthread 1
  maxconn 4096
defaults
  mode http
  option http-keep-alive
  option redispatch
  retries 3
  timeout connect 1s
  timeout client 30s
  timeout server 10s
frontend fe
  bind 127.0.0.1:{port}
  default_backend replicas
backend replicas
  balance roundrobin
  option httpchk GET /healthz
  http-check expect status 200
  default-server inter 500ms fall 2 rise 1
{servers}
""")
    return run_haproxy(cfg, work / "haproxy.log", port), port


class PingLoad:
    """`threads` paced loops through HAProxy, `rate` pings/s in all, keep-alive; counts
    every 2xx answer per token index. Bounded by `stop` and by `max_pings`."""

    def __init__(self, port, tokens, rate, threads, max_pings, seed):
        self.port, self.tokens, self.threads_n = port, tokens, threads
        self.per_thread_rate = rate / threads
        self.max_per_thread = max_pings // threads
        self.stop = threading.Event()
        self.acked = [[0] * len(tokens) for _ in range(threads)]
        self.ack_times = [[] for _ in range(threads)]  # (monotonic, token index) of every 2xx
        self.non2xx = [dict() for _ in range(threads)]
        self.errors = [0] * threads
        self.sent = [0] * threads
        self.workers = [threading.Thread(target=self.run, args=(i, seed + i), daemon=True) for i in range(threads)]

    def start(self):
        for w in self.workers:
            w.start()

    def run(self, i, seed):
        rng = random.Random(seed)
        conn = None
        next_at = time.monotonic()
        while not self.stop.is_set() and self.sent[i] < self.max_per_thread:
            now = time.monotonic()
            if next_at > now:
                time.sleep(next_at - now)
            next_at = max(next_at + 1 / self.per_thread_rate, time.monotonic() - 1.0)
            idx = rng.randrange(len(self.tokens))
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                conn.request("GET", "/ping/" + self.tokens[idx])
                resp = conn.getresponse()
                resp.read()
                self.sent[i] += 1
                if 200 <= resp.status < 300:
                    self.acked[i][idx] += 1
                    self.ack_times[i].append((time.monotonic(), idx))
                else:
                    self.non2xx[i][resp.status] = self.non2xx[i].get(resp.status, 0) + 1
                if resp.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
            except (OSError, http.client.HTTPException):
                self.sent[i] += 1
                self.errors[i] += 1
                if conn is not None:
                    conn.close()
                conn = None
                time.sleep(0.01)
        if conn is not None:
            conn.close()

    def finish(self, timeout=20):
        self.stop.set()
        for w in self.workers:
            w.join(timeout)

    def acked_per_token(self):
        return [sum(a[j] for a in self.acked) for j in range(len(self.tokens))]

    def summary(self):
        non2xx = {}
        for d in self.non2xx:
            for k, v in d.items():
                non2xx[k] = non2xx.get(k, 0) + v
        return {"sent": sum(self.sent), "acked_2xx": sum(self.acked_per_token()), "non2xx": non2xx,
                "errors": sum(self.errors)}


def flipper(target, names, stop, rng, every, min_hold, max_flips):
    """About one flip per `every` s: a random target that has held its state >= min_hold."""
    last = {n: 0.0 for n in names}
    flips = 0
    while not stop.wait(every) and flips < max_flips:
        now = time.monotonic()
        ready = [n for n in names if now - last[n] >= min_hold]
        if not ready:
            continue
        name = rng.choice(ready)
        target.set_failing(name, name not in target.failing)
        last[name] = now
        flips += 1


def write_config(path, http_names, hb_tokens, target_port, hook_url):
    lines = ["store:", "  url: ${TRAINWATCH_STORE_URL}", "server:", "  allow_local_channel_targets: true",
             "notifications:",
             f"  - {{name: hook, type: webhook, url: \"{hook_url}/hook\", timeout: 10s}}", "monitors:"]
    for name in http_names:
        lines += [f"  - name: {name}", "    type: http", f"    url: http://127.0.0.1:{target_port}/{name}",
                  "    interval: 1s", "    timeout: 2s", "    notify: [hook]"]
    for i, token in enumerate(hb_tokens):
        lines += [f"  - name: hb{i}", "    type: heartbeat", "    period: 1d", "    grace: 1d", f"    token: {token}"]
    path.write_text("\n".join(lines) + "\n")


def psql_rows(pg, sql):
    out = pg.psql(sql).strip()
    return [line.split("|") for line in out.splitlines()] if out else []


def quantiles(xs):
    if not xs:
        return None
    xs = sorted(xs)
    return {"median": round(statistics.median(xs), 2), "min": round(xs[0], 2), "max": round(xs[-1], 2),
            "p10": round(xs[int(0.1 * (len(xs) - 1))], 2), "p90": round(xs[int(0.9 * (len(xs) - 1))], 2)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="smoke run: 3 kills, fewer monitors")
    ap.add_argument("--http", type=int, default=45, help="HTTP monitors (1 s) with alerts")
    ap.add_argument("--heartbeats", type=int, default=300)
    ap.add_argument("--rate", type=float, default=200.0, help="pings/s offered in all")
    ap.add_argument("--threads", type=int, default=4, help="ping load threads")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--binary", default=None)
    ap.add_argument("--max-seconds", type=float, default=900.0, help="bound on the kill loop")
    ap.add_argument("--dump", default=None, help="write incidents, flips, kills and arrivals to this JSON file")
    args = ap.parse_args()
    if args.quick:
        args.kills, args.http, args.heartbeats, args.max_seconds = 3, 24, 100, 180.0
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(1))

    work = pathlib.Path(tempfile.mkdtemp(prefix="tw-bench-kills-"))
    binary, binary_built = binary_to_run(args.binary, work)
    http_names = [f"svc{i:02d}" for i in range(args.http)]
    tokens = [secrets.token_hex(16) for _ in range(args.heartbeats)]
    all_names = http_names + [f"hb{i}" for i in range(args.heartbeats)]

    pg = target = receiver = haproxy = load = None
    replicas = []
    stop_flips = threading.Event()
    kills = []
    load_start = load_avg()
    started = time.monotonic()
    result = {}
    try:
        log(f"work {work}; binary {binary} (built {binary_built}); seed {seed}; load {load_start}")
        if not (PG_BIN / "initdb").exists():
            raise RuntimeError("PostgreSQL 15 is not installed; scripts/setup.sh installs it")
        pg = Postgres()
        target = Target()
        receiver = Receiver()
        config = work / "trainwatch.yaml"
        write_config(config, http_names, tokens, target.port, receiver.base)
        env = dict(os.environ, TRAINWATCH_STORE_URL=pg.url())
        replicas = [Replica(i, binary, config, work, env) for i in range(REPLICAS)]
        for r in replicas:
            r.start()
        wait_for(lambda: agreed_views(replicas, REPLICAS), timeout=30, interval=0.2, what="three replicas")
        wait_for(lambda: (v := agreed_views(replicas, REPLICAS))
                 and sum(x["replicas"]["owned"] for x in v) == len(all_names), timeout=20, interval=0.2,
                 what="every monitor owned")
        haproxy, hport = start_haproxy(work, replicas)
        load = PingLoad(hport, tokens, args.rate, args.threads,
                        max_pings=int(args.rate * (args.max_seconds + 180)), seed=seed)
        load.start()
        flip_thread = threading.Thread(target=flipper, daemon=True,
                                       args=(target, http_names, stop_flips, random.Random(seed + 99), 1.0, 3.0,
                                             int(args.max_seconds * 2) + 100))
        flip_thread.start()
        log(f"{len(http_names)} HTTP + {len(tokens)} heartbeat monitors on 3 replicas; "
            f"pinging {args.rate:.0f}/s; flipping targets; warm-up 8 s")
        time.sleep(8)

        loop_deadline = time.monotonic() + args.max_seconds
        for k in range(args.kills):
            if time.monotonic() > loop_deadline:
                log(f"time bound reached after {k} kills")
                break
            try:
                views = wait_for(lambda: agreed_views(replicas, REPLICAS), timeout=20, interval=0.2,
                                 what="three replicas that agree")
            except AssertionError as e:
                log(f"kill {k + 1}: {e}; killing anyway")
                views = [r.health() or {"replicas": {"self": None, "members": [], "owned": 0}} for r in replicas]
            members = views[0]["replicas"]["members"]
            victim = rng.choice(replicas)
            vid = views[victim.index]["replicas"]["self"]
            owned_said = views[victim.index]["replicas"]["owned"]
            orphans = [n for n in http_names if members and owner_of(n, members) == vid]
            owned_hashed = sum(1 for n in all_names if members and owner_of(n, members) == vid)
            survivors = [r for r in replicas if r is not victim]
            before = load_avg()
            killed = time.monotonic()
            victim.kill()
            # Poll until every orphan was hit again and both survivors dropped the victim.
            took, dropped = {}, None
            deadline = killed + 25
            while time.monotonic() < deadline:
                for n in orphans:
                    if n not in took:
                        h = target.first_hit_after(n, killed + 0.3)
                        if h is not None:
                            took[n] = h - killed
                if dropped is None:
                    vs = [s.health() for s in survivors]
                    if all(v and vid not in v["replicas"]["members"] for v in vs):
                        dropped = time.monotonic() - killed
                if len(took) == len(orphans) and dropped is not None:
                    break
                time.sleep(0.1)
            row = {"kill": k + 1, "replica": victim.index, "member": vid, "orphans_http": len(orphans),
                   "owned_healthz": owned_said, "owned_hashed": owned_hashed,
                   "takeover_s": round(max(took.values()), 2) if len(took) == len(orphans) and took else None,
                   "takeover_median_s": round(statistics.median(took.values()), 2) if took else None,
                   "unchecked": len(orphans) - len(took), "dropped_s": round(dropped, 2) if dropped else None,
                   "killed_at": killed, "killed_wall": time.time() - (time.monotonic() - killed),
                   "orphans": orphans, "load_before": before}
            # Back on its port; the next kill waits for all three to agree again.
            t0 = time.monotonic()
            victim.start()
            try:
                wait_for(lambda: (v := agreed_views(replicas, REPLICAS)) and v[victim.index]["replicas"]["owned"] > 0,
                         timeout=25, interval=0.2, what="the restarted replica to own monitors")
                row["rejoined_s"] = round(time.monotonic() - t0, 2)
            except AssertionError as e:
                row["rejoined_s"] = None
                log(f"kill {k + 1}: {e}")
            kills.append(row)
            log(f"kill {k + 1}/{args.kills}: replica {victim.index} ({owned_said} owned, {len(orphans)} HTTP); "
                f"takeover {row['takeover_s']} s (median {row['takeover_median_s']}), dropped {row['dropped_s']} s, "
                f"rejoined {row['rejoined_s']} s, load {before[0]}")
            time.sleep(rng.uniform(1.0, 3.0))

        # Drain: targets up, incidents closed, outbox delivered, a re-send window passed.
        stop_flips.set()
        flip_thread.join(5)
        for n in http_names:
            if n in target.failing:
                target.set_failing(n, False)
        since_last_kill = time.monotonic() - (kills[-1]["killed_at"] if kills else started)
        if since_last_kill < 9:
            time.sleep(9 - since_last_kill)

        def drained():
            open_incidents = int(pg.psql("SELECT count(*) FROM incidents WHERE ended_ms IS NULL"))
            undelivered = int(pg.psql("SELECT count(*) FROM deliveries WHERE status <> 'delivered'"))
            return (open_incidents, undelivered) == (0, 0)

        try:
            wait_for(drained, timeout=60, interval=0.5, what="no open incident and every delivery delivered")
        except AssertionError as e:
            log(f"drain: {e}")
        time.sleep(2.0)  # a late duplicate would arrive within the dispatcher's next wakes
        load.finish()
        time.sleep(1.0)
        for r in replicas:  # a crash, not a clean stop: nothing flushed on the way out
            r.kill()

        stored = {row[0]: int(row[1]) for row in
                  psql_rows(pg, "SELECT monitor, count(*) FROM heartbeat_pings GROUP BY monitor")}
        incidents = [{"id": int(i), "monitor": m, "started_ms": int(s), "ended_ms": int(e) if e else None}
                     for i, m, s, e in psql_rows(pg, "SELECT id, monitor, started_ms, ended_ms FROM incidents")]
        deliveries = [{"id": int(i), "monitor": m, "incident_id": int(inc) if inc else None, "event": kind,
                       "status": st, "attempts": int(at)}
                      for i, m, inc, kind, st, at in psql_rows(
                          pg, "SELECT id, monitor, incident_id, kind, status, attempts FROM deliveries")]
        result = {"stored": stored, "incidents": incidents, "deliveries": deliveries}
    finally:
        stop_flips.set()
        if load is not None:
            load.finish(5)
        for r in replicas:
            try:
                r.kill()
            except Exception as e:  # keep cleaning up
                log(f"cleanup: {e}")
        if haproxy is not None and haproxy.poll() is None:
            haproxy.terminate()
            try:
                haproxy.wait(10)
            except subprocess.TimeoutExpired:
                haproxy.kill()
                haproxy.wait()
        for s in (target, receiver):
            if s is not None:
                s.close()
        if pg is not None:
            pg.discard()
        odd, dropped_changes = [], []
        for r in replicas:
            try:
                lines = r.log_path.read_text(errors="replace").splitlines()
            except OSError:
                continue
            odd += [f"r{r.index}: {l}" for l in lines if any(w in l.lower() for w in ("error", "fatal", "critical"))]
            # "[time] [trainwatch] [error] monitor NAME: its change to down cannot be stored and is dropped: ..."
            for l in lines:
                if "cannot be stored and is dropped" in l or "is dropped, another replica" in l:
                    name = l.split(" monitor ", 1)[1].split(":", 1)[0] if " monitor " in l else "?"
                    dropped_changes.append({"replica": r.index, "monitor": name, "line": l[:240]})
        if os.environ.get("KEEP_WORK"):
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    # Pings: acked 2xx per token vs stored rows per monitor.
    acked = load.acked_per_token()
    lost = extra = 0
    lost_monitors = []
    for i, a in enumerate(acked):
        s = result["stored"].get(f"hb{i}", 0)
        if s < a:
            lost += a - s
            lost_monitors.append((f"hb{i}", a, s))
        else:
            extra += s - a
    pings = dict(load.summary(), stored=sum(result["stored"].values()), lost=lost, extra=extra,
                 lost_examples=lost_monitors[:5])

    # Alerts: state changes (incidents opened / closed) vs deliveries vs arrivals.
    arrivals = receiver.all()
    by_id = {}
    for a in arrivals:
        by_id.setdefault(a["delivery_id"], []).append(a)
    dels = result["deliveries"]
    down_of = {d["incident_id"] for d in dels if d["event"] == "down"}
    up_of = {d["incident_id"] for d in dels if d["event"] == "up"}
    incidents = result["incidents"]
    no_down_row = [i["id"] for i in incidents if i["id"] not in down_of]
    no_up_row = [i["id"] for i in incidents if i["ended_ms"] is not None and i["id"] not in up_of]
    never_received = [d["id"] for d in dels if d["id"] not in by_id]
    unknown = [k for k in by_id if k not in {d["id"] for d in dels}]
    kill_times = [row["killed_at"] for row in kills]
    duplicates = []
    for did, arr in by_id.items():
        if len(arr) < 2:
            continue
        arr.sort(key=lambda a: a["at"])
        first, second = arr[0]["at"], arr[1]["at"]
        cause = next((kt for kt in kill_times if first <= kt <= first + IN_FLIGHT_WINDOW_S and second > kt), None)
        duplicates.append({"delivery_id": did, "copies": len(arr), "event": arr[0]["event"],
                           "in_flight_at_kill": cause is not None,
                           "first_before_kill_s": round(cause - first, 2) if cause else None,
                           "resent_after_kill_s": round(second - cause, 2) if cause else None,
                           "first_answered": arr[0]["answered"]})
    # An incident's recovery that reached the receiver before its DOWN (an order the
    # channel must never see: the receiver is left with the incident open).
    first_at = {}
    for a in arrivals:
        key = (a["incident_id"], a["event"])
        first_at[key] = min(first_at.get(key, a["at"]), a["at"])
    reversed_ids = sorted(inc for (inc, event), at in first_at.items()
                          if event == "up" and inc is not None and at < first_at.get((inc, "down"), at))
    # Incidents that overlap on one monitor, and DOWNs opened while the target was up.
    overlaps = 0
    per_monitor = {}
    for i in sorted(incidents, key=lambda i: i["started_ms"]):
        per_monitor.setdefault(i["monitor"], []).append(i)
    for lst in per_monitor.values():
        for a, b in zip(lst, lst[1:]):
            if a["ended_ms"] is None or a["ended_ms"] > b["started_ms"]:
                overlaps += 1
    false_down = [i["id"] for i in incidents if not target.failing_near(i["monitor"], i["started_ms"] / 1000)]
    # Every outage of a target (failing from t1 to t2) should open an incident: when, and
    # which were missed. One that fell while its monitor's owner was dead (kill .. takeover)
    # can be missed by design, since nobody checked it.
    outages = []
    with target.lock:
        flips = list(target.flips)
    began = {}
    for t, n, f in flips:
        if f:
            began[n] = t
        elif n in began:
            outages.append((n, began.pop(n), t))
    starts = {}
    for i in incidents:
        starts.setdefault(i["monitor"], []).append(i["started_ms"] / 1000)
    down_delays, missed, missed_unowned, late_owned = [], [], [], []
    for n, t1, t2 in outages:
        if t2 - t1 < 2.5:  # the end-of-run drain cuts the last ones short; 1 s checks may miss those
            continue
        hit = [s for s in starts.get(n, []) if t1 - 0.5 <= s <= t2 + 1.0]
        if hit:
            delay = min(hit) - t1
            down_delays.append(delay)
            if delay > 2.0 and not any(n in k["orphans"] and t1 - (k["takeover_s"] or 25) - 0.5 <= k["killed_wall"] <= t1 + delay
                                       for k in kills):
                late_owned.append({"monitor": n, "delay_s": round(delay, 2)})
            continue
        unowned = any(n in k["orphans"] and k["killed_wall"] - 1.5 <= t2 and t1 <= k["killed_wall"] + (k["takeover_s"] or 25)
                      for k in kills)
        (missed_unowned if unowned else missed).append({"monitor": n, "failing_s": round(t2 - t1, 2)})
    alerts = {"state_changes": len(incidents) + sum(1 for i in incidents if i["ended_ms"] is not None),
              "incidents": len(incidents), "deliveries": len(dels), "arrivals": len(arrivals),
              "state_changes_without_delivery": len(no_down_row) + len(no_up_row),
              "missing": len(never_received), "missing_ids": never_received[:10],
              "duplicates": len(duplicates), "duplicates_in_flight": sum(d["in_flight_at_kill"] for d in duplicates),
              "duplicate_detail": duplicates, "unknown_delivery_ids": unknown[:10],
              "recoveries_before_their_down": len(reversed_ids), "reversed_incidents": reversed_ids[:10],
              "overlapping_incidents": overlaps, "false_down": len(false_down),
              "outages": len(outages), "outages_missed": len(missed), "outages_missed_while_unowned": len(missed_unowned),
              "missed_examples": missed[:5], "down_delay_s": quantiles(down_delays),
              "down_delays_over_2s": sorted(round(d, 2) for d in down_delays if d > 2.0),
              "down_over_2s_while_owned": late_owned,
              "changes_dropped_in_logs": len(dropped_changes), "dropped_examples": dropped_changes[:4],
              "delivery_status": {s: sum(1 for d in dels if d["status"] == s) for s in {d["status"] for d in dels}}}

    if args.dump:
        with target.lock:
            flips_dump = list(target.flips)
        pathlib.Path(args.dump).write_text(json.dumps({
            "incidents": incidents, "deliveries": dels, "flips": flips_dump, "arrivals": arrivals,
            "kills": kills, "false_down": false_down, "missed": missed, "missed_unowned": missed_unowned,
            "mono_to_wall": time.time() - time.monotonic()}))
    done = [k for k in kills if k["takeover_s"] is not None]
    summary = {
        "bench": "replica_kills", "kills": len(kills), "seed": seed, "binary_built": binary_built,
        "http_monitors": len(http_names), "heartbeat_monitors": len(tokens), "ping_rate": args.rate,
        "load_before": load_start, "load_after": load_avg(), "wall_s": round(time.monotonic() - started, 1),
        "takeover_s": quantiles([k["takeover_s"] for k in done]),
        "takeover_median_orphan_s": quantiles([k["takeover_median_s"] for k in done]),
        "dropped_s": quantiles([k["dropped_s"] for k in kills if k["dropped_s"] is not None]),
        "rejoined_s": quantiles([k["rejoined_s"] for k in kills if k["rejoined_s"] is not None]),
        "kills_over_15s_or_unchecked": sum(1 for k in kills if k["takeover_s"] is None or k["takeover_s"] > 15),
        "owned_mismatch": sum(1 for k in kills if k["owned_healthz"] != k["owned_hashed"]),
        "pings": pings, "alerts": alerts, "log_error_lines": len(odd), "log_error_examples": odd[:5],
        "per_kill": [{k2: v for k2, v in k.items() if k2 not in ("killed_at", "killed_wall", "orphans")} for k in kills],
    }

    print(f"\n{len(kills)} SIGKILLs of 1 of 3 replicas, {len(http_names)} HTTP monitors (1 s) + {len(tokens)} "
          f"heartbeat monitors, {args.rate:.0f} pings/s, load {load_start[0]} -> {load_avg()[0]}\n")
    print("| kill | replica | owned (hash) | HTTP orphans | takeover s (last / median orphan) | dropped s | rejoined s | load |")
    print("|---:|---:|---|---:|---|---:|---:|---:|")
    for k in kills:
        print(f"| {k['kill']} | {k['replica']} | {k['owned_healthz']} ({k['owned_hashed']}) | {k['orphans_http']} | "
              f"{k['takeover_s']} / {k['takeover_median_s']} | {k['dropped_s']} | {k['rejoined_s']} | "
              f"{k['load_before'][0]} |")
    print(f"\ntakeover s: {summary['takeover_s']}; dropped s: {summary['dropped_s']}")
    print(f"pings: {pings}")
    print(f"alerts: { {k: v for k, v in alerts.items() if k not in ('duplicate_detail', 'dropped_examples')} }")
    for d in alerts["dropped_examples"]:
        print(f"  dropped change: {d['line']}")
    for d in duplicates:
        print(f"  duplicate {d}")
    if odd:
        print(f"log lines with error: {len(odd)}; first: {odd[:3]}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
