#include "storage/sqlite/sqlite_store.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <utility>

#include "storage/data_dir.h"
#include "storage/sqlite/checkpointer.h"
#include "storage/sqlite/database_files.h"
#include "storage/sqlite/migrations.h"
#include "storage/sqlite/ping_chains.h"

namespace trainwatch::sqlite {
namespace {

Error open_error(const std::string& path, const std::string& why) {
  return make_error("store.open", "cannot open the database '" + path + "': " + why);
}

std::unique_ptr<SQLite::Database> open_reader(const std::string& path) {
  return std::make_unique<SQLite::Database>(path, SQLite::OPEN_READONLY, SqliteStore::kBusyTimeoutMs);
}

int64_t ms(SystemTime t) { return to_unix_ms(t); }

void bind_optional(SQLite::Statement& s, int index, const std::optional<SystemTime>& t) {
  if (t) {
    s.bind(index, ms(*t));
  } else {
    s.bind(index);
  }
}

void bind_optional(SQLite::Statement& s, int index, const std::optional<int64_t>& v) {
  if (v) {
    s.bind(index, *v);
  } else {
    s.bind(index);
  }
}

std::optional<SystemTime> optional_time(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return from_unix_ms(c.getInt64());
}

Incident incident_from_row(SQLite::Statement& row) {
  Incident i;
  i.id = row.getColumn(0).getInt64();
  i.monitor = row.getColumn(1).getString();
  i.started = from_unix_ms(row.getColumn(2).getInt64());
  i.ended = optional_time(row.getColumn(3));
  i.cause = row.getColumn(4).getString();
  i.caused_by = row.getColumn(5).getString();
  return i;
}

// One ping by id, with the id of its monitor's previous ping last (column 10).
constexpr const char* kPingById =
    "SELECT id, monitor, at_ms, kind, exit_code, source, user_agent, body, body_truncated, run_ms, prev_id "
    "FROM heartbeat_pings WHERE id = ?";

Result<PingRecord> ping_from_row(SQLite::Statement& row) {
  PingRecord r;
  r.id = row.getColumn(0).getInt64();
  r.monitor = row.getColumn(1).getString();
  r.ping.at = from_unix_ms(row.getColumn(2).getInt64());
  const std::string kind = row.getColumn(3).getString();
  auto parsed = ping_kind_from_string(kind);
  if (!parsed)
    return make_error("store.corrupt", "ping " + std::to_string(r.id) + " has unknown kind '" + kind + "'");
  r.ping.kind = *parsed;
  r.ping.exit_code = row.getColumn(4).getInt();
  r.ping.source = row.getColumn(5).getString();
  r.ping.user_agent = row.getColumn(6).getString();
  r.ping.body = row.getColumn(7).getString();
  r.ping.body_truncated = row.getColumn(8).getInt() != 0;
  if (!row.getColumn(9).isNull()) r.run_ms = row.getColumn(9).getInt64();
  return r;
}

constexpr const char* kDeliveryColumns =
    "SELECT id, channel, monitor, incident_id, kind, event, created_ms, due_ms, status, attempts, "
    "first_attempt_ms, last_attempt_ms, next_attempt_ms, last_error, http_status, finished_ms FROM deliveries";

Delivery delivery_from_row(SQLite::Statement& row) {
  Delivery d;
  d.id = row.getColumn(0).getInt64();
  d.spec.channel = row.getColumn(1).getString();
  d.spec.monitor = row.getColumn(2).getString();
  if (!row.getColumn(3).isNull()) d.spec.incident_id = row.getColumn(3).getInt64();
  d.spec.kind = row.getColumn(4).getString();
  d.spec.event = row.getColumn(5).getString();
  d.spec.created = from_unix_ms(row.getColumn(6).getInt64());
  d.spec.due = from_unix_ms(row.getColumn(7).getInt64());
  // An unknown status (a newer trainwatch wrote it) reads as failed: never re-sent.
  d.status = delivery_status_from_string(row.getColumn(8).getString()).value_or(DeliveryStatus::kFailed);
  d.attempts = row.getColumn(9).getInt();
  d.first_attempt = optional_time(row.getColumn(10));
  d.last_attempt = optional_time(row.getColumn(11));
  d.next_attempt = optional_time(row.getColumn(12));
  d.last_error = row.getColumn(13).getString();
  d.http_status = row.getColumn(14).getInt();
  d.finished = optional_time(row.getColumn(15));
  return d;
}

constexpr const char* kIncidentColumns =
    "SELECT id, monitor, started_ms, ended_ms, cause, caused_by FROM incidents";

// Why a write failed, as counted in WriteHealth::failures_by_reason, and whether the
// same write may succeed later. Unknown errors count as passing: retrying a write that
// fails for good costs a log line per interval, dropping one that would have gone
// through loses an alert.
struct FailureKind {
  const char* reason;
  bool passes;
};

FailureKind classify(const std::exception& e) {
  const auto* sqlite = dynamic_cast<const SQLite::Exception*>(&e);
  if (sqlite == nullptr) return {"other", true};
  switch (sqlite->getErrorCode() & 0xff) {
    case SQLITE_FULL: return {"disk_full", true};
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN: return {"io_error", true};
    case SQLITE_READONLY: return {"read_only", true};
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return {"busy", true};
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return {"corrupt", false};
    case SQLITE_CONSTRAINT: return {"constraint", false};
    default: return {"other", true};
  }
}

Error write_error(FailureKind kind, std::string message) {
  return make_error(kind.passes ? "store.unavailable" : "store.write", std::move(message));
}

}  // namespace

// The write connection and its prepared statements. Used only by the writer thread.
class SqliteStore::Writer final : public BatchApplier {
 public:
  Writer(std::unique_ptr<SQLite::Database> db, PingChains& chains, DatabaseFiles files)
      : db_(std::move(db)),
        chains_(chains),
        files_(std::move(files)),
        insert_result_(
            *db_,
            "INSERT INTO check_results (monitor, at_ms, ok, latency_ms, cause, http_status, dns_ms, "
            "connect_ms, tls_ms, first_byte_ms, total_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
        upsert_state_(
            *db_,
            "INSERT INTO monitor_state (monitor, status, since_ms, last_check_ms, last_latency_ms, "
            "last_error, consecutive_failures, open_incident_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (monitor) DO UPDATE SET status = excluded.status, since_ms = excluded.since_ms, "
            "last_check_ms = excluded.last_check_ms, last_latency_ms = excluded.last_latency_ms, "
            "last_error = excluded.last_error, consecutive_failures = excluded.consecutive_failures, "
            "open_incident_id = excluded.open_incident_id"),
        insert_incident_(
            *db_,
            "INSERT INTO incidents (id, monitor, started_ms, ended_ms, cause, caused_by) VALUES (?, ?, ?, ?, ?, ?)"),
        // COALESCE keeps the first end time: closing twice is harmless and changes nothing.
        close_incident_(*db_, "UPDATE incidents SET ended_ms = COALESCE(ended_ms, ?) WHERE id = ?"),
        insert_ping_(
            *db_,
            "INSERT INTO heartbeat_pings (monitor, at_ms, kind, exit_code, source, user_agent, body, "
            "body_truncated, run_ms, prev_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
        // DO NOTHING: the first generated token stays, so a URL once shown keeps working.
        savepoint_(*db_, "SAVEPOINT op"),
        release_(*db_, "RELEASE op"),
        insert_token_(*db_,
                      "INSERT INTO heartbeat_tokens (monitor, token, created_ms) VALUES (?, ?, ?) "
                      "ON CONFLICT (monitor) DO NOTHING"),
        insert_delivery_(
            *db_,
            "INSERT INTO deliveries (channel, monitor, incident_id, kind, event, created_ms, due_ms) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)"),
        update_delivery_(
            *db_,
            "UPDATE deliveries SET status = ?, attempts = ?, first_attempt_ms = ?, last_attempt_ms = ?, "
            "next_attempt_ms = ?, last_error = ?, http_status = ?, finished_ms = ? WHERE id = ?"),
        add_hourly_(*db_, rollup_upsert("uptime_hourly")),
        add_daily_(*db_, rollup_upsert("uptime_daily")),
        // Oldest first through the at_ms index; LIMIT keeps one prune short.
        prune_(*db_,
               "DELETE FROM check_results WHERE id IN (SELECT id FROM check_results WHERE at_ms < ? "
               "ORDER BY at_ms LIMIT ?)"),
        prune_hourly_(*db_,
                      "DELETE FROM uptime_hourly WHERE (monitor, start_ms) IN (SELECT monitor, start_ms FROM "
                      "uptime_hourly WHERE start_ms < ? ORDER BY start_ms LIMIT ?)"),
        // Pings are in arrival order and have no time index: look only at the oldest
        // `max_rows` of them, so a prune with nothing to delete reads a chunk, not the log.
        // A chain that reaches a deleted ping ends there.
        prune_pings_(*db_,
                     "DELETE FROM heartbeat_pings WHERE id IN (SELECT id FROM (SELECT id, at_ms FROM "
                     "heartbeat_pings ORDER BY id LIMIT ?) WHERE at_ms < ?)"),
        prune_node_reports_(*db_,
                            "DELETE FROM node_reports WHERE id IN (SELECT id FROM node_reports WHERE "
                            "received_ms < ? ORDER BY received_ms LIMIT ?)"),
        save_node_report_(*db_,
                          "INSERT OR REPLACE INTO node_reports (job, node, received_ms, writer, body) "
                          "VALUES (?, ?, ?, ?, ?)"),
        prune_job_memos_(*db_,
                         "DELETE FROM job_memos WHERE job IN (SELECT job FROM job_memos WHERE saved_ms < ? "
                         "ORDER BY saved_ms LIMIT ?)") {}

  // Applies `batch` in one transaction; returns one outcome per operation, in order.
  std::vector<WriteOutcome> apply(const std::vector<QueuedWrite>& batch) override {
    if (files_gone()) return refused(batch.size());
    std::vector<WriteOutcome> out;
    out.reserve(batch.size());
    try {
      SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
      for (const QueuedWrite& p : batch) out.push_back(apply_one(p.op));
      tx.commit();
      chains_.commit();
    } catch (const std::exception& e) {
      chains_.abort();
      // Nothing of the batch is durable, whatever each operation reported on its own.
      const FailureKind kind = classify(e);
      out.assign(batch.size(),
                 WriteOutcome{write_error(kind, std::string("the write transaction failed: ") + e.what()),
                              kind.reason});
    } catch (...) {
      chains_.abort();
      out.assign(batch.size(),
                 WriteOutcome{make_error("store.unavailable", "the write transaction failed"), "other"});
    }
    // Committed into a file that was unlinked meanwhile: not durable, so not acknowledged.
    if (files_gone()) return refused(batch.size());
    return out;
  }

  // Between batches, so that an idle store notices a vanished file too (WriteQueue's idle_tick).
  void idle() override { (void)files_gone(); }

  // Why writes are refused for good (a file vanished); "" while they are not. Any thread.
  std::string vanished() const {
    std::lock_guard lock(vanished_mu_);
    return vanished_;
  }

  // Saves the ping chains' heads when they changed and the last save is kHeadsSaveInterval
  // old (or always at shutdown, so the next start has nothing to replay). A failed save is
  // retried at the next one.
  void after_batch(bool force) override {
    if (gone_) return;  // no write at all into files that are gone
    const auto now = std::chrono::steady_clock::now();
    if (!chains_.unsaved() || (!force && now - last_heads_save_ < kHeadsSaveInterval)) return;
    last_heads_save_ = now;
    try {
      chains_.save(*db_);
    } catch (const std::exception&) {
      // Nothing is lost: the heads stay in memory, and a restart replays the pings.
    }
  }

 private:
  // One operation under a savepoint, so that its failure undoes only its own changes.
  // Throws only when the savepoint itself cannot be undone (the transaction is gone,
  // e.g. SQLite rolled it back on a full disk); the caller then fails the whole batch.
  WriteOutcome apply_one(const WriteOp& op) {
    // Prepared once: compiling these two statements per operation cost more than a ping's
    // INSERT itself.
    fresh(savepoint_).exec();
    Status status = Ok{};
    try {
      status = std::visit([this](const auto& o) { return run(o); }, op);
    } catch (const std::exception& e) {
      if (!undo_savepoint()) throw;
      const FailureKind kind = classify(e);
      return WriteOutcome{write_error(kind, e.what()), kind.reason};
    }
    if (status.ok()) {
      fresh(release_).exec();
    } else if (!undo_savepoint()) {
      throw std::runtime_error("cannot undo a failed operation: " + status.error().message);
    }
    return WriteOutcome{std::move(status), nullptr};
  }

  // Whether the database or its WAL is gone from under the store (database_files.h). The
  // first time, every frame this connection committed is copied from the WAL it still
  // holds open into the database file (a FULL checkpoint, synced), so what was acknowledged
  // survives the restart that reopens the store; from then on every write is refused.
  // Reopening here instead would leave the readers and the checkpointer on the old files.
  bool files_gone() {
    if (gone_) return true;
    const std::string why = files_.vanished();
    if (why.empty()) return false;
    gone_ = true;
    std::string rescue;
    if (!files_.database_in_place()) {
      rescue = "what the database held is lost unless restored from a backup";
    } else {
      try {
        SQLite::Statement q(*db_, "PRAGMA wal_checkpoint(FULL)");
        q.executeStep();
        const int busy = q.getColumn(0).getInt();
        const int frames = q.getColumn(1).getInt();
        const int copied = q.getColumn(2).getInt();
        rescue = busy == 0 && copied == frames
                     ? "every committed write (" + std::to_string(frames) +
                           " WAL pages) was copied into the database file first"
                     : "only " + std::to_string(copied) + " of " + std::to_string(frames) +
                           " WAL pages could be copied into the database file; the rest is lost at restart";
      } catch (const std::exception& e) {
        rescue = std::string("the committed writes could not be copied into the database file: ") + e.what();
      }
    }
    spdlog::error("store: {}; {}; every write is refused until trainwatch is restarted", why, rescue);
    std::lock_guard lock(vanished_mu_);
    vanished_ = why + "; writes are refused until trainwatch is restarted";
    return true;
  }

  std::vector<WriteOutcome> refused(size_t n) const {
    return std::vector<WriteOutcome>(
        n, WriteOutcome{make_error("store.unavailable", vanished()), "file_vanished"});
  }

  bool undo_savepoint() {
    try {
      db_->exec("ROLLBACK TO op");
      db_->exec("RELEASE op");
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }

  // A statement left in an error state by an earlier failure still resets cleanly with
  // tryReset; reset() would rethrow that old error.
  static SQLite::Statement& fresh(SQLite::Statement& s) {
    s.tryReset();
    s.clearBindings();
    return s;
  }

  Status run(const RecordResult& op) {
    SQLite::Statement& r = fresh(insert_result_);
    const CheckResult& c = op.result;
    r.bind(1, op.monitor);
    r.bind(2, ms(c.at));
    r.bind(3, c.ok ? 1 : 0);
    r.bind(4, c.latency_ms);
    r.bind(5, c.cause);
    r.bind(6, c.http_status);
    r.bind(7, c.timings.dns_ms);
    r.bind(8, c.timings.connect_ms);
    r.bind(9, c.timings.tls_ms);
    r.bind(10, c.timings.first_byte_ms);
    r.bind(11, c.timings.total_ms);
    r.exec();
    if (op.opened) (void)run(OpenIncident{*op.opened});  // it throws on failure; it never returns one
    if (op.closed) {
      SQLite::Statement& close = fresh(close_incident_);
      close.bind(1, ms(op.closed->ended));
      close.bind(2, op.closed->id);
      close.exec();
    }
    for (const NewDelivery& d : op.outbox) {
      SQLite::Statement& q = fresh(insert_delivery_);
      q.bind(1, d.channel);
      q.bind(2, d.monitor);
      bind_optional(q, 3, d.incident_id);
      q.bind(4, d.kind);
      q.bind(5, d.event);
      q.bind(6, ms(d.created));
      q.bind(7, ms(d.due));
      q.exec();
    }
    add_to_rollup(add_hourly_, op, kHourMs);
    add_to_rollup(add_daily_, op, kDayMs);
    return save_state(op.monitor, op.state);
  }

  Status run(const UpdateDelivery& op) {
    SQLite::Statement& s = fresh(update_delivery_);
    s.bind(1, std::string(to_string(op.status)));
    s.bind(2, op.attempts);
    bind_optional(s, 3, op.first_attempt);
    bind_optional(s, 4, op.last_attempt);
    bind_optional(s, 5, op.next_attempt);
    s.bind(6, op.last_error);
    s.bind(7, op.http_status);
    bind_optional(s, 8, op.finished);
    s.bind(9, op.id);
    if (s.exec() == 0) {
      return make_error("store.not_found",
                        "cannot update delivery " + std::to_string(op.id) + ": no such delivery");
    }
    return Ok{};
  }

  Status run(const SaveApiMonitor& op) {
    SQLite::Statement s(*db_,
                        "INSERT INTO api_monitors (name, spec_json) VALUES (?, ?) "
                        "ON CONFLICT (name) DO UPDATE SET spec_json = excluded.spec_json");
    s.bind(1, op.name);
    s.bind(2, op.spec_json);
    s.exec();
    return Ok{};
  }

  Status run(const DeleteApiMonitor& op) {
    SQLite::Statement s(*db_, "DELETE FROM api_monitors WHERE name = ?");
    s.bind(1, op.name);
    s.exec();
    return Ok{};
  }

  Status run(const SaveApiWindow& op) {
    SQLite::Statement s(*db_, "INSERT INTO api_maintenance (id, spec_json, created_ms) VALUES (?, ?, ?)");
    s.bind(1, op.id);
    s.bind(2, op.spec_json);
    s.bind(3, to_unix_ms(op.created));
    s.exec();
    return Ok{};
  }

  Status run(const DeleteApiWindow& op) {
    SQLite::Statement s(*db_, "DELETE FROM api_maintenance WHERE id = ?");
    s.bind(1, op.id);
    s.exec();
    return Ok{};
  }

  // The incident's existence and its update count are read inside the transaction, so the
  // bound holds however many updates arrive at once: the writer applies them one by one.
  Status run(const AddIncidentUpdate& op) {
    const IncidentUpdate& u = op.update;
    SQLite::Statement count(*db_,
                            "SELECT (SELECT COUNT(*) FROM incidents WHERE id = ?1), "
                            "(SELECT COUNT(*) FROM incident_updates WHERE incident_id = ?1)");
    count.bind(1, u.incident_id);
    count.executeStep();
    if (count.getColumn(0).getInt64() == 0) {
      return make_error("store.not_found", "no incident " + std::to_string(u.incident_id));
    }
    if (count.getColumn(1).getInt64() >= kMaxUpdatesPerIncident) {
      return make_error("store.full", "incident " + std::to_string(u.incident_id) + " already has " +
                                          std::to_string(kMaxUpdatesPerIncident) +
                                          " updates, the most it takes");
    }
    SQLite::Statement s(
        *db_, "INSERT INTO incident_updates (incident_id, at_ms, status, text) VALUES (?, ?, ?, ?)");
    s.bind(1, u.incident_id);
    s.bind(2, ms(u.at));
    s.bind(3, std::string(to_string(u.status)));
    s.bind(4, u.text);
    s.exec();
    return Ok{};
  }

  Status run(const PruneResults& op) {
    SQLite::Statement& s = fresh(prune_);
    s.bind(1, ms(op.before));
    s.bind(2, op.max_rows);
    s.exec();
    SQLite::Statement& h = fresh(prune_hourly_);
    h.bind(1, ms(op.before));
    h.bind(2, op.max_rows);
    h.exec();
    SQLite::Statement& p = fresh(prune_pings_);
    p.bind(1, op.max_rows);
    p.bind(2, ms(op.before));
    p.exec();
    SQLite::Statement& n = fresh(prune_node_reports_);
    n.bind(1, ms(op.before));
    n.bind(2, op.max_rows);
    n.exec();
    SQLite::Statement& m = fresh(prune_job_memos_);
    m.bind(1, ms(op.before));
    m.bind(2, op.max_rows);
    m.exec();
    return Ok{};
  }

  Status run(const SaveJobMemo& op) {
    SQLite::Statement s(
        *db_,
        "INSERT INTO job_memos (job, saved_ms, body) VALUES (?, ?, ?) ON CONFLICT (job) DO UPDATE "
        "SET saved_ms = excluded.saved_ms, body = excluded.body");
    s.bind(1, op.job);
    s.bind(2, ms(op.saved));
    s.bind(3, op.body);
    s.exec();
    return Ok{};
  }

  // Replaces the node's row, which takes a new id: the newest report sorts last.
  Status run(const SaveNodeReport& op) {
    SQLite::Statement& s = fresh(save_node_report_);
    s.bind(1, op.job);
    s.bind(2, op.node);
    s.bind(3, ms(op.received));
    s.bind(4, op.writer);
    s.bind(5, op.body);
    s.exec();
    return Ok{};
  }

  static constexpr int64_t kHourMs = 3'600'000;
  static constexpr int64_t kDayMs = 86'400'000;

  static std::string rollup_upsert(const char* table) {
    return std::string("INSERT INTO ") + table +
           " (monitor, start_ms, checks, ok, latency_sum_ms) VALUES (?, ?, 1, ?, ?) "
           "ON CONFLICT (monitor, start_ms) DO UPDATE SET checks = checks + 1, ok = ok + excluded.ok, "
           "latency_sum_ms = latency_sum_ms + excluded.latency_sum_ms";
  }

  static void add_to_rollup(SQLite::Statement& statement, const RecordResult& op, int64_t width_ms) {
    SQLite::Statement& s = fresh(statement);
    const CheckResult& c = op.result;
    const int64_t at = ms(c.at);
    // Floor division: results before 1970 (a broken clock) still land in one bucket.
    const int64_t start = at - (((at % width_ms) + width_ms) % width_ms);
    s.bind(1, op.monitor);
    s.bind(2, start);
    s.bind(3, counts_as_up(op) ? 1 : 0);
    s.bind(4, c.latency_ms);
    s.exec();
  }

  Status run(const SaveState& op) { return save_state(op.monitor, op.state); }

  Status run(const OpenIncident& op) {
    SQLite::Statement& s = fresh(insert_incident_);
    const Incident& i = op.incident;
    s.bind(1, i.id);
    s.bind(2, i.monitor);
    s.bind(3, ms(i.started));
    bind_optional(s, 4, i.ended);
    s.bind(5, i.cause);
    s.bind(6, i.caused_by);
    s.exec();
    return Ok{};
  }

  Status run(const CloseIncident& op) {
    SQLite::Statement& s = fresh(close_incident_);
    s.bind(1, ms(op.ended));
    s.bind(2, op.id);
    if (s.exec() == 0) {
      return make_error("store.not_found",
                        "cannot close incident " + std::to_string(op.id) + ": no such incident");
    }
    return Ok{};
  }

  Status run(const RecordPing& op) {
    SQLite::Statement& s = fresh(insert_ping_);
    const PingRecord& r = op.record;
    s.bind(1, r.monitor);
    s.bind(2, ms(r.ping.at));
    s.bind(3, std::string(to_string(r.ping.kind)));
    s.bind(4, r.ping.exit_code);
    s.bind(5, r.ping.source);
    s.bind(6, r.ping.user_agent);
    s.bind(7, r.ping.body);
    s.bind(8, r.ping.body_truncated ? 1 : 0);
    bind_optional(s, 9, r.run_ms);
    bind_optional(s, 10, chains_.prev(r.monitor));
    s.exec();
    chains_.append(r.monitor, db_->getLastInsertRowid());
    return Ok{};
  }

  Status run(const SaveToken& op) {
    SQLite::Statement& s = fresh(insert_token_);
    s.bind(1, op.monitor);
    s.bind(2, op.token);
    s.bind(3, ms(std::chrono::system_clock::now()));  // for people reading the table only
    s.exec();
    return Ok{};
  }

  Status save_state(const std::string& monitor, const MonitorState& st) {
    SQLite::Statement& s = fresh(upsert_state_);
    s.bind(1, monitor);
    s.bind(2, std::string(to_string(st.status)));
    s.bind(3, ms(st.since));
    bind_optional(s, 4, st.last_check);
    s.bind(5, st.last_latency_ms);
    s.bind(6, st.last_error);
    s.bind(7, st.consecutive_failures);
    bind_optional(s, 8, st.open_incident_id);
    s.exec();
    return Ok{};
  }

  // Saving heads costs one upsert per pinged monitor; every 10 s keeps that rare and the
  // replay at the next start short (at most 10 s of pings).
  static constexpr std::chrono::seconds kHeadsSaveInterval{10};

  std::unique_ptr<SQLite::Database> db_;
  PingChains& chains_;
  const DatabaseFiles files_;
  bool gone_ = false;               // the writer thread's: a file vanished, writes are refused
  mutable std::mutex vanished_mu_;  // guards vanished_, read by write_health() on any thread
  std::string vanished_;
  std::chrono::steady_clock::time_point last_heads_save_ = std::chrono::steady_clock::now();
  SQLite::Statement insert_result_;
  SQLite::Statement upsert_state_;
  SQLite::Statement insert_incident_;
  SQLite::Statement close_incident_;
  SQLite::Statement insert_ping_;
  SQLite::Statement savepoint_;
  SQLite::Statement release_;
  SQLite::Statement insert_token_;
  SQLite::Statement insert_delivery_;
  SQLite::Statement update_delivery_;
  SQLite::Statement add_hourly_;
  SQLite::Statement add_daily_;
  SQLite::Statement prune_;
  SQLite::Statement prune_hourly_;
  SQLite::Statement prune_pings_;
  SQLite::Statement prune_node_reports_;
  SQLite::Statement save_node_report_;
  SQLite::Statement prune_job_memos_;
};

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::string& path) {
  if (Status restricted = restrict_database_files(path); !restricted) return restricted.error();
  std::unique_ptr<SQLite::Database> db;
  try {
    db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE,
                                            kBusyTimeoutMs);
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

// --- reads --------------------------------------------------------------------------

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
    return make_error("store.read", std::string("cannot read ") + what + ": " + e.what());
  }
}

Result<std::vector<StoredState>> SqliteStore::load_states() {
  return read<std::vector<StoredState>>(
      "monitor states", [](SQLite::Database& db) -> Result<std::vector<StoredState>> {
        SQLite::Statement q(db,
                            "SELECT monitor, status, since_ms, last_check_ms, last_latency_ms, last_error, "
                            "consecutive_failures, open_incident_id FROM monitor_state ORDER BY monitor");
        std::vector<StoredState> out;
        while (q.executeStep()) {
          StoredState s;
          s.monitor = q.getColumn(0).getString();
          const std::string status = q.getColumn(1).getString();
          auto parsed = monitor_status_from_string(status);
          if (!parsed) {
            return make_error("store.corrupt", "monitor '" + s.monitor + "' has unknown status '" + status +
                                                   "' in the database");
          }
          s.state.status = *parsed;
          s.state.since = from_unix_ms(q.getColumn(2).getInt64());
          s.state.last_check = optional_time(q.getColumn(3));
          s.state.last_latency_ms = q.getColumn(4).getDouble();
          s.state.last_error = q.getColumn(5).getString();
          s.state.consecutive_failures = q.getColumn(6).getInt();
          if (!q.getColumn(7).isNull()) s.state.open_incident_id = q.getColumn(7).getInt64();
          out.push_back(std::move(s));
        }
        return out;
      });
}

Result<std::vector<Incident>> SqliteStore::incidents(const IncidentQuery& query) {
  return read<std::vector<Incident>>("incidents", [&](SQLite::Database& db) -> Result<std::vector<Incident>> {
    // Conditions are added only when asked for: "(? IS NULL OR monitor = ?)" would keep
    // SQLite from using the (monitor, id) index.
    std::string sql = kIncidentColumns;
    const char* glue = " WHERE ";
    if (query.monitor) {
      sql += glue + std::string("monitor = ?");
      glue = " AND ";
    }
    if (query.before_id) sql += glue + std::string("id < ?");
    sql += " ORDER BY id DESC LIMIT ?";
    SQLite::Statement q(db, sql);
    int index = 1;
    if (query.monitor) q.bind(index++, *query.monitor);
    if (query.before_id) q.bind(index++, *query.before_id);
    q.bind(index, std::clamp(query.limit, 0, kMaxRowsPerRead));
    std::vector<Incident> out;
    while (q.executeStep()) out.push_back(incident_from_row(q));
    return out;
  });
}

Result<std::optional<Incident>> SqliteStore::incident(int64_t id) {
  return read<std::optional<Incident>>(
      "an incident", [&](SQLite::Database& db) -> Result<std::optional<Incident>> {
        SQLite::Statement q(db, std::string(kIncidentColumns) + " WHERE id = ?");
        q.bind(1, id);
        if (!q.executeStep()) return std::optional<Incident>();
        return std::optional<Incident>(incident_from_row(q));
      });
}

Result<std::map<int64_t, std::vector<IncidentUpdate>>> SqliteStore::incident_updates(
    const std::vector<int64_t>& incident_ids) {
  using Out = std::map<int64_t, std::vector<IncidentUpdate>>;
  if (incident_ids.size() > kMaxRowsPerBatch) {
    return make_error("store.too_many",
                      "at most " + std::to_string(kMaxRowsPerBatch) + " incidents per read");
  }
  if (incident_ids.empty()) return Out{};
  return read<Out>("incident updates", [&](SQLite::Database& db) -> Result<Out> {
    std::string sql =
        "SELECT id, incident_id, at_ms, status, text FROM incident_updates WHERE incident_id IN (";
    for (size_t i = 0; i < incident_ids.size(); ++i) sql += i == 0 ? "?" : ", ?";
    sql += ") ORDER BY incident_id, id";
    SQLite::Statement q(db, sql);
    for (size_t i = 0; i < incident_ids.size(); ++i) q.bind(static_cast<int>(i + 1), incident_ids[i]);
    Out out;
    while (q.executeStep()) {
      IncidentUpdate u;
      u.id = q.getColumn(0).getInt64();
      u.incident_id = q.getColumn(1).getInt64();
      u.at = from_unix_ms(q.getColumn(2).getInt64());
      // A status written by a newer trainwatch that this one does not know reads as investigating.
      u.status = incident_update_status_from_string(q.getColumn(3).getString())
                     .value_or(IncidentUpdateStatus::kInvestigating);
      u.text = q.getColumn(4).getString();
      auto& list = out[u.incident_id];
      if (static_cast<int>(list.size()) < kMaxUpdatesPerIncident) list.push_back(std::move(u));
    }
    return out;
  });
}

Result<std::vector<CheckResult>> SqliteStore::results(const ResultQuery& query) {
  return read<std::vector<CheckResult>>(
      "check results", [&](SQLite::Database& db) -> Result<std::vector<CheckResult>> {
        std::string sql =
            "SELECT at_ms, ok, latency_ms, cause, http_status, dns_ms, connect_ms, tls_ms, first_byte_ms, "
            "total_ms "
            "FROM check_results WHERE monitor = ?";
        if (query.before_ms) sql += " AND at_ms < ?";
        sql += " ORDER BY at_ms DESC, id DESC LIMIT ?";
        SQLite::Statement q(db, sql);
        int index = 1;
        q.bind(index++, query.monitor);
        if (query.before_ms) q.bind(index++, *query.before_ms);
        q.bind(index, std::clamp(query.limit, 0, kMaxRowsPerRead));
        std::vector<CheckResult> out;
        while (q.executeStep()) {
          CheckResult r;
          r.at = from_unix_ms(q.getColumn(0).getInt64());
          r.ok = q.getColumn(1).getInt() != 0;
          r.latency_ms = q.getColumn(2).getDouble();
          r.cause = q.getColumn(3).getString();
          r.http_status = q.getColumn(4).getInt();
          r.timings =
              HttpTimings{q.getColumn(5).getDouble(), q.getColumn(6).getDouble(), q.getColumn(7).getDouble(),
                          q.getColumn(8).getDouble(), q.getColumn(9).getDouble()};
          out.push_back(std::move(r));
        }
        return out;
      });
}

namespace {

std::optional<int64_t> optional_id(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt64();
}

// Walks `monitor`'s ping chain newest first from ping `from`, handing each ping to
// `visit` until it returns false or the chain ends (at its first ping, or where
// older pings were deleted).
template <typename Visit>
Status walk_pings(SQLite::Database& db, const std::string& monitor, std::optional<int64_t> from,
                  Visit&& visit) {
  SQLite::Statement q(db, kPingById);
  while (from) {
    q.reset();
    q.bind(1, *from);
    if (!q.executeStep()) break;
    auto record = ping_from_row(q);
    if (!record) return record.error();
    if (record->monitor != monitor) {
      return make_error("store.corrupt", "ping " + std::to_string(*from) + " is in the chain of '" + monitor +
                                             "' but belongs to '" + record->monitor + "'");
    }
    from = optional_id(q.getColumn(10));
    if (!visit(std::move(*record))) break;
  }
  return Ok{};
}

}  // namespace

Result<std::vector<PingRecord>> SqliteStore::pings(const PingQuery& query) {
  return read<std::vector<PingRecord>>("pings", [&](SQLite::Database& db) -> Result<std::vector<PingRecord>> {
    const size_t limit = static_cast<size_t>(std::clamp(query.limit, 0, kMaxRowsPerRead));
    std::optional<int64_t> from = chains_->head(query.monitor);
    if (query.before_id) {
      // The usual cursor is the last ping of the previous page: go on from the one before
      // it. Any other id: walk from the newest and skip what is not older.
      SQLite::Statement at(db, kPingById);
      at.bind(1, *query.before_id);
      if (at.executeStep() && at.getColumn(1).getString() == query.monitor)
        from = optional_id(at.getColumn(10));
    }
    std::vector<PingRecord> out;
    if (limit == 0) return out;
    Status walked = walk_pings(db, query.monitor, from, [&](PingRecord record) {
      if (query.before_id && record.id >= *query.before_id) return true;
      out.push_back(std::move(record));
      return out.size() < limit;
    });
    if (!walked) return walked.error();
    return out;
  });
}

Result<HeartbeatMarks> SqliteStore::heartbeat_marks(const std::string& monitor) {
  return read<HeartbeatMarks>("heartbeat marks", [&](SQLite::Database& db) -> Result<HeartbeatMarks> {
    // Newest first until the first finish: usually one or two rows.
    HeartbeatMarks marks;
    int scanned = 0;
    Status walked = walk_pings(db, monitor, chains_->head(monitor), [&](PingRecord record) {
      if (!marks.last_ping) marks.last_ping = record;
      if (is_finish(record.ping.kind)) {
        marks.last_finish = std::move(record);
        return false;
      }
      if (record.ping.kind == PingKind::kStart && !marks.open_start) marks.open_start = record.ping.at;
      return ++scanned < kMaxMarkScan;
    });
    if (!walked) return walked.error();
    return marks;
  });
}

Result<std::map<std::string, std::string>> SqliteStore::heartbeat_tokens() {
  return read<std::map<std::string, std::string>>(
      "heartbeat tokens", [](SQLite::Database& db) -> Result<std::map<std::string, std::string>> {
        SQLite::Statement q(db, "SELECT monitor, token FROM heartbeat_tokens");
        std::map<std::string, std::string> out;
        while (q.executeStep()) out[q.getColumn(0).getString()] = q.getColumn(1).getString();
        return out;
      });
}

Result<std::vector<UptimeBucket>> SqliteStore::uptime(const UptimeQuery& query) {
  return read<std::vector<UptimeBucket>>(
      "uptime rollups", [&](SQLite::Database& db) -> Result<std::vector<UptimeBucket>> {
        const char* table = query.resolution == RollupResolution::kHour ? "uptime_hourly" : "uptime_daily";
        SQLite::Statement q(
            db, std::string("SELECT start_ms, checks, ok, latency_sum_ms FROM ") + table +
                    " WHERE monitor = ? AND start_ms >= ? AND start_ms < ? ORDER BY start_ms LIMIT ?");
        q.bind(1, query.monitor);
        q.bind(2, query.from_ms);
        q.bind(3, query.to_ms);
        q.bind(4, kMaxRowsPerRead);
        std::vector<UptimeBucket> out;
        while (q.executeStep()) {
          out.push_back(UptimeBucket{q.getColumn(0).getInt64(), q.getColumn(1).getInt64(),
                                     q.getColumn(2).getInt64(), q.getColumn(3).getDouble()});
        }
        return out;
      });
}

Result<std::map<std::string, std::vector<UptimeBucket>>> SqliteStore::uptime_of(
    const std::vector<std::string>& monitors, const UptimeQuery& query) {
  using Out = std::map<std::string, std::vector<UptimeBucket>>;
  if (monitors.size() > kMaxRowsPerBatch) {
    return make_error("store.too_many", "at most " + std::to_string(kMaxRowsPerBatch) + " monitors per read");
  }
  if (monitors.empty()) return Out{};
  return read<Out>("uptime rollups", [&](SQLite::Database& db) -> Result<Out> {
    const char* table = query.resolution == RollupResolution::kHour ? "uptime_hourly" : "uptime_daily";
    std::string sql = std::string("SELECT monitor, start_ms, checks, ok, latency_sum_ms FROM ") + table +
                      " WHERE monitor IN (";
    for (size_t i = 0; i < monitors.size(); ++i) sql += i == 0 ? "?" : ", ?";
    sql += ") AND start_ms >= ? AND start_ms < ? ORDER BY monitor, start_ms LIMIT ?";
    SQLite::Statement q(db, sql);
    int index = 1;
    for (const auto& m : monitors) q.bind(index++, m);
    q.bind(index++, query.from_ms);
    q.bind(index++, query.to_ms);
    q.bind(index, kMaxRowsPerRead);
    Out out;
    while (q.executeStep()) {
      out[q.getColumn(0).getString()].push_back(
          UptimeBucket{q.getColumn(1).getInt64(), q.getColumn(2).getInt64(), q.getColumn(3).getInt64(),
                       q.getColumn(4).getDouble()});
    }
    return out;
  });
}

Result<std::vector<ApiMonitorSpec>> SqliteStore::api_monitors() {
  return read<std::vector<ApiMonitorSpec>>(
      "API monitors", [](SQLite::Database& db) -> Result<std::vector<ApiMonitorSpec>> {
        SQLite::Statement q(db, "SELECT name, spec_json FROM api_monitors ORDER BY name");
        std::vector<ApiMonitorSpec> out;
        while (q.executeStep())
          out.push_back(ApiMonitorSpec{q.getColumn(0).getString(), q.getColumn(1).getString()});
        return out;
      });
}

Result<NodeReportFeed> SqliteStore::node_reports_after(int64_t cursor) {
  return read<NodeReportFeed>("node reports", [cursor](SQLite::Database& db) -> Result<NodeReportFeed> {
    SQLite::Statement q(db,
                        "SELECT id, job, node, received_ms, writer, body FROM node_reports WHERE id >= ? "
                        "ORDER BY id LIMIT ?");
    q.bind(1, cursor);
    q.bind(2, kMaxNodeReportsPerRead);
    NodeReportFeed feed{{}, cursor};
    while (q.executeStep()) {
      feed.reports.push_back(
          StoredNodeReport{q.getColumn(1).getString(), q.getColumn(2).getString(), q.getColumn(5).getString(),
                           from_unix_ms(q.getColumn(3).getInt64()), q.getColumn(4).getString()});
      feed.next = q.getColumn(0).getInt64() + 1;
    }
    return feed;
  });
}

Result<std::vector<StoredJobMemo>> SqliteStore::job_memos() {
  return read<std::vector<StoredJobMemo>>(
      "job memos", [](SQLite::Database& db) -> Result<std::vector<StoredJobMemo>> {
        SQLite::Statement q(db, "SELECT job, body, saved_ms FROM job_memos ORDER BY saved_ms DESC LIMIT ?");
        q.bind(1, kMaxJobMemos);
        std::vector<StoredJobMemo> out;
        while (q.executeStep()) {
          out.push_back(StoredJobMemo{q.getColumn(0).getString(), q.getColumn(1).getString(),
                                      from_unix_ms(q.getColumn(2).getInt64())});
        }
        return out;
      });
}

Result<std::vector<ApiWindowSpec>> SqliteStore::api_windows() {
  return read<std::vector<ApiWindowSpec>>(
      "API maintenance windows", [](SQLite::Database& db) -> Result<std::vector<ApiWindowSpec>> {
        SQLite::Statement q(db, "SELECT id, spec_json, created_ms FROM api_maintenance ORDER BY id");
        std::vector<ApiWindowSpec> out;
        while (q.executeStep()) {
          out.push_back(ApiWindowSpec{q.getColumn(0).getInt64(), q.getColumn(1).getString(),
                                      from_unix_ms(q.getColumn(2).getInt64())});
        }
        return out;
      });
}

Result<int64_t> SqliteStore::next_api_window_id() {
  return read<int64_t>("the next maintenance window id", [](SQLite::Database& db) -> Result<int64_t> {
    // AUTOINCREMENT keeps the highest id ever inserted in sqlite_sequence, even once its
    // row is deleted; MAX(id) covers a table that never had one.
    return db
        .execAndGet(
            "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'api_maintenance'), 0), "
            "COALESCE((SELECT MAX(id) FROM api_maintenance), 0)) + 1")
        .getInt64();
  });
}

Result<int64_t> SqliteStore::next_incident_id() {
  return read<int64_t>("the next incident id", [](SQLite::Database& db) -> Result<int64_t> {
    return db.execAndGet("SELECT COALESCE(MAX(id), 0) + 1 FROM incidents").getInt64();
  });
}

Result<std::vector<Delivery>> SqliteStore::deliveries(const DeliveryQuery& query) {
  return read<std::vector<Delivery>>(
      "deliveries", [&](SQLite::Database& db) -> Result<std::vector<Delivery>> {
        std::string sql = kDeliveryColumns;
        const char* glue = " WHERE ";
        auto where = [&](const char* condition) {
          sql += glue;
          sql += condition;
          glue = " AND ";
        };
        if (query.status) where("status = ?");
        if (query.channel) where("channel = ?");
        if (query.monitor) where("monitor = ?");
        if (query.after_id) where("id > ?");
        if (query.before_id) where("id < ?");
        sql += query.after_id ? " ORDER BY id ASC LIMIT ?" : " ORDER BY id DESC LIMIT ?";
        SQLite::Statement q(db, sql);
        int index = 1;
        if (query.status) q.bind(index++, std::string(to_string(*query.status)));
        if (query.channel) q.bind(index++, *query.channel);
        if (query.monitor) q.bind(index++, *query.monitor);
        if (query.after_id) q.bind(index++, *query.after_id);
        if (query.before_id) q.bind(index++, *query.before_id);
        q.bind(index, std::clamp(query.limit, 0, kMaxRowsPerRead));
        std::vector<Delivery> out;
        while (q.executeStep()) out.push_back(delivery_from_row(q));
        return out;
      });
}

}  // namespace trainwatch::sqlite
