"""What the replica fault tests (test_replica_faults.py) and their long form
(bench/faults/run_faults.py) share: an installation of `trainwatch serve` replicas on one
PostgreSQL, each reaching it through a TCP proxy of its own so that one replica's
connection can be cut; a target whose monitors fail on a schedule; heartbeat pingers; a
recording webhook receiver; the faults (the nemesis); and the checker, which reads the
whole history afterwards and lists every invariant it finds broken.

Times are time.monotonic() of this process throughout."""
import contextlib
import json
import os
import select
import signal
import socket
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from conftest import Server, wait_for
from receivers import HttpReceiver

# Debian's libfaketime (scripts/setup.sh), multi-threaded form: a replica's clock step.
FAKETIME_LIBRARY = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"
LEASE_TTL = 6.0  # cluster::kMemberTtl: the others take a silent replica's monitors after it


class TcpProxy:
    """Forwards a loopback port to PostgreSQL. cut() closes every connection through it and
    refuses new ones (the replica sees its connection drop, as on a network partition
    that resets), until heal()."""

    def __init__(self, upstream_port):
        self.upstream = upstream_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.pairs = []
        self.is_cut = False
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                if self.is_cut:
                    client.close()
                    continue
            try:
                server = socket.create_connection(("127.0.0.1", self.upstream), timeout=5)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.pairs.append((client, server))
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()

    def _pump(self, a, b):
        try:
            while True:
                ready, _, _ = select.select([a, b], [], [], 1.0)
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return
                    (b if s is a else a).sendall(data)
        except (OSError, ValueError):  # ValueError: cut() closed a socket under select()
            pass
        finally:
            for s in (a, b):
                with contextlib.suppress(OSError):
                    s.close()

    def cut(self):
        with self.lock:
            self.is_cut = True
            pairs, self.pairs = self.pairs, []
        for a, b in pairs:
            for s in (a, b):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    s.close()

    def heal(self):
        with self.lock:
            self.is_cut = False

    def close(self):
        self.closed = True
        self.cut()
        with contextlib.suppress(OSError):
            self.listener.close()


class Target:
    """One HTTP service per monitor path. Records every check (path, time, and the replica
    that sent it: its X-Replica header, when the config sets one) and fails the paths in
    `failing`; outages() is what the test made fail, and when."""

    def __init__(self):
        self.lock = threading.Lock()
        self.hits = {}  # path -> [times]
        self.senders = {}  # path -> [(time, X-Replica)]
        self.failing = {}  # path -> since
        self.past = []  # (path, start, end)
        target = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                name = self.path.strip("/")
                with target.lock:
                    now = time.monotonic()
                    target.hits.setdefault(name, []).append(now)
                    target.senders.setdefault(name, []).append((now, self.headers.get("X-Replica")))
                    status = 500 if name in target.failing else 200
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def fail(self, name):
        with self.lock:
            self.failing.setdefault(name, time.monotonic())

    def recover(self, name):
        with self.lock:
            since = self.failing.pop(name, None)
            if since is not None:
                self.past.append((name, since, time.monotonic()))

    def outages(self):
        with self.lock:
            return list(self.past) + [(n, s, None) for n, s in self.failing.items()]

    def times(self, name):
        with self.lock:
            return list(self.hits.get(name, []))

    def checks(self, name):
        """(time, replica) of every check of `name`, oldest first."""
        with self.lock:
            return sorted(self.senders.get(name, []))

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class Pinger:
    """Pings each heartbeat token every `every` s, to the replicas in turn, skipping one
    that does not answer within a short timeout (a stopped one); records each ping that
    was answered 200."""

    def __init__(self, tokens, replicas, every):
        self.tokens = tokens
        self.replicas = replicas
        self.every = every
        self.answered = {t: [] for t in tokens}
        self.began = time.monotonic()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        turn = 0
        while not self.stopping.wait(self.every):
            for token in self.tokens:
                for attempt in range(len(self.replicas)):
                    replica = self.replicas[(turn + attempt) % len(self.replicas)]
                    try:
                        with urllib.request.urlopen(f"{replica.base}/ping/{token}", timeout=0.5) as r:
                            if r.status == 200:
                                self.answered[token].append(time.monotonic())
                                break
                    except Exception:  # noqa: BLE001: a stopped, cut or busy replica; try the next
                        continue
                turn += 1

    def stop(self):
        self.stopping.set()
        self.thread.join(5)


