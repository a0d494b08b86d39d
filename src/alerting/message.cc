#include "alerting/message.h"

#include <cmath>
#include <cstdio>

#include "core/duration.h"
#include "core/time_format.h"

namespace trainwatch::alerting {
namespace {

// Cuts at a character boundary (never inside a UTF-8 sequence) and marks the cut.
std::string cut(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end)) + "…";
}

std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  return out;
}

}  // namespace

std::string time_with_relative(SystemTime t, SystemTime now) {
  const auto d = std::chrono::duration_cast<Millis>(now - t);
  if (d.count() >= 0) return format_rfc3339(t) + " (" + format_duration(d) + " ago)";
  return format_rfc3339(t) + " (in " + format_duration(-d) + ")";
}

Message render_message(const AlertEvent& e, SystemTime now) {
  Message m;
  m.kind = e.kind;
  const std::string duration =
      e.since ? format_duration(std::chrono::duration_cast<Millis>((e.ended ? *e.ended : now) - *e.since))
              : "";
  switch (e.kind) {
    case EventKind::kDown:
      m.headline = "DOWN: " + e.monitor;
      m.title = "🔴 " + m.headline;
      m.summary = e.cause.empty() ? "The check failed." : e.cause;
      break;
    case EventKind::kReminder:
      m.headline = "STILL DOWN: " + e.monitor + (duration.empty() ? "" : " for " + duration);
      m.title = "🔴 " + m.headline;
      m.summary = e.cause.empty() ? "The check still fails." : e.cause;
      break;
    case EventKind::kUp:
      m.headline = "UP: " + e.monitor + (duration.empty() ? "" : " after " + duration + " down");
      m.title = "✅ " + m.headline;
      m.summary = "Recovered" + (duration.empty() ? std::string() : " after " + duration) +
                  (e.cause.empty() ? "." : "; it was down with: " + e.cause);
      break;
    case EventKind::kWarning:
      m.headline = "WARNING: " + e.monitor;
      m.title = "⚠️ " + m.headline;
      m.summary = e.cause.empty() ? "The monitor is up but needs attention soon." : e.cause;
      break;
    case EventKind::kTest:
      m.headline = "TEST: trainwatch notification to " + e.monitor;
      m.title = "🧪 " + m.headline;
      m.summary = "This is a test message: if you can read it, the channel works.";
      break;
  }

  auto add = [&](std::string label, std::string value) {
    m.fields.emplace_back(std::move(label), std::move(value));
  };
  if (e.kind != EventKind::kTest) {
    add("Monitor", e.monitor + (e.target.empty() ? "" : " (" + e.monitor_type + " " + e.target + ")"));
    add("State", e.kind == EventKind::kUp        ? "up"
                 : e.kind == EventKind::kWarning ? "up, with a warning"
                                                 : "down");
    if (!e.cause.empty() && e.kind == EventKind::kUp) add("Cause", e.cause);
    if (e.since) add(e.kind == EventKind::kUp ? "Down since" : "Since", time_with_relative(*e.since, now));
    if (e.ended) add("Recovered", time_with_relative(*e.ended, now));
    if (!duration.empty()) add("Duration", duration);
  }
  if (e.http_status != 0) add("HTTP status", std::to_string(e.http_status));
  if (!e.body_excerpt.empty()) add("Response", cut(one_line(e.body_excerpt), kMaxExcerptChars));
  if (e.latency_ms > 0) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.0f ms", std::round(e.latency_ms));
    add("Latency", buffer);
  }
  for (const auto& [label, value] : e.details) add(label, value);
  if (!e.affected.empty()) {
    std::string names;
    for (const auto& a : e.affected) names += (names.empty() ? "" : ", ") + a;
    add(e.kind == EventKind::kUp ? "Still down (depend on it)" : "Also down (depend on it)", names);
  }
  if (!e.tags.empty()) {
    std::string tags;
    for (const auto& t : e.tags) tags += (tags.empty() ? "" : ", ") + t;
    add("Tags", tags);
  }
  if (e.incident_id) add("Incident", "#" + std::to_string(*e.incident_id));
  // server.public_url: the page that explains it, in every channel's text.
  if (!e.url.empty()) add("Page", e.url);
  if (!e.snooze_url.empty()) add("Snooze", e.snooze_url);
  add("At", format_rfc3339(e.at));
  return m;
}

std::string message_text(const Message& m) {
  if (m.templated) return *m.templated;
  std::string out = m.title + "\n" + m.summary + "\n\n";
  for (const auto& [label, value] : m.fields) out += label + ": " + value + "\n";
  return out;
}

std::string message_html(const Message& m) {
  const char* color = m.kind == EventKind::kUp        ? "#1a7f37"
                      : m.kind == EventKind::kTest    ? "#555555"
                      : m.kind == EventKind::kWarning ? "#9a6700"
                                                      : "#cf222e";
  std::string out = "<!DOCTYPE html><html><body style=\"font-family:sans-serif\">";
  if (m.templated) {
    return out + "<p style=\"white-space:pre-wrap\">" + html_escape(*m.templated) +
           "</p><p style=\"color:#888\">sent by trainwatch</p></body></html>";
  }
  out += "<h2 style=\"color:" + std::string(color) + "\">" + html_escape(m.title) + "</h2>";
  out += "<p>" + html_escape(m.summary) + "</p><table cellpadding=\"4\">";
  for (const auto& [label, value] : m.fields) {
    out += "<tr><th align=\"left\">" + html_escape(label) + "</th><td>" + html_escape(value) + "</td></tr>";
  }
  out += "</table><p style=\"color:#888\">sent by trainwatch</p></body></html>";
  return out;
}

}  // namespace trainwatch::alerting
