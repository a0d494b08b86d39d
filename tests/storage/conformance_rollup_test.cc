// Uptime rollups and retention pruning, the same on every store (conformance.h).
#include "storage/conformance.h"

namespace trainwatch::testing {
namespace {

constexpr int64_t kHour = 3'600'000;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kDay0 = 19'700 * kDay;  // a UTC midnight

template <typename F>
class StoreRollups : public StoreTest<F> {
 protected:
  // A failed check leaves the monitor DOWN unless `after` says otherwise (below `retries`).
  void record(const std::string& monitor, int64_t at, bool ok, double latency,
              std::optional<MonitorStatus> after = std::nullopt) {
    CheckResult r;
    r.at = from_unix_ms(at);
    r.ok = ok;
    r.latency_ms = latency;
    MonitorState state;
    state.status = after.value_or(ok ? MonitorStatus::kUp : MonitorStatus::kDown);
    ASSERT_TRUE(this->store_->write(RecordResult{monitor, r, state}));
  }

  std::vector<UptimeBucket> buckets(RollupResolution res, int64_t from, int64_t to,
                                    const std::string& m = "a") {
    this->store_->flush();
    auto out = this->store_->uptime(UptimeQuery{m, res, from, to});
    EXPECT_TRUE(out.ok());
    return out.ok() ? *out : std::vector<UptimeBucket>{};
  }
};
TYPED_TEST_SUITE(StoreRollups, StoreFactories, FactoryName);

TYPED_TEST(StoreRollups, EachResultAddsToItsHourAndDay) {
  this->record("a", kDay0 + 10, true, 10);
  this->record("a", kDay0 + kHour - 1, false, 30);  // same hour, last millisecond
  this->record("a", kDay0 + kHour, true, 20);       // next hour, same day
  this->record("a", kDay0 + kDay, true, 5);         // next day
  this->record("b", kDay0 + 10, false, 1);          // another monitor stays apart

  auto hours = this->buckets(RollupResolution::kHour, kDay0, kDay0 + 2 * kDay);
  ASSERT_EQ(hours.size(), 3u);
  EXPECT_EQ(hours[0].start_ms, kDay0);
  EXPECT_EQ(hours[0].checks, 2);
  EXPECT_EQ(hours[0].ok, 1);
  EXPECT_DOUBLE_EQ(hours[0].latency_sum_ms, 40);
  EXPECT_EQ(hours[1].start_ms, kDay0 + kHour);

  auto days = this->buckets(RollupResolution::kDay, kDay0, kDay0 + 2 * kDay);
  ASSERT_EQ(days.size(), 2u);
  EXPECT_EQ(days[0].checks, 3);
  EXPECT_EQ(days[0].ok, 2);
  EXPECT_EQ(days[1].start_ms, kDay0 + kDay);
  EXPECT_EQ(this->buckets(RollupResolution::kDay, kDay0, kDay0 + kDay, "b").at(0).ok, 0);
}

// Uptime is time not DOWN: failed checks that opened no incident take none of it.
TYPED_TEST(StoreRollups, AFailedCheckCountsAgainstUptimeOnlyWhenTheMonitorIsDown) {
  this->record("a", kDay0 + 1, false, 1, MonitorStatus::kPending);  // start-up failures below retries
  this->record("a", kDay0 + 2, false, 1, MonitorStatus::kPending);
  for (int i = 3; i < 11; ++i) this->record("a", kDay0 + i, true, 1);
  this->record("a", kDay0 + 11, false, 1, MonitorStatus::kUp);  // one more below retries, while up
  auto day = this->buckets(RollupResolution::kDay, kDay0, kDay0 + kDay);
  ASSERT_EQ(day.size(), 1u);
  EXPECT_EQ(day[0].checks, 11);
  EXPECT_EQ(day[0].ok, 11);

  this->record("a", kDay0 + 12, false, 1);  // past retries: DOWN
  this->record("a", kDay0 + 13, false, 1);  // still DOWN
  this->record("a", kDay0 + 14, true, 1);   // up again
  day = this->buckets(RollupResolution::kDay, kDay0, kDay0 + kDay);
  EXPECT_EQ(day[0].checks, 14);
  EXPECT_EQ(day[0].ok, 12);
  EXPECT_EQ(this->buckets(RollupResolution::kHour, kDay0, kDay0 + kHour).at(0).ok, 12);
}

// Planned work is not an outage: a DOWN inside a maintenance window counts as up.
TYPED_TEST(StoreRollups, ADownInsideAMaintenanceWindowCountsAsUp) {
  CheckResult failed;
  failed.at = from_unix_ms(kDay0 + 1);
  MonitorState down;
  down.status = MonitorStatus::kDown;
  RecordResult in_window{"a", failed, down};
  in_window.in_maintenance = true;
  ASSERT_TRUE(this->store_->write(in_window));
  this->record("a", kDay0 + 2, false, 1);  // the window ended, the monitor still DOWN
  auto day = this->buckets(RollupResolution::kDay, kDay0, kDay0 + kDay);
  ASSERT_EQ(day.size(), 1u);
  EXPECT_EQ(day[0].checks, 2);
  EXPECT_EQ(day[0].ok, 1);
}

TYPED_TEST(StoreRollups, TheWindowIsHalfOpen) {
  this->record("a", kDay0, true, 1);
  this->record("a", kDay0 + kDay, true, 1);
  EXPECT_EQ(this->buckets(RollupResolution::kDay, kDay0, kDay0 + kDay).size(), 1u);
}

TYPED_TEST(StoreRollups, PruningRemovesOldRawResultsButKeepsRollups) {
  for (int i = 0; i < 5; ++i) this->record("a", kDay0 + i * kHour, true, 1);
  ASSERT_TRUE(
      this->store_->write(PruneResults{from_unix_ms(kDay0 + 3 * kHour), 2}));  // bounded: 2 of the 3 old ones
  this->store_->flush();
  EXPECT_EQ(this->store_->results(ResultQuery{"a", std::nullopt, 100})->size(), 3u);
  ASSERT_TRUE(this->store_->write(PruneResults{from_unix_ms(kDay0 + 3 * kHour), 10}));
  this->store_->flush();
  auto left = this->store_->results(ResultQuery{"a", std::nullopt, 100});
  ASSERT_EQ(left->size(), 2u);
  EXPECT_EQ(to_unix_ms(left->back().at), kDay0 + 3 * kHour);
  EXPECT_EQ(this->buckets(RollupResolution::kDay, kDay0, kDay0 + kDay).at(0).checks, 5);
}

TYPED_TEST(StoreRollups, SeveralMonitorsInOneRead) {
  this->record("a", kDay0, true, 10);
  this->record("b", kDay0 + kHour, false, 20);
  this->record("c", kDay0, true, 30);
  this->store_->flush();
  auto out = this->store_->uptime_of({"a", "b", "missing"},
                                     UptimeQuery{"", RollupResolution::kHour, kDay0, kDay0 + kDay});
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ(out->at("a").at(0).checks, 1);
  EXPECT_EQ(out->at("b").at(0).start_ms, kDay0 + kHour);
  EXPECT_EQ(out->count("c"), 0u);
  std::vector<std::string> too_many(Store::kMaxRowsPerBatch + 1, "a");
  EXPECT_FALSE(this->store_->uptime_of(too_many, UptimeQuery{}).ok());
}

}  // namespace
}  // namespace trainwatch::testing
