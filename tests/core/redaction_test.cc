#include "core/redaction.h"

#include <gtest/gtest.h>

namespace trainwatch {
namespace {

TEST(CauseFor, AdminsReadTheValueThePublicReadsRedacted) {
  const std::string cause = "HTTP 503; [BODY].status == " + mark_body_value("degraded") + ", expected ok";
  EXPECT_EQ(cause_for(cause, Audience::kAdmin), "HTTP 503; [BODY].status == degraded, expected ok");
  EXPECT_EQ(cause_for(cause, Audience::kPublic), "HTTP 503; [BODY].status == (redacted), expected ok");
}

TEST(CauseFor, EveryMarkedValueIsRedactedAndUnmarkedTextIsKept) {
  const std::string cause = "[BODY].a == " + mark_body_value("x") +
                            ", expected y; len([BODY].b) == " + mark_body_value("3") +
                            ", expected == 2; [STATUS] == 503, expected 200";
  EXPECT_EQ(cause_for(cause, Audience::kPublic),
            "[BODY].a == (redacted), expected y; len([BODY].b) == (redacted), expected == 2; "
            "[STATUS] == 503, expected 200");
  EXPECT_EQ(cause_for("connect: connection refused", Audience::kPublic), "connect: connection refused");
}

TEST(CauseFor, ABodyCannotCloseTheMarkEarly) {
  // The target answers with the close mark followed by its secret.
  const std::string value = std::string("a") + kBodyValueClose + "SECRET" + kBodyValueOpen + "b";
  const std::string cause = "[BODY] == " + mark_body_value(value) + ", expected ok";
  EXPECT_EQ(cause_for(cause, Audience::kPublic), "[BODY] == (redacted), expected ok");
  EXPECT_EQ(cause_for(cause, Audience::kAdmin), "[BODY] == aSECRETb, expected ok");
}

TEST(CauseFor, AnUnclosedMarkRedactsToTheEnd) {
  const std::string cause = std::string("[BODY] == ") + kBodyValueOpen + "SECRET, expected ok";
  EXPECT_EQ(cause_for(cause, Audience::kPublic), "[BODY] == (redacted)");
}

TEST(RedactUrl, UserinfoAndQueryAreHidden) {
  EXPECT_EQ(redact_url("https://user:pass@127.0.0.1:8443/x?key=secret"), "https://***@127.0.0.1:8443/x?***");
  EXPECT_EQ(redact_url("https://user:p@ss@host/x"), "https://***@host/x");
  EXPECT_EQ(redact_url("http://host/a/b#frag"), "http://host/a/b#***");
  EXPECT_EQ(redact_url("http://host?token=1"), "http://host?***");
}

TEST(RedactUrl, AUrlWithoutSecretsIsUnchanged) {
  EXPECT_EQ(redact_url("http://10.0.0.5:8765/health"), "http://10.0.0.5:8765/health");
  EXPECT_EQ(redact_url("https://host"), "https://host");
  // An '@' in the path is no userinfo.
  EXPECT_EQ(redact_url("https://host/users/@me"), "https://host/users/@me");
}

TEST(UrlFor, AdminsReadTheWholeUrl) {
  EXPECT_EQ(url_for("https://u:p@h/x?k=s", Audience::kAdmin), "https://u:p@h/x?k=s");
  EXPECT_EQ(url_for("https://u:p@h/x?k=s", Audience::kPublic), "https://***@h/x?***");
}

}  // namespace
}  // namespace trainwatch
