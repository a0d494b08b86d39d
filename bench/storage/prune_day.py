#!/usr/bin/python3
"""Time to prune one day of N million raw results on PostgreSQL: before schema 10, the
chunked DELETE that pruning ran (10,000 rows a statement, as RetentionPruner queues them);
since, one DROP TABLE of the day's partition. Same PostgreSQL 15, same rows, same machine.

    bench/storage/prune_day.py [--millions 1] [--rounds 3]

Starts its own cluster (tests/integration/conftest.py's Postgres) and prints the median
and the spread of each. The DELETE side is timed in SQL, without trainwatch's writer, so
it is its lower bound: the real one also waits for vacuum."""
import argparse
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "integration"))
from conftest import Postgres  # noqa: E402

DAY = 86_400_000
DAY0 = 1_700_000_000_000 - 1_700_000_000_000 % DAY  # 2023-11-14
COLUMNS = """id BIGINT GENERATED ALWAYS AS IDENTITY, monitor TEXT NOT NULL, at_ms BIGINT NOT NULL,
  ok BOOLEAN NOT NULL, latency_ms DOUBLE PRECISION NOT NULL, cause TEXT NOT NULL DEFAULT ''"""
# Schema 8's table and indexes (migrations.cc, version 1), and schema 10's.
BEFORE = f"""DROP TABLE IF EXISTS check_results;
CREATE TABLE check_results ({COLUMNS}, PRIMARY KEY (id));
CREATE INDEX ON check_results (monitor, at_ms); CREATE INDEX ON check_results (at_ms);"""
AFTER = f"""DROP TABLE IF EXISTS check_results;
CREATE TABLE check_results ({COLUMNS}, PRIMARY KEY (id, at_ms)) PARTITION BY RANGE (at_ms);
CREATE INDEX ON check_results (monitor, at_ms, id); CREATE INDEX ON check_results (at_ms);
CREATE TABLE check_results_default PARTITION OF check_results DEFAULT;
CREATE TABLE check_results_20231114 PARTITION OF check_results FOR VALUES FROM ({DAY0}) TO ({DAY0 + DAY});
CREATE TABLE check_results_20231115 PARTITION OF check_results FOR VALUES FROM ({DAY0 + DAY}) TO ({DAY0 + 2 * DAY});"""


def load(pg, schema, rows):
    """`rows` results over the first day and as many over the next, 1,000 monitors."""
    pg.psql(schema)
    pg.psql(f"INSERT INTO check_results (monitor, at_ms, ok, latency_ms) SELECT 'm' || (g % 1000), "
            f"{DAY0} + g::bigint * {2 * DAY} / {2 * rows}, true, 1 FROM generate_series(0, {2 * rows - 1}) g")
    pg.psql("VACUUM ANALYZE check_results")


def timed(pg, sql):
    start = time.monotonic()
    pg.psql(sql)
    return time.monotonic() - start


def chunked_delete(pg, rows):
    chunk = ("DELETE FROM check_results WHERE id IN (SELECT id FROM check_results "
             f"WHERE at_ms < {DAY0 + DAY} ORDER BY at_ms LIMIT 10000);")
    # One psql for every chunk: the statements, not the process starts, are timed.
    return timed(pg, chunk * ((rows + 9_999) // 10_000))


def report(name, seconds):
    print(f"{name}: median {statistics.median(seconds):.3f} s, spread {min(seconds):.3f}-{max(seconds):.3f} s "
          f"({', '.join(f'{s:.3f}' for s in seconds)})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--millions", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rows = int(args.millions * 1_000_000)
    pg = Postgres()
    try:
        before, after = [], []
        for _ in range(args.rounds):
            load(pg, BEFORE, rows)
            before.append(chunked_delete(pg, rows))
            assert pg.psql(f"SELECT count(*) FROM check_results WHERE at_ms < {DAY0 + DAY}").strip() == "0"
            load(pg, AFTER, rows)
            after.append(timed(pg, "DROP TABLE check_results_20231114"))
            assert pg.psql("SELECT count(*) FROM check_results").strip() == str(rows)
        print(f"one day of {rows:,} results, {args.rounds} rounds")
        report("chunked DELETE (schema 8)", before)
        report("DROP TABLE of the day (schema 10)", after)
    finally:
        pg.discard()


if __name__ == "__main__":
    main()
