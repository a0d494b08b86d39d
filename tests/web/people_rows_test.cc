// What the people pages show of a token, a user and an audit entry; the token form's
// expiry choices; which field an accounts error is about.
#include "web/people_rows.h"

#include <gtest/gtest.h>

#include "core/json_text.h"
#include "core/time_format.h"

namespace trainwatch::web {
namespace {

const SystemTime kNow = *parse_rfc3339("2026-05-01T12:00:00Z");

ApiTokenRecord token() {
  return ApiTokenRecord{"0123456789abcdef", "ci",        "ana",
                        "editor",           "d1g3st",    *parse_rfc3339("2026-04-01T00:00:00Z"),
                        std::nullopt,       std::nullopt};
}

TEST(PeopleRows, ATokensStateIsLiveExpiredOrRevokedAndItsDigestIsNeverShown) {
  ApiTokenRecord t = token();
  const auto live = token_row(t, kNow);
  EXPECT_EQ(live.at("created"), "2026-04-01T00:00:00.000Z");
  EXPECT_EQ(live.at("created_t").at("utc"), "2026-04-01 00:00:00 UTC");
  EXPECT_EQ(live.at("expires"), "never");
  EXPECT_EQ(live.at("state"), "live");
  EXPECT_EQ(live.at("live"), true);
  t.expires = kNow;
  EXPECT_EQ(token_row(t, kNow).at("state"), "expired");
  EXPECT_FALSE(token_row(t, kNow).contains("live"));
  t.revoked = *parse_rfc3339("2026-04-02T00:00:00Z");
  EXPECT_EQ(token_row(t, kNow).at("state"), "revoked 2026-04-02 00:00:00 UTC");
  EXPECT_EQ(json_text(token_row(t, kNow)).find("d1g3st"), std::string::npos);
}

TEST(PeopleRows, AConfigUserIsReadOnlyAndSaysWhere) {
  const auto row = user_row(auth::UserView{"root", auth::Role::kAdmin, "config", true});
  EXPECT_EQ(row.at("source"), "from trainwatch.yaml, read-only");
  EXPECT_EQ(row.at("read_only"), true);
  EXPECT_EQ(row.at("second_factor"), "yes");
  const auto local = user_row(auth::UserView{"bo", auth::Role::kViewer, "local", false});
  EXPECT_EQ(local.at("read_only"), false);
  EXPECT_EQ(local.at("role"), "viewer");
  EXPECT_EQ(local.at("second_factor"), "no");
}

TEST(PeopleRows, AnAuditRowSaysWhenWhoWhatAndFromWhere) {
  const AuditEntry e{7, kNow, "ana", "user", "POST /settings/users/bo/delete", "127.0.0.1"};
  const auto row = audit_row(e, kNow + std::chrono::minutes(3));
  EXPECT_EQ(row.at("when"), "2026-05-01T12:00:00.000Z");
  EXPECT_EQ(row.at("when_t").at("ago"), "3 min ago");
  EXPECT_EQ(row.at("who"), "ana");
  EXPECT_EQ(row.at("what"), "POST /settings/users/bo/delete");
  EXPECT_EQ(row.at("from"), "127.0.0.1");
}

TEST(PeopleRows, AnExpiryIsOneOfTheChoices) {
  EXPECT_EQ(parse_expiry("30d").length, std::chrono::hours(24 * 30));
  EXPECT_FALSE(parse_expiry("never").length);
  EXPECT_TRUE(parse_expiry("never").error.empty());
  EXPECT_EQ(parse_expiry("5y").error, "expires: found '5y'; expected 7d, 30d, 90d, 365d or never");
  EXPECT_EQ(expiry_choices().front().value, "90d");
  for (const auto& c : expiry_choices()) EXPECT_TRUE(parse_expiry(c.value).error.empty()) << c.value;
}

TEST(PeopleRows, AnErrorNamesItsFieldOnlyWhenTheFormHasIt) {
  EXPECT_EQ(error_field("password: found 5 characters; expected at least 12", {"name", "password"}),
            "password");
  EXPECT_EQ(error_field("a user named bo exists", {"name"}), "");
  EXPECT_EQ(error_field("owner: name one", {"name"}), "");
}

}  // namespace
}  // namespace trainwatch::web
