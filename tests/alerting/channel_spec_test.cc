// A channel's JSON object as the API and the dashboard send it: the file's rules, errors
// that name the field, and secrets that are write-only.
#include "alerting/channel_spec.h"

#include <gtest/gtest.h>

namespace trainwatch::alerting {
namespace {

// "(valid)" or "field | message".
std::string outcome(const std::string& body, const std::string* stored = nullptr) {
  auto [spec, error] = parse_channel_spec(body, stored);
  if (spec) return "(valid)";
  return error->field + " | " + error->error.message;
}

TEST(ChannelSpec, ReadsTheSameKeysAsTheFile) {
  auto [spec, error] = parse_channel_spec(
      R"({"name": "ops-hook", "type": "webhook", "url": "http://127.0.0.1:9000/hook/T0k3n", "default": true,
          "timeout": "5s", "headers": {"X-Team": "ml"}})",
      nullptr);
  ASSERT_TRUE(spec) << error->error.message;
  EXPECT_EQ(spec->config.name, "ops-hook");
  EXPECT_EQ(spec->config.type, "webhook");
  EXPECT_TRUE(spec->config.is_default);
  EXPECT_EQ(spec->config.fields.at("url").text, "http://127.0.0.1:9000/hook/T0k3n");
  EXPECT_EQ(spec->config.fields.at("headers").map.size(), 1U);
  EXPECT_EQ(outcome(R"({"name": "mail", "type": "email", "smtp_url": "smtp://mail:25",
                        "from": "tw@example.com", "to": ["a@example.com"]})"),
            "(valid)");
}

TEST(ChannelSpec, ErrorsNameTheFieldWhatWasFoundAndWhatIsExpected) {
  EXPECT_EQ(outcome(R"({"name": "h", "type": "webhook"})"), "url | url: missing; expected a value");
  EXPECT_EQ(outcome(R"({"name": "h", "type": "pagerduty", "routing_key": "k", "severity": "loud"})"),
            "severity | severity: found 'loud'; expected one of: critical, error, warning, info");
  EXPECT_EQ(outcome(R"({"name": "h", "type": "pager"})"),
            "type | type: found 'pager'; expected one of: slack, discord, webhook, email, pagerduty, "
            "alertmanager, ntfy, telegram");
  EXPECT_EQ(
      outcome(R"({"name": "h", "type": "ntfy", "topic": "t", "colour": "red"})"),
      "colour | colour: unknown key for a ntfy channel; expected one of: name, type, default, template, "
      "timeout, token, topic, url");
  EXPECT_EQ(outcome(R"({"name": "Bad Name", "type": "ntfy", "topic": "t"})").substr(0, 25),
            "name | name: found 'Bad N");
  EXPECT_EQ(outcome(R"({"type": "ntfy", "topic": "t"})"), "name | name: missing; expected a value");
  EXPECT_EQ(outcome("[1]"), " | the body must be one JSON object describing a notification channel");
  EXPECT_EQ(outcome("{oops"), " | the body must be one JSON object describing a notification channel");
}

TEST(ChannelSpec, ASecretValueIsNeverEchoedInAnError) {
  const std::string result = outcome(R"({"name": "h", "type": "slack", "webhook_url": "ftp://hooks/T0k3n"})");
  EXPECT_EQ(
      result,
      "webhook_url | webhook_url: found a secret value; expected a https:// or http:// URL with a host");
  EXPECT_EQ(result.find("T0k3n"), std::string::npos);
}

TEST(ChannelSpec, TheServersEnvironmentIsNotReadable) {
  ::setenv("TRAINWATCH_SPEC_TEST_TOKEN", "leaked", 1);
  const std::string result =
      outcome(R"({"name": "h", "type": "ntfy", "topic": "t", "token": "${TRAINWATCH_SPEC_TEST_TOKEN}"})");
  EXPECT_EQ(result.substr(0, 8), "token | ");
  EXPECT_EQ(result.find("leaked"), std::string::npos);
}

TEST(ChannelSpec, AnEditWithoutASecretKeepsTheStoredOneAndNullRemovesIt) {
  const std::string stored =
      R"({"name":"h","type":"webhook","url":"http://127.0.0.1:9/hook/T0k3n","secret":"s3cr3t"})";
  auto [kept, e1] = parse_channel_spec(R"({"name": "h", "type": "webhook", "timeout": "3s"})", &stored);
  ASSERT_TRUE(kept) << e1->error.message;
  EXPECT_EQ(kept->config.fields.at("url").text, "http://127.0.0.1:9/hook/T0k3n");
  EXPECT_EQ(kept->config.fields.at("secret").text, "s3cr3t");
  EXPECT_EQ(kept->config.fields.at("timeout").text, "3s");
  EXPECT_NE(kept->json.find("T0k3n"), std::string::npos);  // what the store keeps

  auto [replaced, e2] = parse_channel_spec(
      R"({"name": "h", "type": "webhook", "url": "http://127.0.0.1:9/new", "secret": null})", &stored);
  ASSERT_TRUE(replaced) << e2->error.message;
  EXPECT_EQ(replaced->config.fields.at("url").text, "http://127.0.0.1:9/new");
  EXPECT_EQ(replaced->config.fields.count("secret"), 0U);

  // Another type takes nothing over: its keys are not the stored channel's.
  EXPECT_EQ(outcome(R"({"name": "h", "type": "slack"})", &stored),
            "webhook_url | webhook_url: missing; expected a value");
}

TEST(ChannelSpec, SecretStatesAndWhatAnAdminMayRead) {
  auto [spec, error] = parse_channel_spec(
      R"({"name": "h", "type": "webhook", "url": "http://h/T", "timeout": "2s"})", nullptr);
  ASSERT_TRUE(spec);
  std::vector<std::pair<std::string, bool>> states;
  for (const auto& s : secret_states(spec->config)) states.emplace_back(s.key, s.set);
  EXPECT_EQ(states, (std::vector<std::pair<std::string, bool>>{
                        {"url", true}, {"secret", false}, {"headers", false}}));
  EXPECT_FALSE(shows_value(spec->config, "url"));
  EXPECT_TRUE(shows_value(spec->config, "timeout"));
  ChannelConfig from_file = spec->config;
  from_file.fields["timeout"].from_env = true;  // `timeout: ${T}` in the file
  EXPECT_FALSE(shows_value(from_file, "timeout"));
}

}  // namespace
}  // namespace trainwatch::alerting
