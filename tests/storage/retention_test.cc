// The pruner queues one bounded prune of results older than retention.raw every 10 s of
// simulated time, and none after stop().
#include <gtest/gtest.h>

#include "fakes/fake_store.h"
#include "fakes/manual_clock.h"
#include "storage/retention.h"

namespace trainwatch {
namespace {

TEST(RetentionPruner, QueuesABoundedPruneEveryIntervalUntilStopped) {
  testing::ManualClock clock;
  testing::FakeStore store;
  const Millis keep{7LL * 24 * 3'600'000};
  RetentionPruner pruner(clock, clock, store, keep);
  pruner.start();

  clock.advance(RetentionPruner::kPruneInterval - Millis(1));
  EXPECT_EQ(store.waiting(), 0u);
  clock.advance(Millis(1));
  const PruneResults* prune = store.front<PruneResults>();
  ASSERT_NE(prune, nullptr);
  EXPECT_EQ(prune->before, clock.system_time() - keep);
  EXPECT_EQ(prune->max_rows, RetentionPruner::kRowsPerPrune);
  ASSERT_TRUE(store.answer(Ok{}));
  // The audit log is kept as long, pruned in the same tick.
  const PruneAudit* audit = store.front<PruneAudit>();
  ASSERT_NE(audit, nullptr);
  EXPECT_EQ(audit->before, clock.system_time() - keep);
  ASSERT_TRUE(store.answer(Ok{}));

  clock.advance(RetentionPruner::kPruneInterval * 3);
  EXPECT_EQ(store.waiting(), 6u);
  while (store.answer(Ok{})) {
  }

  pruner.stop();
  clock.advance(RetentionPruner::kPruneInterval * 10);
  EXPECT_EQ(store.waiting(), 0u);
}

TEST(RetentionPruner, AReloadedRetentionIsWhatTheNextPruneKeeps) {
  testing::ManualClock clock;
  testing::FakeStore store;
  RetentionPruner pruner(clock, clock, store, Millis{14LL * 24 * 3'600'000});
  pruner.start();
  const Millis one_day{24LL * 3'600'000};
  pruner.set_keep_raw(one_day);
  clock.advance(RetentionPruner::kPruneInterval);
  const PruneResults* prune = store.front<PruneResults>();
  ASSERT_NE(prune, nullptr);
  EXPECT_EQ(prune->before, clock.system_time() - one_day);
  pruner.stop();
}

}  // namespace
}  // namespace trainwatch
