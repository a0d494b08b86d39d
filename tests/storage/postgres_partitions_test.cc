// The day partitions of check_results on PostgreSQL (storage/postgres/day_partitions.h):
// results go to their own day's partition on either side of midnight; a day without a
// partition never fails a write; a database at schema 8 moves to 9 keeping every row;
// retention drops an old day as a table; two replicas make the same day at once.
#include <gtest/gtest.h>

#include <pqxx/pqxx>

#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "fakes/manual_clock.h"
#include "storage/conformance.h"
#include "storage/postgres/day_partitions.h"
#include "storage/postgres/migrations.h"
#include "storage/retention.h"

namespace trainwatch::testing {
namespace {

constexpr int64_t kDay = postgres::kDayMs;
constexpr int64_t kHour = 3'600'000;
// kT0 is 2023-11-14 22:13:20 UTC; these are midnights (UTC) of the 14th to the 17th.
const int64_t kNov14 = postgres::day_start(kT0);
const int64_t kNov15 = kNov14 + kDay;
const int64_t kNov16 = kNov15 + kDay;
const int64_t kNov17 = kNov16 + kDay;

class PostgresPartitionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto url = PgServer::instance().create_database();
    ASSERT_TRUE(url.ok()) << url.error().message;
    url_ = *url;
  }
  std::unique_ptr<Store> open_store() {
    auto opened = postgres::PostgresStore::open(url_);
    EXPECT_TRUE(opened.ok()) << opened.error().message;
    return opened.ok() ? std::move(*opened) : nullptr;
  }
  static Status record(Store& store, int64_t at_ms) {
    return write_and_wait(store, RecordResult{"api", result_at(at_ms), up_state(at_ms)});
  }
  // How many rows each partition holds, by the partition's name.
  std::map<std::string, int64_t> rows_by_partition() {
    pqxx::connection conn(url_);
    pqxx::read_transaction tx(conn);
    std::map<std::string, int64_t> out;
    for (const pqxx::row& row :
         tx.exec("SELECT tableoid::regclass::text, count(*) FROM check_results GROUP BY 1"))
      out[row[0].as<std::string>()] = row[1].as<int64_t>();
    return out;
  }
  bool table_exists(const std::string& name) {
    pqxx::connection conn(url_);
    pqxx::read_transaction tx(conn);
    const bool in_class =
        tx.exec_params1("SELECT count(*) FROM pg_class WHERE relname = $1", name)[0].as<int>() > 0;
    const bool in_inherits =
        tx.exec_params1(
              "SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE c.relname = $1",
              name)[0]
            .as<int>() > 0;
    EXPECT_EQ(in_class, in_inherits) << name << " is a table but not a partition, or the other way round";
    return in_class;
  }
  void sql(const std::string& statement) {
    pqxx::connection conn(url_);
    pqxx::work tx(conn);
    tx.exec(statement);
    tx.commit();
  }
  size_t results_of_api(Store& store) {
    auto rows = store.results(ResultQuery{"api", std::nullopt, 1000});
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? rows->size() : 0;
  }

  std::string url_;
};

TEST_F(PostgresPartitionsTest, NamesAreTheUtcDateOfTheDay) {
  EXPECT_EQ(postgres::day_partition_name(kNov14), "check_results_20231114");
  EXPECT_EQ(postgres::day_start(kNov15 - 1), kNov14);
  EXPECT_EQ(postgres::day_start(kNov15), kNov15);
  EXPECT_EQ(postgres::day_start(-1), -kDay);  // a clock before 1970 still has its day
  EXPECT_EQ(postgres::day_partition_name(-kDay), std::nullopt);
  EXPECT_EQ(postgres::day_partition_name(253'402'300'800'000), std::nullopt);  // year 10000
}

TEST_F(PostgresPartitionsTest, ResultsOnEitherSideOfMidnightGoToTheirOwnDaysPartition) {
  auto store = open_store();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(record(*store, kNov15 - 1).ok());
  ASSERT_TRUE(record(*store, kNov15).ok());
  const std::map<std::string, int64_t> expected{{"check_results_20231114", 1}, {"check_results_20231115", 1}};
  EXPECT_EQ(rows_by_partition(), expected);
  // Made ahead: the two days after the newest result's.
  EXPECT_TRUE(table_exists("check_results_20231116"));
  EXPECT_TRUE(table_exists("check_results_20231117"));
  EXPECT_FALSE(table_exists("check_results_20231118"));
  EXPECT_EQ(results_of_api(*store), 2u);
}

