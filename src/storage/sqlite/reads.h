// The SQL of each read, run by SqliteStore on a read-only connection borrowed from its
// pool (sqlite_store.h). One file per group, as in storage/postgres: read_results.cc
// (states, results, incidents, rollups), read_heartbeat.cc (pings, marks, tokens),
// read_outbox.cc (deliveries), read_catalog.cc (API monitors and windows),
// read_incident_updates.cc (updates posted about incidents), read_jobs.cc (node reports,
// job memos).
// Shapes and orders are Store's (store.h); `limit`s are clamped to
// SqliteStore::kMaxRowsPerRead. They throw SQLite::Exception; the store turns those into
// store_error::kRead errors.
//
// Threading: any thread, each on its own connection.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "storage/store.h"
#include "storage/store_errors.h"

namespace SQLite {
class Database;
class Column;
}  // namespace SQLite

namespace trainwatch::sqlite {

Result<std::vector<StoredState>> read_states(SQLite::Database& db);
Result<std::vector<Incident>> read_incidents(SQLite::Database& db, const IncidentQuery& query);
Result<std::optional<Incident>> read_incident(SQLite::Database& db, int64_t id);
Result<std::vector<CheckResult>> read_results(SQLite::Database& db, const ResultQuery& query);
Result<int64_t> read_next_incident_id(SQLite::Database& db);
Result<std::vector<UptimeBucket>> read_uptime(SQLite::Database& db, const UptimeQuery& query);
// At most Store::kMaxRowsPerBatch monitors, at least one: the store checks both.
Result<std::map<std::string, std::vector<UptimeBucket>>> read_uptime_of(
    SQLite::Database& db, const std::vector<std::string>& monitors, const UptimeQuery& query);

// At most Store::kMaxRowsPerBatch ids, at least one: the store checks both.
Result<std::map<int64_t, std::vector<IncidentUpdate>>> read_incident_updates(
    SQLite::Database& db, const std::vector<int64_t>& incident_ids);

// `head`: the newest ping of the monitor asked for (PingChains::head), where its chain starts.
Result<std::vector<PingRecord>> read_pings(SQLite::Database& db, const PingQuery& query,
                                           std::optional<int64_t> head);
Result<HeartbeatMarks> read_heartbeat_marks(SQLite::Database& db, const std::string& monitor,
                                            std::optional<int64_t> head);
Result<std::map<std::string, std::string>> read_heartbeat_tokens(SQLite::Database& db);

Result<std::vector<Delivery>> read_deliveries(SQLite::Database& db, const DeliveryQuery& query);

Result<std::vector<ApiMonitorSpec>> read_api_monitors(SQLite::Database& db);
Result<std::vector<ApiWindowSpec>> read_api_windows(SQLite::Database& db);
Result<int64_t> read_next_api_window_id(SQLite::Database& db);
Result<std::vector<ApiChannelSpec>> read_api_channels(SQLite::Database& db);

Result<NodeReportFeed> read_node_reports_after(SQLite::Database& db, int64_t cursor);
Result<std::vector<StoredJobMemo>> read_job_memos(SQLite::Database& db);
// read_accounts.cc
Result<std::vector<UserRecord>> read_users(SQLite::Database& db, int limit);
Result<std::vector<ApiTokenRecord>> read_api_tokens(SQLite::Database& db, int limit);
Result<std::vector<AuditEntry>> read_audit(SQLite::Database& db, const AuditQuery& query);
Result<std::optional<std::string>> read_shared_key(SQLite::Database& db, const std::string& name);
Result<bool> read_alert_link_used(SQLite::Database& db, const std::string& id);

// A nullable time column.
std::optional<SystemTime> optional_time(const SQLite::Column& c);

}  // namespace trainwatch::sqlite
