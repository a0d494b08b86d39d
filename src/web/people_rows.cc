#include "web/people_rows.h"

#include <algorithm>

#include "core/time_format.h"
#include "web/time_text.h"

namespace trainwatch::web {

namespace json = boost::json;

json::object token_row(const ApiTokenRecord& token, SystemTime now) {
  json::object row{{"id", token.id},
                   {"name", token.name},
                   {"owner", token.owner},
                   {"role", token.role},
                   {"created", format_rfc3339(token.created)},
                   {"expires", token.expires ? utc_text(*token.expires) : "never"}};
  row["created_t"] = time_json(token.created, now);
  if (token.revoked) {
    row["state"] = "revoked " + utc_text(*token.revoked);
  } else if (token.expires && *token.expires <= now) {
    row["state"] = "expired";
  } else {
    row["state"] = "live";
    row["live"] = true;
  }
  return row;
}

json::object user_row(const auth::UserView& user) {
  const bool from_config = user.source == "config";
  std::string source = user.source;
  if (from_config) source = "from trainwatch.yaml, read-only";
  if (user.source == "local") source = "local (made here)";
  if (user.source == "oidc") source = "single sign-on";
  return json::object{{"name", user.name},
                      {"role", auth::role_name(user.role)},
                      {"source", source},
                      {"second_factor", user.second_factor ? "yes" : "no"},
                      {"read_only", from_config}};
}

json::object audit_row(const AuditEntry& entry, SystemTime now) {
  return json::object{{"id", entry.id},
                      {"when", format_rfc3339(entry.at)},
                      {"when_t", time_json(entry.at, now)},
                      {"who", entry.actor},
                      {"what", entry.action},
                      {"from", entry.source}};
}

const std::vector<ExpiryChoice>& expiry_choices() {
  static const std::vector<ExpiryChoice> kChoices = {{"90d", "in 90 days"},
                                                     {"30d", "in 30 days"},
                                                     {"7d", "in 7 days"},
                                                     {"365d", "in a year"},
                                                     {"never", "never"}};
  return kChoices;
}

Expiry parse_expiry(std::string_view value) {
  constexpr Millis kDay = std::chrono::hours(24);
  if (value == "never") return {};
  for (const auto& choice : expiry_choices()) {
    if (choice.value == value)
      return Expiry{kDay * std::stoi(std::string(value.substr(0, value.size() - 1))), ""};
  }
  return Expiry{std::nullopt,
                "expires: found '" + std::string(value) + "'; expected 7d, 30d, 90d, 365d or never"};
}

std::string error_field(std::string_view message, const std::vector<std::string_view>& fields) {
  const auto colon = message.find(':');
  if (colon == std::string_view::npos) return "";
  const std::string_view head = message.substr(0, colon);
  return std::find(fields.begin(), fields.end(), head) != fields.end() ? std::string(head) : "";
}

}  // namespace trainwatch::web
