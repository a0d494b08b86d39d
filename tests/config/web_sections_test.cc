// The status_pages, auth and retention sections: the issue's example, defaults, errors.
#include <gtest/gtest.h>

#include <map>

#include "config/loader.h"

namespace trainwatch {
namespace {

std::optional<std::string> env(const std::string& name) {
  static const std::map<std::string, std::string> kEnv = {{"TW_TOKEN", "a-token-from-the-environment"}};
  auto it = kEnv.find(name);
  return it == kEnv.end() ? std::nullopt : std::optional<std::string>(it->second);
}

constexpr const char* kMonitors = R"(monitors:
  - {name: rank0-health, type: tcp, host: 127.0.0.1, port: 1}
  - {name: checkpoint, type: tcp, host: 127.0.0.1, port: 2}
  - {name: chat-server, type: tcp, host: 127.0.0.1, port: 3}
)";

std::vector<std::string> errors_of(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& e : load_config_text(text, "tw.yaml", env).errors) out.push_back(e.to_string());
  return out;
}

TEST(WebSections, TheIssueExampleLoads) {
  auto loaded = load_config_text(std::string(kMonitors) + R"(status_pages:
  - slug: ml-training
    title: ML Training Infrastructure
    description: Training jobs, checkpoints and the chat server
    groups:
      - name: Training
        monitors: [rank0-health, checkpoint]
      - name: Inference
        monitors: [chat-server]
auth:
  admin_tokens: ["${TW_TOKEN}", "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"]
  session_ttl: 1h
retention:
  raw: 30d
)",
                                 "tw.yaml", env);
  ASSERT_TRUE(loaded.config) << loaded.errors.at(0).to_string();
  const Config& c = *loaded.config;
  ASSERT_EQ(c.status_pages.size(), 1u);
  EXPECT_EQ(c.status_pages[0].slug, "ml-training");
  ASSERT_EQ(c.status_pages[0].groups.size(), 2u);
  EXPECT_EQ(c.status_pages[0].groups[0].monitors, (std::vector<std::string>{"rank0-health", "checkpoint"}));
  EXPECT_EQ(c.auth.admin_tokens.at(0), "a-token-from-the-environment");
  EXPECT_EQ(c.auth.session_ttl, Millis(3'600'000));
  EXPECT_EQ(c.retention.raw, Millis(30LL * 86'400'000));
}

TEST(WebSections, Defaults) {
  auto loaded = load_config_text(kMonitors, "tw.yaml", env);
  ASSERT_TRUE(loaded.config);
  EXPECT_TRUE(loaded.config->status_pages.empty());
  EXPECT_TRUE(loaded.config->auth.admin_tokens.empty());
  EXPECT_EQ(loaded.config->retention.raw, Millis(14LL * 86'400'000));
}

TEST(WebSections, ErrorsSayWhereAndWhat) {
  auto errors = errors_of(std::string(kMonitors) + R"(status_pages:
  - slug: Bad Slug
    groups:
      - name: g
        monitors: [nope]
auth:
  admin_tokens: [short, "sha256:xyz"]
retention:
  raw: 1d
)");
  const std::vector<std::string> expected = {
      "tw.yaml:6:11: status_pages[0].slug: found 'Bad Slug'; expected lower-case letters, digits, '.', '_' or '-'",
      "tw.yaml:6:5: status_pages[0].title: missing",
      "tw.yaml:9:20: status_pages[0].groups[0].monitors[0]: found 'nope'; expected the name of a monitor in `monitors`",
      "tw.yaml:11:18: auth.admin_tokens[0]: found a token of 5 characters; expected at least 16",
      "tw.yaml:11:25: auth.admin_tokens[1]: found a malformed digest; expected sha256: and 64 lower-case hex digits",
      "tw.yaml:13:8: retention.raw: found less than 7d; expected at least 7d (the 7-day uptime reads hourly rollups kept as long)",
  };
  ASSERT_EQ(errors.size(), expected.size()) << ::testing::PrintToString(errors);
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(errors[i].rfind(expected[i], 0), 0u) << errors[i];
}

TEST(WebSections, DuplicateSlugsAreRefused) {
  auto errors =
      errors_of(std::string(kMonitors) + "status_pages:\n  - {slug: a, title: A}\n  - {slug: a, title: B}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("found 'a' again; expected a unique slug"), std::string::npos);
}

TEST(WebSections, AnnouncementsAreReadWithTheirWindowAndSeverity) {
  auto loaded = load_config_text(std::string(kMonitors) + R"(status_pages:
  - slug: ml
    title: ML
    announcements:
      - title: Cluster upgrade
        text: Jobs pause.
        from: 2026-05-01T02:00:00Z
        until: 2026-05-01T04:00:00Z
        severity: critical
      - {title: Notice, from: "2026-05-02T00:00:00Z", until: "2026-05-03T00:00:00Z"}
)",
                                 "tw.yaml", env);
  ASSERT_TRUE(loaded.config) << loaded.errors.at(0).to_string();
  const auto& a = loaded.config->status_pages.at(0).announcements;
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].title, "Cluster upgrade");
  EXPECT_EQ(a[0].text, "Jobs pause.");
  EXPECT_EQ(to_unix_ms(a[0].from), 1'777'600'800'000);
  EXPECT_EQ(to_unix_ms(a[0].until), 1'777'608'000'000);
  EXPECT_EQ(a[0].severity, "critical");
  EXPECT_EQ(a[1].severity, "info") << "the default";
  EXPECT_EQ(a[1].text, "");
}

