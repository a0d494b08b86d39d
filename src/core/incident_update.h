// An incident update: what an admin posted about an incident for its readers, as on
// Statuspage or Uptime Kuma ("Investigating: the loader hangs on node 3"). Updates are
// public by intent (status pages show them), so they hold only what their author wrote.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"

namespace trainwatch {

enum class IncidentUpdateStatus { kInvestigating, kIdentified, kMonitoring, kResolved };

inline constexpr std::array<IncidentUpdateStatus, 4> kIncidentUpdateStatuses = {
    IncidentUpdateStatus::kInvestigating, IncidentUpdateStatus::kIdentified,
    IncidentUpdateStatus::kMonitoring, IncidentUpdateStatus::kResolved};

std::string_view to_string(IncidentUpdateStatus s);  // "investigating", "identified", ...
std::optional<IncidentUpdateStatus> incident_update_status_from_string(std::string_view s);
// "Investigating", "Identified", ...: the word a status page shows.
std::string_view status_title(IncidentUpdateStatus s);

struct IncidentUpdate {
  int64_t id = 0;  // chosen by the store, ascending in the order updates were posted
  int64_t incident_id = 0;
  SystemTime at{};
  IncidentUpdateStatus status = IncidentUpdateStatus::kInvestigating;
  std::string text;
};

// An update's text holds at most this many bytes: a few paragraphs, enough for a status
// post; a longer one is refused (400), never cut.
inline constexpr size_t kMaxIncidentUpdateTextBytes = 4096;
// An incident takes at most this many updates; the next is refused (409). It bounds what a
// status page and an incident's API answer read for one incident.
inline constexpr int kMaxUpdatesPerIncident = 100;

}  // namespace trainwatch
