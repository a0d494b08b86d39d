// Generated tokens on a real SQLite store: kept across reopenings, configured ones win.
// Replicas that start together agree on the token that was stored first.
#include "catalog/heartbeat_tokens.h"

#include <gtest/gtest.h>

#include <thread>

#include "fakes/fake_store.h"

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

// Two replicas read "no token" at the same moment; the other one's save commits first,
// so ours keeps nothing (a save never replaces a stored token). Ours must hand out the
// other's token, or a ping to one replica is refused by the other.
TEST(ResolveTokens, ReplicasStartingTogetherHandOutTheTokenStoredFirst) {
  trainwatch::testing::FakeStore store;
  SystemRandom random;
  Config config = heartbeats("");
  Status resolved = Ok{};
  std::thread replica([&] { resolved = resolve_tokens(config, store, random); });
  while (store.waiting() < 2) std::this_thread::yield();
  store.set_heartbeat_tokens({{"checkpoint", "stored-by-the-other-replica-000000001"},
                              {"steps", "stored-by-the-other-replica-000000002"}});
  store.answer_all(Status(Ok{}));
  replica.join();
  ASSERT_TRUE(resolved.ok()) << resolved.error().message;
  EXPECT_EQ(token_of(config, "checkpoint"), "stored-by-the-other-replica-000000001");
  EXPECT_EQ(token_of(config, "steps"), "stored-by-the-other-replica-000000002");
}

}  // namespace
}  // namespace trainwatch::catalog
