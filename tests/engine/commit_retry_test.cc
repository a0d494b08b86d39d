// A state change the store refuses for a passing reason (a full disk) is written again
// after 100 ms, then 200 ms, doubling up to 5 s, for as long as it is refused; one that
// another replica beat (store.conflict) is dropped for the state that replica stored.
#include <gtest/gtest.h>

#include "engine_harness.h"
#include "storage/store_errors.h"

namespace trainwatch::engine {
namespace {

class CommitRetryTest : public testing::EngineHarness {};

TEST_F(CommitRetryTest, ARefusedChangeIsWrittenAgainAfter100msDoublingTo5s) {
  auto_commit_ = false;
  config_.monitors = {http_monitor("api", Millis(3'600'000))};
  checkers_.answer("api", false);
  start();
  advance(Millis(0));
  const RecordResult* down = store_.front<RecordResult>();
  ASSERT_NE(down, nullptr);
  ASSERT_TRUE(down->opened.has_value());
  const int64_t incident = down->opened->id;

  const Status full = make_error(store_error::kUnavailable, "database or disk is full");
  for (int64_t delay : {100, 200, 400, 800, 1'600, 3'200, 5'000, 5'000, 5'000}) {
    ASSERT_TRUE(store_.answer(full));
    advance(Millis(delay - 1));
    EXPECT_EQ(store_.waiting(), 0u) << "written again before " << delay << " ms";
    advance(Millis(1));
    const RecordResult* again = store_.front<RecordResult>();
    ASSERT_NE(again, nullptr) << "not written again " << delay << " ms after a refusal";
    ASSERT_TRUE(again->opened.has_value());
    EXPECT_EQ(again->opened->id, incident) << "the same change, not a new one";
    EXPECT_FALSE(view("api").open_incident.has_value()) << "not shown while refused";
  }

  ASSERT_TRUE(store_.answer(Ok{}));
  settle();
  EXPECT_EQ(view("api").state.status, MonitorStatus::kDown);
  EXPECT_EQ(view("api").open_incident.value().id, incident);
  advance(Millis(60'000));
  EXPECT_EQ(store_.waiting(), 0u) << "a committed change is not written again";
}

TEST_F(CommitRetryTest, AChangeAnotherReplicaMadeFirstIsDroppedForTheStoredOne) {
  auto_commit_ = false;
  config_.monitors = {http_monitor("api", Millis(1'000))};
  checkers_.answer("api", false);
  start();
  advance(Millis(0));
  const RecordResult* down = store_.front<RecordResult>();
  ASSERT_NE(down, nullptr);
  ASSERT_TRUE(down->opened.has_value());
  ASSERT_TRUE(down->expect.has_value()) << "a change that opens an incident is a compare-and-set";
  EXPECT_EQ(down->expect->open_incident_id, std::nullopt);

  // Meanwhile the replica that owned it a moment ago opened its own incident.
  MonitorState theirs;
  theirs.status = MonitorStatus::kDown;
  theirs.since = clock_.system_time();
  theirs.open_incident_id = 77;
  store_.put_state("api", theirs);
  store_.put_incident(Incident{77, "api", clock_.system_time(), std::nullopt, "timeout", ""});
  ASSERT_TRUE(store_.answer(make_error(store_error::kConflict, "another replica changed it first")));
  settle();
  EXPECT_EQ(view("api").state.status, MonitorStatus::kDown);
  ASSERT_TRUE(view("api").open_incident.has_value());
  EXPECT_EQ(view("api").open_incident->id, 77) << "the stored incident, not a second one";

  // The next failures change nothing: no incident of its own, no alert.
  advance(Millis(1'000));
  const RecordResult* next = store_.front<RecordResult>();
  ASSERT_NE(next, nullptr);
  EXPECT_FALSE(next->opened.has_value());
  EXPECT_TRUE(next->outbox.empty());
  EXPECT_EQ(next->state.open_incident_id, std::optional<int64_t>(77));
}

}  // namespace
}  // namespace trainwatch::engine
