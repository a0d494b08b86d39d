// SqliteStore: opening the store, its write queue, and the read connection pool each
// read runs on. The writer is writer.h, each write's SQL write_ops.h, each read's reads.h.
#include "storage/sqlite/sqlite_store.h"

#include <SQLiteCpp/Database.h>
#include <sqlite3.h>

#include <exception>
#include <mutex>
#include <utility>

#include "storage/data_dir.h"
#include "storage/sqlite/checkpointer.h"
#include "storage/sqlite/database_files.h"
#include "storage/sqlite/migrations.h"
#include "storage/sqlite/ping_chains.h"
#include "storage/sqlite/reads.h"
#include "storage/sqlite/writer.h"
#include "storage/store_errors.h"

namespace trainwatch::sqlite {
namespace {

Error open_error(const std::string& path, const std::string& why) {
  return make_error(store_error::kOpen, "cannot open the database '" + path + "': " + why);
}

std::unique_ptr<SQLite::Database> open_reader(const std::string& path) {
  return std::make_unique<SQLite::Database>(path, SQLite::OPEN_READONLY, SqliteStore::kBusyTimeoutMs);
}

// SQLite counts every allocation under one process-wide mutex so that sqlite3_status can
// report memory use, which nothing here reads: under pings that was half of the ~50
// mutex round trips SQLite made per stored ping. It can only be turned off before SQLite
// initializes; when something opened a database earlier the call fails and the counting
// stays on, which costs speed only.
void stop_memory_counting() {
  static std::once_flag once;
  std::call_once(once, [] { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

}  // namespace

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::string& path) {
  if (Status restricted = restrict_database_files(path); !restricted) return restricted.error();
  stop_memory_counting();
  std::unique_ptr<SQLite::Database> db;
  try {
    // NOMUTEX: this connection becomes the writer's, used by one thread at a time (this
    // one, then the writer thread alone), so SQLite's lock around each call (bind, step,
    // reset: the other half of those mutex round trips) guards nothing.
    db = std::make_unique<SQLite::Database>(
        path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_NOMUTEX, kBusyTimeoutMs);
    // The pragma answers with the mode in effect: a file system without shared memory
    // (some network mounts) stays in "delete" mode, where readers would block the writer.
    std::string mode = db->execAndGet("PRAGMA journal_mode = WAL").getString();
    if (mode != "wal") {
      return open_error(path, "it cannot use WAL mode (journal mode stays '" + mode + "'); use a local disk");
    }
    // FULL: a commit is on disk when it returns, which is what `done` promises.
    db->exec("PRAGMA synchronous = FULL");
  } catch (const std::exception& e) {
    return open_error(path, e.what());
  }
  if (Status migrated = migrate_sqlite(*db); !migrated) return migrated.error();
  try {
    auto chains = std::make_unique<PingChains>(*db);
    auto checkpointer = std::make_unique<Checkpointer>(path, *db);
    // After the migrations, which read through the WAL: it exists by now.
    auto files = DatabaseFiles::capture(path);
    if (!files) return open_error(path, files.error().message);
    auto writer = std::make_unique<Writer>(std::move(db), *chains, std::move(*files));
    auto reader = open_reader(path);  // fails here, not on the first read, if reading cannot work
    return std::unique_ptr<SqliteStore>(new SqliteStore(path, std::move(chains), std::move(checkpointer),
                                                        std::move(writer), std::move(reader)));
  } catch (const std::exception& e) {
    return open_error(path, e.what());
  }
}

SqliteStore::SqliteStore(std::string path, std::unique_ptr<PingChains> chains,
                         std::unique_ptr<Checkpointer> checkpointer, std::unique_ptr<Writer> writer,
                         std::unique_ptr<SQLite::Database> reader)
    : path_(std::move(path)),
      chains_(std::move(chains)),
      checkpointer_(std::move(checkpointer)),
      writer_(std::move(writer)) {
  idle_readers_.push_back(std::move(reader));
  queue_ = std::make_unique<WriteQueue>(
      *writer_, WriteQueueOptions{kMaxOpsPerTransaction, kPromptLinger,
                                  std::chrono::duration_cast<std::chrono::microseconds>(kBackgroundLinger),
                                  kFailureLogInterval, kFileCheckInterval});
}

SqliteStore::~SqliteStore() {
  queue_.reset();  // commits everything queued, then joins the writer
}

bool SqliteStore::write(WriteOp op, WriteDone done) { return queue_->write(std::move(op), std::move(done)); }

void SqliteStore::flush() { queue_->flush(); }

WriteHealth SqliteStore::write_health() const {
  WriteHealth health = queue_->health();
  // Refused for good from the moment a file vanished, even before a write is refused.
  if (std::string why = writer_->vanished(); !why.empty()) {
    health.refusing = true;
    health.reason = std::move(why);
  }
  return health;
}

// --- reads: each one's SQL is in read_*.cc (reads.h) ------------------------------

std::unique_ptr<SQLite::Database> SqliteStore::borrow_reader() {
  {
    std::lock_guard lock(readers_mu_);
    if (!idle_readers_.empty()) {
      auto db = std::move(idle_readers_.back());
      idle_readers_.pop_back();
      return db;
    }
  }
  return open_reader(path_);  // outside the lock: opening touches the disk
}

void SqliteStore::return_reader(std::unique_ptr<SQLite::Database> db) {
  std::lock_guard lock(readers_mu_);
  if (idle_readers_.size() < kMaxIdleReaders) idle_readers_.push_back(std::move(db));
}

template <typename T, typename Query>
Result<T> SqliteStore::read(const char* what, Query&& query) {
  try {
    std::unique_ptr<SQLite::Database> db = borrow_reader();
    Result<T> out = query(*db);
    return_reader(std::move(db));
    return out;
  } catch (const std::exception& e) {
    // The connection is dropped, not pooled: it costs one reopen and cannot carry a
    // half-finished statement into the next read.
    return make_error(store_error::kRead, std::string("cannot read ") + what + ": " + e.what());
  }
}

Result<std::vector<StoredState>> SqliteStore::load_states() {
  return read<std::vector<StoredState>>("monitor states",
                                        [](SQLite::Database& db) { return read_states(db); });
}

Result<std::vector<Incident>> SqliteStore::incidents(const IncidentQuery& query) {
  return read<std::vector<Incident>>("incidents",
                                     [&](SQLite::Database& db) { return read_incidents(db, query); });
}

Result<std::optional<Incident>> SqliteStore::incident(int64_t id) {
  return read<std::optional<Incident>>("an incident",
                                       [id](SQLite::Database& db) { return read_incident(db, id); });
}

Result<std::map<int64_t, std::vector<IncidentUpdate>>> SqliteStore::incident_updates(
    const std::vector<int64_t>& incident_ids) {
  using Out = std::map<int64_t, std::vector<IncidentUpdate>>;
  if (incident_ids.size() > kMaxRowsPerBatch) {
    return make_error(store_error::kTooMany,
                      "at most " + std::to_string(kMaxRowsPerBatch) + " incidents per read");
  }
  if (incident_ids.empty()) return Out{};
  return read<Out>("incident updates",
                   [&](SQLite::Database& db) { return read_incident_updates(db, incident_ids); });
}

Result<std::vector<CheckResult>> SqliteStore::results(const ResultQuery& query) {
  return read<std::vector<CheckResult>>("check results",
                                        [&](SQLite::Database& db) { return read_results(db, query); });
}

Result<std::vector<PingRecord>> SqliteStore::pings(const PingQuery& query) {
  return read<std::vector<PingRecord>>(
      "pings", [&](SQLite::Database& db) { return read_pings(db, query, chains_->head(query.monitor)); });
}

Result<HeartbeatMarks> SqliteStore::heartbeat_marks(const std::string& monitor) {
  return read<HeartbeatMarks>("heartbeat marks", [&](SQLite::Database& db) {
    return read_heartbeat_marks(db, monitor, chains_->head(monitor));
  });
}

Result<std::map<std::string, std::string>> SqliteStore::heartbeat_tokens() {
  return read<std::map<std::string, std::string>>(
      "heartbeat tokens", [](SQLite::Database& db) { return read_heartbeat_tokens(db); });
}

Result<std::vector<UptimeBucket>> SqliteStore::uptime(const UptimeQuery& query) {
  return read<std::vector<UptimeBucket>>("uptime rollups",
                                         [&](SQLite::Database& db) { return read_uptime(db, query); });
}

Result<std::map<std::string, std::vector<UptimeBucket>>> SqliteStore::uptime_of(
    const std::vector<std::string>& monitors, const UptimeQuery& query) {
  using Out = std::map<std::string, std::vector<UptimeBucket>>;
  if (monitors.size() > kMaxRowsPerBatch) {
    return make_error(store_error::kTooMany,
                      "at most " + std::to_string(kMaxRowsPerBatch) + " monitors per read");
  }
  if (monitors.empty()) return Out{};
  return read<Out>("uptime rollups",
                   [&](SQLite::Database& db) { return read_uptime_of(db, monitors, query); });
}

Result<std::vector<ApiMonitorSpec>> SqliteStore::api_monitors() {
  return read<std::vector<ApiMonitorSpec>>("API monitors",
                                           [](SQLite::Database& db) { return read_api_monitors(db); });
}

Result<NodeReportFeed> SqliteStore::node_reports_after(int64_t cursor) {
  return read<NodeReportFeed>("node reports",
                              [cursor](SQLite::Database& db) { return read_node_reports_after(db, cursor); });
}

Result<std::vector<StoredJobMemo>> SqliteStore::job_memos() {
  return read<std::vector<StoredJobMemo>>("job memos",
                                          [](SQLite::Database& db) { return read_job_memos(db); });
}

Result<std::vector<UserRecord>> SqliteStore::users() {
  return read<std::vector<UserRecord>>("users",
                                       [](SQLite::Database& db) { return read_users(db, kMaxUsers); });
}

Result<std::vector<ApiTokenRecord>> SqliteStore::api_tokens() {
  return read<std::vector<ApiTokenRecord>>(
      "API tokens", [](SQLite::Database& db) { return read_api_tokens(db, kMaxApiTokens); });
}

Result<std::vector<AuditEntry>> SqliteStore::audit(const AuditQuery& query) {
  return read<std::vector<AuditEntry>>("the audit log",
                                       [query](SQLite::Database& db) { return read_audit(db, query); });
}

Result<std::optional<std::string>> SqliteStore::shared_key(const std::string& name) {
  return read<std::optional<std::string>>("a shared key",
                                          [name](SQLite::Database& db) { return read_shared_key(db, name); });
}

Result<bool> SqliteStore::alert_link_used(const std::string& id) {
  return read<bool>("the used alert links",
                    [id](SQLite::Database& db) { return read_alert_link_used(db, id); });
}

Result<std::vector<ApiWindowSpec>> SqliteStore::api_windows() {
  return read<std::vector<ApiWindowSpec>>("API maintenance windows",
                                          [](SQLite::Database& db) { return read_api_windows(db); });
}

Result<std::vector<ApiChannelSpec>> SqliteStore::api_channels() {
  return read<std::vector<ApiChannelSpec>>("API notification channels",
                                           [](SQLite::Database& db) { return read_api_channels(db); });
}

Result<int64_t> SqliteStore::next_api_window_id() {
  return read<int64_t>("the next maintenance window id",
                       [](SQLite::Database& db) { return read_next_api_window_id(db); });
}

Result<int64_t> SqliteStore::next_incident_id() {
  return read<int64_t>("the next incident id",
                       [](SQLite::Database& db) { return read_next_incident_id(db); });
}

Result<std::vector<Delivery>> SqliteStore::deliveries(const DeliveryQuery& query) {
  return read<std::vector<Delivery>>("deliveries",
                                     [&](SQLite::Database& db) { return read_deliveries(db, query); });
}

}  // namespace trainwatch::sqlite
