#include "core/incident_update.h"

namespace trainwatch {

std::string_view to_string(IncidentUpdateStatus s) {
  switch (s) {
    case IncidentUpdateStatus::kInvestigating: return "investigating";
    case IncidentUpdateStatus::kIdentified: return "identified";
    case IncidentUpdateStatus::kMonitoring: return "monitoring";
    case IncidentUpdateStatus::kResolved: return "resolved";
  }
  return "investigating";
}

std::optional<IncidentUpdateStatus> incident_update_status_from_string(std::string_view s) {
  for (IncidentUpdateStatus status : kIncidentUpdateStatuses) {
    if (to_string(status) == s) return status;
  }
  return std::nullopt;
}

std::string_view status_title(IncidentUpdateStatus s) {
  switch (s) {
    case IncidentUpdateStatus::kInvestigating: return "Investigating";
    case IncidentUpdateStatus::kIdentified: return "Identified";
    case IncidentUpdateStatus::kMonitoring: return "Monitoring";
    case IncidentUpdateStatus::kResolved: return "Resolved";
  }
  return "Investigating";
}

}  // namespace trainwatch
