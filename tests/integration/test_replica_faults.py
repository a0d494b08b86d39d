"""Three `trainwatch serve` replicas on a real PostgreSQL, put through the faults that
replicas exist for (faults.py: a replica paused past its lease, its database connection
cut, its packets dropped inside a transaction, stopped inside one, the database stopped,
a table locked, a replica's wall clock stepped), while
monitors fail on a schedule and heartbeats are pinged every second. After each, the
checker reads the whole history: one incident per real outage, one DOWN and one UP per
incident each under one delivery_id, nothing open once every target is healthy, no
heartbeat alert, and no monitor checked by two replicas within half its interval.

The short form of the fault suite; bench/faults/run_faults.py runs seeded random
histories of the same faults."""
import time

import pytest

from conftest import wait_for
from faults import LEASE_TTL, Installation, health, takeover_bound

# The faults' lengths, as the acceptance asks for them (bench/faults/run_faults.py draws
# shorter and longer ones at random).
PAUSE_S = 30.0
CUT_S = 20.0
DATABASE_STOP_S = 60.0
LOCK_S = 20.0
CLOCK_STEP_S = 20.0
OUTBOX_LOCK_S = 12.0  # past kLateWrites with room: the outbox's own bound, not an acceptance length
# Past the takeover and an outage's DOWN and UP under a survivor; bench/faults draws others.
DROP_S = 18.0
PAUSE_IN_TRANSACTION_S = 18.0
SLOW_S = 20.0
SLOW_LINK_S = 0.2  # added to every round trip


@pytest.fixture
def installation(tmp_path, postgres):
    inst = Installation(tmp_path, postgres)
    try:
        inst.settle()
        yield inst
    finally:
        inst.close()


@pytest.fixture
def clocked_installation(tmp_path, postgres):
    """An installation whose replicas run under libfaketime, so a test can step one's clock."""
    inst = Installation(tmp_path, postgres, faked_clocks=range(3))
    try:
        inst.settle()
        yield inst
    finally:
        inst.close()


def report(inst, what, **figures):
    print(f"{what}: " + ", ".join(f"{k} {v}" for k, v in figures.items()))


def test_a_replica_paused_past_its_lease_acts_on_nothing_stale(installation):
    """SIGSTOP the replica that owns the most monitors for 30 s (five times its 6 s lease)
    while one of its monitors goes down, recovers and goes down again under a survivor.
    After SIGCONT every replica shows the truth within 10 s; once the monitor recovers,
    each outage has one incident with one DOWN and one UP, each under one delivery id."""
    inst = installation
    i, member = inst.busiest()
    victim = inst.owned_by(member)[0]
    survivor = inst.replicas[(i + 1) % 3]

    def survivor_says(status, timeout):
        wait_for(lambda: (m := survivor.monitor(victim)) and m["status"] == status, timeout=timeout,
                 what=f"{victim} {status} under a survivor while its owner is paused")

    with inst.paused(i):
        paused = time.monotonic()
        time.sleep(1.0)  # the pause begins with the monitor healthy: a moment of real time, not a wait
        inst.target.fail(victim)
        survivor_says("down", timeout=15)
        inst.target.recover(victim)
        survivor_says("up", timeout=10)
        inst.target.fail(victim)
        survivor_says("down", timeout=10)
        # The rest of the pause: the paused replica holds what it decided before it.
        time.sleep(max(0.0, PAUSE_S - (time.monotonic() - paused)))
    resumed = time.monotonic()
    wait_for(lambda: all((m := r.monitor(victim)) and m["status"] == "down" for r in inst.replicas), timeout=15,
             what=f"{victim} down on every replica")
    truth_after_sigcont = time.monotonic() - resumed
    inst.target.recover(victim)
    took = inst.wait_for_truth(timeout=15)
    report(inst, f"SIGSTOP {PAUSE_S:.0f} s", truth_after_sigcont_s=round(truth_after_sigcont, 1),
           truth_after_recovery_s=round(took, 1))
    assert truth_after_sigcont <= 10.0
    broken = inst.violations()
    assert not broken, "\n".join(broken)


