#include "core/enum_names.h"

#include <gtest/gtest.h>

#include "core/model.h"
#include "core/ping.h"

namespace trainwatch {
namespace {

enum class Light { kRed, kAmber, kGreen };
constexpr EnumNames<Light, 3> kLightNames{
    {{Light::kRed, "red"}, {Light::kAmber, "amber"}, {Light::kGreen, "green"}}};

TEST(EnumNames, EachValueReadsBackAsItself) {
  for (const auto& [value, name] : kLightNames) {
    EXPECT_EQ(name_of(kLightNames, value), name);
    EXPECT_EQ(value_of(kLightNames, name), value);
  }
  static_assert(name_of(kLightNames, Light::kAmber) == "amber", "usable at compile time");
}

TEST(EnumNames, AnUnknownWordIsNoValueAndAnUnlistedValueReadsAsTheFirstName) {
  EXPECT_EQ(value_of(kLightNames, "blue"), std::nullopt);
  EXPECT_EQ(value_of(kLightNames, "Red"), std::nullopt);  // the words are exact
  EXPECT_EQ(name_of(kLightNames, static_cast<Light>(7)), "red");
}

TEST(EnumNames, TheModelsWordsRoundTrip) {
  for (auto s : {MonitorStatus::kPending, MonitorStatus::kUp, MonitorStatus::kDown, MonitorStatus::kPaused}) {
    EXPECT_EQ(monitor_status_from_string(to_string(s)), s);
  }
  for (auto k :
       {PingKind::kSuccess, PingKind::kStart, PingKind::kFail, PingKind::kLog, PingKind::kExitCode}) {
    EXPECT_EQ(ping_kind_from_string(to_string(k)), k);
  }
  EXPECT_EQ(to_string(PingKind::kExitCode), "exit_code");
}

}  // namespace
}  // namespace trainwatch
