// The one renderer: every provider formats the same Message, so Slack, email and a
// webhook all say the same thing. Times are UTC (RFC 3339) with a relative form:
// "2026-05-01T09:41:07.250Z (12m ago)".
//
// Example, a DOWN:
//   title:   "🔴 DOWN: rank0-health"
//   summary: "HTTP 503; [BODY].status == degraded, expected ok"
//   fields:  Monitor: rank0-health (http http://10.0.0.5:8765/health)
//            State: down · Since: 2026-05-01T09:41:07.250Z (2m ago) · Duration: 2m 3s
//            HTTP status: 503 · Response: {"status":"degraded",...} · Latency: 12 ms
//            Incident: #7
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "alerting/event.h"
#include "core/clock.h"
#include "core/html_escape.h"  // for the HTML parts of messages

namespace trainwatch::alerting {

struct Message {
  EventKind kind = EventKind::kDown;
  std::string title;     // one line, starts with an emoji for the kind
  std::string headline;  // the title without the emoji, for plain-ASCII places (email subject fallback)
  std::string summary;   // one or two sentences: the cause, or how long it was down
  std::vector<std::pair<std::string, std::string>> fields;  // label, value; in display order
  // The channel's own wording (its `template:`, alerting/message_template.h), when it has
  // one: the provider sends this text in place of its layout of the parts above.
  std::optional<std::string> templated;
};

// Field values are bounded: a response excerpt is cut to kMaxExcerptChars.
inline constexpr size_t kMaxExcerptChars = 300;

Message render_message(const AlertEvent& event, SystemTime now);

// Plain text: the title, the summary, then "Label: value" lines; the templated text when
// the channel has a template.
std::string message_text(const Message& message);
// A small HTML document for email: the same content (or the templated text), escaped.
std::string message_html(const Message& message);

// "2026-05-01T09:41:07.250Z (12m ago)"; "(in 5m)" for the future.
std::string time_with_relative(SystemTime t, SystemTime now);

}  // namespace trainwatch::alerting
