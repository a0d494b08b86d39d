// The Timer contract, held by both implementations: the asio one that serve runs and
// the manual one that unit tests drive.
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>

#include "core/asio_timers.h"
#include "fakes/manual_clock.h"

namespace trainwatch {
namespace {

using testing::ManualClock;

TEST(ManualTimers, FireInDeadlineOrderAsTimeMoves) {
  ManualClock clock;
  std::vector<int> fired;
  auto a = clock.make_timer();
  auto b = clock.make_timer();
  a->arm_after(clock, Millis(300), [&] { fired.push_back(1); });
  b->arm_after(clock, Millis(100), [&] { fired.push_back(2); });
  clock.advance(Millis(99));
  EXPECT_TRUE(fired.empty());
  clock.advance(Millis(1));
  EXPECT_EQ(fired, std::vector<int>{2});
  clock.advance(Millis(1'000));
  EXPECT_EQ(fired, (std::vector<int>{2, 1}));
  EXPECT_EQ(clock.armed_timers(), 0u);
}

TEST(ManualTimers, CallbackSeesItsOwnDeadlineAndMayRearmWithinTheWindow) {
  ManualClock clock;
  const MonoTime start = clock.monotonic_time();
  auto t = clock.make_timer();
  std::vector<Millis> seen;
  std::function<void()> tick = [&] {
    seen.push_back(std::chrono::duration_cast<Millis>(clock.monotonic_time() - start));
    if (seen.size() < 3) t->arm_after(clock, Millis(10), tick);
  };
  t->arm_after(clock, Millis(10), tick);
  clock.advance(Millis(1'000));
  EXPECT_EQ(seen, (std::vector<Millis>{Millis(10), Millis(20), Millis(30)}));
  EXPECT_EQ(clock.monotonic_time() - start, Millis(1'000));
}

TEST(ManualTimers, CancelRearmAndDestructionDropTheEarlierCallback) {
  ManualClock clock;
  int fired = 0;
  auto cancelled = clock.make_timer();
  cancelled->arm_after(clock, Millis(5), [&] { fired += 100; });
  cancelled->cancel();
  auto rearmed = clock.make_timer();
  rearmed->arm_after(clock, Millis(5), [&] { fired += 10; });
  rearmed->arm_after(clock, Millis(50), [&] { fired += 1; });
  {
    auto destroyed = clock.make_timer();
    destroyed->arm_after(clock, Millis(5), [&] { fired += 1'000; });
  }
  clock.advance(Millis(10));
  EXPECT_EQ(fired, 0);
  clock.advance(Millis(40));
  EXPECT_EQ(fired, 1);
}

TEST(AsioTimers, FireOnTheIoContextAndNeverAfterCancel) {
  boost::asio::io_context io;
  SystemClock clock;
  AsioTimers timers(io, clock);
  int fired = 0;
  auto due = timers.make_timer();
  auto cancelled = timers.make_timer();
  due->arm_after(clock, Millis(1), [&] { fired += 1; });
  cancelled->arm_after(clock, Millis(1), [&] { fired += 100; });
  EXPECT_EQ(fired, 0) << "arm() never runs the callback itself";
  cancelled->cancel();
  io.run();
  EXPECT_EQ(fired, 1);
}

TEST(AsioTimers, AHandlerAlreadyQueuedIsDroppedByACancel) {
  boost::asio::io_context io;
  SystemClock clock;
  AsioTimers timers(io, clock);
  std::vector<int> fired;
  auto first = timers.make_timer();
  auto second = timers.make_timer();
  // Both are overdue, so asio queues both handlers in one pass; the first cancels the
  // second, whose handler is then already queued with success.
  first->arm(clock.monotonic_time() - Millis(2), [&] {
    fired.push_back(1);
    second->cancel();
  });
  second->arm(clock.monotonic_time() - Millis(1), [&] { fired.push_back(2); });
  io.run();
  EXPECT_EQ(fired, std::vector<int>{1});
}

TEST(AsioTimers, AHandlerAlreadyQueuedIsDroppedByTheTimersDestruction) {
  boost::asio::io_context io;
  SystemClock clock;
  AsioTimers timers(io, clock);
  std::vector<int> fired;
  auto first = timers.make_timer();
  auto second = timers.make_timer();
  // As above, but the first destroys the second, as a reload destroys a removed
  // monitor's timer: its queued handler must not reach into the freed timer.
  first->arm(clock.monotonic_time() - Millis(2), [&] {
    fired.push_back(1);
    second.reset();
  });
  second->arm(clock.monotonic_time() - Millis(1), [&] { fired.push_back(2); });
  io.run();
  EXPECT_EQ(fired, std::vector<int>{1});
}

}  // namespace
}  // namespace trainwatch
