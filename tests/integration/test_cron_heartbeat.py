"""Cron heartbeats end to end: the real binary reads a schedule in a real tz-database zone,
the API and the dashboard show when the next ping is due, and a ping is accepted.

The deadline's exact instants (late, DOWN) are pinned in simulated time by
tests/engine/engine_cron_test.cc; a real server would need minutes of real time here.
"""
import datetime
import subprocess

from conftest import BINARY
from test_heartbeat import ping

TOKEN = "nightly-backup-token"

CONFIG = f"""monitors:
  - name: nightly-backup
    type: heartbeat
    schedule: "*/5 * * * *"
    tz: Europe/Berlin
    grace: 30m
    token: {TOKEN}
  - name: checkpoint
    type: heartbeat
    period: 60m
    token: checkpoint-token-01
"""


def parse(rfc3339):
    return datetime.datetime.fromisoformat(rfc3339.replace("Z", "+00:00"))


def on_a_fire_time(t):
    """A fire time of '*/5 * * * *': a whole minute divisible by five (Berlin's offset is whole hours)."""
    return t.second == 0 and t.microsecond == 0 and t.minute % 5 == 0


def test_the_api_and_the_page_show_when_the_next_ping_is_due_and_a_ping_is_accepted(start_server):
    before = datetime.datetime.now(datetime.timezone.utc)
    server = start_server(CONFIG)
    m = server.monitor("nightly-backup")
    hb = m["heartbeat"]
    assert (hb["schedule"], hb["tz"], hb["period_ms"], hb["grace_ms"]) == ("*/5 * * * *", "Europe/Berlin", 0, 1_800_000)
    assert m["status"] == "pending" and hb["last_ping"] is None
    # Before any ping the schedule's first fire time after start is due.
    due = parse(hb["next_expected"])
    assert on_a_fire_time(due), hb["next_expected"]
    assert before < due <= before + datetime.timedelta(minutes=5, seconds=1), (before, due)

    # A period monitor awaits nothing before its first ping.
    assert server.monitor("checkpoint")["heartbeat"]["next_expected"] is None

    assert ping(server, token=TOKEN)[:2] == (200, "OK")
    up = server.wait_status("nightly-backup", "up")
    pinged = parse(up["heartbeat"]["last_ping"]["at"])
    after_ping = parse(up["heartbeat"]["next_expected"])
    assert on_a_fire_time(after_ping) and pinged < after_ping <= pinged + datetime.timedelta(minutes=5)
    assert up["heartbeat"]["late"] is False

    # The list carries it too, and the period monitor gets one once pinged: 60m after it.
    assert ping(server, token="checkpoint-token-01")[0] == 200
    checkpoint = server.wait_status("checkpoint", "up")["heartbeat"]
    assert parse(checkpoint["next_expected"]) - parse(checkpoint["last_ping"]["at"]) == datetime.timedelta(hours=1)
    listed = {x["name"]: x for x in server.get("/api/v1/monitors")[1]["monitors"]}
    assert listed["nightly-backup"]["next_expected"] == up["heartbeat"]["next_expected"]
    assert listed["checkpoint"]["next_expected"] == checkpoint["next_expected"]

    # The page reads it in the schedule's zone: "2024-03-31 03:05 CEST".
    status, page, _ = server.get("/monitors/nightly-backup")
    assert status == 200
    assert "Due at" in page
    assert "*/5 * * * *" in page and "Europe/Berlin" in page
    assert any(f"{(after_ping + datetime.timedelta(hours=h)).strftime('%Y-%m-%d %H:%M')} {zone}" in page
               for h, zone in ((1, "CET"), (2, "CEST"))), after_ping
    status, rows, _ = server.get("/")
    assert status == 200 and "next ping due" in rows


def test_check_refuses_bad_schedules_with_file_line_col(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("""monitors:
  - name: never
    type: heartbeat
    schedule: "0 0 30 2 *"
  - name: elsewhere
    type: heartbeat
    schedule: "0 3 * * *"
    tz: Mars/Olympus
  - name: both
    type: heartbeat
    schedule: "0 3 * * MOX"
    period: 1h
""")
    run = subprocess.run([BINARY, "check", str(path)], capture_output=True, text=True, timeout=30)
    assert run.returncode != 0
    lines = run.stderr.strip().splitlines()
    p = str(path)
    expected = [
        f"{p}:4:15: monitors[0].schedule: found '0 0 30 2 *', which never fires (day of month 30 never occurs in FEB)",
        f"{p}:8:9: monitors[1].tz: found 'Mars/Olympus'; expected a time zone of the tz database",
        f"{p}:11:15: monitors[2].schedule: found both schedule and period; expected exactly one of them",
        f"{p}:11:15: monitors[2].schedule: found '0 3 * * MOX': day of week 'MOX' is not a number or a name",
    ]
    for want in expected:
        assert any(line.startswith(want) for line in lines), f"missing {want!r} in:\n" + "\n".join(lines)
