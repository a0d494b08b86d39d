#include "storage/postgres/postgres_store.h"

#include <pqxx/pqxx>

#include <utility>

#include "storage/postgres/connection.h"
#include "storage/postgres/fence.h"
#include "storage/postgres/migrations.h"
#include "storage/postgres/reader_pool.h"
#include "storage/postgres/reads.h"
#include "storage/postgres/writer.h"
#include "storage/store_errors.h"

namespace trainwatch::postgres {

Result<std::unique_ptr<PostgresStore>> PostgresStore::open(const std::string& url,
                                                           const DatabaseSessionLimits& limits) {
  // The writer's: the migration runs on it, then its batches (no lock_timeout: connection.h).
  auto conn = connect(url, SessionRole::kWriter, limits);
  if (!conn) return conn.error();
  if (Status migrated = migrate(**conn); !migrated) {
    return make_error(migrated.error().code, scrub(migrated.error().message, url));
  }
  auto readers = std::make_unique<ReaderPool>(url, limits);
  // Fails here, not on the first read, if reading cannot work.
  auto version = readers->read<int>("the schema version", [](pqxx::transaction_base& tx) -> Result<int> {
    return tx.exec1("SELECT MAX(version) FROM schema_version")[0].as<int>();
  });
  if (!version) return make_error(store_error::kOpen, version.error().message);
  try {
    auto writer = std::make_unique<Writer>(url, std::move(*conn), limits);
    return std::unique_ptr<PostgresStore>(new PostgresStore(std::move(writer), std::move(readers)));
  } catch (const std::exception& e) {
    return make_error(store_error::kOpen, "cannot prepare the write statements: " + scrub(e.what(), url));
  }
}

PostgresStore::PostgresStore(std::unique_ptr<Writer> writer, std::unique_ptr<ReaderPool> readers)
    : writer_(std::move(writer)), readers_(std::move(readers)) {
  queue_ = std::make_unique<WriteQueue>(
      *writer_, WriteQueueOptions{kMaxOpsPerTransaction, kPromptLinger,
                                  std::chrono::duration_cast<std::chrono::microseconds>(kBackgroundLinger),
                                  kFailureLogInterval});
}

PostgresStore::~PostgresStore() {
  queue_.reset();  // commits everything queued, then joins the writer
}

bool PostgresStore::write(WriteOp op, WriteDone done) {
  return queue_->write(std::move(op), std::move(done));
}

void PostgresStore::flush() { queue_->flush(); }

WriteHealth PostgresStore::write_health() const { return queue_->health(); }

Result<std::vector<StoredState>> PostgresStore::load_states() {
  return readers_->read<std::vector<StoredState>>("monitor states", read_states);
}

Result<std::optional<MonitorState>> PostgresStore::state_of(const std::string& monitor) {
  return readers_->read<std::optional<MonitorState>>("a monitor's state",
                                                     [&](Tx& tx) { return read_state_of(tx, monitor); });
}

Result<StateFeed> PostgresStore::states_after(int64_t cursor) {
  return readers_->read<StateFeed>("changed monitor states",
                                   [cursor](Tx& tx) { return read_states_after(tx, cursor); });
}

Result<std::vector<Incident>> PostgresStore::incidents(const IncidentQuery& query) {
  return readers_->read<std::vector<Incident>>("incidents",
                                               [&](Tx& tx) { return read_incidents(tx, query); });
}

Result<std::optional<Incident>> PostgresStore::incident(int64_t id) {
  return readers_->read<std::optional<Incident>>("an incident",
                                                 [&](Tx& tx) { return read_incident(tx, id); });
}

Result<std::map<int64_t, std::vector<IncidentUpdate>>> PostgresStore::incident_updates(
    const std::vector<int64_t>& incident_ids) {
  using Out = std::map<int64_t, std::vector<IncidentUpdate>>;
  if (incident_ids.size() > kMaxRowsPerBatch) {
    return make_error(store_error::kTooMany,
                      "at most " + std::to_string(kMaxRowsPerBatch) + " incidents per read");
  }
  if (incident_ids.empty()) return Out{};
  return readers_->read<Out>("incident updates",
                             [&](Tx& tx) { return read_incident_updates(tx, incident_ids); });
}

Result<std::vector<CheckResult>> PostgresStore::results(const ResultQuery& query) {
  return readers_->read<std::vector<CheckResult>>("check results",
                                                  [&](Tx& tx) { return read_results(tx, query); });
}

Result<std::vector<PingRecord>> PostgresStore::pings(const PingQuery& query) {
  return readers_->read<std::vector<PingRecord>>("pings", [&](Tx& tx) { return read_pings(tx, query); });
}

Result<HeartbeatMarks> PostgresStore::heartbeat_marks(const std::string& monitor) {
  return readers_->read<HeartbeatMarks>("heartbeat marks",
                                        [&](Tx& tx) { return read_heartbeat_marks(tx, monitor); });
}

Result<std::map<std::string, std::string>> PostgresStore::heartbeat_tokens() {
  return readers_->read<std::map<std::string, std::string>>("heartbeat tokens", read_heartbeat_tokens);
}

Result<std::vector<UptimeBucket>> PostgresStore::uptime(const UptimeQuery& query) {
  return readers_->read<std::vector<UptimeBucket>>("uptime rollups",
                                                   [&](Tx& tx) { return read_uptime(tx, query); });
}

Result<std::map<std::string, std::vector<UptimeBucket>>> PostgresStore::uptime_of(
    const std::vector<std::string>& monitors, const UptimeQuery& query) {
  using Out = std::map<std::string, std::vector<UptimeBucket>>;
  if (monitors.size() > kMaxRowsPerBatch) {
    return make_error(store_error::kTooMany,
                      "at most " + std::to_string(kMaxRowsPerBatch) + " monitors per read");
  }
  if (monitors.empty()) return Out{};
  return readers_->read<Out>("uptime rollups", [&](Tx& tx) { return read_uptime_of(tx, monitors, query); });
}

Result<std::vector<ApiMonitorSpec>> PostgresStore::api_monitors() {
  return readers_->read<std::vector<ApiMonitorSpec>>("API monitors", read_api_monitors);
}

Result<NodeReportFeed> PostgresStore::node_reports_after(int64_t cursor) {
  return readers_->read<NodeReportFeed>("node reports", [cursor](Tx& tx) {
    return read_node_reports_after(tx, cursor, kMaxNodeReportsPerRead);
  });
}

Result<std::vector<StoredJobMemo>> PostgresStore::job_memos() {
  return readers_->read<std::vector<StoredJobMemo>>("job memos",
                                                    [](Tx& tx) { return read_job_memos(tx, kMaxJobMemos); });
}

Result<std::vector<UserRecord>> PostgresStore::users() {
  return readers_->read<std::vector<UserRecord>>("users", [](Tx& tx) { return read_users(tx, kMaxUsers); });
}

Result<std::vector<ApiTokenRecord>> PostgresStore::api_tokens() {
  return readers_->read<std::vector<ApiTokenRecord>>(
      "API tokens", [](Tx& tx) { return read_api_tokens(tx, kMaxApiTokens); });
}

Result<std::vector<AuditEntry>> PostgresStore::audit(const AuditQuery& query) {
  return readers_->read<std::vector<AuditEntry>>("the audit log",
                                                 [query](Tx& tx) { return read_audit(tx, query); });
}

Result<std::optional<std::string>> PostgresStore::shared_key(const std::string& name) {
  return readers_->read<std::optional<std::string>>("a shared key",
                                                    [name](Tx& tx) { return read_shared_key(tx, name); });
}

Result<bool> PostgresStore::alert_link_used(const std::string& id) {
  return readers_->read<bool>("the used alert links", [id](Tx& tx) { return read_alert_link_used(tx, id); });
}

Result<std::vector<ApiWindowSpec>> PostgresStore::api_windows() {
  return readers_->read<std::vector<ApiWindowSpec>>("API maintenance windows", read_api_windows);
}

Result<std::vector<ApiChannelSpec>> PostgresStore::api_channels() {
  return readers_->read<std::vector<ApiChannelSpec>>("API notification channels", read_api_channels);
}

Result<int64_t> PostgresStore::next_api_window_id() {
  return readers_->read<int64_t>("the next maintenance window id", read_next_api_window_id);
}

Result<int64_t> PostgresStore::next_incident_id() {
  return readers_->read<int64_t>("the next incident id", read_next_incident_id);
}

Result<std::vector<Delivery>> PostgresStore::deliveries(const DeliveryQuery& query) {
  return readers_->read<std::vector<Delivery>>("deliveries",
                                               [&](Tx& tx) { return read_deliveries(tx, query); });
}

Result<int64_t> PostgresStore::reserve_incident_ids(int count) {
  return readers_->read_and_mark<int64_t>("incident ids",
                                          [count](Tx& tx) { return reserve_incident_ids_in(tx, count); });
}

Result<std::vector<Delivery>> PostgresStore::claim_deliveries(const DeliveryClaim& claim) {
  if (claim.claimer.empty()) return Store::claim_deliveries(claim);
  return readers_->read_and_mark<std::vector<Delivery>>(
      "deliveries", [&](Tx& tx) { return postgres::claim_deliveries(tx, claim); });
}

Result<std::map<std::string, int64_t>> PostgresStore::claim_monitors(
    const std::string& owner, const std::vector<std::string>& monitors) {
  if (monitors.empty()) return std::map<std::string, int64_t>{};
  return readers_->read_and_mark<std::map<std::string, int64_t>>(
      "monitor owners", [&](Tx& tx) { return claim_monitors_in(tx, owner, monitors); });
}

}  // namespace trainwatch::postgres
