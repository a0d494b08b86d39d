// Users as every store keeps them (conformance.h): a single sign-on subject's user is
// saved only for that subject (storage/user_identity.h).
#include <algorithm>

#include "storage/conformance.h"

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
  EXPECT_EQ(other.error().code, "store.exists");
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
            "store.exists");
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

}  // namespace
}  // namespace trainwatch::testing
