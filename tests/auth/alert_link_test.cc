#include "auth/alert_link.h"

#include <gtest/gtest.h>

namespace trainwatch::auth {
namespace {

using std::chrono::hours;

const SystemTime kSent = from_unix_ms(1'767'225'600'000);  // 2026-01-01T00:00:00Z
const AlertLink kLink{"rank0-health", 412, kSent + hours(24)};

TEST(AlertLink, ReadsBackWhatItSignedUntilItExpires) {
  const std::string token = sign_alert_link("key", kLink);
  EXPECT_EQ(token.substr(0, 15), "412.1767312000.");
  EXPECT_EQ(token.substr(token.size() - 13), ".rank0-health");
  auto read = read_alert_link("key", token, kSent + hours(23));
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->monitor, "rank0-health");
  EXPECT_EQ(read->incident_id, 412);
  EXPECT_EQ(read->expires, kLink.expires);

  auto late = read_alert_link("key", token, kLink.expires);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, "link.expired");
  EXPECT_NE(late.error().message.find("2026-01-02T00:00:00"), std::string::npos) << late.error().message;
}

TEST(AlertLink, AWarningsLinkNamesNoIncident) {
  const AlertLink warning{"gpu.node-a", std::nullopt, kSent + hours(24)};
  const std::string token = sign_alert_link("key", warning);
  EXPECT_EQ(token.substr(0, 12), ".1767312000.");
  auto read = read_alert_link("key", token, kSent);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->monitor, "gpu.node-a");
  EXPECT_FALSE(read->incident_id.has_value());
}

TEST(AlertLink, AnyChangeOrAnotherKeyIsRefused) {
  const std::string token = sign_alert_link("key", kLink);
  auto refused = [](std::string_view key, const std::string& t) {
    auto read = read_alert_link(key, t, kSent);
    return !read.ok() && read.error().code == "link.invalid";
  };
  EXPECT_TRUE(refused("other key", token));
  EXPECT_TRUE(refused("", token)) << "no key: nothing is good";
  const std::string mac = token.substr(15, 32);
  EXPECT_EQ(token, "412.1767312000." + mac + ".rank0-health");
  EXPECT_TRUE(refused("key", "412.1767312000." + mac + ".other-monitor")) << "another monitor";
  EXPECT_TRUE(refused("key", "413.1767312000." + mac + ".rank0-health")) << "another incident";
  EXPECT_TRUE(refused("key", "412.1767398400." + mac + ".rank0-health")) << "a longer life";
  EXPECT_TRUE(refused("key", "412.1767312000." + mac.substr(1) + ".rank0-health")) << "a cut signature";
  EXPECT_TRUE(refused("key", "412.1767312000." + mac + ".Rank0")) << "not a monitor name";
  EXPECT_TRUE(refused("key", "a.b")) << "too few parts";
  EXPECT_TRUE(refused("key", "412.x." + mac + ".rank0-health")) << "an expiry that is no number";
  EXPECT_TRUE(refused("key", std::string(4096, 'a'))) << "a long nothing";
}

TEST(AlertLink, ExpiresOnAWholeSecond) {
  const AlertLink odd{"m", 1, kSent + hours(24) + std::chrono::milliseconds(750)};
  auto read = read_alert_link("key", sign_alert_link("key", odd), kSent);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->expires, kSent + hours(24)) << "the link says seconds; the millis are dropped";
}

}  // namespace
}  // namespace trainwatch::auth
