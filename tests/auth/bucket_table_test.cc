#include "auth/bucket_table.h"

#include <gtest/gtest.h>

#include "fakes/manual_clock.h"

namespace trainwatch::auth {
namespace {

constexpr BucketLimits kLimits{3, Millis(1'000), 4};

TEST(BucketTableTest, BurstThenOnePerRefillPeriod) {
  testing::ManualClock clock;
  BucketTable table(kLimits);
  for (int i = 0; i < 3; ++i) ASSERT_FALSE(table.take("a", clock.monotonic_time())) << i;
  auto wait = table.take("a", clock.monotonic_time());
  ASSERT_TRUE(wait);
  EXPECT_EQ(*wait, Millis(1'000));
  // A refused take spends nothing: waiting what it said is enough.
  clock.advance(Millis(400));
  EXPECT_EQ(table.take("a", clock.monotonic_time()), Millis(600));
  clock.advance(Millis(600));
  EXPECT_FALSE(table.take("a", clock.monotonic_time()));
  EXPECT_TRUE(table.take("a", clock.monotonic_time()));
  // Refill stops at the burst: a long pause buys three, not more.
  clock.advance(Millis(3'600'000));
  for (int i = 0; i < 3; ++i) ASSERT_FALSE(table.take("a", clock.monotonic_time())) << i;
  EXPECT_TRUE(table.take("a", clock.monotonic_time()));
}

TEST(BucketTableTest, WaitForLooksWithoutTaking) {
  testing::ManualClock clock;
  BucketTable table(kLimits);
  EXPECT_FALSE(table.wait_for("a", clock.monotonic_time()));
  for (int i = 0; i < 3; ++i) table.take("a", clock.monotonic_time());
  EXPECT_EQ(table.wait_for("a", clock.monotonic_time()), Millis(1'000));
  EXPECT_EQ(table.wait_for("a", clock.monotonic_time()), Millis(1'000));
  EXPECT_FALSE(table.wait_for("b", clock.monotonic_time()));
}

TEST(BucketTableTest, AtTheBoundRefilledKeysAreForgottenAndTheRestShareOneBucket) {
  testing::ManualClock clock;
  BucketTable table(kLimits);
  // Four keys, each with one unit spent: the table is full.
  for (const char* key : {"a", "b", "c", "d"}) table.take(key, clock.monotonic_time());
  EXPECT_EQ(table.size(), 4u);
  // New keys share the overflow bucket: three takes between them, then refused.
  EXPECT_FALSE(table.take("e", clock.monotonic_time()));
  EXPECT_FALSE(table.take("f", clock.monotonic_time()));
  EXPECT_FALSE(table.take("g", clock.monotonic_time()));
  EXPECT_TRUE(table.take("h", clock.monotonic_time()));
  EXPECT_TRUE(table.wait_for("i", clock.monotonic_time()));
  EXPECT_EQ(table.size(), 4u);
  // Once the four have refilled they are forgotten and new keys get their own buckets.
  clock.advance(Millis(1'000));
  EXPECT_FALSE(table.take("h", clock.monotonic_time()));
  EXPECT_EQ(table.size(), 1u);
}

}  // namespace
}  // namespace trainwatch::auth
