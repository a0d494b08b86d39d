// Incident updates as a reader sees them, and what a writer may post: the API's
// POST /api/v1/incidents/{id}/updates and the dashboard's form accept exactly the same.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include "core/incident_update.h"
#include "core/result.h"

namespace trainwatch::views {

// A posted update, checked: a known status and a text of 1..kMaxIncidentUpdateTextBytes bytes.
struct PostedUpdate {
  IncidentUpdateStatus status = IncidentUpdateStatus::kInvestigating;
  std::string text;
};

// A JSON body holds the text's bytes up to six times over (\u escapes), and two keys.
inline constexpr size_t kMaxUpdateBodyBytes = 6 * kMaxIncidentUpdateTextBytes + 1024;

// Errors have the code "update.invalid" and say what was expected: the allowed statuses,
// or the text's bound.
Result<PostedUpdate> check_update(std::string_view status, std::string text);
// {"status": "...", "text": "..."}; any other key is an error, so a typo is not lost.
Result<PostedUpdate> parse_update_body(std::string_view body);

// An incident id as a path holds it: a positive decimal number, nothing else.
std::optional<int64_t> parse_incident_id(std::string_view text);

// {"id", "at", "status", "text"}: all of it written by an admin for the public, so the same
// for every Audience.
boost::json::object incident_update_json(const IncidentUpdate& update);

}  // namespace trainwatch::views
