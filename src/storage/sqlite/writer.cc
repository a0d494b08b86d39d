// The writer's transactions, savepoints and vanished-file checks: see writer.h.
#include "storage/sqlite/writer.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Transaction.h>

#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <exception>
#include <stdexcept>
#include <utility>
#include <variant>

#include "storage/sqlite/ping_chains.h"
#include "storage/store_errors.h"

namespace trainwatch::sqlite {
namespace {

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
  return make_error(kind.passes ? store_error::kUnavailable : store_error::kWrite, std::move(message));
}

}  // namespace

Writer::Writer(std::unique_ptr<SQLite::Database> db, PingChains& chains, DatabaseFiles files)
    : db_(std::move(db)),
      chains_(chains),
      files_(std::move(files)),
      savepoint_(*db_, "SAVEPOINT op"),
      release_(*db_, "RELEASE op"),
      writes_(*db_, chains) {}

Writer::~Writer() = default;

std::vector<WriteOutcome> Writer::apply(const std::vector<QueuedWrite>& batch) {
  if (files_gone()) return refused(batch.size());
  std::vector<WriteOutcome> out;
  out.reserve(batch.size());
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    for (size_t i = 0; i < batch.size();) {
      size_t pings = 0;
      while (i + pings < batch.size() && std::holds_alternative<RecordPing>(batch[i + pings].op)) ++pings;
      if (pings > 1) {
        apply_pings(batch, i, pings, out);
        i += pings;
      } else {
        out.push_back(apply_one(batch[i].op));
        ++i;
      }
    }
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
               WriteOutcome{make_error(store_error::kUnavailable, "the write transaction failed"), "other"});
  }
  // Committed into a file that was unlinked meanwhile: not durable, so not acknowledged.
  if (files_gone()) return refused(batch.size());
  return out;
}

void Writer::idle() { (void)files_gone(); }

std::string Writer::vanished() const {
  std::lock_guard lock(vanished_mu_);
  return vanished_;
}

void Writer::after_batch(bool force) {
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

// One operation under a savepoint, so that its failure undoes only its own changes.
// Throws only when the savepoint itself cannot be undone (the transaction is gone,
// e.g. SQLite rolled it back on a full disk); the caller then fails the whole batch.
WriteOutcome Writer::apply_one(const WriteOp& op) {
  fresh(savepoint_).exec();
  Status status = Ok{};
  try {
    status = std::visit([this](const auto& o) { return run_op(writes_, o); }, op);
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

// A run of pings (what a batch under heartbeat load is made of) under one savepoint: the
// savepoint and its release were two of the three statements each ping ran. A ping's
// insert fails only as the whole store does (disk full, I/O), but should one fail alone,
// the run is undone and each of its pings applied again under its own savepoint, so only
// that one fails (as the PostgreSQL store does with its multi-row insert).
void Writer::apply_pings(const std::vector<QueuedWrite>& batch, size_t first, size_t count,
                         std::vector<WriteOutcome>& out) {
  const size_t mark = chains_.mark();
  fresh(savepoint_).exec();
  std::exception_ptr failure;
  bool stored = true;
  try {
    for (size_t i = first; i < first + count && stored; ++i) {
      stored = run_op(writes_, std::get<RecordPing>(batch[i].op)).ok();
    }
  } catch (const std::exception&) {
    failure = std::current_exception();
    stored = false;
  }
  if (stored) {
    fresh(release_).exec();
    out.insert(out.end(), count, WriteOutcome{Ok{}, nullptr});
    return;
  }
  if (!undo_savepoint()) {
    if (failure) std::rethrow_exception(failure);
    throw std::runtime_error("cannot undo a failed run of pings");
  }
  chains_.undo_to(mark);
  for (size_t i = first; i < first + count; ++i) out.push_back(apply_one(batch[i].op));
}

// Whether the database or its WAL is gone from under the store (database_files.h). The
// first time, what this connection committed is rescued (rescue_committed_writes), so
// what was acknowledged survives the restart that reopens the store; from then on every
// write is refused. Reopening here instead would leave the readers and the checkpointer
// on the old files.
bool Writer::files_gone() {
  if (gone_) return true;
  const std::string why = files_.vanished();
  if (why.empty()) return false;
  gone_ = true;
  const std::string rescue = rescue_committed_writes();
  spdlog::error("store: {}; {}; every write is refused until trainwatch is restarted", why, rescue);
  std::lock_guard lock(vanished_mu_);
  vanished_ = why + "; writes are refused until trainwatch is restarted";
  return true;
}

// Copies every frame this connection committed from the WAL it still holds open into the
// database file (a FULL checkpoint, synced), when that file is still in place. Returns
// what became of the committed writes, in words for the log line.
std::string Writer::rescue_committed_writes() {
  if (!files_.database_in_place()) return "what the database held is lost unless restored from a backup";
  try {
    SQLite::Statement q(*db_, "PRAGMA wal_checkpoint(FULL)");
    q.executeStep();
    const int busy = q.getColumn(0).getInt();
    const int frames = q.getColumn(1).getInt();
    const int copied = q.getColumn(2).getInt();
    return busy == 0 && copied == frames
               ? "every committed write (" + std::to_string(frames) +
                     " WAL pages) was copied into the database file first"
               : "only " + std::to_string(copied) + " of " + std::to_string(frames) +
                     " WAL pages could be copied into the database file; the rest is lost at restart";
  } catch (const std::exception& e) {
    return std::string("the committed writes could not be copied into the database file: ") + e.what();
  }
}

std::vector<WriteOutcome> Writer::refused(size_t n) const {
  return std::vector<WriteOutcome>(
      n, WriteOutcome{make_error(store_error::kUnavailable, vanished()), "file_vanished"});
}

bool Writer::undo_savepoint() {
  try {
    db_->exec("ROLLBACK TO op");
    db_->exec("RELEASE op");
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace trainwatch::sqlite