def health(server, timeout=2):
    try:
        with urllib.request.urlopen(server.base + "/healthz", timeout=timeout) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        return json.loads(e.read() or b"null")
    except Exception:  # noqa: BLE001: a stopped replica
        return None


def api(server, path, timeout=5):
    with urllib.request.urlopen(server.base + path, timeout=timeout) as r:
        return json.loads(r.read())


class Installation:
    """`count` replicas of one config on `postgres`, each through its own TcpProxy, with
    `http` checked monitors (interval `interval` s) and `heartbeats` heartbeat monitors
    (period and grace `period` s), all alerting one webhook receiver."""

    def __init__(self, tmp_path, postgres, count=3, http=8, interval=2, heartbeats=2, period=3, faked_clocks=()):
        self.tmp = tmp_path
        self.postgres = postgres
        self.interval = interval
        self.period = period
        self.began = time.monotonic()
        self.target = Target()
        self.receiver = HttpReceiver()
        self.monitors = [f"svc-{i:02d}" for i in range(http)]
        self.tokens = {f"beat-{i}": f"beat-{i}-token-0123456789abcdef" for i in range(heartbeats)}
        # A timeout of a whole interval: the target is one Python process on a machine that
        # runs two histories and a build, and a check it answered 1.1 s late (a true timeout to
        # trainwatch) is not an outage this suite made.
        lines = "".join(f"""
  - name: {n}
    type: http
    url: http://127.0.0.1:{self.target.port}/{n}
    interval: {interval}s
    timeout: 2s
    headers: {{X-Replica: "${{TRAINWATCH_REPLICA}}"}}
    notify: [hook]""" for n in self.monitors)
        lines += "".join(f"""
  - {{name: {n}, type: heartbeat, period: {period}s, grace: {period}s, token: {t}, notify: [hook]}}"""
                         for n, t in self.tokens.items())
        self.config = tmp_path / "trainwatch.yaml"
        self.config.write_text(f"""
store:
  url: ${{TRAINWATCH_STORE_URL}}
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{self.receiver.base}/hook"}}
monitors:{lines}
""")
        self.proxies = []
        self.replicas = []
        self.saved_url = os.environ.get("TRAINWATCH_STORE_URL")
        self.faults = []  # (kind, start, end, replica index or None)
        self.faked_clocks = set(faked_clocks)  # replicas whose wall clock clock_stepped() may move
        for i in range(count):
            self.proxies.append(TcpProxy(postgres.port))
            self.replicas.append(self.start_replica(i, tmp_path / f"data-{i}"))
        self.pinger = None

    def start_replica(self, i, data_dir):
        """Replica `i` through its own proxy; its checks carry X-Replica: i."""
        os.environ["TRAINWATCH_STORE_URL"] = self.postgres.url().replace(
            f":{self.postgres.port}/", f":{self.proxies[i].port}/")
        os.environ["TRAINWATCH_REPLICA"] = str(i)
        faked = {}
        if i in self.faked_clocks:
            # libfaketime moves the wall clock only (as an NTP step does), by the offset in
            # a file it reads again every second.
            self.clock_file(i).write_text("+0\n")
            faked = {"LD_PRELOAD": FAKETIME_LIBRARY, "FAKETIME_TIMESTAMP_FILE": str(self.clock_file(i)),
                     "FAKETIME_CACHE_DURATION": "1", "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
        saved = {k: os.environ.get(k) for k in faked}
        os.environ.update(faked)
        try:
            return Server(self.config, data_dir, self.tmp / f"replica-{i}.log").start()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def clock_file(self, i):
        return self.tmp / f"clock-{i}"

    def settle(self):
        """Waits until every replica sees all of them and the monitors are shared out."""
        total = len(self.monitors) + len(self.tokens)

        def shared():
            views = [health(r) for r in self.replicas]
            if any(v is None for v in views):
                return None
            if any(len(v["replicas"]["members"]) != len(self.replicas) for v in views):
                return None
            return sum(v["replicas"]["owned"] for v in views) == total and views

        views = wait_for(shared, timeout=30, what="every replica to see the others and the monitors shared")
        self.pinger = Pinger(list(self.tokens.values()), self.replicas, every=1.0)
        return views

    def busiest(self):
        """The index of the replica that owns the most monitors, and its member id."""
        views = [health(r) for r in self.replicas]
        i = max(range(len(views)), key=lambda k: views[k]["replicas"]["owned"])
        return i, views[i]["replicas"]["self"]

    def owned_by(self, member):
        from rendezvous import owner_of
        members = health(self.replicas[0])["replicas"]["members"]
        return [n for n in self.monitors if owner_of(n, members) == member]

    def degraded(self, which, since, timeout=12):
        """Waits until each replica in `which` says degraded on /healthz: {index: (seconds
        after `since`, that /healthz)}, each the first time it said so."""
        said = {}

        def every_one_said_it():
            for k in which:
                if k not in said and (h := health(self.replicas[k])) and h["status"] == "degraded":
                    said[k] = (time.monotonic() - since, h)
            return len(said) == len(which)

        wait_for(every_one_said_it, timeout=timeout, what="every /healthz degraded")
        return said

    def healthy_again(self, timeout=10):
        wait_for(lambda: all((h := health(r)) and h["status"] == "ok" for r in self.replicas), timeout=timeout,
                 what="every /healthz ok again")

    def checks_between(self, start, end):
        """(checks the target saw in [start, end), about how many the intervals call for)."""
        seen = sum(sum(start <= t < end for t in self.target.times(n)) for n in self.monitors)
        return seen, len(self.monitors) * (end - start) / self.interval

    # --- the nemesis ---------------------------------------------------------------
    @contextlib.contextmanager
    def paused(self, i):
        start = time.monotonic()
        self.replicas[i].proc.send_signal(signal.SIGSTOP)
        try:
            yield
        finally:
            self.replicas[i].proc.send_signal(signal.SIGCONT)
            self.faults.append(("sigstop", start, time.monotonic(), i))

    @contextlib.contextmanager
    def cut_off(self, i):
        start = time.monotonic()
        self.proxies[i].cut()
        try:
            yield
        finally:
            self.proxies[i].heal()
            self.faults.append(("cut", start, time.monotonic(), i))

    @contextlib.contextmanager
    def database_stopped(self, mode="immediate"):
        start = time.monotonic()
        self.postgres.stop(mode)
        try:
            yield
        finally:
            self.postgres.start()
            self.faults.append(("postgres-stop", start, time.monotonic(), None))

    @contextlib.contextmanager
    def clock_stepped(self, i, seconds):
        """Replica `i`'s wall clock jumps by `seconds` while the block runs, then back (its
        monotonic clock runs on): an NTP step, or a host whose clock was wrong."""
        assert i in self.faked_clocks, "start the installation with faked_clocks=[i]"
        start = time.monotonic()
        self.clock_file(i).write_text(f"{seconds:+d}\n")
        try:
            yield
        finally:
            self.clock_file(i).write_text("+0\n")
            self.faults.append(("clock", start, time.monotonic(), i))

    @contextlib.contextmanager
    def table_locked(self, table):
        """Holds ACCESS EXCLUSIVE on `table` in a session of its own while the block runs."""
        import subprocess
        start = time.monotonic()
        holder = subprocess.Popen(
            ["runuser", "-u", "postgres", "--", "psql", "-h", str(self.postgres.dir), "-p", str(self.postgres.port),
             "-U", "postgres", "-d", "trainwatch", "-q", "-c",
             f"BEGIN; LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3600);"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: self.postgres.psql("SELECT count(*) FROM pg_locks WHERE mode = 'AccessExclusiveLock' "
                                                f"AND relation = '{table}'::regclass").strip() != "0",
                     timeout=10, what=f"{table} locked")
            yield
        finally:
            # The backend sleeps on, lock held, after its client goes: end it on the server.
            self.postgres.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                               "WHERE query LIKE '%pg_sleep(3600)%' AND pid <> pg_backend_pid()")
            holder.wait(10)
            self.faults.append(("lock", start, time.monotonic(), None))

    def close(self):
        if self.pinger:
            self.pinger.stop()
        for r in self.replicas:
            with contextlib.suppress(Exception):
                r.proc.send_signal(signal.SIGCONT)
            if r.proc.poll() is None:
                r.stop()
            else:
                r.log.close()
        for p in self.proxies:
            p.close()
        if self.saved_url is None:
            os.environ.pop("TRAINWATCH_STORE_URL", None)
        else:
            os.environ["TRAINWATCH_STORE_URL"] = self.saved_url
        os.environ.pop("TRAINWATCH_REPLICA", None)
        self.target.close()
        self.receiver.close()

    # --- the checker ---------------------------------------------------------------
    def wait_for_truth(self, timeout=15):
        """Waits until every replica shows every checked monitor as the target answers it,
        and the database too: no incident stored open for a monitor that is up (a change
        held behind a lock is committed after the replicas' own views moved on); returns
        how long that took."""
        start = time.monotonic()

        def agree():
            down = {n for n, _, end in self.target.outages() if end is None}
            try:
                stored = api(self.replicas[0], "/api/v1/incidents?limit=500")["incidents"]
            except Exception:  # noqa: BLE001: a replica still re-joining
                return False
            if any(i.get("ended") is None and i["monitor"] not in down for i in stored):
                return False
            for r in self.replicas:
                for n in self.monitors:
                    try:
                        m = api(r, f"/api/v1/monitors/{n}")
                    except Exception:  # noqa: BLE001: a replica still re-joining
                        return False
                    if m["status"] != ("down" if n in down else "up"):
                        return False
                    if n not in down and m.get("incident"):
                        return False
            return True

        wait_for(agree, timeout=timeout, interval=0.2, what="every replica to show the truth")
        took = time.monotonic() - start
        self.settle_alerts()
        return took

    def settle_alerts(self, timeout=15):
        """Waits (at most `timeout`, without failing: violations() says what is missing) until
        every incident's DOWN, and the UP of every closed one, reached the receiver: a state
        change stored the moment the database returned is sent a moment after the API shows it."""
        def sent():
            incidents = api(self.replicas[0], "/api/v1/incidents?limit=500")["incidents"]
            hooks = [h["body"] for h in self.receiver.accepted("/hook")]
            seen = {(h.get("incident_id"), h.get("event")) for h in hooks}
            return all((i["id"], "down") in seen and (i.get("ended") is None or (i["id"], "up") in seen)
                       for i in incidents)

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not sent():
            time.sleep(0.2)

    def blind_spans(self):
        """When a fault may have left some monitors with no replica checking them: from its
        start until the others have taken over (the lease, then the first checks), or only
        while it lasts for a pause too short to end the lease."""
        spans = []
        for kind, start, end, _ in self.faults:
            if kind == "sigstop" and end - start < LEASE_TTL - 1.5:
                spans.append((start, end))
            elif kind not in ("lock", "clock"):
                spans.append((start, end + LEASE_TTL + 2 * self.interval))
        return spans

    def violations(self, detect_slack=3.0):
        """Every invariant broken over the whole history, as sentences (empty: none).

        - each outage the target served has exactly one incident, and no incident starts
          outside an outage; an outage need not be seen when no replica could check its
          monitor for all but two intervals of it (blind_spans: a fault took the owner,
          and the others take over only after the lease), nor when the incident of the
          outage before it was still open as it began (no check fell in the healthy
          moment between them);
        - each incident has exactly one DOWN and one UP alert, each under one delivery_id
          however often it was sent;
        - no incident is open at the end (call wait_for_truth first);
        - a heartbeat pinged every second never alerted;
        - no monitor was checked by two replicas within half its interval (one replica
          after a pause may check late and then on its slot: that is not two at once)."""
        out = []
        incidents = api(self.replicas[0], "/api/v1/incidents?limit=500")["incidents"]
        hooks = [h["body"] for h in self.receiver.accepted("/hook")]
        outages = self.target.outages()
        # Monitors' monotonic times against the incidents' wall times: the offset now.
        offset = time.time() - time.monotonic()

        def wall(t):
            return t + offset

        from_rfc3339 = _parse_time
        blind = self.blind_spans()
        for name in self.monitors:
            mine = [i for i in incidents if i["monitor"] == name]
            spans = [(s, e if e is not None else time.monotonic()) for n, s, e in outages if n == name]
            # Each incident belongs to one outage: the latest that began before it (within
            # a second) and had not ended more than detect_slack before it.
            by_outage = {span: [] for span in spans}
            for i in mine:
                started = from_rfc3339(i["started"])
                fits = [(s, e) for s, e in spans if wall(s) - 1 <= started <= wall(e) + detect_slack]
                if fits:
                    by_outage[max(fits)].append(i)
                else:
                    out.append(f"{name}: incident {i['id']} opened outside every outage ({i.get('cause')})")
                if i.get("ended") is None:
                    out.append(f"{name}: incident {i['id']} is still open")
            def open_at(incident, t):
                ended = incident.get("ended")
                return from_rfc3339(incident["started"]) <= t and (ended is None or from_rfc3339(ended) >= t)

            for (s, e), inside in by_outage.items():
                # Two outages a moment apart are one to a monitor whose checks all fell in
                # them: the incident of the first, still open when the second began, is its.
                if not inside and any(open_at(i, wall(s)) for i in mine):
                    continue
                if len(inside) > 1 or (not inside and _visible(s, e, blind) >= 2 * self.interval):
                    out.append(f"{name}: the outage of {e - s:.1f} s has {len(inside)} incident(s): "
                               f"{[i['id'] for i in inside]}")
        for i in incidents:
            for event in ("down", "up"):
                ids = {h.get("delivery_id") for h in hooks
                       if h.get("incident_id") == i["id"] and h.get("event") == event}
                if event == "up" and i.get("ended") is None:
                    continue
                if len(ids) != 1:
                    out.append(f"{i['monitor']}: incident {i['id']} has {len(ids)} {event.upper()} delivery id(s) "
                               f"(started {i['started']}, ended {i.get('ended')}: {i.get('cause')})")
        # A heartbeat whose pings were answered 200 at least once a period, all along, is
        # never DOWN. (While the database is gone no ping is answered 200: those may alert.)
        for name, token in self.tokens.items():
            answered = [self.pinger.began] + (self.pinger.answered[token] if self.pinger else []) + [time.monotonic()]
            gap = max(b - a for a, b in zip(answered, answered[1:]))
            if gap < self.period and any(i["monitor"] == name for i in incidents):
                out.append(f"{name}: a heartbeat pinged at least every {gap:.1f} s had an incident")
        for name in self.monitors:
            checks = self.target.checks(name)
            close = [(a, b) for (a, ra), (b, rb) in zip(checks, checks[1:])
                     if b - a < self.interval / 2 and ra != rb]
            if close:
                out.append(f"{name}: checked by two replicas within half its interval {len(close)} time(s), "
                           f"{min(b - a for a, b in close) * 1000:.0f} ms apart at closest")
        return out


def _visible(start, end, blind):
    """Seconds of [start, end] outside every blind span."""
    cuts = sorted((max(start, a), min(end, b)) for a, b in blind if a < end and b > start)
    hidden, reach = 0.0, start
    for a, b in cuts:
        a = max(a, reach)
        if b > a:
            hidden += b - a
            reach = b
    return (end - start) - hidden


def _parse_time(text):
    """Seconds since the epoch of an RFC 3339 UTC time as the API writes it."""
    import datetime
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