def test_a_replica_cut_from_the_database_stops_before_the_others_take_over(installation):
    """One replica's database connection is cut for 20 s: it owns nothing within its lease
    (6 s), a survivor opens the one incident of an outage of its monitors during the cut,
    and the heartbeats pinged meanwhile never alert."""
    inst = installation
    i, member = inst.busiest()
    victim = inst.owned_by(member)[0]
    with inst.cut_off(i):
        cut = time.monotonic()
        wait_for(lambda: (h := health(inst.replicas[i])) and h["replicas"]["owned"] == 0, timeout=LEASE_TTL + 2,
                 what="the cut replica to own nothing")
        stopped = time.monotonic() - cut
        inst.target.fail(victim)
        wait_for(lambda: inst.replicas[(i + 1) % 3].monitor(victim)["status"] == "down", timeout=15,
                 what=f"{victim} down under a survivor")
        inst.target.recover(victim)
        wait_for(lambda: inst.replicas[(i + 1) % 3].monitor(victim)["status"] == "up", timeout=10,
                 what=f"{victim} up under the survivor")
        time.sleep(max(0.0, CUT_S - (time.monotonic() - cut)))  # the rest of the cut
    took = inst.wait_for_truth(timeout=20)
    report(inst, f"connection cut {CUT_S:.0f} s", owned_nothing_after_s=round(stopped, 1), truth_after_heal_s=round(took, 1))
    assert stopped <= LEASE_TTL
    broken = inst.violations()
    assert not broken, "\n".join(broken)


def checked_elsewhere(inst, names, since, replica):
    """Seconds from `since` until each of `names` was checked by a replica other than
    `replica` (the X-Replica header of its checks)."""
    took = {}
    for name in names:
        after = wait_for(lambda: [t for t, r in inst.target.checks(name) if t > since and r != str(replica)],
                         timeout=30, what=f"{name} checked by another replica")
        took[name] = after[0] - since
    return took


def silenced_replica_is_taken_over(inst, silence, length):
    """While `silence(i)` holds the busiest replica inside a transaction that locked its
    monitors' owner rows, an outage of one of its monitors begins: every one of its
    monitors is checked by another replica within the takeover bound (its claim does not
    wait behind the silent transaction: the server ends it after
    store.idle_in_transaction_timeout), the outage has its incident, its DOWN and its UP,
    and the checker finds nothing broken (no outage missed after the takeover bound)."""
    i, member = inst.busiest()
    victims = inst.owned_by(member)
    victim = victims[0]
    survivor = inst.replicas[(i + 1) % 3]
    with silence(i):
        silenced = time.monotonic()
        inst.target.fail(victim)
        took = checked_elsewhere(inst, victims, silenced, i)
        wait_for(lambda: survivor.monitor(victim)["status"] == "down", timeout=15,
                 what=f"{victim} down under a survivor")
        wait_for(lambda: [b for b in (h["body"] for h in inst.receiver.accepted("/hook"))
                          if b.get("event") == "down" and b["monitor"]["name"] == victim],
                 timeout=15, what=f"the DOWN of {victim}")
        inst.target.recover(victim)
        wait_for(lambda: survivor.monitor(victim)["status"] == "up", timeout=10, what=f"{victim} up again")
        time.sleep(max(0.0, length - (time.monotonic() - silenced)))  # the rest of the fault
    truth = inst.wait_for_truth(timeout=25)
    return took, truth


def test_a_replica_whose_packets_are_dropped_inside_a_transaction_is_taken_over(installation):
    """The busiest replica's packets to and from PostgreSQL are dropped (its proxy forwards
    nothing and closes nothing) right after its writer locked owner rows: a partition that
    nobody hears of, with a transaction open on the server."""
    inst = installation
    took, truth = silenced_replica_is_taken_over(inst, inst.packets_dropped, DROP_S)
    report(inst, f"packets dropped {DROP_S:.0f} s inside a transaction",
           checked_elsewhere_after_s=round(max(took.values()), 1), truth_after_s=round(truth, 1))
    assert max(took.values()) <= takeover_bound(inst.interval), took
    broken = inst.violations()
    assert not broken, "\n".join(broken)


def test_a_replica_stopped_inside_a_transaction_holds_up_no_takeover(installation):
    """SIGSTOP of the busiest replica while its writer's transaction holds owner rows (held
    there by its proxy, so the stop lands inside it every time)."""
    inst = installation
    took, truth = silenced_replica_is_taken_over(inst, inst.paused_in_a_transaction, PAUSE_IN_TRANSACTION_S)
    report(inst, f"SIGSTOP {PAUSE_IN_TRANSACTION_S:.0f} s inside a transaction",
           checked_elsewhere_after_s=round(max(took.values()), 1), truth_after_s=round(truth, 1))
    assert max(took.values()) <= takeover_bound(inst.interval), took
    broken = inst.violations()
    assert not broken, "\n".join(broken)


