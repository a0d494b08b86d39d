// Users, roles and users' API tokens in AdminAuth: what each credential may do, and how a
// change in the store (set_accounts) reaches the sessions already open.
#include <gtest/gtest.h>

#include "auth/admin_auth.h"
#include "auth/password_hash.h"
#include "auth/sha256.h"
#include "auth/totp.h"
#include "fakes/manual_clock.h"

namespace trainwatch::auth {
namespace {

constexpr const char* kAddress = "127.0.0.1";
constexpr const char* kTotpSecret = "JBSWY3DPEHPK3PXPJBSWY3DP";

ApiTokenRecord token_of(const std::string& owner, const std::string& role, const std::string& token) {
  ApiTokenRecord t;
  t.id = "id-" + token;
  t.name = "ci";
  t.owner = owner;
  t.role = role;
  t.digest = sha256_hex(token);
  return t;
}

UserRecord stored_user(const std::string& name, const std::string& role, const std::string& password) {
  return UserRecord{name, role, password.empty() ? "" : hash_password(password), "", "local", {}, "", ""};
}

TEST(PasswordHashTest, VerifiesItsOwnHashesOnly) {
  const std::string hash = hash_password("a long enough password");
  ASSERT_TRUE(looks_like_password_hash(hash));
  EXPECT_TRUE(verify_password(hash, "a long enough password"));
  EXPECT_FALSE(verify_password(hash, "a long enough passwort"));
  EXPECT_FALSE(verify_password("not a hash", "a long enough password"));
  EXPECT_NE(hash_password("a long enough password"), hash);  // salted
}

TEST(TotpTest, MatchesRfc6238AndAcceptsOneStepOfDrift) {
  // RFC 6238 appendix B, SHA-1, T = 59 s: 94287082 (8 digits), so 287082 in 6.
  const std::string secret = "12345678901234567890";
  EXPECT_EQ(totp_code(secret, 59 / kTotpStepSeconds), "287082");
  EXPECT_EQ(decode_base32_secret("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"), secret);
  const SystemTime t = from_unix_ms(59'000);
  EXPECT_EQ(matching_totp_step(secret, "287082", t), 1);
  EXPECT_EQ(matching_totp_step(secret, "287082", t + Millis(30'000)), 1);  // one step late still reads
  EXPECT_FALSE(matching_totp_step(secret, "287082", t + Millis(60'000)));
  EXPECT_FALSE(matching_totp_step(secret, "28708", t));
  EXPECT_FALSE(decode_base32_secret("not base32!"));
}

TEST(AccountsAuthTest, ConfigUsersLogInWithTheirRole) {
  testing::ManualClock clock;
  AuthConfig config;
  config.users = {UserConfig{"ana", "editor", hash_password("ana's long password"), ""}};
  AdminAuth auth(config, clock);
  EXPECT_TRUE(auth.enabled());
  auto ok = auth.login_user("ana", "ana's long password", "", kAddress);
  ASSERT_TRUE(ok.session);
  EXPECT_EQ(ok.session->who.role, Role::kEditor);
  EXPECT_EQ(ok.session->who.name, "ana");
  EXPECT_FALSE(auth.login_user("ana", "wrong", "", kAddress).session);
  EXPECT_FALSE(auth.login_user("nobody", "ana's long password", "", kAddress).session);
}

TEST(AccountsAuthTest, ASecondFactorIsNeededAndACodeWorksOnce) {
  testing::ManualClock clock;
  AuthConfig config;
  config.users = {UserConfig{"ops", "admin", hash_password("ops's long password"), kTotpSecret}};
  AdminAuth auth(config, clock);
  auto without = auth.login_user("ops", "ops's long password", "", kAddress);
  EXPECT_FALSE(without.session);
  EXPECT_EQ(without.refusal, LoginRefusal::kNeedsCode);
  const std::string code = totp_code(*decode_base32_secret(kTotpSecret), totp_step(clock.system_time()));
  EXPECT_TRUE(auth.login_user("ops", "ops's long password", code, kAddress).session);
  auto replay = auth.login_user("ops", "ops's long password", code, kAddress);
  EXPECT_FALSE(replay.session);
  EXPECT_EQ(replay.refusal, LoginRefusal::kWrongCode);
}

TEST(AccountsAuthTest, AUsersTokenActsWithAtMostTheOwnersRoleNow) {
  testing::ManualClock clock;
  AdminAuth auth(AuthConfig{}, clock);
  auth.set_accounts({stored_user("bo", "admin", "")}, {token_of("bo", "editor", "tw_bo_token")});
  auto who = auth.bearer("tw_bo_token");
  ASSERT_TRUE(who);
  EXPECT_EQ(who->role, Role::kEditor);
  EXPECT_EQ(who->name, "token ci of bo");
  EXPECT_EQ(who->kind, Principal::Kind::kUserToken);
  // Lowering the owner lowers the token.
  auth.set_accounts({stored_user("bo", "viewer", "")}, {token_of("bo", "editor", "tw_bo_token")});
  EXPECT_EQ(auth.bearer("tw_bo_token")->role, Role::kViewer);
  // Removing the owner ends the token.
  auth.set_accounts({}, {token_of("bo", "editor", "tw_bo_token")});
  EXPECT_FALSE(auth.bearer("tw_bo_token"));
}

TEST(AccountsAuthTest, RevokedAndExpiredTokensAreRefusedAndTheirSessionsEnd) {
  testing::ManualClock clock;
  AdminAuth auth(AuthConfig{}, clock);
  ApiTokenRecord expiring = token_of("bo", "editor", "tw_expiring");
  expiring.expires = clock.system_time() + Millis(60'000);
  auth.set_accounts({stored_user("bo", "editor", "")}, {token_of("bo", "editor", "tw_live"), expiring});
  auto session = auth.login("tw_live");
  ASSERT_TRUE(session);
  EXPECT_EQ(session->who.role, Role::kEditor);
  EXPECT_TRUE(auth.bearer("tw_expiring"));
  clock.advance(Millis(60'000));
  EXPECT_FALSE(auth.bearer("tw_expiring"));

  ApiTokenRecord revoked = token_of("bo", "editor", "tw_live");
  revoked.revoked = clock.system_time();
  auth.set_accounts({stored_user("bo", "editor", "")}, {revoked});
  EXPECT_FALSE(auth.bearer("tw_live"));
  EXPECT_FALSE(auth.session(session->id));
}

TEST(AccountsAuthTest, AUsersSessionFollowsTheirRoleAndEndsWithThem) {
  testing::ManualClock clock;
  AdminAuth auth(AuthConfig{}, clock);
  auth.set_accounts({stored_user("cy", "admin", "cy's long password")}, {});
  auto session = auth.login_user("cy", "cy's long password", "", kAddress).session;
  ASSERT_TRUE(session);
  auth.set_accounts({stored_user("cy", "viewer", "")}, {});
  EXPECT_EQ(auth.session(session->id)->who.role, Role::kViewer);
  auth.set_accounts({}, {});
  EXPECT_FALSE(auth.session(session->id));
}

TEST(AccountsAuthTest, AuthorizedWritesReachTheAuditSink) {
  testing::ManualClock clock;
  AdminAuth auth(AuthConfig{}, clock);
  std::vector<AuditEntry> seen;
  auth.set_audit_sink([&](AuditEntry e, const AdminAuth::Recorded&) { seen.push_back(std::move(e)); });
  auth.audit(Principal{"token ci of bo", Role::kEditor, Principal::Kind::kUserToken, "bo"},
             "POST /api/v1/monitors/db/pause", "127.0.0.9");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].actor, "token ci of bo");
  EXPECT_EQ(seen[0].actor_kind, "user_token");
  EXPECT_EQ(seen[0].source, "127.0.0.9");
  EXPECT_EQ(seen[0].at, clock.system_time());
}

}  // namespace
}  // namespace trainwatch::auth
