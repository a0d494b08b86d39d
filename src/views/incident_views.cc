#include "views/incident_views.h"

#include <algorithm>
#include <charconv>

#include "core/time_format.h"

namespace trainwatch::views {
namespace {

namespace json = boost::json;

std::string allowed_statuses() {
  std::string out;
  for (IncidentUpdateStatus s : kIncidentUpdateStatuses) {
    if (!out.empty()) out += ", ";
    out += to_string(s);
  }
  return out;
}

Error invalid(std::string message) { return make_error("update.invalid", std::move(message)); }

bool blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

}  // namespace

Result<PostedUpdate> check_update(std::string_view status, std::string text) {
  auto known = incident_update_status_from_string(status);
  if (!known) {
    return invalid("status '" + std::string(status.substr(0, 64)) + "' is not one of: " + allowed_statuses());
  }
  if (blank(text)) return invalid("text is empty; expected a few words for the readers of the incident");
  if (text.size() > kMaxIncidentUpdateTextBytes) {
    return invalid("text has " + std::to_string(text.size()) + " bytes; expected at most " +
                   std::to_string(kMaxIncidentUpdateTextBytes));
  }
  // A NUL would cut the text short in some readers; nothing a person types needs one.
  if (text.find('\0') != std::string::npos) return invalid("text holds a NUL character");
  return PostedUpdate{*known, std::move(text)};
}

Result<PostedUpdate> parse_update_body(std::string_view body) {
  if (body.size() > kMaxUpdateBodyBytes) {
    return invalid("the body has " + std::to_string(body.size()) + " bytes; expected at most " +
                   std::to_string(kMaxUpdateBodyBytes));
  }
  boost::system::error_code ec;
  json::value value = json::parse(body, ec);
  if (ec || !value.is_object()) {
    return invalid(
        "the body is not a JSON object; expected {\"status\": \"investigating\", \"text\": \"...\"}");
  }
  const json::object& o = value.as_object();
  for (const auto& entry : o) {
    const std::string key(entry.key().data(), std::min<size_t>(entry.key().size(), 64));
    if (key != "status" && key != "text")
      return invalid("unknown key '" + key + "'; expected only status and text");
  }
  const json::value* status = o.if_contains("status");
  if (status == nullptr || !status->is_string()) {
    return invalid("status is missing or not a string; expected one of: " + allowed_statuses());
  }
  const json::value* text = o.if_contains("text");
  if (text == nullptr || !text->is_string()) return invalid("text is missing or not a string");
  const json::string& status_text = status->as_string();
  return check_update(std::string_view(status_text.data(), status_text.size()),
                      std::string(text->as_string()));
}

std::optional<int64_t> parse_incident_id(std::string_view text) {
  int64_t id = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0) return std::nullopt;
  return id;
}

json::object incident_update_json(const IncidentUpdate& update) {
  json::object o;
  o["id"] = update.id;
  o["at"] = format_rfc3339(update.at);
  o["status"] = to_string(update.status);
  o["text"] = update.text;
  return o;
}

}  // namespace trainwatch::views
