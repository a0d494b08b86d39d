#include "storage/postgres/migrations.h"

#include <pqxx/pqxx>

#include <exception>
#include <iterator>
#include <string>

#include "storage/postgres/connection.h"
#include "storage/store_errors.h"

namespace trainwatch::postgres {
namespace {

constexpr Migration kMigrations[] = {
    // The whole schema SQLite reached in eight steps, in one: this store started there.
    {1, "monitor state, results, incidents, pings, tokens, outbox, rollups, API catalog", R"sql(
      CREATE TABLE monitor_state (
        monitor              TEXT PRIMARY KEY,
        status               TEXT NOT NULL,
        since_ms             BIGINT NOT NULL,
        last_check_ms        BIGINT,
        last_latency_ms      DOUBLE PRECISION NOT NULL DEFAULT 0,
        last_error           TEXT NOT NULL DEFAULT '',
        consecutive_failures INTEGER NOT NULL DEFAULT 0,
        open_incident_id     BIGINT,
        version              BIGINT NOT NULL DEFAULT 1
      );
      CREATE TABLE check_results (
        id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        monitor       TEXT NOT NULL,
        at_ms         BIGINT NOT NULL,
        ok            BOOLEAN NOT NULL,
        latency_ms    DOUBLE PRECISION NOT NULL,
        cause         TEXT NOT NULL DEFAULT '',
        http_status   INTEGER NOT NULL DEFAULT 0,
        dns_ms        DOUBLE PRECISION NOT NULL DEFAULT 0,
        connect_ms    DOUBLE PRECISION NOT NULL DEFAULT 0,
        tls_ms        DOUBLE PRECISION NOT NULL DEFAULT 0,
        first_byte_ms DOUBLE PRECISION NOT NULL DEFAULT 0,
        total_ms      DOUBLE PRECISION NOT NULL DEFAULT 0
      );
      -- History pages read one monitor newest first; pruning deletes the oldest.
      CREATE INDEX check_results_monitor_at ON check_results (monitor, at_ms);
      CREATE INDEX check_results_at ON check_results (at_ms);
      CREATE TABLE incidents (
        id         BIGINT PRIMARY KEY,
        monitor    TEXT NOT NULL,
        started_ms BIGINT NOT NULL,
        ended_ms   BIGINT,
        cause      TEXT NOT NULL DEFAULT ''
      );
      CREATE INDEX incidents_monitor_id ON incidents (monitor, id);
      -- An index, not SQLite's ping chains: PostgreSQL's B-tree pages are written at
      -- checkpoints and by full-page images, not on every commit as SQLite's WAL does.
      CREATE TABLE heartbeat_pings (
        id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        monitor        TEXT NOT NULL,
        at_ms          BIGINT NOT NULL,
        kind           TEXT NOT NULL,
        exit_code      INTEGER NOT NULL DEFAULT 0,
        source         TEXT NOT NULL DEFAULT '',
        user_agent     TEXT NOT NULL DEFAULT '',
        body           TEXT NOT NULL DEFAULT '',
        body_truncated BOOLEAN NOT NULL DEFAULT FALSE,
        run_ms         BIGINT
      );
      CREATE INDEX heartbeat_pings_monitor_id ON heartbeat_pings (monitor, id);
      CREATE TABLE heartbeat_tokens (
        monitor    TEXT PRIMARY KEY,
        token      TEXT NOT NULL UNIQUE,
        created_ms BIGINT NOT NULL
      );
      CREATE TABLE deliveries (
        id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        channel          TEXT NOT NULL,
        monitor          TEXT NOT NULL,
        incident_id      BIGINT,
        kind             TEXT NOT NULL,
        event            TEXT NOT NULL,
        created_ms       BIGINT NOT NULL,
        due_ms           BIGINT NOT NULL,
        status           TEXT NOT NULL DEFAULT 'pending',
        attempts         INTEGER NOT NULL DEFAULT 0,
        first_attempt_ms BIGINT,
        last_attempt_ms  BIGINT,
        next_attempt_ms  BIGINT,
        last_error       TEXT NOT NULL DEFAULT '',
        http_status      INTEGER NOT NULL DEFAULT 0,
        finished_ms      BIGINT,
        version          BIGINT NOT NULL DEFAULT 1
      );
      CREATE INDEX deliveries_status_channel_id ON deliveries (status, channel, id);
      CREATE INDEX deliveries_channel_id ON deliveries (channel, id);
      CREATE INDEX deliveries_monitor_id ON deliveries (monitor, id);
      CREATE TABLE uptime_hourly (
        monitor        TEXT NOT NULL,
        start_ms       BIGINT NOT NULL,
        checks         BIGINT NOT NULL,
        ok             BIGINT NOT NULL,
        latency_sum_ms DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (monitor, start_ms)
      );
      CREATE INDEX uptime_hourly_start ON uptime_hourly (start_ms);
      CREATE TABLE uptime_daily (
        monitor        TEXT NOT NULL,
        start_ms       BIGINT NOT NULL,
        checks         BIGINT NOT NULL,
        ok             BIGINT NOT NULL,
        latency_sum_ms DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (monitor, start_ms)
      );
      CREATE TABLE api_monitors (
        name      TEXT PRIMARY KEY,
        spec_json TEXT NOT NULL,
        version   BIGINT NOT NULL DEFAULT 1
      );
      CREATE TABLE api_maintenance (
        id         BIGINT PRIMARY KEY,
        spec_json  TEXT NOT NULL,
        created_ms BIGINT NOT NULL,
        version    BIGINT NOT NULL DEFAULT 1
      );
      -- The highest id ever used per kind, deleted rows included (SQLite's sqlite_sequence):
      -- a window id is never handed out twice, so a stale DELETE cannot hit a newer window.
      CREATE TABLE id_high_water (
        name TEXT PRIMARY KEY,
        high BIGINT NOT NULL
      );
    )sql"},
    // What admins post about an incident (status and text), read per incident in id order;
    // kept as long as the incident is.
    {2, "incident updates", R"sql(
      CREATE TABLE incident_updates (
        id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        incident_id BIGINT NOT NULL,
        at_ms       BIGINT NOT NULL,
        status      TEXT NOT NULL,
        text        TEXT NOT NULL
      );
      CREATE INDEX incident_updates_incident_id ON incident_updates (incident_id, id);
    )sql"},
    // The monitor whose DOWN explained an incident (depends_on); '' for one of its own.
    {3, "incidents caused by a monitor they depend on", R"sql(
      ALTER TABLE incidents ADD COLUMN caused_by TEXT NOT NULL DEFAULT '';
    )sql"},
    // The replicas of one installation (storage/member_registry.h): ages are read on the
    // database's clock, so the replicas' own clocks never decide who is alive.
    {4, "members: the serve replicas sharing this database; who sends each delivery", R"sql(
      ALTER TABLE deliveries ADD COLUMN claimed_by TEXT;
      CREATE TABLE members (
        id        TEXT PRIMARY KEY,
        label     TEXT NOT NULL,
        config    TEXT NOT NULL DEFAULT '',
        joined_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        seen_at   TIMESTAMPTZ NOT NULL DEFAULT now()
      );
    )sql"},
    // The newest report of each node of a job (store.h: SaveNodeReport), stamped with the
    // transaction that saved it: read_jobs.cc says why the reader's cursor is that.
    {5, "the newest report of each node of a job", R"sql(
      CREATE TABLE node_reports (
        job         TEXT NOT NULL,
        node        TEXT NOT NULL,
        txid        XID8 NOT NULL DEFAULT pg_current_xact_id(),
        received_ms BIGINT NOT NULL,
        writer      TEXT NOT NULL,
        body        TEXT NOT NULL,
        PRIMARY KEY (job, node)
      );
      CREATE INDEX node_reports_txid ON node_reports (txid);
      CREATE INDEX node_reports_received ON node_reports (received_ms);
    )sql"},
    {6, "what a job's reports cannot tell again: its attempts and interruptions", R"sql(
      CREATE TABLE job_memos (
        job      TEXT PRIMARY KEY,
        saved_ms BIGINT NOT NULL,
        body     TEXT NOT NULL
      );
    )sql"},
    // The transaction that last wrote each state, so a replica's beat reads the states
    // changed since its last read (read_results.cc: read_states_after) instead of all.
    {7, "the transaction that last changed each monitor's state", R"sql(
      ALTER TABLE monitor_state ADD COLUMN txid XID8 NOT NULL DEFAULT pg_current_xact_id();
      CREATE INDEX monitor_state_txid ON monitor_state (txid);
    )sql"},
    // Who owns each monitor, under which epoch (storage/postgres/fence.h): a replica's
    // writes about a monitor commit only under the epoch it claimed it with.
    {8, "the owner and epoch of each monitor, which fence the replicas' writes", R"sql(
      CREATE TABLE monitor_owners (
        monitor TEXT PRIMARY KEY,
        owner   TEXT NOT NULL,
        epoch   BIGINT NOT NULL
      );
    )sql"},
    {9, "users, their API tokens, and the audit log of every write", R"sql(
      CREATE TABLE users (
        name          TEXT PRIMARY KEY,
        role          TEXT NOT NULL,
        password_hash TEXT NOT NULL,
        totp_secret   TEXT NOT NULL,
        source        TEXT NOT NULL,
        created_ms    BIGINT NOT NULL
      );
      CREATE TABLE api_tokens (
        id         TEXT PRIMARY KEY,
        name       TEXT NOT NULL,
        owner      TEXT NOT NULL,
        role       TEXT NOT NULL,
        digest     TEXT NOT NULL UNIQUE,
        created_ms BIGINT NOT NULL,
        expires_ms BIGINT,
        revoked_ms BIGINT
      );
      CREATE TABLE audit_log (
        id         BIGSERIAL PRIMARY KEY,
        at_ms      BIGINT NOT NULL,
        actor      TEXT NOT NULL,
        actor_kind TEXT NOT NULL,
        action     TEXT NOT NULL,
        source     TEXT NOT NULL
      );
      CREATE INDEX audit_log_at ON audit_log (at_ms);
    )sql"},
    // check_results partitioned by day, so that retention drops a day's rows whole
    // (day_partitions.h says why this table alone, and how partitions are named and made).
    // The rows move in this transaction: a day's partition for each day they cover, the
    // rest (outside 1970..9999) to the default. The primary key holds the partition key,
    // as PostgreSQL requires; ids stay unique, as they come from the one identity. The
    // history index gains id, so a page of one monitor's results, newest first, is read in
    // order from each day's index instead of sorted.
    {10, "check results partitioned by day, which retention drops whole", R"sql(
      ALTER TABLE check_results RENAME TO check_results_unpartitioned;
      ALTER TABLE check_results_unpartitioned RENAME CONSTRAINT check_results_pkey
        TO check_results_unpartitioned_pkey;
      ALTER SEQUENCE check_results_id_seq RENAME TO check_results_unpartitioned_id_seq;
      DROP INDEX check_results_monitor_at, check_results_at;
      CREATE TABLE check_results (
        id            BIGINT GENERATED ALWAYS AS IDENTITY,
        monitor       TEXT NOT NULL,
        at_ms         BIGINT NOT NULL,
        ok            BOOLEAN NOT NULL,
        latency_ms    DOUBLE PRECISION NOT NULL,
        cause         TEXT NOT NULL DEFAULT '',
        http_status   INTEGER NOT NULL DEFAULT 0,
        dns_ms        DOUBLE PRECISION NOT NULL DEFAULT 0,
        connect_ms    DOUBLE PRECISION NOT NULL DEFAULT 0,
        tls_ms        DOUBLE PRECISION NOT NULL DEFAULT 0,
        first_byte_ms DOUBLE PRECISION NOT NULL DEFAULT 0,
        total_ms      DOUBLE PRECISION NOT NULL DEFAULT 0,
        PRIMARY KEY (id, at_ms)
      ) PARTITION BY RANGE (at_ms);
      CREATE INDEX check_results_monitor_at ON check_results (monitor, at_ms, id);
      CREATE INDEX check_results_at ON check_results (at_ms);
      CREATE TABLE check_results_default PARTITION OF check_results DEFAULT;
      DO $$
      DECLARE
        day BIGINT;
      BEGIN
        FOR day IN
          SELECT DISTINCT at_ms - ((at_ms % 86400000) + 86400000) % 86400000 FROM check_results_unpartitioned
          WHERE at_ms >= 0 AND at_ms < 253402300800000  -- 1970-01-01 to 10000-01-01, as day_partition_name
        LOOP
          EXECUTE format('CREATE TABLE %I PARTITION OF check_results FOR VALUES FROM (%s) TO (%s)',
                         'check_results_' || to_char(to_timestamp(day / 1000) AT TIME ZONE 'UTC', 'YYYYMMDD'),
                         day, day + 86400000);
        END LOOP;
      END
      $$;
      INSERT INTO check_results OVERRIDING SYSTEM VALUE
        SELECT id, monitor, at_ms, ok, latency_ms, cause, http_status, dns_ms, connect_ms, tls_ms,
               first_byte_ms, total_ms
        FROM check_results_unpartitioned;
      DROP TABLE check_results_unpartitioned;
      SELECT setval(pg_get_serial_sequence('check_results', 'id'), COALESCE(MAX(id), 0) + 1, false)
        FROM check_results;
    )sql"},
    // Notification channels created through the API or the dashboard (every replica reads
    // them at each beat); the spec is the JSON the client sent, secrets included.
    {11, "notification channels created through the API", R"sql(
      CREATE TABLE api_channels (
        name      TEXT PRIMARY KEY,
        spec_json TEXT NOT NULL
      );
    )sql"},
    // Where each replica's HTTP server is reached: a job's reports and reads go to the
    // replicas that hold it (docs/architecture.md, flow 3).
    {12, "each replica's address, for the reports and reads it is handed", R"sql(
      ALTER TABLE members ADD COLUMN address TEXT NOT NULL DEFAULT '';
    )sql"},
    // Who a single sign-on user is at the provider: its issuer and subject, never the name
    // a token claims (one subject, one user).
    {13, "a single sign-on user's issuer and subject", R"sql(
      ALTER TABLE users ADD COLUMN oidc_issuer TEXT NOT NULL DEFAULT '';
      ALTER TABLE users ADD COLUMN oidc_subject TEXT NOT NULL DEFAULT '';
      CREATE UNIQUE INDEX users_oidc_identity ON users (oidc_issuer, oidc_subject) WHERE oidc_subject <> '';
    )sql"},
    // Whether a replica's beats are quick enough for it to own monitors
    // (cluster/membership.h, Fitness): the others hand none to one that stands down.
    {14, "whether each replica stands up to own monitors", R"sql(
      ALTER TABLE members ADD COLUMN fit BOOLEAN NOT NULL DEFAULT TRUE;
    )sql"},
    // The key alert links are signed with (every replica signs and reads with it), and the
    // links used, each good for one use across replicas (auth/alert_link.h).
    {15, "the alert links' key and the links used", R"sql(
      CREATE TABLE shared_keys (
        name       TEXT PRIMARY KEY,
        value      TEXT NOT NULL,
        created_ms BIGINT NOT NULL
      );
      CREATE TABLE used_alert_links (
        id         TEXT PRIMARY KEY,
        expires_ms BIGINT NOT NULL,
        used_ms    BIGINT NOT NULL
      );
    )sql"},
};

static_assert(std::size(kMigrations) == kSchemaVersion, "one migration per version, in order");

// Any constant shared by every trainwatch: the lock that serializes migrations.
constexpr int64_t kMigrationLock = 0x747261696e776174;  // "trainwat"

int applied_version(pqxx::transaction_base& tx) {
  pqxx::row exists = tx.exec1("SELECT to_regclass('schema_version') IS NOT NULL");
  if (!exists[0].as<bool>()) return 0;
  return tx.exec1("SELECT COALESCE(MAX(version), 0) FROM schema_version")[0].as<int>();
}

}  // namespace

std::span<const Migration> migrations() { return kMigrations; }

Result<int> schema_version(pqxx::connection_base& conn) {
  try {
    pqxx::read_transaction tx(conn);
    return applied_version(tx);
  } catch (const std::exception& e) {
    return make_error(store_error::kRead, std::string("cannot read the schema version: ") + e.what());
  }
}

Status migrate(pqxx::connection_base& conn, int target) {
  int from = 0;
  try {
    pqxx::work tx(conn);
    tx.exec_params("SELECT pg_advisory_xact_lock($1)", kMigrationLock);
    tx.exec(
        "CREATE TABLE IF NOT EXISTS schema_version ("
        "  version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_ms BIGINT NOT NULL)");
    from = applied_version(tx);
    if (from > kSchemaVersion) {
      return make_error(store_error::kSchemaTooNew,
                        "the database has schema version " + std::to_string(from) +
                            " but this trainwatch knows only up to " + std::to_string(kSchemaVersion) +
                            "; run a newer trainwatch or use another database");
    }
    for (const Migration& m : kMigrations) {
      if (m.version <= from || m.version > target) continue;
      tx.exec(std::string(m.sql));
      tx.exec_params(
          "INSERT INTO schema_version (version, description, applied_ms) "
          "VALUES ($1, $2, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT)",
          m.version, std::string(m.description));
    }
    tx.commit();
  } catch (const std::exception& e) {
    const FailureKind kind = classify(e);
    return make_error(
        kind.connection_lost ? store_error::kUnavailable : store_error::kMigrate,
        "cannot migrate the database schema from version " + std::to_string(from) + ": " + e.what());
  }
  return Ok{};
}

}  // namespace trainwatch::postgres
