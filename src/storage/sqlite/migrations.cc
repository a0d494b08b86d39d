#include "storage/sqlite/migrations.h"
#include "storage/store_errors.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <exception>
#include <iterator>
#include <string>

namespace trainwatch::sqlite {
namespace {

constexpr SqliteMigration kMigrations[] = {
    {1, "monitor state, check results, incidents", R"sql(
      CREATE TABLE monitor_state (
        monitor              TEXT PRIMARY KEY,
        status               TEXT NOT NULL,
        since_ms             INTEGER NOT NULL,
        last_check_ms        INTEGER,
        last_latency_ms      DOUBLE PRECISION NOT NULL DEFAULT 0,
        last_error           TEXT NOT NULL DEFAULT '',
        consecutive_failures INTEGER NOT NULL DEFAULT 0,
        open_incident_id     INTEGER
      );
      CREATE TABLE check_results (
        id            INTEGER PRIMARY KEY,
        monitor       TEXT NOT NULL,
        at_ms         INTEGER NOT NULL,
        ok            INTEGER NOT NULL,
        latency_ms    DOUBLE PRECISION NOT NULL,
        cause         TEXT NOT NULL DEFAULT '',
        http_status   INTEGER NOT NULL DEFAULT 0,
        dns_ms        DOUBLE PRECISION NOT NULL DEFAULT 0,
        connect_ms    DOUBLE PRECISION NOT NULL DEFAULT 0,
        tls_ms        DOUBLE PRECISION NOT NULL DEFAULT 0,
        first_byte_ms DOUBLE PRECISION NOT NULL DEFAULT 0,
        total_ms      DOUBLE PRECISION NOT NULL DEFAULT 0
      );
      CREATE TABLE incidents (
        id         INTEGER PRIMARY KEY,
        monitor    TEXT NOT NULL,
        started_ms INTEGER NOT NULL,
        ended_ms   INTEGER,
        cause      TEXT NOT NULL DEFAULT ''
      );
    )sql"},
    // Without these, history and incident pages scan whole tables; that is what made
    // large Gatus installs slow (its issues #242, #1545). Newest-first incident listing
    // over all monitors walks the primary key backwards and needs no index of its own.
    {2, "indexes for per-monitor history and incident listing", R"sql(
      CREATE INDEX check_results_monitor_at ON check_results (monitor, at_ms);
      CREATE INDEX incidents_monitor_id ON incidents (monitor, id);
    )sql"},
    // Pings are their own log (not check_results): they carry a body, a source and a
    // kind, and the ping page and restart both read one monitor's newest rows by id.
    {3, "heartbeat pings and generated tokens", R"sql(
      CREATE TABLE heartbeat_pings (
        id             INTEGER PRIMARY KEY,
        monitor        TEXT NOT NULL,
        at_ms          INTEGER NOT NULL,
        kind           TEXT NOT NULL,
        exit_code      INTEGER NOT NULL DEFAULT 0,
        source         TEXT NOT NULL DEFAULT '',
        user_agent     TEXT NOT NULL DEFAULT '',
        body           TEXT NOT NULL DEFAULT '',
        body_truncated INTEGER NOT NULL DEFAULT 0,
        run_ms         INTEGER
      );
      CREATE INDEX heartbeat_pings_monitor_id ON heartbeat_pings (monitor, id);
      CREATE TABLE heartbeat_tokens (
        monitor    TEXT PRIMARY KEY,
        token      TEXT NOT NULL UNIQUE,
        created_ms INTEGER NOT NULL
      );
    )sql"},
    // The alert outbox: one row per notification per channel, written in the same
    // transaction as the state change that caused it; the dispatcher moves it from
    // pending to delivered, failed or cancelled. Pending rows are what a restart re-sends.
    {4, "alert outbox (deliveries)", R"sql(
      CREATE TABLE deliveries (
        id               INTEGER PRIMARY KEY,
        channel          TEXT NOT NULL,
        monitor          TEXT NOT NULL,
        incident_id      INTEGER,
        kind             TEXT NOT NULL,
        event            TEXT NOT NULL,
        created_ms       INTEGER NOT NULL,
        due_ms           INTEGER NOT NULL,
        status           TEXT NOT NULL DEFAULT 'pending',
        attempts         INTEGER NOT NULL DEFAULT 0,
        first_attempt_ms INTEGER,
        last_attempt_ms  INTEGER,
        next_attempt_ms  INTEGER,
        last_error       TEXT NOT NULL DEFAULT '',
        http_status      INTEGER NOT NULL DEFAULT 0,
        finished_ms      INTEGER
      );
      CREATE INDEX deliveries_status_channel_id ON deliveries (status, channel, id);
      CREATE INDEX deliveries_channel_id ON deliveries (channel, id);
      CREATE INDEX deliveries_monitor_id ON deliveries (monitor, id);
    )sql"},
    // Status pages read 90 daily rows per monitor instead of 129,600 raw results; raw
    // results can then be pruned (retention.raw) without losing the uptime history.
    // WITHOUT ROWID: the key is the only lookup, so the table is its own index.
    {5, "hourly and daily uptime rollups, and indexes to prune by age", R"sql(
      CREATE TABLE uptime_hourly (
        monitor        TEXT NOT NULL,
        start_ms       INTEGER NOT NULL,
        checks         INTEGER NOT NULL,
        ok             INTEGER NOT NULL,
        latency_sum_ms DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (monitor, start_ms)
      ) WITHOUT ROWID;
      CREATE TABLE uptime_daily (
        monitor        TEXT NOT NULL,
        start_ms       INTEGER NOT NULL,
        checks         INTEGER NOT NULL,
        ok             INTEGER NOT NULL,
        latency_sum_ms DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (monitor, start_ms)
      ) WITHOUT ROWID;
      INSERT INTO uptime_hourly SELECT monitor, at_ms - at_ms % 3600000, COUNT(*), SUM(ok), SUM(latency_ms)
        FROM check_results GROUP BY monitor, at_ms - at_ms % 3600000;
      INSERT INTO uptime_daily SELECT monitor, at_ms - at_ms % 86400000, COUNT(*), SUM(ok), SUM(latency_ms)
        FROM check_results GROUP BY monitor, at_ms - at_ms % 86400000;
      CREATE INDEX check_results_at ON check_results (at_ms);
      CREATE INDEX uptime_hourly_start ON uptime_hourly (start_ms);
    )sql"},
    // Monitors created through the API live beside the YAML ones; the spec is the JSON
    // the client sent, validated by the same loader as the file.
    {6, "monitors created through the API", R"sql(
      CREATE TABLE api_monitors (
        name      TEXT PRIMARY KEY,
        spec_json TEXT NOT NULL
      );
    )sql"},
    // Maintenance windows created through the API, beside the YAML ones. AUTOINCREMENT:
    // an id is never handed out twice, so a stale DELETE cannot hit a newer window.
    {7, "maintenance windows created through the API", R"sql(
      CREATE TABLE api_maintenance (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        spec_json  TEXT NOT NULL,
        created_ms INTEGER NOT NULL
      );
    )sql"},
    // The ping log becomes append-only: each ping points back to its monitor's previous
    // one, and the newest of each monitor is saved in heartbeat_heads (see ping_chains.h).
    // The (monitor, id) index cost one random page write per ping; it builds the chains
    // here and then goes.
    {8, "heartbeat pings chained per monitor instead of indexed", R"sql(
      ALTER TABLE heartbeat_pings ADD COLUMN prev_id INTEGER;
      UPDATE heartbeat_pings SET prev_id = (
        SELECT MAX(p.id) FROM heartbeat_pings AS p
        WHERE p.monitor = heartbeat_pings.monitor AND p.id < heartbeat_pings.id);
      CREATE TABLE heartbeat_heads (
        monitor TEXT PRIMARY KEY,
        ping_id INTEGER NOT NULL
      );
      INSERT INTO heartbeat_heads (monitor, ping_id) SELECT monitor, MAX(id) FROM heartbeat_pings GROUP BY monitor;
      DROP INDEX heartbeat_pings_monitor_id;
    )sql"},
    // What admins post about an incident (status and text), read per incident in id order;
    // kept as long as the incident is.
    {9, "incident updates", R"sql(
      CREATE TABLE incident_updates (
        id          INTEGER PRIMARY KEY,
        incident_id INTEGER NOT NULL,
        at_ms       INTEGER NOT NULL,
        status      TEXT NOT NULL,
        text        TEXT NOT NULL
      );
      CREATE INDEX incident_updates_incident_id ON incident_updates (incident_id, id);
    )sql"},
    // The monitor whose DOWN explained an incident (depends_on); '' for one of its own.
    {10, "incidents caused by a monitor they depend on", R"sql(
      ALTER TABLE incidents ADD COLUMN caused_by TEXT NOT NULL DEFAULT '';
    )sql"},
    // The newest report of each node of each job (store.h: SaveNodeReport). A replaced
    // row gets a new id, and AUTOINCREMENT never hands an id out twice, so the id is the
    // order reports were saved in: node_reports_after's cursor.
    {11, "the newest report of each node of a job", R"sql(
      CREATE TABLE node_reports (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        job         TEXT NOT NULL,
        node        TEXT NOT NULL,
        received_ms INTEGER NOT NULL,
        writer      TEXT NOT NULL,
        body        TEXT NOT NULL,
        UNIQUE (job, node)
      );
      CREATE INDEX node_reports_received ON node_reports (received_ms);
    )sql"},
    {12, "what a job's reports cannot tell again: its attempts and interruptions", R"sql(
      CREATE TABLE job_memos (
        job      TEXT PRIMARY KEY,
        saved_ms INTEGER NOT NULL,
        body     TEXT NOT NULL
      );
    )sql"},
    {13, "users, their API tokens, and the audit log of every write", R"sql(
      CREATE TABLE users (
        name          TEXT PRIMARY KEY,
        role          TEXT NOT NULL,
        password_hash TEXT NOT NULL,
        totp_secret   TEXT NOT NULL,
        source        TEXT NOT NULL,
        created_ms    INTEGER NOT NULL
      );
      CREATE TABLE api_tokens (
        id         TEXT PRIMARY KEY,
        name       TEXT NOT NULL,
        owner      TEXT NOT NULL,
        role       TEXT NOT NULL,
        digest     TEXT NOT NULL UNIQUE,
        created_ms INTEGER NOT NULL,
        expires_ms INTEGER,
        revoked_ms INTEGER
      );
      CREATE TABLE audit_log (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        at_ms      INTEGER NOT NULL,
        actor      TEXT NOT NULL,
        actor_kind TEXT NOT NULL,
        action     TEXT NOT NULL,
        source     TEXT NOT NULL
      );
      CREATE INDEX audit_log_at ON audit_log (at_ms);
    )sql"},
    // Notification channels created through the API or the dashboard, beside the file's;
    // the spec is the JSON the client sent (secrets included), validated as the file is.
    {14, "notification channels created through the API", R"sql(
      CREATE TABLE api_channels (
        name      TEXT PRIMARY KEY,
        spec_json TEXT NOT NULL
      );
    )sql"},
    // Who a single sign-on user is at the provider: its issuer and subject, never the name
    // a token claims (one subject, one user).
    {15, "a single sign-on user's issuer and subject", R"sql(
      ALTER TABLE users ADD COLUMN oidc_issuer TEXT NOT NULL DEFAULT '';
      ALTER TABLE users ADD COLUMN oidc_subject TEXT NOT NULL DEFAULT '';
      CREATE UNIQUE INDEX users_oidc_identity ON users (oidc_issuer, oidc_subject) WHERE oidc_subject <> '';
    )sql"},
    // The key alert links are signed with, and the links used, each good for one use
    // (auth/alert_link.h).
    {16, "the alert links' key and the links used", R"sql(
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

static_assert(std::size(kMigrations) == kSqliteSchemaVersion, "one migration per version, in order");

constexpr const char* kCreateVersionTable =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    "  version INTEGER PRIMARY KEY, description TEXT NOT NULL)";

int applied_version(SQLite::Database& db) {
  if (!db.tableExists("schema_migrations")) return 0;
  SQLite::Statement query(db, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
  query.executeStep();
  return query.getColumn(0).getInt();
}

}  // namespace

std::span<const SqliteMigration> sqlite_migrations() { return kMigrations; }

Result<int> sqlite_schema_version(SQLite::Database& db) {
  try {
    return applied_version(db);
  } catch (const std::exception& e) {
    return make_error(store_error::kRead, std::string("cannot read the schema version: ") + e.what());
  }
}

Status migrate_sqlite(SQLite::Database& db, int target) {
  int from = 0;
  try {
    // IMMEDIATE takes the write lock before reading the version, so two processes
    // migrating the same file cannot both decide to apply the same step.
    SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
    db.exec(kCreateVersionTable);
    from = applied_version(db);
    if (from > kSqliteSchemaVersion) {
      return make_error(store_error::kSchemaTooNew,
                        "the database has schema version " + std::to_string(from) +
                            " but this trainwatch knows only up to " + std::to_string(kSqliteSchemaVersion) +
                            "; run a newer trainwatch or use another data_dir");
    }
    for (const SqliteMigration& m : kMigrations) {
      if (m.version <= from || m.version > target) continue;
      db.exec(std::string(m.sql));
      SQLite::Statement record(db, "INSERT INTO schema_migrations (version, description) VALUES (?, ?)");
      record.bind(1, m.version);
      record.bind(2, std::string(m.description));
      record.exec();
    }
    tx.commit();
  } catch (const std::exception& e) {
    return make_error(store_error::kMigrate, "cannot migrate the database schema from version " +
                                                 std::to_string(from) + ": " + e.what());
  }
  return Ok{};
}

}  // namespace trainwatch::sqlite
