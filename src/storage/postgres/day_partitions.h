// Day partitions of check_results on PostgreSQL: what they are named, how they are made
// ahead and on demand, and how retention drops them whole.
//
// Why check_results and no other table: it is the one that grows with every check (1.4 M
// rows a day at 1,000 monitors checked every minute), is only ever appended to, and is
// pruned by age; a day's rows go with one DROP TABLE instead of 1.4 M deletions, their
// index entries, dead tuples and vacuum. The others stay plain tables (migrations.cc):
// - heartbeat_pings is read newest first by id, not by time, so a day key would make every
//   page read every day's index; and a monitor pinged every minute adds the same 1,440
//   rows a day as a check, but a ping log that large is rare (most heartbeats are hourly
//   or daily jobs);
// - uptime_hourly holds 24 rows a monitor a day and is updated in place (its upserts), and
//   uptime_daily, incidents, deliveries, node_reports and job_memos are small or updated.
//
// The layout (migration 9): check_results is PARTITION BY RANGE (at_ms); a day's partition
// `check_results_YYYYMMDD` holds [00:00, 24:00) UTC of that day, in ms; and a DEFAULT
// partition, `check_results_default`, holds any row whose day has no partition yet, so an
// insert never fails for a missing partition. Its rows move into their day's partition
// when that partition is made (create_day_partition); the default is normally empty.
//
// Made ahead and on demand, by the writer: before a batch writes results, ensure() makes
// sure the partitions of each result's day and of the kDaysAhead days after it exist. So
// the partition of the day after is made a day before the first result that needs it, and
// the midnight boundary is crossed with no DDL on the way. Only days outside 1970..9999
// (a broken clock) have no partition name; their rows stay in the default.
//
// Replicas: every replica's writer may make the same day's partition at the same moment.
// Creation runs under a transaction-scoped advisory lock (kPartitionLock) and looks again
// under it, so the second replica finds the partition the first one made.
//
// Lock order: the writer calls ensure() first in a batch's transaction, before it holds
// any row lock, so a writer never waits for the advisory lock while holding what another
// writer waits for.
//
// Threading: DayPartitions is the writer thread's alone.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <pqxx/pqxx>

namespace trainwatch::postgres {

inline constexpr int64_t kDayMs = 86'400'000;

// Any constant shared by every trainwatch: the lock that serializes making partitions.
inline constexpr int64_t kPartitionLock = 0x7477706172746e73;  // "twpartns"

// The start (00:00 UTC, ms) of the day `at_ms` falls in; floor division, so a time before
// 1970 still falls in its own day.
int64_t day_start(int64_t at_ms);

// "check_results_YYYYMMDD" for the day starting at `day_ms`; none for days outside the
// years 1970..9999, whose rows stay in the default partition.
std::optional<std::string> day_partition_name(int64_t day_ms);

// Makes the partition of the day starting at `day_ms` unless it exists, moving the rows
// the default partition holds for that day into it. Under kPartitionLock; safe when
// several replicas make the same day at once. Throws pqxx exceptions.
void create_day_partition(pqxx::transaction_base& tx, int64_t day_ms);

// Drops, oldest first, at most `max_partitions` day partitions that end at or before
// `cutoff_ms`, and returns how many. Dropping locks check_results whole for a moment: when
// that lock is not granted within kDropLockTimeout (long reads hold it), nothing is
// dropped and the next prune tries again. Throws pqxx exceptions for other failures.
inline constexpr int kDropLockTimeoutMs = 1'000;
int drop_day_partitions_before(pqxx::transaction_base& tx, int64_t cutoff_ms, int max_partitions);

class DayPartitions {
 public:
  static constexpr int kDaysAhead = 2;
  // Bounds: the days remembered as made, and the partitions one batch makes (a batch of
  // results spread over many days leaves the rest in the default until later batches).
  static constexpr size_t kMaxRemembered = 64;
  static constexpr int kMaxMadePerBatch = 6;

  // Makes sure the partitions of the days of `at_ms`, and the kDaysAhead days after each,
  // exist; returns the days it made sure of, to remember() once the transaction commits.
  std::vector<int64_t> ensure(pqxx::transaction_base& tx, const std::vector<int64_t>& at_ms) const;

  // Days whose partitions are committed: later batches skip them. A remembered day that
  // retention dropped since costs nothing wrong: a late result for it goes to the default.
  void remember(const std::vector<int64_t>& days);

 private:
  std::set<int64_t> known_;
};

}  // namespace trainwatch::postgres
