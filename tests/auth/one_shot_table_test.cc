#include "auth/one_shot_table.h"

#include <gtest/gtest.h>

#include "fakes/manual_clock.h"

namespace trainwatch::auth {
namespace {

constexpr Millis kTtl{10'000};

TEST(OneShotTableTest, AValueIsTakenOnceAndAnUnknownKeyGivesNothing) {
  testing::ManualClock clock;
  OneShotTable<int> table(clock, 3, kTtl);
  table.put("a", 1);
  EXPECT_EQ(table.take("never-handed-out"), std::nullopt);
  EXPECT_EQ(table.take("a"), 1);
  EXPECT_EQ(table.take("a"), std::nullopt);
  EXPECT_EQ(table.size(), 0u);
}

TEST(OneShotTableTest, AValueExpiresAtItsTtl) {
  testing::ManualClock clock;
  OneShotTable<int> table(clock, 3, kTtl);
  table.put("a", 1);
  clock.advance(kTtl - Millis(1));
  table.put("b", 2);
  clock.advance(Millis(1));
  EXPECT_EQ(table.take("a"), std::nullopt);
  EXPECT_EQ(table.take("b"), 2);
}

TEST(OneShotTableTest, AtTheBoundTheOldestMakesRoomAndATakenOneFreesItsPlace) {
  testing::ManualClock clock;
  OneShotTable<int> table(clock, 3, kTtl);
  table.put("a", 1);
  table.put("b", 2);
  table.put("c", 3);
  EXPECT_EQ(table.take("b"), 2);
  table.put("d", 4);  // room freed by the take: nothing dropped
  EXPECT_EQ(table.size(), 3u);
  table.put("e", 5);  // full: the oldest, a, makes room
  EXPECT_EQ(table.size(), 3u);
  EXPECT_EQ(table.take("a"), std::nullopt);
  EXPECT_EQ(table.take("c"), 3);
  EXPECT_EQ(table.take("d"), 4);
  EXPECT_EQ(table.take("e"), 5);
}

}  // namespace
}  // namespace trainwatch::auth
