// Generated tokens on a real SQLite store: kept across reopenings, configured ones win.
#include "catalog/heartbeat_tokens.h"

#include <gtest/gtest.h>

#include "reporter/temp_dir.h"
#include "storage/sqlite/sqlite_store.h"

namespace trainwatch::catalog {
namespace {

Config heartbeats(const std::string& checkpoint_token) {
  Config config;
  for (const char* name : {"checkpoint", "steps"}) {
    MonitorConfig m;
    m.name = name;
    m.type = MonitorType::kHeartbeat;
    HeartbeatSpec spec;
    if (m.name == "checkpoint") spec.token = checkpoint_token;
    m.spec = spec;
    config.monitors.push_back(m);
  }
  return config;
}

std::string token_of(const Config& config, const std::string& name) {
  for (const auto& m : config.monitors) {
    if (m.name == name) return std::get<HeartbeatSpec>(m.spec).token;
  }
  return "";
}

TEST(ResolveTokens, AGeneratedTokenSurvivesARestart) {
  trainwatch::testing::TempDir dir;
  const std::string path = dir.path() + "/trainwatch.db";
  SystemRandom random;
  std::string first;
  {
    auto store = sqlite::SqliteStore::open(path);
    ASSERT_TRUE(store.ok());
    Config config = heartbeats("");
    ASSERT_TRUE(resolve_tokens(config, **store, random).ok());
    first = token_of(config, "checkpoint");
    EXPECT_EQ(first.size(), 36u);
    EXPECT_NE(first, token_of(config, "steps"));
  }
  auto store = sqlite::SqliteStore::open(path);
  ASSERT_TRUE(store.ok());
  Config again = heartbeats("");
  ASSERT_TRUE(resolve_tokens(again, **store, random).ok());
  EXPECT_EQ(token_of(again, "checkpoint"), first);

  Config configured = heartbeats("chosen-by-hand-token");
  ASSERT_TRUE(resolve_tokens(configured, **store, random).ok());
  EXPECT_EQ(token_of(configured, "checkpoint"), "chosen-by-hand-token");
}

}  // namespace
}  // namespace trainwatch::catalog
