"""Three `trainwatch serve` replicas on a real PostgreSQL, put through the faults that
replicas exist for (faults.py: a replica paused past its lease, its database connection
cut, the database stopped, a table locked), while monitors fail on a schedule and
heartbeats are pinged every second. After each, the checker reads the whole history:
one incident per real outage, one DOWN and one UP per incident each under one
delivery_id, nothing open once every target is healthy, no heartbeat alert, and no
monitor checked by two replicas within half its interval.

The short form of the fault suite; bench/faults/run_faults.py runs seeded random
histories of the same faults."""
import time

import pytest

from conftest import wait_for
from faults import LEASE_TTL, Installation, health


@pytest.fixture
def installation(tmp_path, postgres):
    inst = Installation(tmp_path, postgres)
    try:
        inst.settle()
        yield inst
    finally:
        inst.close()


def report(inst, what, **figures):
    print(f"{what}: " + ", ".join(f"{k} {v}" for k, v in figures.items()))


def test_a_replica_paused_past_its_lease_acts_on_nothing_stale(installation):
    """SIGSTOP the replica that owns the most monitors for 12 s (twice its 6 s lease)
    while one of its monitors goes down and recovers; after SIGCONT it goes down again.
    Each outage has one incident with one DOWN and one UP, and every replica shows the
    truth within 10 s of the SIGCONT."""
    inst = installation
    i, member = inst.busiest()
    victim = inst.owned_by(member)[0]
    with inst.paused(i):
        paused = time.monotonic()
        time.sleep(1.0)  # the pause begins with the monitor healthy: a moment of real time, not a wait
        inst.target.fail(victim)
        wait_for(lambda: (m := inst.replicas[(i + 1) % 3].monitor(victim)) and m["status"] == "down",
                 timeout=15, what=f"{victim} down under a survivor while its owner is paused")
        inst.target.recover(victim)
        wait_for(lambda: inst.replicas[(i + 1) % 3].monitor(victim)["status"] == "up", timeout=10,
                 what=f"{victim} up again under the survivor")
        # The rest of the pause: the target is healthy and the paused replica holds what it
        # decided before the pause.
        time.sleep(max(0.0, 12.0 - (time.monotonic() - paused)))
    resumed = time.monotonic()
    inst.target.fail(victim)
    wait_for(lambda: all((m := r.monitor(victim)) and m["status"] == "down" for r in inst.replicas), timeout=15,
             what=f"{victim} down again on every replica")
    time.sleep(2 * inst.interval)  # an outage of a few checks, as a real one would be
    inst.target.recover(victim)
    took = inst.wait_for_truth(timeout=15)
    report(inst, "SIGSTOP 12 s", truth_after_recovery_s=round(took, 1),
           since_sigcont_s=round(time.monotonic() - resumed, 1))
    assert inst.violations() == []


def test_a_replica_cut_from_the_database_stops_before_the_others_take_over(installation):
    """One replica's database connection is cut for 12 s: it owns nothing within its lease
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
        time.sleep(max(0.0, 12.0 - (time.monotonic() - cut)))  # the rest of the 12 s cut
    took = inst.wait_for_truth(timeout=20)
    report(inst, "connection cut 12 s", owned_nothing_after_s=round(stopped, 1), truth_after_heal_s=round(took, 1))
    assert stopped <= LEASE_TTL
    assert inst.violations() == []


def test_after_the_database_stops_and_starts_no_monitor_is_checked_twice(installation):
    """PostgreSQL stopped (immediate) for 15 s while a monitor fails, then started: the
    replicas stop on their own, ownership re-forms from the members that beat after it,
    no monitor is checked by two replicas, and the outage has one DOWN and one UP."""
    inst = installation
    victim = inst.monitors[0]
    with inst.database_stopped():
        time.sleep(2.0)  # the outage begins while the database is gone: a moment, not a wait
        inst.target.fail(victim)
        time.sleep(13.0)  # the rest of the 15 s stop
    back = time.monotonic()
    wait_for(lambda: all((m := r.monitor(victim)) and m["status"] == "down" for r in inst.replicas), timeout=30,
             what=f"{victim} down on every replica after the database came back")
    down_after = time.monotonic() - back
    inst.target.recover(victim)
    took = inst.wait_for_truth(timeout=20)
    report(inst, "PostgreSQL stopped 15 s", down_seen_after_restart_s=round(down_after, 1),
           truth_after_recovery_s=round(took, 1))
    assert inst.violations() == []


def test_a_locked_table_keeps_the_checks_going_and_healthz_says_degraded(installation):
    """monitor_state locked (ACCESS EXCLUSIVE) for 15 s: every write waits, but the checks
    go on at their interval on every replica; /healthz says degraded, with the reason,
    within WriteHealth::kLateWrites (5 s) and a beat, and ok again after the lock."""
    inst = installation
    # Only a replica with checked monitors has results to write; one that owns none (the
    # hash may give it only heartbeats, whose successes write no state) is never late.
    writers = [k for k, r in enumerate(inst.replicas) if inst.owned_by(health(r)["replicas"]["self"])]
    with inst.table_locked("monitor_state"):
        locked = time.monotonic()
        said = {}  # replica -> (seconds after the lock, its /healthz), each the first time it said degraded

        def every_one_said_it():
            for k in writers:
                if k not in said and (h := health(inst.replicas[k])) and h["status"] == "degraded":
                    said[k] = (time.monotonic() - locked, h)
            return len(said) == len(writers)

        wait_for(every_one_said_it, timeout=12, what="every /healthz degraded")
        said_after = max(t for t, _ in said.values())
        degraded = next(iter(said.values()))[1]
        time.sleep(max(0.0, 15.0 - (time.monotonic() - locked)))  # the rest of the 15 s lock
        unlocked = time.monotonic()
    checks = sum(sum(locked <= t < unlocked for t in inst.target.times(n)) for n in inst.monitors)
    expected = len(inst.monitors) * (unlocked - locked) / inst.interval
    wait_for(lambda: all((h := health(r)) and h["status"] == "ok" for r in inst.replicas), timeout=10,
             what="every /healthz ok again")
    report(inst, "monitor_state locked 15 s", degraded_after_s=round(said_after, 1),
           checks=f"{checks} of about {expected:.0f}")
    assert "late" in degraded["reason"], degraded
    # kLateWrites (5 s), a beat (1 s), and the polls' own latency: three replicas' /healthz
    # read in turn, which took over a second on a machine whose two cores were compiling.
    assert said_after <= 8.0
    assert checks >= 0.8 * expected, "the checks waited on the store"
    inst.wait_for_truth(timeout=20)
    assert inst.violations() == []
