#include "heartbeat/token_index.h"

#include <gtest/gtest.h>

#include "fakes/manual_clock.h"
#include "heartbeat/tokens.h"

namespace trainwatch::heartbeat {
namespace {

Config with_heartbeats(std::initializer_list<std::pair<const char*, const char*>> monitors) {
  Config config;
  for (auto [name, token] : monitors) {
    MonitorConfig m;
    m.name = name;
    m.type = MonitorType::kHeartbeat;
    HeartbeatSpec spec;
    spec.token = token;
    m.spec = spec;
    config.monitors.push_back(m);
  }
  return config;
}

TEST(TokenIndex, FindsTheMonitorOfAnExactToken) {
  testing::ManualClock clock;
  TokenIndex index(with_heartbeats({{"checkpoint", "6f1c0c1e-2c8b-4d6f"}, {"steps", "a-token-of-steps"}}),
                   clock.monotonic_time());
  ASSERT_NE(index.find("6f1c0c1e-2c8b-4d6f"), nullptr);
  EXPECT_EQ(index.find("6f1c0c1e-2c8b-4d6f")->monitor, "checkpoint");
  EXPECT_EQ(index.find("a-token-of-steps")->monitor, "steps");
  EXPECT_EQ(index.find("6f1c0c1e-2c8b-4d6"), nullptr);
  EXPECT_EQ(index.find("6f1c0c1e-2c8b-4d6f0"), nullptr);
  EXPECT_EQ(index.find(""), nullptr);
}

// 10,000 tokens, as an installation of 10,000 heartbeats has: each finds its own monitor
// however the table placed it, and near misses find none.
TEST(TokenIndex, FindsEachOfManyTokensAndNoNearMiss) {
  testing::ManualClock clock;
  Config config;
  for (int i = 0; i < 10'000; ++i) {
    MonitorConfig m;
    m.name = "hb" + std::to_string(i);
    m.type = MonitorType::kHeartbeat;
    HeartbeatSpec spec;
    spec.token = "token-" + std::to_string(i * 7919);
    m.spec = spec;
    config.monitors.push_back(m);
  }
  const TokenIndex index(config, clock.monotonic_time());
  ASSERT_EQ(index.size(), 10'000u);
  for (int i = 0; i < 10'000; ++i) {
    const TokenEntry* entry = index.find("token-" + std::to_string(i * 7919));
    ASSERT_NE(entry, nullptr) << i;
    EXPECT_EQ(entry->monitor, "hb" + std::to_string(i));
    EXPECT_EQ(index.find("token-" + std::to_string(i * 7919 + 1)), nullptr) << i;
  }
}

TEST(TokenIndex, SkipsMonitorsWithoutATokenAndOtherTypes) {
  testing::ManualClock clock;
  Config config = with_heartbeats({{"unresolved", ""}});
  MonitorConfig http;
  http.name = "web";
  config.monitors.push_back(http);
  EXPECT_EQ(TokenIndex(config, clock.monotonic_time()).size(), 0u);
}

TEST(RateLimiter, RefusesPastTheBurstAndRefillsWithTime) {
  testing::ManualClock clock;
  RateLimiter limiter(clock.monotonic_time());
  int allowed = 0;
  for (int i = 0; i < 5000; ++i) allowed += limiter.allow(clock.monotonic_time()) ? 1 : 0;
  EXPECT_EQ(allowed, static_cast<int>(RateLimiter::kBurst));
  clock.advance(Millis(100));  // 100 ms at 200/s: 20 more
  allowed = 0;
  for (int i = 0; i < 100; ++i) allowed += limiter.allow(clock.monotonic_time()) ? 1 : 0;
  EXPECT_EQ(allowed, 20);
}

class FixedRandom final : public Random {
 public:
  void fill(std::span<uint8_t> out) override {
    for (auto& b : out) b = next_++;
  }

 private:
  uint8_t next_ = 0;
};

TEST(GenerateToken, IsAVersion4UuidFrom16RandomBytes) {
  FixedRandom random;
  EXPECT_EQ(generate_token(random), "00010203-0405-4607-8809-0a0b0c0d0e0f");
  EXPECT_EQ(generate_token(random), "10111213-1415-4617-9819-1a1b1c1d1e1f");
}

}  // namespace
}  // namespace trainwatch::heartbeat
