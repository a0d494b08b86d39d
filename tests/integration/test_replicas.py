"""Three `trainwatch serve` replicas on one real PostgreSQL, started by the test: each
monitor is checked by one replica, and when the replica that checks a DOWN monitor is
killed with SIGKILL, the others take its monitors over within 15 s, raise no false DOWN,
and the new owner closes the incident the dead one opened, with one alert each way.

Who owns a monitor is computed as the replicas compute it (rendezvous.py, after
cluster/membership.h), and checked against what each replica says it owns."""
import contextlib
import json
import signal
import time

import pytest

from conftest import Server, api_call, wait_for
from faults import Target
from receivers import HoldingReceiver, HttpReceiver
from rendezvous import owner_of
from replica_probes import NodeAgent, all_see, health, job


def iso(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


MONITORS = [f"svc-{i:02d}" for i in range(12)]
ADMIN = "replica-admin-token-0123456789"


@pytest.fixture
def target():
    t = Target()
    yield t
    t.close()


def test_replicas_share_monitors_and_take_over_from_a_killed_one(tmp_path, postgres, target, monkeypatch):
    receiver = HttpReceiver()
    monkeypatch.setenv("TRAINWATCH_STORE_URL", postgres.url())
    monitors = "".join(f"""
  - name: {name}
    type: http
    url: http://127.0.0.1:{target.port}/{name}
    interval: 1s
    timeout: 2s
    notify: [hook]
""" for name in MONITORS)
    config = tmp_path / "trainwatch.yaml"
    config.write_text(f"""
store:
  url: ${{TRAINWATCH_STORE_URL}}
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver.base}/hook"}}
monitors:{monitors}""")
    replicas = []
    try:
        for i in range(3):
            replicas.append(Server(config, tmp_path / f"data-{i}", tmp_path / f"replica-{i}.log").start())
        views = wait_for(lambda: all_see(replicas, 3), timeout=20, what="three replicas that see each other")
        members = views[0]["replicas"]["members"]
        by_id = {v["replicas"]["self"]: r for v, r in zip(views, replicas)}
        assert sorted(by_id) == sorted(members)
        # Each owns what the hash gives it, once every replica has synced after the last join.
        expected = {m: sum(owner_of(n, members) == m for n in MONITORS) for m in members}
        wait_for(lambda: all(health(by_id[m])["replicas"]["owned"] == expected[m] for m in members),
                 timeout=10, what=f"each replica to own {expected}")

        # Checked once per interval, not once per replica: 5 s at 1 s is about 5 checks.
        start = time.monotonic()
        time.sleep(5.0)  # a window of real checks to count, not a wait for a state
        for name in MONITORS:
            count = sum(start <= t < start + 5.0 for t in target.times(name))
            assert 3 <= count <= 7, f"{name} was checked {count} times in 5 s at a 1 s interval"

        # svc-00 goes DOWN under its owner; every replica shows the incident.
        flaky = MONITORS[0]
        target.fail(flaky)
        down = wait_for(lambda: (m := replicas[0].monitor(flaky)) and m["status"] == "down" and m,
                        timeout=15, what=f"{flaky} down")
        incident_id = down["incident"]["id"]
        wait_for(lambda: len(receiver.accepted("/hook")) == 1, timeout=10, what="the DOWN alert")

        # Kill its owner; the service is healthy again at once, so only a takeover recovers it.
        owner_id = owner_of(flaky, members)
        victim = by_id[owner_id]
        survivors = [r for r in replicas if r is not victim]
        orphans = [n for n in MONITORS if owner_of(n, members) == owner_id]
        victim.proc.send_signal(signal.SIGKILL)
        victim.proc.wait(10)
        killed = time.monotonic()
        target.recover(flaky)

        up = wait_for(lambda: (m := survivors[0].monitor(flaky)) and m["status"] == "up" and m,
                      timeout=20, what=f"{flaky} up again under a new owner")
        assert up.get("incident") is None, up
        took = {}
        for name in orphans:
            after = wait_for(lambda: [t for t in target.times(name) if t > killed], timeout=20,
                             what=f"{name} checked after the kill")
            took[name] = after[0] - killed
        print(f"takeover after SIGKILL: {max(took.values()):.1f} s for {len(orphans)} monitor(s) "
              f"(ttl 6 s, beat 1 s)")
        assert max(took.values()) <= 15.0, took

        # The survivors share all twelve, and check each once per interval again.
        rest = [m for m in members if m != owner_id]
        wait_for(lambda: all_see(survivors, 2), timeout=10, what="the survivors to drop the dead member")
        wait_for(lambda: sum(health(r)["replicas"]["owned"] for r in survivors) == len(MONITORS), timeout=10,
                 what="the survivors to own every monitor")
        for m in rest:
            assert health(by_id[m])["replicas"]["owned"] == sum(owner_of(n, rest) == m for n in MONITORS)

        # One incident in all, closed by the new owner; one alert each way.
        incidents = survivors[0].get("/api/v1/incidents")[1]["incidents"]
        assert [(i["id"], i["monitor"]) for i in incidents] == [(incident_id, flaky)], incidents
        assert incidents[0]["ended"] is not None
        hooks = wait_for(lambda: (h := receiver.accepted("/hook")) and len(h) >= 2 and h, timeout=10,
                         what="the UP alert")
        time.sleep(1.0)  # a duplicate would come within the dispatcher's next wake
        assert [h["body"]["event"] for h in receiver.accepted("/hook")] == ["down", "up"], hooks
        assert hooks[1]["body"]["incident_id"] == incident_id
        for name in MONITORS:
            assert survivors[1].monitor(name)["status"] == "up", name
    finally:
        for r in replicas:
            if r.proc.poll() is None:
                r.stop()
            else:
                r.log.close()
        receiver.close()
    for i in range(3):
        log = (tmp_path / f"replica-{i}.log").read_text()
        assert "pg-secret" not in log
    print(json.dumps({"orphans": len(orphans), "takeover_s": round(max(took.values()), 2)}))


def checks_in(target, name, seconds):
    start = time.monotonic()
    time.sleep(seconds)  # a window of real checks to count, not a wait for a state
    return sum(start <= t < start + seconds for t in target.times(name))


def test_api_changes_and_pauses_reach_every_replica(tmp_path, postgres, target, monkeypatch):
    """An API monitor made on one replica is run by its owner, wherever that is; a pause
    asked of the replica that does not own the monitor stops its checks; a delete on one
    removes it from all."""
    monkeypatch.setenv("TRAINWATCH_STORE_URL", postgres.url())
    config = tmp_path / "trainwatch.yaml"
    config.write_text(f"""
store:
  url: ${{TRAINWATCH_STORE_URL}}
auth:
  admin_tokens: ["{ADMIN}"]
monitors:
  - name: from-yaml
    type: http
    url: http://127.0.0.1:{target.port}/from-yaml
    interval: 1s
""")
    a = Server(config, tmp_path / "data-a", tmp_path / "a.log").start()
    b = Server(config, tmp_path / "data-b", tmp_path / "b.log").start()
    try:
        views = wait_for(lambda: all_see([a, b], 2), timeout=20, what="two replicas that see each other")
        members = views[0]["replicas"]["members"]
        by_id = {v["replicas"]["self"]: r for v, r in zip(views, [a, b])}
        spec = {"name": "from-api", "type": "http", "url": f"http://127.0.0.1:{target.port}/from-api",
                "interval": "1s"}
        assert api_call(a, "POST", "/api/v1/monitors", spec, ADMIN)[0] == 201
        wait_for(lambda: b.get("/api/v1/monitors/from-api")[0] == 200, timeout=5, what="the API monitor on b")
        b.wait_status("from-api", "up")
        count = checks_in(target, "from-api", 4.0)
        assert 2 <= count <= 6, f"from-api was checked {count} times in 4 s at a 1 s interval"

        # Paused through the replica that does not own it: its owner stops checking.
        owner = by_id[owner_of("from-yaml", members)]
        other = b if owner is a else a
        assert api_call(other, "POST", "/api/v1/monitors/from-yaml/pause", None, ADMIN)[0] == 200
        owner.wait_status("from-yaml", "paused", timeout=5)
        time.sleep(1.5)  # a check already started may still land
        assert checks_in(target, "from-yaml", 3.0) == 0
        other.wait_status("from-yaml", "paused")
        assert api_call(other, "POST", "/api/v1/monitors/from-yaml/resume", None, ADMIN)[0] == 200
        owner.wait_status("from-yaml", "up", timeout=10)

        assert api_call(b, "DELETE", "/api/v1/monitors/from-api", None, ADMIN)[0] == 204
        wait_for(lambda: a.get("/api/v1/monitors/from-api")[0] == 404, timeout=5, what="the monitor gone from a")

        # A maintenance window made on one replica holds on the other; deleted there, it is gone from both.
        now = time.time()
        window = {"monitors": ["from-yaml"], "start": iso(now - 60), "end": iso(now + 3600)}
        status, made, _ = api_call(a, "POST", "/api/v1/maintenance", window, ADMIN)
        assert status == 201, made
        active_on_b = lambda: [w for w in b.get("/api/v1/maintenance")[1]["windows"] if w["id"] == made["id"]]
        listed = wait_for(active_on_b, timeout=5, what="the window on b")
        assert listed[0]["active"] and listed[0]["monitors"] == ["from-yaml"], listed
        assert api_call(b, "DELETE", f"/api/v1/maintenance/{made['id']}", None, ADMIN)[0] == 204
        wait_for(lambda: a.get("/api/v1/maintenance")[1]["windows"] == [], timeout=5, what="the window gone from a")
    finally:
        a.stop()
        b.stop()


def test_replicas_started_from_different_files_say_so(tmp_path, postgres, target, monkeypatch):
    """Two installations pointed at one database by mistake: each logs the other, by name."""
    monkeypatch.setenv("TRAINWATCH_STORE_URL", postgres.url())
    files = []
    for name, monitors in (("one", ["shared"]), ("two", ["shared", "extra"])):
        path = tmp_path / f"{name}.yaml"
        path.write_text("store:\n  url: ${TRAINWATCH_STORE_URL}\nmonitors:\n" + "".join(
            f"  - {{name: {m}, type: http, url: 'http://127.0.0.1:{target.port}/{m}', interval: 1s}}\n"
            for m in monitors))
        files.append(path)
    servers = [Server(path, tmp_path / f"data-{i}", tmp_path / f"{i}.log").start() for i, path in enumerate(files)]
    try:
        for i in range(2):
            wait_for(lambda: "run(s) other monitors than this one" in (tmp_path / f"{i}.log").read_text(),
                     timeout=10, what=f"replica {i} to log the other config")
        line = next(l for l in (tmp_path / "0.log").read_text().splitlines() if "other monitors" in l)
        assert f":{servers[1].proc.pid} (" in line, line  # it names the other replica's process
    finally:
        for s in servers:
            s.stop()


def test_an_alert_in_flight_when_its_replica_dies_is_sent_by_another(tmp_path, postgres, target, monkeypatch):
    """The owner of a DOWN monitor dies while its alert is in flight: once it is dropped
    from the members, a survivor claims the pending row and sends it, with the same
    delivery id, so the receiver can drop the duplicate if the first ever lands."""
    receiver = HoldingReceiver(hold=1)
    monkeypatch.setenv("TRAINWATCH_STORE_URL", postgres.url())
    config = tmp_path / "trainwatch.yaml"
    config.write_text(f"""
store:
  url: ${{TRAINWATCH_STORE_URL}}
server:
  allow_local_channel_targets: true   # the receivers listen on loopback
notifications:
  - {{name: hook, type: webhook, url: "{receiver.base}/hook", timeout: 60s}}
monitors:
  - name: svc
    type: http
    url: http://127.0.0.1:{target.port}/svc
    interval: 1s
    notify: [hook]
""")
    replicas = [Server(config, tmp_path / f"data-{i}", tmp_path / f"{i}.log").start() for i in range(2)]
    try:
        views = wait_for(lambda: all_see(replicas, 2), timeout=20, what="two replicas that see each other")
        members = views[0]["replicas"]["members"]
        by_id = {v["replicas"]["self"]: r for v, r in zip(views, replicas)}
        wait_for(lambda: health(by_id[owner_of("svc", members)])["replicas"]["owned"] == 1, timeout=10,
                 what="the owner of svc to own it")
        victim = by_id[owner_of("svc", members)]
        survivor = next(r for r in replicas if r is not victim)
        target.fail("svc")
        wait_for(lambda: len(receiver.arrivals()) == 1, timeout=15, what="the DOWN alert in flight")
        victim.proc.send_signal(signal.SIGKILL)
        victim.proc.wait(10)
        killed = time.monotonic()

        arrivals = wait_for(lambda: (b := receiver.arrivals()) and len(b) >= 2 and b, timeout=20,
                            what="the alert sent again by the survivor")
        [first, again] = [a["body"] for a in arrivals[:2]]
        again_at = arrivals[1]["at"]
        print(f"alert in flight at SIGKILL: sent again {again_at - killed:.1f} s later")
        assert again_at - killed <= 15.0
        assert first["event"] == again["event"] == "down"
        assert first["delivery_id"] == again["delivery_id"]
        # The row is the survivor's now, and delivered; nothing else was sent.
        seen = []  # the survivor's deliveries at the last look, for the message if it never settles

        def delivered():
            seen[:] = [{k: d.get(k) for k in ("id", "event", "status", "attempts", "last_error", "http_status")}
                       for d in survivor.get("/api/v1/deliveries")[1]["deliveries"]]
            return [d["status"] for d in seen] == ["delivered"]

        try:
            wait_for(delivered, timeout=10, what="the delivery stored as delivered")
        except AssertionError as e:
            raise AssertionError(f"{e}; the survivor's deliveries: {seen}") from None
        time.sleep(1.5)  # a third copy would come at the survivor's next beats
        assert len(receiver.arrivals()) == 2
        assert len(survivor.get("/api/v1/incidents")[1]["incidents"]) == 1
    finally:
        for r in replicas:
            if r.proc.poll() is None:
                r.stop()
            else:
                r.log.close()
        receiver.close()


@contextlib.contextmanager
def owner_and_other(tmp_path, postgres, monkeypatch, monitor_line, name):
    """Two replicas on `postgres` with one heartbeat monitor: (its owner, the other)."""
    monkeypatch.setenv("TRAINWATCH_STORE_URL", postgres.url())
    config = tmp_path / "trainwatch.yaml"
    config.write_text("store:\n  url: ${TRAINWATCH_STORE_URL}\nmonitors:\n  - " + monitor_line + "\n")
    a = Server(config, tmp_path / "data-a", tmp_path / "a.log").start()
    b = Server(config, tmp_path / "data-b", tmp_path / "b.log").start()
    try:
        views = wait_for(lambda: all_see([a, b], 2), timeout=20, what="two replicas that see each other")
        by_id = {v["replicas"]["self"]: r for v, r in zip(views, [a, b])}
        owner = by_id[owner_of(name, views[0]["replicas"]["members"])]
        yield owner, (b if owner is a else a)
    finally:
        a.stop()
        b.stop()


def test_a_failure_pinged_to_a_replica_that_does_not_own_the_monitor_is_acted_on_at_once(tmp_path, postgres,
                                                                                          monkeypatch):
    """A daily job's /fail reaches the replica that does not own its monitor: the owner is
    told when the ping commits and marks it DOWN in seconds, not at tomorrow's deadline;
    the next success, pinged there too, brings it back UP as promptly."""
    token = "nightly-backup-token-0123456789"
    line = f"{{name: nightly-backup, type: heartbeat, period: 1d, grace: 1h, token: {token}}}"
    with owner_and_other(tmp_path, postgres, monkeypatch, line, "nightly-backup") as (owner, other):
        assert other.get(f"/ping/{token}")[0] == 200
        owner.wait_status("nightly-backup", "up", timeout=5)

        assert other.get(f"/ping/{token}/fail")[0] == 200
        sent = time.monotonic()
        down = owner.wait_status("nightly-backup", "down", timeout=5)
        assert time.monotonic() - sent < 3, "the owner took longer than a round trip and a beat"
        assert "fail" in down["last_error"], down
        other.wait_status("nightly-backup", "down", timeout=5)  # and every replica shows it

        assert other.get(f"/ping/{token}/0")[0] == 200
        owner.wait_status("nightly-backup", "up", timeout=5)


def test_a_run_started_through_a_replica_that_does_not_own_it_is_held_to_its_grace(tmp_path, postgres,
                                                                                    monkeypatch):
    """/start reaches the replica that does not own the monitor: the owner times the run
    from it, and a run that outlasts its grace is DOWN then, not at the period's end."""
    token = "hourly-export-token-0123456789"
    line = f"{{name: hourly-export, type: heartbeat, period: 1h, grace: 3s, token: {token}}}"
    with owner_and_other(tmp_path, postgres, monkeypatch, line, "hourly-export") as (owner, other):
        assert other.get(f"/ping/{token}")[0] == 200
        owner.wait_status("hourly-export", "up", timeout=5)

        assert other.get(f"/ping/{token}/start")[0] == 200
        started = time.monotonic()
        wait_for(lambda: owner.monitor("hourly-export")["heartbeat"]["started"], timeout=3,
                 what="the owner told of the start")
        down = owner.wait_status("hourly-export", "down", timeout=10)
        assert 3 <= time.monotonic() - started < 8, "not held to the 3 s grace of its start"
        assert down["incident"], down


def test_a_job_whose_nodes_report_to_different_replicas_is_analysed_as_one(tmp_path, postgres, monkeypatch):
    """node-a's agent reports to one replica, node-b's to the other: both replicas show the
    whole job, a rank that dies on either node is named by whichever replica checks the
    job, and the replica left after the checker is SIGKILLed still holds the whole job."""
    token = "job-report-token-0123456789"
    monkeypatch.setenv("TRAINWATCH_STORE_URL", postgres.url())
    monkeypatch.setenv("TRAINWATCH_TOKEN", token)
    config = tmp_path / "trainwatch.yaml"
    config.write_text("store:\n  url: ${TRAINWATCH_STORE_URL}\njobs:\n  token: ${TRAINWATCH_TOKEN}\n"
                      "monitors:\n  - {name: llama, type: job, world_size: 2}\n")
    a = Server(config, tmp_path / "data-a", tmp_path / "a.log").start()
    b = Server(config, tmp_path / "data-b", tmp_path / "b.log").start()
    agents = [NodeAgent("node-a", 0, token), NodeAgent("node-b", 1, token)]
    try:
        views = wait_for(lambda: all_see([a, b], 2), timeout=20, what="two replicas that see each other")
        by_id = {v["replicas"]["self"]: r for v, r in zip(views, [a, b])}
        checker = by_id[owner_of("llama", views[0]["replicas"]["members"])]
        other = b if checker is a else a
        # node-b reports to the replica that does not check the job.
        agents[0].server, agents[1].server = checker, other
        for agent in agents:
            agent.thread.start()

        for replica in (a, b):
            whole = wait_for(lambda r=replica: (j := job(r)) and len(j["nodes"]) == 2 and j["phase"] == "training" and j,
                             timeout=10, what="both nodes on each replica")
            assert sorted(n["name"] for n in whole["nodes"]) == ["node-a", "node-b"]
            assert all(n["last_seen_age_ms"] < 3000 for n in whole["nodes"]), whole["nodes"]
        checker.wait_status("llama", "up", timeout=10)

        agents[1].alive = False  # rank 1 dies on node-b, told to `other`
        died = time.monotonic()
        down = checker.wait_status("llama", "down", timeout=10)
        assert time.monotonic() - died < 5
        assert "rank 1" in down["last_error"] and "node-b" in down["last_error"], down
        other.wait_status("llama", "down", timeout=5)
        assert "rank 1" in job(other)["cause"], "the other replica's job page names it too"

        checker.stop(signal.SIGKILL)
        me = health(other)["replicas"]["self"]
        wait_for(lambda: health(other)["replicas"]["members"] == [me], timeout=15,
                 what="the killed checker to leave the members (6 s ttl)")
        # `other` owns the job now: wait for its own first check of it, which is where a
        # takeover that started blind would recover the job falsely.
        alone_since = other.monitor("llama")["last_check"]
        wait_for(lambda: other.monitor("llama")["last_check"] != alone_since, timeout=10,
                 what="the survivor's first check of the job")
        after = job(other)
        assert sorted(n["name"] for n in after["nodes"]) == ["node-a", "node-b"], "it did not start blind"
        assert other.monitor("llama")["status"] == "down", "no false recovery on takeover"
        assert "rank 1" in other.monitor("llama")["last_error"]
        assert all(s == 200 for s in agents[1].statuses), agents[1].statuses
    finally:
        for agent in agents:
            agent.stopped.set()
        a.stop()
        b.stop()
