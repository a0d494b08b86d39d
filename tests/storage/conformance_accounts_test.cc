// Users as every store keeps them (conformance.h): a single sign-on subject's user is
// saved only for that subject (storage/user_identity.h).
#include <algorithm>

#include "storage/conformance.h"
#include "storage/store_errors.h"

namespace trainwatch::testing {
namespace {

template <typename F>
class StoreAccounts : public StoreTest<F> {};
TYPED_TEST_SUITE(StoreAccounts, StoreFactories, FactoryName);

UserRecord sso_user(const std::string& name, const std::string& role, const std::string& subject) {
  return UserRecord{name,   role, "", "", "oidc", from_unix_ms(kT0), subject.empty() ? "" : "https://idp",
                    subject};
}

std::optional<UserRecord> stored(Store& store, const std::string& name) {
  auto users = store.users();
  EXPECT_TRUE(users.ok());
  if (!users) return std::nullopt;
  auto it = std::find_if(users->begin(), users->end(), [&](const UserRecord& u) { return u.name == name; });
  return it == users->end() ? std::nullopt : std::optional<UserRecord>(*it);
}

TYPED_TEST(StoreAccounts, ASingleSignOnSubjectUpdatesOnlyItsOwnUser) {
  Store& store = this->store();
  ASSERT_TRUE(write_and_wait(store, SaveUser{sso_user("alice", "admin", "sub-alice")}).ok());
  ASSERT_TRUE(write_and_wait(store, SaveUser{sso_user("alice", "editor", "sub-alice")}).ok())
      << "the same subject's next login: its role follows its groups";
  EXPECT_EQ(stored(store, "alice")->role, "editor");

  const Status other = write_and_wait(store, SaveUser{sso_user("alice", "viewer", "sub-impostor")});
  ASSERT_FALSE(other.ok()) << "another subject that claims the name alice";
  EXPECT_EQ(other.error().code, store_error::kExists);
  this->reopen();
  auto alice = stored(this->store(), "alice");
  ASSERT_TRUE(alice.has_value());
  EXPECT_EQ(alice->role, "editor");
  EXPECT_EQ(alice->oidc_issuer, "https://idp");
  EXPECT_EQ(alice->oidc_subject, "sub-alice");
}

TYPED_TEST(StoreAccounts, ASingleSignOnSaveNeverTakesALocalUser) {
  Store& store = this->store();
  const UserRecord local{"root", "admin", "$argon2id$...", "", "local", from_unix_ms(kT0), "", ""};
  ASSERT_TRUE(write_and_wait(store, SaveUser{local}).ok());
  EXPECT_EQ(write_and_wait(store, SaveUser{sso_user("root", "viewer", "sub-root")}).error().code,
            store_error::kExists);
  EXPECT_EQ(stored(store, "root")->password_hash, "$argon2id$...");
  EXPECT_EQ(stored(store, "root")->oidc_subject, "");
}

TYPED_TEST(StoreAccounts, AUserMadeBeforeSubjectsWereKeptIsBoundAtItsNextLoginAndAnAdminsChangeKeepsIt) {
  Store& store = this->store();
  ASSERT_TRUE(write_and_wait(store, SaveUser{sso_user("bob", "viewer", "")}).ok());
  ASSERT_TRUE(write_and_wait(store, SaveUser{sso_user("bob", "viewer", "sub-bob")}).ok());
  EXPECT_EQ(stored(store, "bob")->oidc_subject, "sub-bob");
  // An admin's change carries no subject: it keeps the one stored.
  ASSERT_TRUE(write_and_wait(store, SaveUser{sso_user("bob", "editor", "")}).ok());
  EXPECT_EQ(stored(store, "bob")->role, "editor");
  EXPECT_EQ(stored(store, "bob")->oidc_subject, "sub-bob");
  EXPECT_FALSE(write_and_wait(store, SaveUser{sso_user("bob", "admin", "sub-other")}).ok());
}

// The alert links' key: replicas that start together each try to save one; all read the
// one that landed first (catalog/alert_links.h).
TYPED_TEST(StoreAccounts, ASharedKeyKeepsItsFirstValueAcrossSavesAndRestarts) {
  Store& store = this->store();
  EXPECT_FALSE(store.shared_key("alert_links")->has_value());
  ASSERT_TRUE(write_and_wait(store, SaveSharedKey{"alert_links", "first", from_unix_ms(kT0)}).ok());
  ASSERT_TRUE(write_and_wait(store, SaveSharedKey{"alert_links", "second", from_unix_ms(kT0 + 1)}).ok());
  this->reopen();
  EXPECT_EQ(this->store().shared_key("alert_links")->value_or(""), "first");
}

// An alert link is good once (auth/alert_link.h), and the used ones are kept only until
// they expire.
TYPED_TEST(StoreAccounts, AnAlertLinkIsUsedOnceAndForgottenOnceExpired) {
  Store& store = this->store();
  const SystemTime t0 = from_unix_ms(kT0);
  const UseAlertLink use{"held~7~1000~abc", t0 + std::chrono::hours(24), t0};
  EXPECT_FALSE(*store.alert_link_used(use.id));
  ASSERT_TRUE(write_and_wait(store, use).ok());
  EXPECT_TRUE(*store.alert_link_used(use.id));
  const Status again = write_and_wait(store, UseAlertLink{use.id, use.expires, t0 + std::chrono::minutes(5)});
  ASSERT_FALSE(again.ok()) << "a second use of one link";
  EXPECT_EQ(again.error().code, store_error::kExists);
  EXPECT_TRUE(write_and_wait(store, UseAlertLink{"held~8~1000~def", use.expires, t0}).ok()) << "another link";
  // A day later the first has expired, so its row is gone (the link itself is refused as
  // expired before the store is asked).
  EXPECT_TRUE(write_and_wait(store, UseAlertLink{use.id, use.expires + std::chrono::hours(24),
                                                 use.expires + std::chrono::minutes(1)})
                  .ok());
  EXPECT_FALSE(*store.alert_link_used("held~8~1000~def")) << "pruned once expired";
}

}  // namespace
}  // namespace trainwatch::testing