def test_a_replica_on_a_slow_link_does_not_make_the_membership_flap(installation):
    """200 ms added to the round trips of the busiest replica's database connection for
    20 s. Its beat is one round trip, so it keeps its place (or, should a beat crawl past
    2 s, stands down until its beats are quick for 10 s: membership.h, Fitness); either
    way the members the others see change at most twice, every monitor is checked at
    least every two intervals but for one takeover, and the checker finds nothing broken."""
    inst = installation
    i, member = inst.busiest()
    others = [r for k, r in enumerate(inst.replicas) if k != i]
    seen = []
    with inst.slow_link(i, SLOW_LINK_S / 2):
        slowed = time.monotonic()
        while time.monotonic() - slowed < SLOW_S:
            seen.append(tuple(sorted(health(others[0])["replicas"]["members"])))
            time.sleep(0.5)  # a sample of what a survivor sees, twice a second
        ended = time.monotonic()
    changes = sum(1 for a, b in zip(seen, seen[1:]) if a != b)
    gaps = {n: max((b - a for a, b in zip(t, t[1:])), default=0.0)
            for n in inst.monitors if (t := [x for x in inst.target.times(n) if slowed <= x <= ended])}
    inst.wait_for_truth(timeout=20)
    report(inst, f"{SLOW_LINK_S * 1000:.0f} ms added for {SLOW_S:.0f} s", membership_changes=changes,
           longest_unchecked_s=round(max(gaps.values()), 1))
    assert changes <= 2, seen
    assert max(gaps.values()) <= takeover_bound(inst.interval), gaps
    broken = inst.violations()
    assert not broken, "\n".join(broken)


def test_after_the_database_stops_and_starts_no_monitor_is_checked_twice(installation):
    """PostgreSQL stopped (immediate) for 60 s while a monitor fails, then started: the
    replicas stop on their own, ownership re-forms from the members that beat after it,
    no monitor is checked by two replicas, and the outage has one DOWN and one UP."""
    inst = installation
    victim = inst.monitors[0]
    with inst.database_stopped():
        time.sleep(2.0)  # the outage begins while the database is gone: a moment, not a wait
        inst.target.fail(victim)
        time.sleep(DATABASE_STOP_S - 2.0)  # the rest of the stop
    back = time.monotonic()
    wait_for(lambda: all((m := r.monitor(victim)) and m["status"] == "down" for r in inst.replicas), timeout=30,
             what=f"{victim} down on every replica after the database came back")
    down_after = time.monotonic() - back
    inst.target.recover(victim)
    took = inst.wait_for_truth(timeout=20)
    report(inst, f"PostgreSQL stopped {DATABASE_STOP_S:.0f} s", down_seen_after_restart_s=round(down_after, 1),
           truth_after_recovery_s=round(took, 1))
    broken = inst.violations()
    assert not broken, "\n".join(broken)


def test_a_locked_table_keeps_the_checks_going_and_healthz_says_degraded(installation):
    """monitor_state locked (ACCESS EXCLUSIVE) for 20 s: every write waits, but the checks
    go on at their interval on every replica; /healthz says degraded, with the reason,
    within WriteHealth::kLateWrites (5 s) and a beat, and ok again after the lock."""
    inst = installation
    # Only a replica with checked monitors has results to write; one that owns none (the
    # hash may give it only heartbeats, whose successes write no state) is never late.
    writers = [k for k, r in enumerate(inst.replicas) if inst.owned_by(health(r)["replicas"]["self"])]
    with inst.table_locked("monitor_state"):
        locked = time.monotonic()
        said = inst.degraded(writers, since=locked)
        said_after = max(t for t, _ in said.values())
        degraded = next(iter(said.values()))[1]
        time.sleep(max(0.0, LOCK_S - (time.monotonic() - locked)))  # the rest of the lock
        unlocked = time.monotonic()
    checks, expected = inst.checks_between(locked, unlocked)
    inst.healthy_again()
    report(inst, f"monitor_state locked {LOCK_S:.0f} s", degraded_after_s=round(said_after, 1),
           checks=f"{checks} of about {expected:.0f}")
    assert "late" in degraded["reason"], degraded
    # kLateWrites (5 s), a beat (1 s), and the polls' own latency: three replicas' /healthz
    # read in turn, which took over a second on a machine whose two cores were compiling.
    assert said_after <= 8.0
    assert checks >= 0.8 * expected, "the checks waited on the store"
    inst.wait_for_truth(timeout=20)
    broken = inst.violations()
    assert not broken, "\n".join(broken)


