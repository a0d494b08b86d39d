#include "auth/sso_claims.h"

#include <algorithm>
#include <cctype>

namespace trainwatch::auth {
namespace {

std::string string_claim(const boost::json::object& claims, const std::string& key) {
  const boost::json::value* v = claims.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

}  // namespace

std::string sso_user_name(const boost::json::object& claims, const std::string& username_claim) {
  std::string name = string_claim(claims, username_claim);
  if (name.empty()) name = string_claim(claims, "sub");
  // User names are lower case (auth.users' rule); providers differ in case.
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name;
}

std::vector<std::string> sso_groups(const boost::json::object& claims, const std::string& groups_claim) {
  std::vector<std::string> groups;
  const boost::json::value* v = claims.if_contains(groups_claim);
  if (v == nullptr) return groups;
  if (v->is_string()) groups.emplace_back(v->as_string());
  if (v->is_array()) {
    for (const auto& g : v->as_array())
      if (g.is_string()) groups.emplace_back(g.as_string());
  }
  return groups;
}

std::optional<Role> role_for_groups(const std::vector<GroupRole>& mapping,
                                    const std::vector<std::string>& groups) {
  std::optional<Role> best;
  for (const auto& m : mapping) {
    if (std::find(groups.begin(), groups.end(), m.group) == groups.end()) continue;
    if (!best || allows(m.role, *best)) best = m.role;
  }
  return best;
}

}  // namespace trainwatch::auth
