#include "http/accept_backoff.h"

#include <gtest/gtest.h>

#include "fakes/manual_clock.h"

namespace trainwatch::http {
namespace {

TEST(AcceptBackoff, PausesGrowToTheMaximumAndStartOverAfterASuccess) {
  testing::ManualClock clock;
  AcceptBackoff backoff(clock);
  std::vector<int64_t> pauses;
  for (int i = 0; i < 6; ++i) pauses.push_back(backoff.failed("Too many open files").pause.count());
  EXPECT_EQ(pauses, (std::vector<int64_t>{10, 20, 40, 80, 100, 100}));
  backoff.succeeded();
  EXPECT_EQ(backoff.failed("Too many open files").pause, AcceptBackoff::kFirstPause);
}

TEST(AcceptBackoff, LogsAtMostOneLinePerPeriodWithTheFailuresSince) {
  testing::ManualClock clock;
  AcceptBackoff backoff(clock);
  auto first = backoff.failed("Too many open files");
  ASSERT_TRUE(first.log_line);
  EXPECT_NE(first.log_line->find("Too many open files (1 failure"), std::string::npos) << *first.log_line;
  for (int i = 0; i < 99; ++i) {
    clock.advance(Millis(100));
    EXPECT_FALSE(backoff.failed("Too many open files").log_line);
  }
  clock.advance(Millis(100));  // 10 s after the first line
  auto next = backoff.failed("Too many open files");
  ASSERT_TRUE(next.log_line);
  EXPECT_NE(next.log_line->find("(100 failures"), std::string::npos) << *next.log_line;
}

}  // namespace
}  // namespace trainwatch::http
