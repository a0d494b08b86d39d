#include "catalog/monitor_snooze.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <future>

#include "core/time_format.h"
#include "fakes/manual_clock.h"
#include "storage/sqlite/sqlite_store.h"

namespace trainwatch::catalog {
namespace {

namespace fs = std::filesystem;
using std::chrono::hours;
using std::chrono::minutes;

// A real SQLite file under the catalog, reopened as a restart reopens it.
class MonitorSnoozesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("trainwatch-snooze-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    open();
  }
  void TearDown() override {
    snoozes_.reset();
    catalog_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }

  void open() {
    snoozes_.reset();
    catalog_.reset();
    store_.reset();
    auto store = sqlite::SqliteStore::open((dir_ / "trainwatch.db").string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
    catalog_ = std::make_unique<MaintenanceCatalog>(
        *store_, clock_, [](const std::string& name) { return name == "inference" || name == "eval"; },
        [this](const std::vector<MaintenanceWindow>& w) { applied_ = w; });
    ASSERT_TRUE(catalog_->load().ok());
    snoozes_ = std::make_unique<MonitorSnoozes>(*catalog_, clock_);
  }

  Result<SystemTime> snooze(const std::string& monitor, Millis length) {
    std::promise<Result<SystemTime>> done;
    snoozes_->snooze(monitor, length, [&done](Result<SystemTime> r) { done.set_value(std::move(r)); });
    return done.get_future().get();
  }
  Status unsnooze(const std::string& monitor) {
    std::promise<Status> done;
    snoozes_->unsnooze(monitor, [&done](const Status& s) { done.set_value(s); });
    return done.get_future().get();
  }
  // What the dispatcher holds alerts by: the snoozes among the applied windows.
  std::vector<MaintenanceWindow> applied_snoozes() const {
    std::vector<MaintenanceWindow> out;
    for (const auto& w : applied_) {
      if (w.snooze) out.push_back(w);
    }
    return out;
  }

  fs::path dir_;
  testing::ManualClock clock_{from_unix_ms(1'777'600'800'000)};  // 2026-05-01T02:00:00Z
  std::unique_ptr<sqlite::SqliteStore> store_;
  std::unique_ptr<MaintenanceCatalog> catalog_;
  std::unique_ptr<MonitorSnoozes> snoozes_;
  std::vector<MaintenanceWindow> applied_;
};

TEST_F(MonitorSnoozesTest, ASnoozeHoldsOneMonitorFromNowForItsLengthAndSurvivesARestart) {
  auto until = snooze("inference", hours(1));
  ASSERT_TRUE(until) << until.error().message;
  EXPECT_EQ(format_rfc3339(*until), "2026-05-01T03:00:00.000Z");
  auto held = applied_snoozes();
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].monitors, std::vector<std::string>{"inference"});
  EXPECT_EQ(held[0].start, clock_.system_time());
  EXPECT_EQ(held[0].end, *until);

  open();
  held = applied_snoozes();
  ASSERT_EQ(held.size(), 1u) << "a snooze is stored, as the window it is";
  EXPECT_EQ(held[0].end, *until);
}

TEST_F(MonitorSnoozesTest, ANewSnoozeReplacesTheCurrentOneEvenWhenShorter) {
  ASSERT_TRUE(snooze("inference", hours(24)));
  ASSERT_TRUE(snooze("eval", hours(4)));
  clock_.advance(minutes(10));
  auto until = snooze("inference", minutes(15));
  ASSERT_TRUE(until) << until.error().message;
  EXPECT_EQ(format_rfc3339(*until), "2026-05-01T02:25:00.000Z");
  auto held = applied_snoozes();
  ASSERT_EQ(held.size(), 2u) << "eval's and the new one of inference";
  EXPECT_EQ(held[0].monitors, std::vector<std::string>{"eval"});
  EXPECT_EQ(held[1].end, *until);
}

TEST_F(MonitorSnoozesTest, UnsnoozeEndsOnlyThatMonitorsSnoozeAndTwiceIsNoError) {
  ASSERT_TRUE(snooze("inference", hours(1)));
  ASSERT_TRUE(snooze("eval", hours(1)));
  ASSERT_TRUE(unsnooze("inference").ok());
  auto held = applied_snoozes();
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].monitors, std::vector<std::string>{"eval"});
  EXPECT_TRUE(unsnooze("inference").ok());
  EXPECT_TRUE(unsnooze("never-snoozed").ok());
}

TEST_F(MonitorSnoozesTest, LengthsOutsideAMinuteToAWeekAndUnknownMonitorsAreRefused) {
  auto short_one = snooze("inference", std::chrono::seconds(30));
  ASSERT_FALSE(short_one);
  EXPECT_EQ(short_one.error().code, "snooze.invalid");
  EXPECT_EQ(short_one.error().message, "for: found '30s'; expected a length from 1m to 7d");
  auto long_one = snooze("inference", hours(24 * 8));
  ASSERT_FALSE(long_one);
  EXPECT_EQ(long_one.error().code, "snooze.invalid");
  auto unknown = snooze("typo", hours(1));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, "maintenance.invalid");
  EXPECT_TRUE(applied_snoozes().empty());
}

}  // namespace
}  // namespace trainwatch::catalog
