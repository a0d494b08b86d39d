// The bound on what YAML aliases add to a config (config/alias_bound.h), through the loader.
#include "config/alias_bound.h"

#include <gtest/gtest.h>

#include <string>

#include "config/loader.h"

namespace trainwatch {
namespace {

std::optional<std::string> no_env(const std::string&) { return std::nullopt; }

std::string tcp_monitor_with_tags(const std::string& tags) {
  return "monitors:\n  - name: a\n    type: tcp\n    host: 127.0.0.1\n    port: 80\n    tags: " + tags + "\n";
}

std::string aliases(int count, const std::string& name) {
  std::string out;
  for (int i = 0; i < count; ++i) out += ", *" + name;
  return out;
}

TEST(AliasBound, ALongStringReadThousandsOfTimesIsAnErrorAtItsAnchor) {
  const std::string text =
      tcp_monitor_with_tags("[&s \"" + std::string(3000, 'x') + "\"" + aliases(30000, "s") + "]");
  LoadedConfig loaded = load_config_text(text, "tw.yaml", no_env);
  ASSERT_FALSE(loaded.config);
  ASSERT_EQ(loaded.errors.size(), 1u);
  const std::string error = loaded.errors[0].to_string();
  EXPECT_EQ(error.rfind("tw.yaml:6:", 0), 0u) << error;
  EXPECT_NE(error.find("aliases read this anchored value 30001 times"), std::string::npos) << error;
  EXPECT_NE(error.find("expected aliases to add at most 4 MiB"), std::string::npos) << error;
}

TEST(AliasBound, NestedAliasesAreMeasuredWithoutExpandingThem) {
  // Nine levels of ten: 10^9 strings once read, a few hundred bytes of text.
  std::string text = "a0: &a0 [\"lol\"]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev +
            aliases(9, "a" + std::to_string(i - 1)) + "]\n";
  }
  LoadedConfig loaded = load_config_text(text, "tw.yaml", no_env);
  ASSERT_EQ(loaded.errors.size(), 1u);
  EXPECT_NE(loaded.errors[0].message.find("aliases read this anchored value"), std::string::npos)
      << loaded.errors[0].to_string();
}

TEST(AliasBound, AliasesOfModestValuesLoad) {
  // A shared tag list read a hundred times adds little.
  const std::string text =
      tcp_monitor_with_tags("[&t \"" + std::string(100, 'x') + "\"" + aliases(100, "t") + "]");
  LoadedConfig loaded = load_config_text(text, "tw.yaml", no_env);
  EXPECT_TRUE(loaded.config) << (loaded.errors.empty() ? "" : loaded.errors[0].to_string());
}

TEST(AliasBound, ADocumentWithoutAliasesIsNeverRefusedForItsSize) {
  std::string list = "[";
  for (int i = 0; i < 20000; ++i) list += (i ? ", \"" : "\"") + std::string(300, 'a' + i % 26) + "\"";
  list += "]";
  const YAML::Node root = YAML::Load("tags: " + list);
  EXPECT_FALSE(config_detail::alias_excess(root));
}

TEST(AliasBound, AMaintenanceWindowBodyIsBoundToo) {
  const std::string body = "{\"monitors\": [&m \"" + std::string(3000, 'y') + "\"" + aliases(3000, "m") +
                           "], \"daily\": \"01:00-02:00\"}";
  LoadedWindow loaded = load_window_text(body, "body", no_env);
  ASSERT_FALSE(loaded.window);
  ASSERT_FALSE(loaded.errors.empty());
  EXPECT_NE(loaded.errors[0].message.find("aliases read this anchored value"), std::string::npos);
}

}  // namespace
}  // namespace trainwatch
