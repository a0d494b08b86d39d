#include "core/incident_update.h"

#include "core/enum_names.h"

namespace trainwatch {
namespace {

constexpr EnumNames<IncidentUpdateStatus, 4> kStatusNames{
    {{IncidentUpdateStatus::kInvestigating, "investigating"},
     {IncidentUpdateStatus::kIdentified, "identified"},
     {IncidentUpdateStatus::kMonitoring, "monitoring"},
     {IncidentUpdateStatus::kResolved, "resolved"}}};
// What a status page heading says for each.
constexpr EnumNames<IncidentUpdateStatus, 4> kStatusTitles{
    {{IncidentUpdateStatus::kInvestigating, "Investigating"},
     {IncidentUpdateStatus::kIdentified, "Identified"},
     {IncidentUpdateStatus::kMonitoring, "Monitoring"},
     {IncidentUpdateStatus::kResolved, "Resolved"}}};

}  // namespace

std::string_view to_string(IncidentUpdateStatus s) { return name_of(kStatusNames, s); }

std::optional<IncidentUpdateStatus> incident_update_status_from_string(std::string_view s) {
  return value_of(kStatusNames, s);
}

std::string_view status_title(IncidentUpdateStatus s) { return name_of(kStatusTitles, s); }

}  // namespace trainwatch