def test_an_outbox_no_replica_can_claim_makes_healthz_say_degraded(installation):
    """deliveries locked (ACCESS EXCLUSIVE) for 12 s while every target is healthy: no
    write waits (nothing changes state), but every claim of an alert fails at the read's
    lock timeout. Each /healthz says degraded, naming the outbox, once its claims have
    failed for WriteHealth::kLateWrites (5 s), and ok again after; checks go on meanwhile,
    and an outage after the lock is alerted as usual (one DOWN, one UP)."""
    inst = installation
    with inst.table_locked("deliveries"):
        locked = time.monotonic()
        said = inst.degraded(range(len(inst.replicas)), since=locked)
        said_after = max(t for t, _ in said.values())
        time.sleep(max(0.0, OUTBOX_LOCK_S - (time.monotonic() - locked)))  # the rest of the lock
        unlocked = time.monotonic()
    checks, expected = inst.checks_between(locked, unlocked)
    inst.healthy_again()
    report(inst, f"deliveries locked {OUTBOX_LOCK_S:.0f} s", degraded_after_s=round(said_after, 1),
           checks=f"{checks} of about {expected:.0f}")
    for _, h in said.values():
        assert h["reason"].startswith("the outbox cannot be read, so no alert leaves"), h
    # kLateWrites (5 s), the next beat's claim (1 s) and its lock timeout (0.5 s), and the polls' latency.
    assert said_after <= 9.0
    assert checks >= 0.8 * expected, "the checks waited on the outbox"

    victim = inst.monitors[0]
    inst.target.fail(victim)
    wait_for(lambda: [b for b in (h["body"] for h in inst.receiver.accepted("/hook"))
                      if b.get("event") == "down" and b["monitor"]["name"] == victim],
             timeout=15, what=f"the DOWN of {victim} after the lock")
    inst.target.recover(victim)
    inst.wait_for_truth(timeout=20)
    broken = inst.violations()
    assert not broken, "\n".join(broken)


def test_a_replica_whose_wall_clock_jumps_keeps_the_databases_time(clocked_installation):
    """The busiest replica's wall clock steps an hour back for 20 s (an NTP step; its
    monotonic clock runs on). Each beat reads the database's clock and the replica keeps
    that time, so it goes on owning its monitors and stamps nothing wrong: the outage of
    one of its monitors meanwhile has one incident at the right times (the checker places
    every incident in its outage by wall time), its heartbeats' pings are read in order,
    and its /healthz says how far off the host's clock is."""
    inst = clocked_installation
    i, member = inst.busiest()
    victim = inst.owned_by(member)[0]
    stepped_replica = inst.replicas[i]

    def stepped_replica_says(status, timeout):
        wait_for(lambda: (m := stepped_replica.monitor(victim)) and m["status"] == status, timeout=timeout,
                 what=f"{victim} {status} under the stepped replica")

    with inst.clock_stepped(i, -3600):
        stepped = time.monotonic()
        # libfaketime reads the step within 1 s, the next beat compares within 1 s more.
        said = wait_for(lambda: (h := health(stepped_replica)) and h["replicas"]["wall_clock_ahead_ms"] < -3_590_000
                        and h, timeout=4, what="the stepped replica to see its host's clock off")
        inst.target.fail(victim)
        stepped_replica_says("down", timeout=15)
        inst.target.recover(victim)
        stepped_replica_says("up", timeout=10)
        during = health(stepped_replica)
        time.sleep(max(0.0, CLOCK_STEP_S - (time.monotonic() - stepped)))  # the rest of the step
    took = inst.wait_for_truth(timeout=20)
    report(inst, f"clock stepped back an hour for {CLOCK_STEP_S:.0f} s", truth_after_s=round(took, 1))
    assert said["status"] == "ok" and said["replicas"]["owned"] > 0, said
    assert during["status"] == "ok" and victim in inst.owned_by(member), "it kept its monitors all along"
    wait_for(lambda: abs(health(stepped_replica)["replicas"]["wall_clock_ahead_ms"]) < 2_000, timeout=4,
             what="the stepped replica to see its host's clock right again")
    broken = inst.violations()
    assert not broken, "\n".join(broken)
