#!/usr/bin/env python3
"""Writes generated history into a trainwatch SQLite file (schema already migrated by the
server), as if N monitors had been checked every minute for D days:

  - daily rollups for all D days, hourly rollups for the last `--hourly-days`,
  - raw results for the last `--raw-days` (one row a minute a monitor),
  - a few incidents per monitor.

Rows are what the server itself writes (same tables and columns); only the writing is
done here in bulk, because going through the server at one check a minute would take D days.
"""
import argparse
import random
import sqlite3
import time

MINUTE = 60_000
HOUR = 60 * MINUTE
DAY = 24 * HOUR


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--db", required=True)
    p.add_argument("--monitors", type=int, default=1000)
    p.add_argument("--days", type=int, default=90)
    p.add_argument("--hourly-days", type=int, default=14)
    p.add_argument("--raw-days", type=float, default=1)
    p.add_argument("--prefix", default="m")
    args = p.parse_args()
    rng = random.Random(7)
    now = int(time.time() * 1000)
    today = now - now % DAY
    db = sqlite3.connect(args.db)
    db.execute("PRAGMA synchronous = OFF")
    names = [f"{args.prefix}{i:04d}" for i in range(args.monitors)]
    incident_id = (db.execute("SELECT COALESCE(MAX(id), 0) FROM incidents").fetchone()[0] or 0) + 1
    with db:
        for name in names:
            bad_days = set(rng.sample(range(args.days), 3))
            daily = []
            for d in range(args.days):
                start = today - (args.days - 1 - d) * DAY
                ok = 1440 - (rng.randint(5, 300) if d in bad_days else 0)
                daily.append((name, start, 1440, ok, 1440 * rng.uniform(20, 40)))
                if d in bad_days:
                    db.execute("INSERT INTO incidents (id, monitor, started_ms, ended_ms, cause) VALUES (?,?,?,?,?)",
                               (incident_id, name, start + 3 * HOUR, start + 3 * HOUR + (1440 - ok) * MINUTE,
                                "HTTP 503; [BODY].status == degraded, expected ok"))
                    incident_id += 1
            db.executemany("INSERT OR REPLACE INTO uptime_daily VALUES (?,?,?,?,?)", daily)
            hourly = [(name, now - now % HOUR - h * HOUR, 60, 60, 60 * 30.0) for h in range(args.hourly_days * 24)]
            db.executemany("INSERT OR REPLACE INTO uptime_hourly VALUES (?,?,?,?,?)", hourly)
    raw_minutes = int(args.raw_days * 1440)
    with db:
        for name in names:
            rows = ((name, now - m * MINUTE, 1, 25.0 + (m % 7), "", 200, 1.0, 2.0, 0.0, 20.0, 25.0 + (m % 7))
                    for m in range(raw_minutes))
            db.executemany("INSERT INTO check_results (monitor, at_ms, ok, latency_ms, cause, http_status, dns_ms, "
                           "connect_ms, tls_ms, first_byte_ms, total_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
    db.close()


if __name__ == "__main__":
    main()
