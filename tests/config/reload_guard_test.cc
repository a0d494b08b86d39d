#include "config/reload_guard.h"

#include <gtest/gtest.h>

#include "config/loader.h"

namespace trainwatch {
namespace {

LoadedConfig load(const std::string& text) {
  auto loaded =
      load_config_text(text, "tw.yaml", [](const std::string&) { return std::optional<std::string>(); });
  EXPECT_TRUE(loaded.config);
  return loaded;
}

TEST(ReloadRefusal, AFileWhoseMonitorsVanishedIsRefusedWhileTheRunningOneHasMonitors) {
  const LoadedConfig no_key = load("jobs:\n  auto_create: true\n");
  EXPECT_EQ(
      reload_refusal(3, no_key).value_or(""),
      "tw.yaml: has no `monitors:` key while the running config has 3 monitors from the file; expected the "
      "monitors (write `monitors: []` to remove them all)");
  // Nothing to lose: a file that never had monitors may go on without the key.
  EXPECT_FALSE(reload_refusal(0, no_key));
}

TEST(ReloadRefusal, AnExplicitEmptyListOrAnyListIsTheOperatorsWord) {
  EXPECT_FALSE(reload_refusal(3, load("monitors: []\n")));
  EXPECT_FALSE(reload_refusal(3, load("monitors:\n  - {name: a, type: heartbeat, period: 1h}\n")));
}

TEST(MissingMonitorsWarning, OnlyWhenTheKeyIsAbsent) {
  EXPECT_TRUE(missing_monitors_warning(load("jobs:\n  auto_create: true\n")));
  EXPECT_FALSE(missing_monitors_warning(load("monitors: []\n")));
}

}  // namespace
}  // namespace trainwatch