TEST_F(PostgresPartitionsTest, AResultForADayWithoutPartitionIsStoredAndMovesInWhenTheDayIsMade) {
  auto first = open_store();
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(record(*first, kT0).ok());     // the 14th, and the 15th and 16th made ahead
  sql("DROP TABLE check_results_20231115");  // behind the writer's back: it remembers the day as made

  ASSERT_TRUE(record(*first, kNov15 + 5).ok());
  EXPECT_EQ(rows_by_partition().at("check_results_default"), 1);

  auto second = open_store();  // another replica, which remembers nothing
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(record(*second, kNov15 + 10).ok());
  const std::map<std::string, int64_t> expected{{"check_results_20231114", 1}, {"check_results_20231115", 2}};
  EXPECT_EQ(rows_by_partition(), expected);
  EXPECT_EQ(results_of_api(*second), 3u);
}

TEST_F(PostgresPartitionsTest, WhenADayCannotBeMadeItsResultsAreStillStoredInTheDefault) {
  auto store = open_store();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(record(*store, kT0).ok());  // the 14th to the 16th
  // Making a day moves its rows out of the default partition: make that fail.
  sql("CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;"
      "CREATE TRIGGER refuse BEFORE DELETE ON check_results_default FOR EACH STATEMENT EXECUTE FUNCTION refuse()");
  ASSERT_TRUE(record(*store, kNov17 + 1).ok());
  EXPECT_FALSE(table_exists("check_results_20231117"));
  EXPECT_EQ(rows_by_partition().at("check_results_default"), 1);
  EXPECT_EQ(results_of_api(*store), 2u);
}

TEST_F(PostgresPartitionsTest, MigratingFromSchema8KeepsEveryRowInItsDaysPartition) {
  {
    pqxx::connection conn(url_);
    ASSERT_TRUE(postgres::migrate(conn, 8).ok());
    pqxx::work tx(conn);
    // 30 results an hour apart from the 14th 12:00 to the 15th 17:00, and one from a clock set before 1970.
    tx.exec_params(
        "INSERT INTO check_results (monitor, at_ms, ok, latency_ms, cause, http_status) "
        "SELECT 'api', $1::bigint + g * $2::bigint, g % 3 <> 0, g, 'cause ' || g, 200 + g FROM generate_series(0, 29) g",
        kNov14 + 12 * kHour, kHour);
    tx.exec("INSERT INTO check_results (monitor, at_ms, ok, latency_ms) VALUES ('api', -5, true, 1)");
    tx.commit();
  }
  auto store = open_store();  // migrates to 9
  ASSERT_NE(store, nullptr);
  const std::map<std::string, int64_t> expected{
      {"check_results_20231114", 12}, {"check_results_20231115", 18}, {"check_results_default", 1}};
  EXPECT_EQ(rows_by_partition(), expected);

  auto rows = store->results(ResultQuery{"api", std::nullopt, 1000});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 31u);
  EXPECT_EQ(to_unix_ms(rows->front().at), kNov14 + 12 * kHour + 29 * kHour);  // newest first
  EXPECT_EQ(rows->front().cause, "cause 29");
  EXPECT_EQ(rows->front().http_status, 229);
  EXPECT_EQ(to_unix_ms(rows->back().at), -5);
  // A page older than a time reads only the partitions before it, and still all of them.
  auto older = store->results(ResultQuery{"api", kNov15, 1000});
  ASSERT_TRUE(older.ok());
  EXPECT_EQ(older->size(), 13u);

  // New results get ids after the copied ones.
  ASSERT_TRUE(record(*store, kNov15 + 20 * kHour).ok());
  pqxx::connection conn(url_);
  pqxx::read_transaction tx(conn);
  EXPECT_EQ(tx.exec1("SELECT count(DISTINCT id) FROM check_results")[0].as<int>(), 32);
  EXPECT_EQ(tx.exec1("SELECT MAX(version) FROM schema_version")[0].as<int>(), postgres::kSchemaVersion);
}

