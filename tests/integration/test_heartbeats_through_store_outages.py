"""Heartbeats while the store cannot take their pings, on two replicas and a real
PostgreSQL (faults.py's Installation), with every heartbeat pinged each second:

- heartbeat_pings locked ACCESS EXCLUSIVE for 20 s while their deadlines fall due: the
  replicas read the stored pings off the thread that runs checks, so their healthy HTTP
  monitors get no DOWN (the check thread never waits on the table), /healthz says what
  waits, and no heartbeat is DOWN either (its pings were stored once the lock went);
- the database stopped for 30 s while the pings are refused (503) by the server itself:
  no heartbeat is DOWN (each deadline moved by the outage), and one alert names the store
  outage (docs/operations.md, "Heartbeats while the store refuses pings")."""
import time

import pytest

from conftest import wait_for
from faults import Installation

LOCK_S = 20.0
DATABASE_STOP_S = 30.0
HEARTBEATS = 10


@pytest.fixture
def pair(tmp_path, postgres):
    # Heartbeats due every 2 s (+2 s grace) and a 1.5 s check timeout: a check thread held
    # up by the deadlines' reads showed here as timeouts, DOWN and UP of healthy monitors.
    inst = Installation(tmp_path, postgres, count=2, http=8, interval=2, heartbeats=HEARTBEATS, period=2,
                        timeout="1500ms")
    try:
        inst.settle()
        yield inst
    finally:
        inst.close()


def alerts(inst):
    return [h["body"] for h in inst.receiver.accepted("/hook")]


def pinged(inst):
    """Waits until every heartbeat's pings were acknowledged a few times: each has a
    deadline to move."""
    wait_for(lambda: all(len(a) >= 3 for a in inst.pinger.answered.values()), timeout=20,
             what="every heartbeat pinged before the fault")


def test_a_locked_pings_table_holds_up_no_check_and_pages_no_monitor(pair):
    inst = pair
    pinged(inst)
    with inst.table_locked("heartbeat_pings"):
        locked = time.monotonic()
        said = inst.degraded(range(2), since=locked, timeout=15)
        time.sleep(max(0.0, LOCK_S - (time.monotonic() - locked)))  # the rest of the lock
        unlocked = time.monotonic()
    checks, expected = inst.checks_between(locked, unlocked)
    inst.healthy_again(timeout=20)
    inst.wait_for_truth(timeout=20)
    time.sleep(3.0)  # a DOWN would be sent within a dispatcher wake or two: a window to catch one
    reasons = sorted({h["reason"] for _, h in said.values()})
    print(f"heartbeat_pings locked {LOCK_S:.0f} s: checks {checks} of about {expected:.0f}; /healthz said {reasons}")
    down = [a for a in alerts(inst) if a.get("event") == "down"]
    assert not [a for a in down if a["monitor"]["name"] in inst.monitors], down
    assert not down, f"no heartbeat is DOWN either: their pings were stored once the lock went: {down}"
    assert checks >= 0.8 * expected, "the checks waited on the pings table"
    assert all("late" in r or "pings cannot be read" in r for r in reasons), reasons
    broken = inst.violations()
    assert not broken, "\n".join(broken)


def test_pings_refused_while_the_database_is_down_page_nobody_and_one_alert_names_the_outage(pair):
    inst = pair
    pinged(inst)
    with inst.database_stopped():
        time.sleep(DATABASE_STOP_S)
    back = time.monotonic()
    inst.wait_for_truth(timeout=40)
    store_alerts = wait_for(lambda: [a for a in alerts(inst) if a["monitor"]["name"] == "trainwatch store"],
                            timeout=20, what="the alert that names the store outage")
    # Every heartbeat's deadline has passed again since the database came back: a DOWN the
    # outage caused would have been decided and sent by now. A window, not a wait.
    time.sleep(max(0.0, back + 3 * inst.period + 7 - time.monotonic()))
    gaps = {name: max(b - a for a, b in zip(inst.pinger.answered[token], inst.pinger.answered[token][1:]))
            for name, token in inst.tokens.items()}
    print(f"PostgreSQL stopped {DATABASE_STOP_S:.0f} s: the pings went unacknowledged for "
          f"{min(gaps.values()):.1f}-{max(gaps.values()):.1f} s; alerts "
          f"{[(a['event'], a['monitor']['name']) for a in alerts(inst)]}")
    assert min(gaps.values()) >= DATABASE_STOP_S - 5, "the pings were refused all along the outage"
    heartbeat_alerts = [a for a in alerts(inst) if a["monitor"]["name"] in inst.tokens]
    assert not heartbeat_alerts, heartbeat_alerts
    assert len(store_alerts) == 1, store_alerts
    alert = store_alerts[0]
    assert alert["event"] == "warning" and "could not take pings" in alert["cause"], alert
