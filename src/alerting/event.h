// AlertEvent: the facts of one notification (a monitor went down, recovered, is still
// down, or a test), as stored in the outbox (`deliveries.event`, JSON) and read back by
// the dispatcher. Everything a message shows is here, so a delivery re-sent after a
// restart says exactly what the first attempt said.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/result.h"

namespace trainwatch::alerting {

// kWarning: the monitor is up but needs attention soon (CheckResult::warning); it belongs to
// no incident and goes only to channels that do not page (AlertPlanner).
enum class EventKind { kDown, kUp, kReminder, kTest, kWarning };

std::string_view to_string(EventKind kind);
std::optional<EventKind> event_kind_from_string(std::string_view text);

struct AlertEvent {
  EventKind kind = EventKind::kDown;
  std::string monitor;
  std::string monitor_type;  // http, tcp, heartbeat, ...
  std::string target;        // what is checked: a URL, host:port
  std::vector<std::string> tags;
  std::optional<int64_t> incident_id;
  std::string cause;                // why it is (was) down
  SystemTime at{};                  // when the event happened
  std::optional<SystemTime> since;  // when the incident started
  std::optional<SystemTime> ended;  // when it ended (kUp)
  int http_status = 0;
  std::string body_excerpt;  // bounded by kBodyExcerptBytes
  double latency_ms = 0;
  // More facts, label then value, shown as message fields: other monitor kinds add
  // theirs here ("Last ping", "97m ago").
  std::vector<std::pair<std::string, std::string>> details;
  // Monitors that depend on this one and are down with it (depends_on), as of when the
  // alert was sent: the dispatcher fills it in; the stored event leaves it empty.
  std::vector<std::string> affected;
  // The page that explains it: server.public_url + /jobs/NAME for a job, /monitors/NAME
  // otherwise; empty without a public_url.
  std::string url;
  // The link that snoozes the monitor from the alert (auth/alert_link.h), under the same
  // public_url; empty without one.
  std::string snooze_url;
  // What the failure names, as alert labels (Alertmanager's): training_job for a job, and
  // the culprit's reason, rank and node (CheckResult::labels).
  std::vector<std::pair<std::string, std::string>> labels;
};

std::string event_to_json(const AlertEvent& event);
// Errors: "alerting.bad_event" for text that is not an event this version wrote.
Result<AlertEvent> event_from_json(std::string_view text);

}  // namespace trainwatch::alerting
