// Uptime rollups and pruning, against a real SQLite file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "storage/sqlite/sqlite_store.h"

namespace trainwatch {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kHour = 3'600'000;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kDay0 = 19'700 * kDay;  // a UTC midnight

class RollupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("trainwatch-rollup-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto store = SqliteStore::open((dir_ / "trainwatch.db").string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  void record(const std::string& monitor, int64_t at, bool ok, double latency) {
    CheckResult r;
    r.at = from_unix_ms(at);
    r.ok = ok;
    r.latency_ms = latency;
    ASSERT_TRUE(store_->write(RecordResult{monitor, r, MonitorState{}}));
  }

  std::vector<UptimeBucket> buckets(RollupResolution res, int64_t from, int64_t to, const std::string& m = "a") {
    store_->flush();
    auto out = store_->uptime(UptimeQuery{m, res, from, to});
    EXPECT_TRUE(out.ok());
    return out.ok() ? *out : std::vector<UptimeBucket>{};
  }

  fs::path dir_;
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(RollupTest, EachResultAddsToItsHourAndDay) {
  record("a", kDay0 + 10, true, 10);
  record("a", kDay0 + kHour - 1, false, 30);  // same hour, last millisecond
  record("a", kDay0 + kHour, true, 20);       // next hour, same day
  record("a", kDay0 + kDay, true, 5);         // next day
  record("b", kDay0 + 10, false, 1);          // another monitor stays apart

  auto hours = buckets(RollupResolution::kHour, kDay0, kDay0 + 2 * kDay);
  ASSERT_EQ(hours.size(), 3u);
  EXPECT_EQ(hours[0].start_ms, kDay0);
  EXPECT_EQ(hours[0].checks, 2);
  EXPECT_EQ(hours[0].ok, 1);
  EXPECT_DOUBLE_EQ(hours[0].latency_sum_ms, 40);
  EXPECT_EQ(hours[1].start_ms, kDay0 + kHour);

  auto days = buckets(RollupResolution::kDay, kDay0, kDay0 + 2 * kDay);
  ASSERT_EQ(days.size(), 2u);
  EXPECT_EQ(days[0].checks, 3);
  EXPECT_EQ(days[0].ok, 2);
  EXPECT_EQ(days[1].start_ms, kDay0 + kDay);
  EXPECT_EQ(buckets(RollupResolution::kDay, kDay0, kDay0 + kDay, "b").at(0).ok, 0);
}

TEST_F(RollupTest, TheWindowIsHalfOpen) {
  record("a", kDay0, true, 1);
  record("a", kDay0 + kDay, true, 1);
  EXPECT_EQ(buckets(RollupResolution::kDay, kDay0, kDay0 + kDay).size(), 1u);
}

TEST_F(RollupTest, PruningRemovesOldRawResultsButKeepsRollups) {
  for (int i = 0; i < 5; ++i) record("a", kDay0 + i * kHour, true, 1);
  ASSERT_TRUE(store_->write(PruneResults{from_unix_ms(kDay0 + 3 * kHour), 2}));  // bounded: 2 of the 3 old ones
  store_->flush();
  EXPECT_EQ(store_->results(ResultQuery{"a", std::nullopt, 100})->size(), 3u);
  ASSERT_TRUE(store_->write(PruneResults{from_unix_ms(kDay0 + 3 * kHour), 10}));
  store_->flush();
  auto left = store_->results(ResultQuery{"a", std::nullopt, 100});
  ASSERT_EQ(left->size(), 2u);
  EXPECT_EQ(to_unix_ms(left->back().at), kDay0 + 3 * kHour);
  EXPECT_EQ(buckets(RollupResolution::kDay, kDay0, kDay0 + kDay).at(0).checks, 5);
}

TEST_F(RollupTest, SeveralMonitorsInOneRead) {
  record("a", kDay0, true, 10);
  record("b", kDay0 + kHour, false, 20);
  record("c", kDay0, true, 30);
  store_->flush();
  auto out = store_->uptime_of({"a", "b", "missing"}, UptimeQuery{"", RollupResolution::kHour, kDay0, kDay0 + kDay});
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ(out->at("a").at(0).checks, 1);
  EXPECT_EQ(out->at("b").at(0).start_ms, kDay0 + kHour);
  EXPECT_EQ(out->count("c"), 0u);
  std::vector<std::string> too_many(Store::kMaxRowsPerBatch + 1, "a");
  EXPECT_FALSE(store_->uptime_of(too_many, UptimeQuery{}).ok());
}

}  // namespace
}  // namespace trainwatch
