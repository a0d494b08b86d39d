#include "alerting/message.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "core/time_format.h"

namespace trainwatch::alerting {
namespace {

SystemTime at(const char* text) { return *parse_rfc3339(text); }

AlertEvent down_event() {
  AlertEvent e;
  e.kind = EventKind::kDown;
  e.monitor = "rank0-health";
  e.monitor_type = "http";
  e.target = "http://10.0.0.5:8765/health";
  e.tags = {"training"};
  e.incident_id = 7;
  e.cause = "HTTP 503; [BODY].status == degraded, expected ok";
  e.at = at("2026-05-01T09:43:10.000Z");
  e.since = at("2026-05-01T09:41:07.250Z");
  e.http_status = 503;
  e.body_excerpt = "{\"status\":\"degraded\",\n\"stalled\":true}";
  e.latency_ms = 12.4;
  return e;
}

std::string field(const Message& m, const std::string& label) {
  for (const auto& [l, v] : m.fields) {
    if (l == label) return v;
  }
  return "<absent>";
}

TEST(MessageTest, DownCarriesTheCauseAndTheCheckDetails) {
  const Message m = render_message(down_event(), at("2026-05-01T09:43:10.250Z"));
  EXPECT_EQ(m.title, "🔴 DOWN: rank0-health");
  EXPECT_EQ(m.summary, "HTTP 503; [BODY].status == degraded, expected ok");
  EXPECT_EQ(field(m, "Monitor"), "rank0-health (http http://10.0.0.5:8765/health)");
  EXPECT_EQ(field(m, "State"), "down");
  EXPECT_EQ(field(m, "Since"), "2026-05-01T09:41:07.250Z (2m 3s ago)");
  EXPECT_EQ(field(m, "Duration"), "2m 3s");
  EXPECT_EQ(field(m, "HTTP status"), "503");
  EXPECT_EQ(field(m, "Response"), "{\"status\":\"degraded\", \"stalled\":true}");  // one line
  EXPECT_EQ(field(m, "Latency"), "12 ms");
  EXPECT_EQ(field(m, "Incident"), "#7");
  EXPECT_EQ(field(m, "Tags"), "training");
}

TEST(MessageTest, RecoverySaysHowLongItWasDownAndWhy) {
  AlertEvent e = down_event();
  e.kind = EventKind::kUp;
  e.ended = at("2026-05-01T10:03:07.250Z");
  e.http_status = 200;
  e.body_excerpt.clear();
  const Message m = render_message(e, at("2026-05-01T10:03:08.000Z"));
  EXPECT_EQ(m.title, "✅ UP: rank0-health after 22m down");
  EXPECT_EQ(m.summary,
            "Recovered after 22m; it was down with: HTTP 503; [BODY].status == degraded, expected ok");
  EXPECT_EQ(field(m, "State"), "up");
  EXPECT_EQ(field(m, "Duration"), "22m");
  EXPECT_EQ(field(m, "Recovered"), "2026-05-01T10:03:07.250Z (750ms ago)");
}

TEST(MessageTest, ReminderSaysHowLongSoFar) {
  AlertEvent e = down_event();
  e.kind = EventKind::kReminder;
  const Message m = render_message(e, at("2026-05-01T11:41:07.250Z"));
  EXPECT_EQ(m.title, "🔴 STILL DOWN: rank0-health for 2h");
}

TEST(MessageTest, LongExcerptsAreCutAtACharacterBoundary) {
  AlertEvent e = down_event();
  e.body_excerpt = std::string(kMaxExcerptChars - 1, 'x') + "é" + std::string(100, 'y');
  const std::string response = field(render_message(e, e.at), "Response");
  EXPECT_EQ(response, std::string(kMaxExcerptChars - 1, 'x') + "…");
}

TEST(MessageTest, TextAndHtmlCarryTheSameFieldsAndHtmlIsEscaped) {
  AlertEvent e = down_event();
  e.cause = "<script>alert(1)</script>";
  const Message m = render_message(e, e.at);
  const std::string text = message_text(m);
  EXPECT_NE(text.find("HTTP status: 503\n"), std::string::npos);
  const std::string html = message_html(m);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
}

TEST(MessageTest, EventsSurviveTheirJsonRoundTrip) {
  AlertEvent e = down_event();
  e.details = {{"Last ping", "97m ago"}};
  e.url = "https://tw.example.org/monitors/rank0-health";
  e.labels = {{"training_job", "llama"}, {"rank", "5"}};
  auto back = event_from_json(event_to_json(e));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->monitor, e.monitor);
  EXPECT_EQ(back->incident_id, e.incident_id);
  EXPECT_EQ(back->since, e.since);
  EXPECT_EQ(back->body_excerpt, e.body_excerpt);
  EXPECT_EQ(back->details, e.details);
  EXPECT_EQ(back->url, e.url);
  EXPECT_EQ(back->labels, e.labels);
  const Message m = render_message(*back, e.at);
  EXPECT_EQ(
      std::count(m.fields.begin(), m.fields.end(),
                 std::pair<std::string, std::string>("Page", "https://tw.example.org/monitors/rank0-health")),
      1)
      << "every channel's text links to the page";
  EXPECT_FALSE(event_from_json("{\"kind\":\"exploded\"}").ok());
  EXPECT_FALSE(event_from_json("not json").ok());
}

}  // namespace
}  // namespace trainwatch::alerting

namespace trainwatch::alerting {
namespace {

TEST(MessageTest, AWarningSaysTheMonitorIsUpAndWhy) {
  AlertEvent e;
  e.kind = EventKind::kWarning;
  e.monitor = "api-cert";
  e.monitor_type = "tls";
  e.target = "api.example.com:443";
  e.cause = "certificate for api.example.com expires in 9 days (2026-05-10T09:00:00Z)";
  e.at = *parse_rfc3339("2026-05-01T09:00:00.000Z");
  const Message m = render_message(e, e.at);
  EXPECT_EQ(m.title, "⚠️ WARNING: api-cert");
  EXPECT_EQ(m.summary, "certificate for api.example.com expires in 9 days (2026-05-10T09:00:00Z)");
  EXPECT_EQ(field(m, "Monitor"), "api-cert (tls api.example.com:443)");
  EXPECT_EQ(field(m, "State"), "up, with a warning");
  EXPECT_EQ(field(m, "Incident"), "<absent>");
  EXPECT_NE(message_html(m).find("#9a6700"), std::string::npos);
}

}  // namespace
}  // namespace trainwatch::alerting
