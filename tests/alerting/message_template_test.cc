// A channel's template as the team reads it: its variables filled in as plain text, the
// parts a alert lacks left out, and a template that cannot be rendered refused with the
// reason and where in it.
#include "alerting/message_template.h"

#include <gtest/gtest.h>

#include "alerting/channels.h"
#include "core/time_format.h"

namespace trainwatch::alerting {
namespace {

SystemTime at(const char* text) { return *parse_rfc3339(text); }

AlertEvent job_down() {
  AlertEvent e;
  e.kind = EventKind::kDown;
  e.monitor = "llama-70b";
  e.monitor_type = "job";
  e.incident_id = 412;
  e.cause = "rank 5 is gone: killed by SIGKILL at step 1200";
  e.at = at("2026-05-01T09:43:10.000Z");
  e.since = at("2026-05-01T09:41:10.000Z");
  e.url = "https://tw.example.com/jobs/llama-70b";
  e.labels = {{"training_job", "llama-70b"}, {"reason", "rank_gone"}, {"rank", "5"}, {"node", "node-b"}};
  return e;
}

std::string rendered(const std::string& text, const AlertEvent& event, SystemTime now) {
  auto compiled = MessageTemplate::compile(text);
  EXPECT_TRUE(compiled) << compiled.error().message;
  if (!compiled) return "";
  return compiled->render(event, render_message(event, now), now);
}

TEST(MessageTemplate, FillsTheVariablesOfADown) {
  const auto now = at("2026-05-01T09:44:10.000Z");
  EXPECT_EQ(
      rendered("{{state}} {{job}}: rank {{rank}} on {{node}} ({{reason}}) for {{duration}}, #{{incident_id}} "
               "{{url}}",
               job_down(), now),
      "down llama-70b: rank 5 on node-b (rank_gone) for 3m, #412 https://tw.example.com/jobs/llama-70b");
  EXPECT_EQ(rendered("{{headline}} | {{since}}", job_down(), now),
            "DOWN: llama-70b | 2026-05-01T09:41:10.000Z");
}

TEST(MessageTemplate, IsPlainTextWhateverTheValueHolds) {
  AlertEvent e = job_down();
  e.cause = "<b>&\"quoted\"";
  // Each provider escapes for where the text goes; the template itself adds no entity.
  EXPECT_EQ(rendered("{{cause}}|{{{cause}}}|{{&cause}}", e, e.at),
            "<b>&\"quoted\"|<b>&\"quoted\"|<b>&\"quoted\"");
}

TEST(MessageTemplate, APartTheAlertLacksIsLeftOut) {
  AlertEvent test;
  test.kind = EventKind::kTest;
  test.monitor = "team-slack";
  test.at = at("2026-05-01T09:43:10.000Z");
  const std::string text =
      "{{state}}{{#incident_id}} #{{incident_id}}{{/incident_id}}{{^rank}} (no culprit){{/rank}}";
  EXPECT_EQ(rendered(text, test, test.at), "test (no culprit)");
  EXPECT_EQ(rendered(text, job_down(), test.at), "down #412");
}

TEST(MessageTemplate, AnUnknownVariableIsRefusedWithWhereAndTheKnownOnes) {
  auto bad = MessageTemplate::compile("{{monitor}} is {{nosuch}}");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "alerting.bad_template");
  EXPECT_TRUE(
      bad.error().message.starts_with("{{nosuch}} at character 16 is not a variable; expected one of: state, "
                                      "monitor,"))
      << bad.error().message;
  EXPECT_FALSE(MessageTemplate::compile("{{#nosuch}}x{{/nosuch}}"));
}

TEST(MessageTemplate, WhatTheEngineCouldNotRenderIsRefused) {
  const std::pair<const char*, const char*> cases[] = {
      {"{{>part}}", "a partial ({{>...}}) at character 1; templates have no partials"},
      {"{{=<% %>=}}", "a change of delimiters at character 1; templates use {{ }} only"},
      {"down {{monitor", "a tag opened at character 6 is not closed"},
      {"{{ }}", "an empty tag at character 1"},
  };
  for (const auto& [text, reason] : cases) {
    auto bad = MessageTemplate::compile(text);
    ASSERT_FALSE(bad) << text;
    EXPECT_EQ(bad.error().message, reason) << text;
  }
  EXPECT_FALSE(MessageTemplate::compile("{{#rank}}rank {{rank}}")) << "a section that is never closed";
  EXPECT_TRUE(MessageTemplate::compile("{{! a comment }}{{monitor}}"));
  EXPECT_FALSE(MessageTemplate::compile(std::string(kMaxTemplateBytes + 1, 'x')));
}

TEST(MessageTemplate, ARenderedTextIsBounded) {
  AlertEvent e = job_down();
  e.cause = std::string(3000, 'c');
  const std::string text = rendered("{{cause}}{{cause}}", e, e.at);
  EXPECT_LE(text.size(), kMaxTemplatedBytes);
  EXPECT_TRUE(text.ends_with("\u2026"));
}

TEST(MessageTemplate, AChannelWithATemplateSendsItsText) {
  Channel channel{"team", "slack", false, Millis(10'000), nullptr, nullptr};
  const AlertEvent e = job_down();
  EXPECT_FALSE(channel_message(channel, e, e.at).templated) << "no template: the provider's own layout";
  channel.text_template = std::make_shared<const MessageTemplate>(*MessageTemplate::compile("{{monitor}}!"));
  const Message m = channel_message(channel, e, e.at);
  ASSERT_TRUE(m.templated);
  EXPECT_EQ(*m.templated, "llama-70b!");
  EXPECT_EQ(message_text(m), "llama-70b!");
  EXPECT_NE(message_html(m).find("llama-70b!"), std::string::npos);
}

}  // namespace
}  // namespace trainwatch::alerting
