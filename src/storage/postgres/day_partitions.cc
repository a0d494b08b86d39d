#include "storage/postgres/day_partitions.h"

#include <chrono>
#include <cstdio>

namespace trainwatch::postgres {
namespace {

constexpr const char* kPrefix = "check_results_";

// A query of pg_class itself, not to_regclass: to_regclass answers from the backend's
// catalog cache, which may still hold "no such table" from before another replica's
// commit (the cache is refreshed when a table is locked, and an advisory lock is none).
bool partition_exists(pqxx::transaction_base& tx, const std::string& name) {
  return tx
      .exec_params1(
          "SELECT EXISTS (SELECT 1 FROM pg_class WHERE relname = $1 "
          "AND relnamespace = current_schema()::regnamespace)",
          name)[0]
      .as<bool>();
}

}  // namespace

int64_t day_start(int64_t at_ms) { return at_ms - (((at_ms % kDayMs) + kDayMs) % kDayMs); }

std::optional<std::string> day_partition_name(int64_t day_ms) {
  using namespace std::chrono;
  const year_month_day date{floor<days>(sys_time<milliseconds>(milliseconds(day_ms)))};
  const int y = static_cast<int>(date.year());
  if (y < 1970 || y > 9999) return std::nullopt;
  char name[32];
  std::snprintf(name, sizeof name, "%s%04d%02u%02u", kPrefix, y, static_cast<unsigned>(date.month()),
                static_cast<unsigned>(date.day()));
  return std::string(name);
}

void create_day_partition(pqxx::transaction_base& tx, int64_t day_ms) {
  const std::optional<std::string> name = day_partition_name(day_ms);
  if (!name) return;
  // Looked at before the lock too: on a cold start every replica finds today's partition
  // made, and none waits for another's transaction to find it.
  if (partition_exists(tx, *name)) return;
  tx.exec_params("SELECT pg_advisory_xact_lock($1)", kPartitionLock);
  if (partition_exists(tx, *name)) return;  // another replica made it while this one waited
  const std::string table = tx.quote_name(*name);
  const std::string from = std::to_string(day_ms);
  const std::string to = std::to_string(day_ms + kDayMs);
  // A table attached, not CREATE TABLE ... PARTITION OF: attaching locks check_results
  // only against other DDL (SHARE UPDATE EXCLUSIVE), so reads and inserts go on; and the
  // rows the default partition took for this day move in before it is attached (with
  // them still in the default, PostgreSQL refuses the new partition).
  tx.exec("CREATE TABLE " + table + " (LIKE check_results INCLUDING DEFAULTS)");
  tx.exec_params(
      "WITH moved AS (DELETE FROM check_results_default WHERE at_ms >= $1 AND at_ms < $2 RETURNING *) "
      "INSERT INTO " +
          table + " SELECT * FROM moved",
      day_ms, day_ms + kDayMs);
  tx.exec("ALTER TABLE check_results ATTACH PARTITION " + table + " FOR VALUES FROM (" + from + ") TO (" +
          to + ")");
}

int drop_day_partitions_before(pqxx::transaction_base& tx, int64_t cutoff_ms, int max_partitions) {
  // A day lies wholly before the cutoff when it starts before the cutoff's own day; names
  // compare as their dates do (fixed width, digits), in the "C" collation.
  const std::optional<std::string> cutoff_day = day_partition_name(day_start(cutoff_ms));
  if (!cutoff_day) return 0;  // before 1970: nothing to drop; after 9999: never
  tx.exec("SAVEPOINT drop_days");
  try {
    const std::string previous = tx.exec1("SELECT current_setting('lock_timeout')")[0].as<std::string>();
    tx.exec_params("SELECT set_config('lock_timeout', $1, true)", std::to_string(kDropLockTimeoutMs));
    const pqxx::result old = tx.exec_params(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "WHERE i.inhparent = 'check_results'::regclass AND c.relname ~ '^check_results_[0-9]{8}$' "
        "AND c.relname COLLATE \"C\" < $1 ORDER BY c.relname COLLATE \"C\" LIMIT $2",
        *cutoff_day, max_partitions);
    for (const pqxx::row& row : old) tx.exec("DROP TABLE " + tx.quote_name(row[0].as<std::string>()));
    tx.exec_params("SELECT set_config('lock_timeout', $1, true)", previous);
    tx.exec("RELEASE SAVEPOINT drop_days");
    return static_cast<int>(old.size());
  } catch (const pqxx::sql_error& e) {
    if (e.sqlstate() != "55P03") throw;  // lock_not_available: the lock timed out
    tx.exec("ROLLBACK TO SAVEPOINT drop_days; RELEASE SAVEPOINT drop_days");
    return 0;
  }
}

std::vector<int64_t> DayPartitions::ensure(pqxx::transaction_base& tx,
                                           const std::vector<int64_t>& at_ms) const {
  std::set<int64_t> wanted;
  for (int64_t at : at_ms) {
    for (int ahead = 0; ahead <= kDaysAhead; ++ahead) {
      const int64_t day = day_start(at) + ahead * kDayMs;
      if (known_.count(day) == 0) wanted.insert(day);
    }
  }
  std::vector<int64_t> made;
  for (int64_t day : wanted) {
    if (static_cast<int>(made.size()) == kMaxMadePerBatch) break;
    create_day_partition(tx, day);
    made.push_back(day);
  }
  return made;
}

void DayPartitions::remember(const std::vector<int64_t>& days) {
  for (int64_t day : days) {
    known_.insert(day);
    if (known_.size() > kMaxRemembered) known_.erase(known_.begin());  // the oldest day
  }
}

}  // namespace trainwatch::postgres
