// The SQL of each read, run by PostgresStore inside one read-only snapshot (reader_pool.h).
// One file per group: read_results.cc (states, results, incidents, rollups),
// read_heartbeat.cc (pings, marks, tokens), read_outbox.cc (deliveries), read_catalog.cc
// (API monitors and windows), read_incident_updates.cc (updates posted about incidents), read_jobs.cc
// (node reports).
// Shapes and orders are Store's (store.h); `limit`s are clamped to kMaxRowsPerRead. They
// throw pqxx exceptions; the pool turns those into errors.
#pragma once

#include <pqxx/pqxx>

#include "storage/store.h"

namespace trainwatch::postgres {

using Tx = pqxx::transaction_base;

inline constexpr int kMaxRowsPerRead = 10'000;

Result<std::vector<StoredState>> read_states(Tx& tx);
Result<std::optional<MonitorState>> read_state_of(Tx& tx, const std::string& monitor);
Result<StateFeed> read_states_after(Tx& tx, int64_t cursor);
Result<std::vector<Incident>> read_incidents(Tx& tx, const IncidentQuery& query);
Result<std::optional<Incident>> read_incident(Tx& tx, int64_t id);
Result<std::map<int64_t, std::vector<IncidentUpdate>>> read_incident_updates(
    Tx& tx, const std::vector<int64_t>& incident_ids);
Result<std::vector<CheckResult>> read_results(Tx& tx, const ResultQuery& query);
Result<int64_t> read_next_incident_id(Tx& tx);
// Store::reserve_incident_ids, in a transaction that may write.
Result<int64_t> reserve_incident_ids_in(Tx& tx, int count);
Result<std::vector<UptimeBucket>> read_uptime(Tx& tx, const UptimeQuery& query);
Result<std::map<std::string, std::vector<UptimeBucket>>> read_uptime_of(
    Tx& tx, const std::vector<std::string>& monitors, const UptimeQuery& query);

Result<std::vector<PingRecord>> read_pings(Tx& tx, const PingQuery& query);
Result<HeartbeatMarks> read_heartbeat_marks(Tx& tx, const std::string& monitor);
Result<std::map<std::string, std::string>> read_heartbeat_tokens(Tx& tx);

Result<std::vector<Delivery>> read_deliveries(Tx& tx, const DeliveryQuery& query);
// Store::claim_deliveries with a claimer: marks and returns the rows, oldest first.
Result<std::vector<Delivery>> claim_deliveries(Tx& tx, const DeliveryClaim& claim);

Result<std::vector<ApiMonitorSpec>> read_api_monitors(Tx& tx);
Result<std::vector<ApiWindowSpec>> read_api_windows(Tx& tx);
Result<int64_t> read_next_api_window_id(Tx& tx);
Result<std::vector<ApiChannelSpec>> read_api_channels(Tx& tx);

Result<NodeReportFeed> read_node_reports_after(Tx& tx, int64_t cursor, int limit);
Result<std::vector<StoredJobMemo>> read_job_memos(Tx& tx, int limit);

// read_accounts.cc
Result<std::vector<UserRecord>> read_users(Tx& tx, int limit);
Result<std::vector<ApiTokenRecord>> read_api_tokens(Tx& tx, int limit);
Result<std::vector<AuditEntry>> read_audit(Tx& tx, const AuditQuery& query);
Result<std::optional<std::string>> read_shared_key(Tx& tx, const std::string& name);
Result<bool> read_alert_link_used(Tx& tx, const std::string& id);

// A nullable time column.
inline std::optional<SystemTime> optional_time(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return from_unix_ms(f.as<int64_t>());
}

}  // namespace trainwatch::postgres
