#include "storage/postgres/writer.h"

#include <spdlog/spdlog.h>
#include <pqxx/pqxx>

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

#include "storage/postgres/connection.h"
#include "storage/postgres/write_ops.h"
#include "storage/store_errors.h"

namespace trainwatch::postgres {
namespace {

Error write_error(FailureKind kind, std::string message) {
  return make_error(kind.passes ? store_error::kUnavailable : store_error::kWrite, std::move(message));
}

// A failure inside an operation's savepoint that the savepoint can undo: the operation's
// own (a constraint, bad data). A lost connection or a failure of the savepoint itself
// is the whole batch's, and is rethrown.
WriteOutcome apply_one(pqxx::work& tx, const WriteOp& op, const std::string& url) {
  // Plain SQL savepoints: libpqxx 6's subtransaction did not roll back after a failed
  // statement, which left the whole transaction aborted.
  tx.exec("SAVEPOINT op");
  Status status = Ok{};
  try {
    status = std::visit([&](const auto& o) { return run_op(tx, o); }, op);
  } catch (const pqxx::sql_error& e) {
    const FailureKind kind = classify(e);
    if (kind.connection_lost) throw;
    tx.exec("ROLLBACK TO SAVEPOINT op; RELEASE SAVEPOINT op");  // throws when even that is impossible: then
                                                                // the batch fails
    return WriteOutcome{write_error(kind, scrub(e.what(), url)), kind.reason};
  }
  tx.exec(status.ok() ? "RELEASE SAVEPOINT op" : "ROLLBACK TO SAVEPOINT op; RELEASE SAVEPOINT op");
  return WriteOutcome{std::move(status), nullptr};
}

// Operations that go in together with their neighbours of the same kind.
enum class RunKind { kAlone, kPings, kResults };

RunKind run_kind(const WriteOp& op) {
  if (std::holds_alternative<RecordPing>(op)) return RunKind::kPings;
  if (const auto* result = std::get_if<RecordResult>(&op); result != nullptr && is_plain(*result))
    return RunKind::kResults;
  return RunKind::kAlone;
}

template <typename Op>
std::vector<const Op*> ops_of(const std::vector<QueuedWrite>& batch, size_t begin, size_t end) {
  std::vector<const Op*> ops;
  ops.reserve(end - begin);
  for (size_t i = begin; i < end; ++i) ops.push_back(&std::get<Op>(batch[i].op));
  return ops;
}

// A run of one kind under one savepoint, in multi-row statements. Should that fail on its
// own, each operation goes again alone, so that a bad one fails only itself.
void apply_run(pqxx::work& tx, const std::vector<QueuedWrite>& batch, size_t begin, size_t end, RunKind kind,
               std::vector<WriteOutcome>& out, const std::string& url) {
  tx.exec("SAVEPOINT run");
  try {
    std::vector<Status> outcomes(end - begin, Status{Ok{}});
    if (kind == RunKind::kPings) insert_pings(tx, ops_of<RecordPing>(batch, begin, end));
    if (kind == RunKind::kResults) outcomes = insert_results(tx, ops_of<RecordResult>(batch, begin, end));
    tx.exec("RELEASE SAVEPOINT run");
    // A fenced result is its own failure, not the store's (no reason): see fence.h.
    for (Status& status : outcomes) out.push_back(WriteOutcome{std::move(status), nullptr});
    return;
  } catch (const pqxx::sql_error& e) {
    if (classify(e).connection_lost) throw;
    tx.exec("ROLLBACK TO SAVEPOINT run; RELEASE SAVEPOINT run");
  }
  for (size_t i = begin; i < end; ++i) out.push_back(apply_one(tx, batch[i].op, url));
}

}  // namespace

Writer::Writer(std::string url, std::unique_ptr<pqxx::connection> conn, DatabaseSessionLimits limits)
    : url_(std::move(url)), limits_(limits), conn_(std::move(conn)) {
  prepare_write_statements(*conn_);
}

Writer::~Writer() = default;

std::vector<int64_t> Writer::ensure_partitions(pqxx::work& tx, const std::vector<QueuedWrite>& batch) {
  std::vector<int64_t> at_ms;
  for (const QueuedWrite& w : batch) {
    if (const auto* r = std::get_if<RecordResult>(&w.op)) at_ms.push_back(ms(r->result.at));
  }
  if (at_ms.empty()) return {};
  tx.exec("SAVEPOINT partitions");
  try {
    std::vector<int64_t> days = partitions_.ensure(tx, at_ms);
    tx.exec("RELEASE SAVEPOINT partitions");
    return days;
  } catch (const pqxx::sql_error& e) {
    if (classify(e).connection_lost) throw;
    tx.exec("ROLLBACK TO SAVEPOINT partitions; RELEASE SAVEPOINT partitions");
    if (auto events = partition_failures_.admit(std::chrono::steady_clock::now())) {
      spdlog::warn(
          "store: cannot make the day partitions of check_results ({} time(s)); results go to its "
          "default partition: {}",
          *events, scrub(e.what(), url_));
    }
    return {};
  }
}

// A fenced write holds its monitors' rows of monitor_owners (FOR SHARE, fence.h) from its
// fence check to its commit, and a claim of those monitors by another replica waits for
// them. Were the write then to wait on a table someone locked (an operator's LOCK TABLE,
// a long DDL), the claim would wait as long, and a monitor moving between replicas would
// be checked by neither meanwhile. So a batch with fenced writes first takes the tables
// it writes, in the mode its writes take anyway, before it locks any row: it waits for a
// locked table holding nothing another replica needs, and once it holds them, its writes
// wait on no table. A claim made meanwhile moves the epoch, and the batch's fence check
// then refuses what was decided under the old one.
void Writer::lock_fenced_tables(pqxx::work& tx, const std::vector<QueuedWrite>& batch) {
  bool fenced = false;
  bool incidents = false;
  bool outbox = false;
  for (const QueuedWrite& w : batch) {
    const auto* r = std::get_if<RecordResult>(&w.op);
    if (r == nullptr || !r->epoch) continue;
    fenced = true;
    incidents = incidents || r->opened || r->closed;
    outbox = outbox || !r->outbox.empty();
  }
  if (!fenced) return;
  // Only those it writes: a lock on the outbox alone must not hold up plain results.
  std::string tables = "check_results, uptime_hourly, uptime_daily, monitor_state";
  if (incidents) tables += ", incidents";
  if (outbox) tables += ", deliveries";
  tx.exec("LOCK TABLE " + tables + " IN ROW EXCLUSIVE MODE");
}

bool Writer::ensure_connected() {
  if (conn_) return true;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_attempt_) return false;
  auto connected = connect(url_, SessionRole::kWriter, limits_);
  if (!connected) {
    unreachable_because_ = connected.error().message;
    delay_ = std::min(delay_ * 2, kMaxReconnectDelay);
    next_attempt_ = std::chrono::steady_clock::now() + delay_;
    return false;
  }
  try {
    prepare_write_statements(**connected);
  } catch (const std::exception& e) {
    lose_connection(scrub(e.what(), url_));
    return false;
  }
  conn_ = std::move(*connected);
  delay_ = kMinReconnectDelay;
  spdlog::info("store: connected to {} again", describe_target(url_));
  return true;
}

