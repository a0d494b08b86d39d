// The domain's shared vocabulary: what a check found, a monitor's state, an incident.
// Plain values; no behaviour beyond naming. Used by engine, storage and api alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/clock.h"

namespace trainwatch {

enum class MonitorStatus { kPending, kUp, kDown, kPaused };

std::string_view to_string(MonitorStatus s);
std::optional<MonitorStatus> monitor_status_from_string(std::string_view s);

// Phase timings of one HTTP check, in milliseconds since the check started; 0 when the
// phase did not happen (no TLS on http://, DNS skipped for an IP literal).
struct HttpTimings {
  double dns_ms = 0;
  double connect_ms = 0;
  double tls_ms = 0;
  double first_byte_ms = 0;
  double total_ms = 0;
};

// The outcome of one check of one monitor.
struct CheckResult {
  SystemTime at{};  // when the check started (wall clock)
  bool ok = false;
  double latency_ms = 0;  // total time of the check
  // Why it failed, in words; empty when ok. Values quoted from a response body are marked
  // (core/redaction.h): shown through cause_for, like every cause copied from this one.
  std::string cause;
  // Ok, but needing attention before it fails (a certificate within warn_before, a job
  // whose stacks name a stuck rank before its step timeout): the alerting planner sends
  // one warning, never a page. Kept in memory only.
  bool warning = false;
  int http_status = 0;  // 0 when not HTTP or no response
  HttpTimings timings{};
  // When the certificate the check saw expires (tls, https); what a monitor's page counts
  // its days left from. Kept in memory only.
  std::optional<SystemTime> certificate_expires;
  // The start of the response body, at most kBodyExcerptBytes, for alert messages. Kept
  // in memory only (not stored with the result).
  std::string body_excerpt;
  // Nothing to judge yet (a job no rank of which has reported): the monitor stays as it is,
  // `pending` until a first real result. Not a failure, not a success.
  bool pending = false;
  // The check was no longer wanted when it was to start (checks/checker.h) and never ran:
  // says nothing of the monitor, never applied. `ok` is false, `cause` says why in words.
  bool not_started = false;
  // What the failure names, as alert labels (a job's culprit: reason, rank, node), in that
  // order. Kept in memory only.
  std::vector<std::pair<std::string, std::string>> labels;
};

inline constexpr size_t kBodyExcerptBytes = 512;

// What the server remembers about a monitor between checks and across restarts.
struct MonitorState {
  MonitorStatus status = MonitorStatus::kPending;
  SystemTime since{};  // when `status` began
  std::optional<SystemTime> last_check;
  double last_latency_ms = 0;
  std::string last_error;  // cause of the last failed check; empty after a success
  int consecutive_failures = 0;
  std::optional<int64_t> open_incident_id;
};

struct Incident {
  int64_t id = 0;
  std::string monitor;
  SystemTime started{};
  std::optional<SystemTime> ended;
  std::string cause;
  // The monitor it depends on (MonitorConfig::depends_on) that was DOWN when it opened,
  // which explains it; empty when nothing did.
  std::string caused_by;
};

}  // namespace trainwatch
