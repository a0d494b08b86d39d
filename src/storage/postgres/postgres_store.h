// PostgresStore: the Store on a PostgreSQL database (store.url), with SqliteStore's
// semantics, held to them by tests/storage's conformance suite.
//
// Writes: the shared WriteQueue (storage/write_queue.h) gathers batches of up to
// kMaxOpsPerTransaction operations (kPromptLinger, kBackgroundLinger); one writer thread
// applies each batch on its own connection in one transaction, each operation under a
// savepoint, and each done runs only after COMMIT returned (writer.h). Failures are
// counted by reason in write_health(); "unavailable" is a lost or refused connection.
//
// Connection loss: the writer reconnects with backoff; meanwhile every write fails at
// once with store_error::kUnavailable (never acknowledged), write_health().refusing is set
// until a batch commits again, and reads fail with store_error::kRead. Nothing crashes and
// nothing waits on the dead server longer than a connect timeout.
//
// Reads: a small pool of connections (reader_pool.h), each read one snapshot; they never
// wait for the writer.
//
// Schema: its own versioned migrations (migrations.h); a database from a newer trainwatch
// is refused at open.
//
// Secrets: the URL's password is never logged nor put in an error; describe the store
// with postgres::describe_target.
//
// Threading: as SqliteStore: everything may be called from any thread; done callbacks run
// on the writer thread and must not call flush. The destructor commits everything queued
// (or fails it, if the database is unreachable), then joins.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "core/database_session.h"
#include "storage/store.h"
#include "storage/store_errors.h"
#include "storage/write_queue.h"

namespace trainwatch::postgres {

class ReaderPool;
class Writer;

class PostgresStore final : public Store {
 public:
  // Connects, migrates to the current schema and opens the first read connection.
  // Errors: store_error::kAuth (credentials refused), store_error::kUnavailable (cannot reach the
  // server), store_error::kOpen, store_error::kMigrate, store_error::kSchemaTooNew.
  // `limits`: how long each session may hold locks and wait (connection.h).
  static Result<std::unique_ptr<PostgresStore>> open(const std::string& url,
                                                     const DatabaseSessionLimits& limits = {});

  ~PostgresStore() override;
  PostgresStore(const PostgresStore&) = delete;
  PostgresStore& operator=(const PostgresStore&) = delete;

  bool write(WriteOp op, WriteDone done = {}) override;
  void flush() override;
  WriteHealth write_health() const override;

  Result<std::vector<StoredState>> load_states() override;
  Result<std::optional<MonitorState>> state_of(const std::string& monitor) override;
  Result<StateFeed> states_after(int64_t cursor) override;
  Result<std::vector<Incident>> incidents(const IncidentQuery& query) override;
  Result<std::optional<Incident>> incident(int64_t id) override;
  Result<std::map<int64_t, std::vector<IncidentUpdate>>> incident_updates(
      const std::vector<int64_t>& incident_ids) override;
  Result<std::vector<CheckResult>> results(const ResultQuery& query) override;
  Result<std::vector<PingRecord>> pings(const PingQuery& query) override;
  Result<HeartbeatMarks> heartbeat_marks(const std::string& monitor) override;
  Result<std::map<std::string, std::string>> heartbeat_tokens() override;
  Result<std::vector<UptimeBucket>> uptime(const UptimeQuery& query) override;
  Result<std::map<std::string, std::vector<UptimeBucket>>> uptime_of(const std::vector<std::string>& monitors,
                                                                     const UptimeQuery& query) override;
  Result<std::vector<ApiMonitorSpec>> api_monitors() override;
  Result<NodeReportFeed> node_reports_after(int64_t cursor) override;
  Result<std::vector<StoredJobMemo>> job_memos() override;
  Result<std::vector<UserRecord>> users() override;
  Result<std::vector<ApiTokenRecord>> api_tokens() override;
  Result<std::vector<AuditEntry>> audit(const AuditQuery& query) override;
  Result<std::optional<std::string>> shared_key(const std::string& name) override;
  Result<bool> alert_link_used(const std::string& id) override;
  Result<std::vector<ApiWindowSpec>> api_windows() override;
  Result<std::vector<ApiChannelSpec>> api_channels() override;
  Result<int64_t> next_api_window_id() override;
  Result<int64_t> next_incident_id() override;
  Result<int64_t> reserve_incident_ids(int count) override;
  Result<std::vector<Delivery>> deliveries(const DeliveryQuery& query) override;
  Result<std::vector<Delivery>> claim_deliveries(const DeliveryClaim& claim) override;
  Result<std::map<std::string, int64_t>> claim_monitors(const std::string& owner,
                                                        const std::vector<std::string>& monitors) override;

  // As SqliteStore's: a commit here is a network round trip and an fsync on the server.
  static constexpr size_t kMaxOpsPerTransaction = 1000;
  static constexpr std::chrono::microseconds kPromptLinger{1'000};
  static constexpr std::chrono::milliseconds kBackgroundLinger{100};
  static constexpr std::chrono::seconds kFailureLogInterval{10};

 private:
  PostgresStore(std::unique_ptr<postgres::Writer> writer, std::unique_ptr<postgres::ReaderPool> readers);

  std::unique_ptr<postgres::Writer> writer_;  // used only by the queue's thread
  std::unique_ptr<postgres::ReaderPool> readers_;
  std::unique_ptr<WriteQueue> queue_;  // last: its thread stops first and uses writer_ until then
};

}  // namespace trainwatch::postgres