void Writer::lose_connection(const std::string& why) {
  if (conn_) spdlog::warn("store: lost the connection to {}: {}", describe_target(url_), why);
  conn_.reset();
  unreachable_because_ = why;
  next_attempt_ = std::chrono::steady_clock::now() + delay_;
}

std::vector<WriteOutcome> Writer::apply(const std::vector<QueuedWrite>& batch) {
  std::vector<WriteOutcome> out;
  if (!ensure_connected()) {
    out.assign(batch.size(), WriteOutcome{make_error(store_error::kUnavailable,
                                                     "the database is unreachable: " + unreachable_because_),
                                          "unavailable"});
    return out;
  }
  out.reserve(batch.size());
  try {
    pqxx::work tx(*conn_);
    // First, before any row lock: see day_partitions.h, "Lock order".
    const std::vector<int64_t> days = ensure_partitions(tx, batch);
    lock_fenced_tables(tx, batch);
    for (size_t i = 0; i < batch.size();) {
      const RunKind kind = run_kind(batch[i].op);
      size_t end = i + 1;
      while (kind != RunKind::kAlone && end < batch.size() && run_kind(batch[end].op) == kind) ++end;
      if (end - i >= 2) {
        apply_run(tx, batch, i, end, kind, out, url_);
        i = end;
      } else {
        out.push_back(apply_one(tx, batch[i].op, url_));
        ++i;
      }
    }
    tx.commit();
    partitions_.remember(days);
  } catch (const std::exception& e) {
    // Nothing of the batch is durable, whatever each operation reported on its own.
    const FailureKind kind = classify(e);
    const std::string why = scrub(e.what(), url_);
    if (kind.connection_lost) lose_connection(why);
    out.assign(batch.size(),
               WriteOutcome{write_error(kind, "the write transaction failed: " + why), kind.reason});
  }
  return out;
}

}  // namespace trainwatch::postgres
