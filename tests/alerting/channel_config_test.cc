// Channel config errors as a user sees them in `trainwatch check`: FILE:LINE:COL, the
// key, what was found and what is expected; secrets never echoed.
#include <gtest/gtest.h>

#include "alerting/channels.h"
#include "config/loader.h"

namespace trainwatch::alerting {
namespace {

std::vector<std::string> errors_of(const std::string& notifications, const EnvLookup& env = process_env) {
  LoadedConfig loaded = load_config_text(
      "monitors:\n"
      "  - {name: a, type: tcp, host: h, port: 1, notify: [n0]}\n"
      "notifications:\n" +
          notifications,
      "c.yaml", env);
  std::vector<std::string> out;
  for (const auto& e : loaded.errors) out.push_back(e.to_string());
  if (loaded.config) {
    for (const auto& e : check_channels(*loaded.config)) out.push_back(e.to_string());
  }
  return out;
}

TEST(ChannelConfigTest, EveryProviderAcceptsItsDocumentedExample) {
  const std::string yaml =
      "  - {name: n0, type: slack, webhook_url: 'https://hooks.slack.com/services/T/B/x'}\n"
      "  - {name: n1, type: discord, webhook_url: 'https://discord.com/api/webhooks/1/x'}\n"
      "  - {name: n2, type: webhook, url: 'http://127.0.0.1:9000/hook', secret: s, headers: {X-Team: ml}}\n"
      "  - {name: n3, type: email, smtp_url: 'smtp://mail:587', username: u, password: p, from: t@example.com,"
      " to: [a@example.com, b@example.com]}\n"
      "  - {name: n4, type: pagerduty, routing_key: k, severity: error}\n"
      "  - {name: n5, type: alertmanager, url: 'http://am:9093', labels: {team: ml}}\n"
      "  - {name: n6, type: ntfy, topic: alerts, timeout: 5s}\n"
      "  - {name: n7, type: telegram, bot_token: '123:abc', chat_id: '-100'}\n";
  EXPECT_EQ(errors_of(yaml), std::vector<std::string>{});
}

TEST(ChannelConfigTest, UnknownTypeNamesTheChoices) {
  EXPECT_EQ(
      errors_of("  - {name: n0, type: pager}\n"),
      std::vector<std::string>{"c.yaml:4:22: notifications.n0.type: found 'pager'; expected one of: slack, "
                               "discord, webhook, email, pagerduty, alertmanager, ntfy, telegram"});
}

TEST(ChannelConfigTest, MissingAndUnknownKeys) {
  EXPECT_EQ(
      errors_of("  - name: n0\n"
                "    type: email\n"
                "    smtp_url: smtp://mail:25\n"
                "    to: [a@example.com]\n"
                "    cc: b@example.com\n"),
      (std::vector<std::string>{
          "c.yaml:4:5: notifications.n0.from: missing; expected a value",
          "c.yaml:8:9: notifications.n0.cc: unknown key for a email channel; expected one of: name, type, "
          "default, from, password, smtp_url, starttls, template, timeout, tls_verify, to, username"}));
}

// A template is checked at load: a typo in a variable is an error that says where, not an
// empty hole in the alert; a structured channel refuses one instead of ignoring it.
TEST(ChannelConfigTest, ATemplateIsCheckedAtLoad) {
  EXPECT_EQ(errors_of("  - {name: n0, type: slack, webhook_url: 'https://hooks.slack.com/services/T/B/x',"
                      " template: '{{state}}: {{monitor}}'}\n"),
            std::vector<std::string>{});
  const auto unknown = errors_of(
      "  - name: n0\n"
      "    type: webhook\n"
      "    url: http://127.0.0.1:9000/hook\n"
      "    template: '{{monitor}} {{nosuch}}'\n");
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_TRUE(
      unknown[0].starts_with("c.yaml:7:15: notifications.n0.template: {{nosuch}} at character 13 is not a "
                             "variable; expected one of: state, monitor"))
      << unknown[0];
  EXPECT_EQ(errors_of("  - {name: n0, type: pagerduty, routing_key: k, template: '{{monitor}}'}\n"),
            std::vector<std::string>{
                "c.yaml:4:59: notifications.n0.template: a pagerduty alert is structured fields "
                "its receiver routes on; templates are for slack, discord, webhook, email, ntfy, "
                "telegram"});
}

TEST(ChannelConfigTest, BadValuesPointAtTheValue) {
  EXPECT_EQ(
      errors_of("  - {name: n0, type: alertmanager, url: 'ftp://x/y'}\n"),
      std::vector<std::string>{
          "c.yaml:4:41: notifications.n0.url: found 'ftp://x/y'; expected a http:// or https:// URL with a host"});
  // A secret key's value (a webhook's URL may carry its token) is never echoed.
  EXPECT_EQ(errors_of("  - {name: n0, type: webhook, url: 'ftp://x/T0k3n'}\n"),
            std::vector<std::string>{"c.yaml:4:36: notifications.n0.url: found a secret value; expected a "
                                     "http:// or https:// URL with a host"});
  EXPECT_EQ(errors_of("  - {name: n0, type: pagerduty, routing_key: k, severity: loud}\n"),
            std::vector<std::string>{
                "c.yaml:4:59: notifications.n0.severity: found 'loud'; expected one of: critical, "
                "error, warning, info"});
}

TEST(ChannelConfigTest, SecretsFromTheEnvironmentAreNeverEchoed) {
  auto env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "SLACK_URL") return std::string("not-a-url-but-a-secret");
    return std::nullopt;
  };
  auto errors = errors_of("  - {name: n0, type: slack, webhook_url: '${SLACK_URL}'}\n", env);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].find("not-a-url-but-a-secret"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("found a value from the environment"), std::string::npos) << errors[0];
}

TEST(ChannelConfigTest, NotifyMustNameAChannel) {
  LoadedConfig loaded = load_config_text(
      "monitors:\n"
      "  - {name: a, type: tcp, host: h, port: 1, notify: [slak]}\n"
      "notifications:\n"
      "  - {name: slack, type: slack, webhook_url: 'https://h/x'}\n",
      "c.yaml");
  ASSERT_EQ(loaded.errors.size(), 1u);
  EXPECT_EQ(
      loaded.errors[0].to_string(),
      "c.yaml:2:53: monitors[0].notify[0]: found 'slak'; expected a channel from notifications (slack)");
}

TEST(ChannelConfigTest, MonitorsWithoutNotifyUseTheDefaultChannels) {
  LoadedConfig loaded = load_config_text(
      "monitors:\n"
      "  - {name: a, type: tcp, host: h, port: 1}\n"
      "  - {name: b, type: tcp, host: h, port: 1, notify: [x]}\n"
      "notifications:\n"
      "  - {name: x, type: ntfy, topic: t}\n"
      "  - {name: y, type: ntfy, topic: t, default: true}\n",
      "c.yaml");
  ASSERT_TRUE(loaded.config);
  EXPECT_EQ(channels_for(loaded.config->monitors[0], loaded.config->notifications),
            std::vector<std::string>{"y"});
  EXPECT_EQ(channels_for(loaded.config->monitors[1], loaded.config->notifications),
            std::vector<std::string>{"x"});
}

}  // namespace
}  // namespace trainwatch::alerting
