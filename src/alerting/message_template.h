// MessageTemplate: a channel's `template:`, the alert text in the team's own words.
// Mustache (the engine the dashboard's pages use), rendered as plain text: no HTML
// escaping, because each provider escapes the text for where it goes (Slack's &<>, JSON).
//
//   template: "{{state}}: {{monitor}} ({{cause}}){{#url}} {{url}}{{/url}}"
//   -> "down: rank0-health (HTTP 503) https://tw.example.com/monitors/rank0-health"
//
// Variables (kTemplateVariables): a value the alert does not have (no incident for a test,
// no culprit for an HTTP monitor) is absent, so `{{#name}}…{{/name}}` shows a part only
// when it has one. compile() refuses a name outside the list, a partial ({{>x}}), a
// change of delimiters and an unbalanced section, with the reason, so that a typo is a
// config error at load (file:line:col), never an empty hole in a page at 3 a.m.
//
// Bounds: a template of at most kMaxTemplateBytes; a rendered text cut to kMaxTemplatedBytes.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "alerting/event.h"
#include "alerting/message.h"
#include "core/clock.h"
#include "core/result.h"

namespace trainwatch::alerting {

inline constexpr size_t kMaxTemplateBytes = 4096;
inline constexpr size_t kMaxTemplatedBytes = 4000;

inline constexpr std::array<std::string_view, 21> kTemplateVariables{
    "state",         // down, up, reminder, test, warning
    "monitor",       // its name
    "monitor_type",  // http, tcp, heartbeat, job, ...
    "target",        // what is checked: a URL, host:port
    "tags",          // comma-separated
    "title",         // the default message's title, with its emoji
    "headline",      // the title without the emoji
    "summary",       // the default message's sentence: the cause, or how long it was down
    "cause",         // why it is (was) down
    "at",            // when it happened, RFC 3339
    "since",         // when the incident started, RFC 3339
    "duration",      // how long it has been (was) down: "2m 3s"
    "incident_id",   // the incident's number
    "http_status",   // the last HTTP status, when there was one
    "url",           // the monitor's or job's page (server.public_url)
    "snooze_url",    // a link that snoozes the monitor, one use, for a day
    "job",           // a job monitor's training job
    "reason",        // the culprit's finding: rank_gone, rank_hung, ...
    "rank",          // the culprit's rank(s)
    "node",          // the culprit's node
    "affected",      // monitors down with it (depends_on), comma-separated
};

class MessageTemplate {
 public:
  // Errors: "alerting.bad_template", its message saying what and where in the template.
  static Result<MessageTemplate> compile(std::string text);

  // The text for `event`; `message` is the default rendering (for title/summary).
  std::string render(const AlertEvent& event, const Message& message, SystemTime now) const;

  const std::string& text() const { return text_; }

 private:
  explicit MessageTemplate(std::string text) : text_(std::move(text)) {}
  std::string text_;
};

}  // namespace trainwatch::alerting
