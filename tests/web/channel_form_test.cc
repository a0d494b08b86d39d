// The dashboard's channel form: `key: value` lines into the API's JSON object, errors
// that name the line, and an edit form's settings without secrets.
#include "web/channel_form.h"

#include <gtest/gtest.h>

#include "alerting/channel_spec.h"
#include "core/json_text.h"

namespace trainwatch::web {
namespace {

std::string object_or_error(const std::map<std::string, std::string>& form) {
  auto [object, error] = channel_form_object(form);
  return object ? json_text(*object) : error->field + " | " + error->message;
}

TEST(ChannelForm, LinesBecomeTheApisObject) {
  EXPECT_EQ(object_or_error({{"name", " hook "},
                             {"type", "webhook"},
                             {"default", "on"},
                             {"settings", "timeout: 5s\r\n\n# a comment\nheaders: {\"X-Team\": \"ml\"}\n"},
                             {"secrets", "url: http://127.0.0.1:9/hook?k=a:b\n"}}),
            R"({"name":"hook","type":"webhook","default":true,"timeout":"5s","headers":{"X-Team":"ml"},)"
            R"("url":"http://127.0.0.1:9/hook?k=a:b"})");
  EXPECT_EQ(object_or_error({{"name", "m"}, {"type", "email"}, {"settings", "to: [\"a@x.io\", \"b@x.io\"]"}}),
            R"({"name":"m","type":"email","to":["a@x.io","b@x.io"]})");
}

TEST(ChannelForm, ABadLineIsNamedAndASecretLineNeverQuoted) {
  EXPECT_EQ(object_or_error({{"name", "h"}, {"type", "webhook"}, {"settings", "timeout: 5s\ntimeout 6s"}}),
            "settings | settings line 2: found 'timeout 6s'; expected key: value");
  EXPECT_EQ(object_or_error({{"name", "h"}, {"type", "webhook"}, {"secrets", "https//T0k3n"}}),
            "secrets | secrets line 1: found a line; expected key: value");
  EXPECT_EQ(
      object_or_error({{"name", "h"}, {"type", "webhook"}, {"settings", "to: [oops"}}),
      "settings | settings line 1: found '[oops' that is not JSON; expected a JSON list, mapping or string");
  EXPECT_EQ(object_or_error({{"name", "h"}, {"type", "webhook"}, {"settings", "type: slack"}}),
            "settings | settings line 1: found 'type'; expected it in its own field above");
  EXPECT_EQ(
      object_or_error({{"name", "h"}, {"type", "webhook"}, {"settings", "url: a"}, {"secrets", "url: b"}}),
      "secrets | secrets: found 'url' in the settings too; expected it once");
}

TEST(ChannelForm, AnEditFormShowsSettingsButNoSecret) {
  auto [spec, error] = alerting::parse_channel_spec(
      R"({"name": "h", "type": "webhook", "url": "http://127.0.0.1:9/hook/T0k3n", "timeout": "5s",
          "headers": {"Authorization": "Bearer s3cr3t"}})",
      nullptr);
  ASSERT_TRUE(spec);
  EXPECT_EQ(settings_text(spec->config), "timeout: 5s\n");
}

// An edit saved unchanged keeps every setting: a template (which starts like JSON and may
// span lines) is shown as a JSON string, which the form reads back as the same text.
TEST(ChannelForm, ATemplateSurvivesAnEditUnchanged) {
  auto [spec, error] = alerting::parse_channel_spec(
      R"({"name": "h", "type": "ntfy", "topic": "t", "template": "{{state}}: {{monitor}}\n{{cause}}"})",
      nullptr);
  ASSERT_TRUE(spec);
  const std::string settings = settings_text(spec->config);
  EXPECT_EQ(settings, "template: \"{{state}}: {{monitor}}\\n{{cause}}\"\n");
  EXPECT_EQ(object_or_error({{"name", "h"}, {"type", "ntfy"}, {"settings", settings}, {"k.ntfy.topic", "t"}}),
            R"({"name":"h","type":"ntfy","template":"{{state}}: {{monitor}}\n{{cause}}","topic":"t"})");
}

}  // namespace
}  // namespace trainwatch::web
