// DatabaseClock: the database's time carried by the monotonic clock; a reading within
// its own uncertainty of the current time changes nothing.
#include "cluster/database_clock.h"

#include <gtest/gtest.h>

#include <chrono>

#include "fakes/manual_clock.h"

namespace trainwatch::cluster {
namespace {

using std::chrono::microseconds;

TEST(DatabaseClock, BeforeItsFirstReadingItIsTheWallClock) {
  testing::ManualClock local;
  DatabaseClock clock(local);
  EXPECT_EQ(clock.system_time(), local.system_time());
  local.step_wall_clock(Millis(-5'000));
  EXPECT_EQ(clock.system_time(), local.system_time()) << "a serve alone follows its host";
  EXPECT_EQ(clock.wall_clock_ahead(), Millis(0));
}

TEST(DatabaseClock, AfterAReadingItRunsOnTheMonotonicClockAndIgnoresWallSteps) {
  testing::ManualClock local;
  DatabaseClock clock(local);
  const SystemTime database = local.system_time() + Millis(3'000);
  clock.observe(database, local.monotonic_time(), microseconds(200));
  EXPECT_EQ(clock.system_time(), database);
  EXPECT_EQ(clock.wall_clock_ahead(), Millis(-3'000));

  local.advance(Millis(1'500));
  local.step_wall_clock(std::chrono::hours(1));
  EXPECT_EQ(clock.system_time(), database + Millis(1'500));
  EXPECT_EQ(clock.wall_clock_ahead(), std::chrono::hours(1) - Millis(3'000));
}

TEST(DatabaseClock, AReadingWithinItsUncertaintyKeepsTheTimeSteady) {
  testing::ManualClock local;
  DatabaseClock clock(local);
  const SystemTime database = local.system_time();
  clock.observe(database, local.monotonic_time(), microseconds(200));

  // Read again with a 2 ms round trip that put the midpoint 0.8 ms off: no jitter.
  clock.observe(database + microseconds(800), local.monotonic_time(), microseconds(1'000));
  EXPECT_EQ(clock.system_time(), database);

  // A reading that rules the current time out (the database's clock was stepped) wins.
  clock.observe(database + Millis(40), local.monotonic_time(), microseconds(1'000));
  EXPECT_EQ(clock.system_time(), database + Millis(40));
  // Even backwards: the database is the installation's time.
  clock.observe(database - Millis(40), local.monotonic_time(), microseconds(1'000));
  EXPECT_EQ(clock.system_time(), database - Millis(40));
}

}  // namespace
}  // namespace trainwatch::cluster
