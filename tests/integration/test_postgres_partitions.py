"""A PostgreSQL database that trainwatch left at schema 8 (fixtures/postgres_schema_8.sql),
with raw results over several days, is migrated to the newest schema (10 partitions
check_results) when serve starts on it: every result is still read through the API, each
day's in a partition of its own."""
import pathlib
import time

from conftest import Server

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "postgres_schema_8.sql"
HOUR = 3_600_000
DAY = 24 * HOUR

CONFIG = """
store:
  url: ${TRAINWATCH_STORE_URL}
monitors:
  - name: train
    type: heartbeat
    period: 1h
    grace: 1h
"""


def test_a_schema_8_database_keeps_every_result_through_the_migration(tmp_path, postgres, monkeypatch):
    postgres.psql(FIXTURE.read_text())
    assert postgres.psql("SELECT MAX(version) FROM schema_version").strip() == "8"
    # 96 results an hour apart over the last four days (within the default 14 days kept),
    # each with its own latency, so each one can be found again.
    first = (int(time.time() * 1000) // DAY - 3) * DAY
    postgres.psql("INSERT INTO check_results (monitor, at_ms, ok, latency_ms) "
                  f"SELECT 'train', {first} + g * {HOUR}, g % 4 <> 0, g FROM generate_series(0, 95) g")

    monkeypatch.setenv("TRAINWATCH_STORE_URL", postgres.url())
    config = tmp_path / "trainwatch.yaml"
    config.write_text(CONFIG)
    server = Server(config, tmp_path / "data", tmp_path / "server.log").start()
    try:
        status, body, _ = server.get("/api/v1/monitors/train?limit=1000")
        assert status == 200, body
        results = body["results"]
        assert sorted(r["latency_ms"] for r in results) == list(range(96))
        assert sum(1 for r in results if not r["ok"]) == 24
        # Older than the third day's midnight: a page that reads only the days before it.
        status, body, _ = server.get(f"/api/v1/monitors/train?limit=1000&before={first + 2 * DAY}")
        assert status == 200, body
        assert sorted(r["latency_ms"] for r in body["results"]) == list(range(48))
    finally:
        server.stop()

    assert postgres.psql("SELECT MAX(version) FROM schema_version").strip() == "15"  # the newest
    by_partition = dict(line.split("|") for line in postgres.psql(
        "SELECT tableoid::regclass, count(*) FROM check_results GROUP BY 1").split())
    assert len(by_partition) == 4, by_partition
    assert all(name.startswith("check_results_2") and count == "24" for name, count in by_partition.items())
    assert postgres.psql("SELECT count(*) FROM check_results_default").strip() == "0"
