// Engine::state_generation, in simulated time: it moves with every change a cached view
// must show at its next read (http/fresh_cache.h), and not with each plain check.
#include <gtest/gtest.h>

#include "engine_harness.h"

namespace trainwatch::engine {
namespace {

class EngineStateGenerationTest : public testing::EngineHarness {
 protected:
  // Whether `step` moved the generation.
  template <typename F>
  bool moves(F step) {
    const uint64_t before = engine_.state_generation();
    step();
    return engine_.state_generation() != before;
  }
};

TEST_F(EngineStateGenerationTest, MovesWithWhatReadersMustSeeAtOnceAndNotWithEachCheck) {
  config_.monitors = {http_monitor("api", Millis(10'000), /*retries=*/1),
                      http_monitor("other", Millis(10'000))};
  checkers_.answer("api", true);
  start();
  advance(Millis(6'000));  // both checked once: up
  ASSERT_EQ(view("api").state.status, MonitorStatus::kUp);

  const uint64_t revision = view("api").revision;
  EXPECT_FALSE(moves([&] { advance(Millis(10'000)); })) << "a plain success changes nothing shown";
  EXPECT_GT(view("api").revision, revision) << "but its check time moved";

  checkers_.answer("api", false);
  EXPECT_TRUE(moves([&] { advance(Millis(10'000)); })) << "a failure below retries: the banner's degraded";
  ASSERT_EQ(view("api").state.status, MonitorStatus::kUp);
  EXPECT_TRUE(moves([&] { advance(Millis(10'000)); })) << "down, with an incident";
  ASSERT_EQ(view("api").state.status, MonitorStatus::kDown);
  EXPECT_FALSE(moves([&] { advance(Millis(10'000)); })) << "still down";

  EXPECT_TRUE(moves([&] { set_paused("api", true); }));
  EXPECT_TRUE(moves([&] { set_paused("api", false); }));

  Config without_other = config_;
  without_other.monitors.pop_back();
  EXPECT_TRUE(moves([&] {
    engine_.reload(without_other);
    settle();
  })) << "a removed monitor";
  EXPECT_FALSE(engine_.monitor("other").has_value());
}

}  // namespace
}  // namespace trainwatch::engine
