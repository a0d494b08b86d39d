// A reload names each changed key it cannot apply (config/reload_scope.h), and only those.
#include <gtest/gtest.h>

#include "config/reload_scope.h"

namespace trainwatch {
namespace {

using Keys = std::vector<std::string>;

TEST(KeysNeedingRestart, NoneWhenOnlyKeysAReloadAppliesChange) {
  Config running;
  Config next = running;
  next.retention.raw = Millis{3'600'000};
  next.server.max_checks_in_flight = 8;
  next.server.allow_local_channel_targets = true;
  next.auth.session_ttl = Millis{60'000};
  next.jobs.auto_create = true;
  EXPECT_EQ(keys_needing_restart(running, next), Keys{});
}

TEST(KeysNeedingRestart, NamesEachKeyReadOnlyAtStartThatChanged) {
  Config running;
  Config next = running;
  next.server.listen.port = 9090;
  next.store.url = "postgresql://tw@db/tw";
  next.server.max_connections_per_address = 8;
  EXPECT_EQ(keys_needing_restart(running, next),
            (Keys{"server.listen", "server.max_connections_per_address", "store.url"}));
}

TEST(KeysNeedingRestart, SingleSignOnAddedOrChangedNeedsARestart) {
  Config running;
  Config next = running;
  next.auth.oidc = OidcConfig{};
  next.auth.oidc->issuer = "https://idp.example";
  EXPECT_EQ(keys_needing_restart(running, next), Keys{"auth.oidc"});
  running = next;
  EXPECT_EQ(keys_needing_restart(running, next), Keys{});
  next.auth.oidc->role_mapping.push_back({"ml-admins", "admin"});
  EXPECT_EQ(keys_needing_restart(running, next), Keys{"auth.oidc"});
}

}  // namespace
}  // namespace trainwatch