TEST_F(PostgresPartitionsTest, RetentionDropsAWholeOldDayAndDeletesOnlyInTheDayTheCutoffFallsIn) {
  ManualClock clock(from_unix_ms(kNov17 + 6 * kHour));
  auto store = open_store();
  ASSERT_NE(store, nullptr);
  for (int64_t at : {kNov14 + 1 * kHour, kNov14 + 2 * kHour, kNov14 + 3 * kHour,   // a whole day older
                     kNov15 + 1 * kHour, kNov15 + 2 * kHour, kNov15 + 12 * kHour,  // the cutoff's day
                     kNov16 + 1 * kHour})
    ASSERT_TRUE(record(*store, at).ok());

  // Kept: two days; the cutoff is the 15th 06:00.
  RetentionPruner pruner(clock, clock, *store, Millis(2 * kDay));
  pruner.start();
  clock.advance(RetentionPruner::kPruneInterval);
  pruner.stop();
  store->flush();

  EXPECT_FALSE(table_exists("check_results_20231114"));
  const std::map<std::string, int64_t> expected{{"check_results_20231115", 1}, {"check_results_20231116", 1}};
  EXPECT_EQ(rows_by_partition(), expected);
  EXPECT_EQ(results_of_api(*store), 2u);
}

TEST_F(PostgresPartitionsTest, ADroppedDayIsNotCountedAgainstThePrunesRowBound) {
  auto store = open_store();
  ASSERT_NE(store, nullptr);
  for (int64_t at : {kNov14 + 1, kNov14 + 2, kNov14 + 3, kNov15 + 1, kNov15 + 2, kNov15 + 3})
    ASSERT_TRUE(record(*store, at).ok());
  ASSERT_TRUE(write_and_wait(*store, PruneResults{from_unix_ms(kNov15 + 3), 1}).ok());
  const std::map<std::string, int64_t> expected{{"check_results_20231115", 2}};
  EXPECT_EQ(rows_by_partition(), expected);  // the 14th whole, and one row of the 15th
  EXPECT_FALSE(table_exists("check_results_20231114"));
}

TEST_F(PostgresPartitionsTest, TwoReplicasMakingTheSameDayAtOnceBothSucceed) {
  ASSERT_NE(open_store(), nullptr);  // the schema
  pqxx::connection first(url_);
  pqxx::connection second(url_);
  pqxx::work first_tx(first);
  postgres::create_day_partition(first_tx, kNov16);  // made, not yet committed

  std::string second_failed;
  std::thread other([&] {
    try {
      pqxx::work tx(second);
      postgres::create_day_partition(tx, kNov16);
      tx.commit();
    } catch (const std::exception& e) {
      second_failed = e.what();
    }
  });
  // The second replica waits for the first's transaction: both are making the day at once.
  pqxx::connection watcher(url_);
  bool waiting = false;
  for (int i = 0; i < 500 && !waiting; ++i) {
    pqxx::read_transaction tx(watcher);
    waiting = tx.exec1("SELECT count(*) FROM pg_locks WHERE NOT granted")[0].as<int>() > 0;
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(waiting) << "the second replica never waited for the first";
  first_tx.commit();
  other.join();
  EXPECT_EQ(second_failed, "");
  EXPECT_TRUE(table_exists("check_results_20231116"));

  // And through two stores, as two replicas' writers: both results for the next day commit.
  auto a = open_store();
  auto b = open_store();
  ASSERT_TRUE(a != nullptr && b != nullptr);
  Status a_done = make_error("none", "");
  std::thread a_writes([&] { a_done = record(*a, kNov17 + 1); });
  const Status b_done = record(*b, kNov17 + 2);
  a_writes.join();
  EXPECT_TRUE(a_done.ok()) << a_done.error().message;
  EXPECT_TRUE(b_done.ok()) << b_done.error().message;
  EXPECT_EQ(rows_by_partition().at("check_results_20231117"), 2);
}

}  // namespace
}  // namespace trainwatch::testing