TEST(WebSections, AnnouncementErrorsSayWhereAndWhat) {
  auto errors = errors_of(std::string(kMonitors) + R"(status_pages:
  - slug: ml
    title: ML
    announcements:
      - {text: no title, from: "2026-05-01T02:00:00Z", until: "2026-05-01T04:00:00Z"}
      - {title: a, from: "tomorrow", until: "2026-05-01T04:00:00Z"}
      - {title: b, from: "2026-05-01T04:00:00Z", until: "2026-05-01T02:00:00Z", severity: loud}
)");
  const std::vector<std::string> expected = {
      "tw.yaml:9:9: status_pages[0].announcements[0].title: missing",
      "tw.yaml:10:26: status_pages[0].announcements[1].from: found 'tomorrow'; expected an ISO 8601 (RFC 3339) time",
      "tw.yaml:11:57: status_pages[0].announcements[2].until: found a time not after `from`",
      "tw.yaml:11:91: status_pages[0].announcements[2].severity: found 'loud'; expected info, warning or critical",
  };
  ASSERT_EQ(errors.size(), expected.size()) << ::testing::PrintToString(errors);
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(errors[i].rfind(expected[i], 0), 0u) << errors[i];
}

}  // namespace
}  // namespace trainwatch

namespace trainwatch {
namespace {

TEST(WebSections, SingleSignOnLoadsWithItsDefaults) {
  auto loaded = load_config_text(std::string(kMonitors) + R"(auth:
  oidc:
    issuer: https://sso.example.com/realms/ml
    client_id: trainwatch
    client_secret: ${TW_TOKEN}
    redirect_url: https://tw.example.com/login/oidc/callback
    role_mapping:
      - {group: ml-platform, role: admin}
      - {group: researchers, role: editor}
)",
                                 "tw.yaml", env);
  ASSERT_TRUE(loaded.config) << loaded.errors.at(0).to_string();
  const auto& oidc = loaded.config->auth.oidc;
  ASSERT_TRUE(oidc);
  EXPECT_EQ(oidc->client_secret, "a-token-from-the-environment");
  EXPECT_EQ(oidc->scopes, (std::vector<std::string>{"openid", "profile", "email", "groups"}));
  EXPECT_EQ(oidc->username_claim, "preferred_username");
  EXPECT_EQ(oidc->groups_claim, "groups");
  EXPECT_EQ(oidc->button_text, "single sign-on");
  ASSERT_EQ(oidc->role_mapping.size(), 2u);
  EXPECT_EQ(oidc->role_mapping[1].role, "editor");
  EXPECT_FALSE(load_config_text(kMonitors, "tw.yaml", env).config->auth.oidc);
}

TEST(WebSections, SingleSignOnErrorsSayWhereAndWhat) {
  auto errors = errors_of(std::string(kMonitors) + R"(auth:
  oidc:
    issuer: sso.example.com
    client_id: trainwatch
    redirect_url: https://tw.example.com/callback
    scopes: [profile]
    role_mapping:
      - {group: ml-platform, role: owner}
)");
  const std::vector<std::string> expected = {
      "tw.yaml:7:13: auth.oidc.issuer: found 'sso.example.com'; expected the provider's issuer URL",
      "tw.yaml:9:19: auth.oidc.redirect_url: found 'https://tw.example.com/callback'; expected it to end in "
      "/login/oidc/callback",
      "tw.yaml:7:5: auth.oidc.client_secret: missing",
      "tw.yaml:10:13: auth.oidc.scopes: found no openid; expected a list with openid",
      "tw.yaml:12:36: auth.oidc.role_mapping[0].role: found 'owner'; expected viewer, editor or admin",
  };
  ASSERT_EQ(errors.size(), expected.size()) << ::testing::PrintToString(errors);
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(errors[i].rfind(expected[i], 0), 0u) << errors[i];
  EXPECT_NE(errors_of(std::string(kMonitors) +
                      "auth:\n  oidc: {issuer: https://a.example, client_id: x, client_secret: y, "
                      "redirect_url: https://t.example/login/oidc/callback}\n")
                .at(0)
                .find("role_mapping: missing"),
            std::string::npos);
}

}  // namespace
}  // namespace trainwatch
