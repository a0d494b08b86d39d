// What single sign-on makes of an ID token's claims: the user's name (the configured
// claim, else `sub`) and the role their groups map to (the highest match of
// auth.oidc.role_mapping; no match: no login). Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "auth/role.h"

namespace trainwatch::auth {

struct GroupRole {
  std::string group;
  Role role = Role::kViewer;
};

// "" when neither claim is a non-empty string.
std::string sso_user_name(const boost::json::object& claims, const std::string& username_claim);
// The groups claim as a list of strings (a single string counts as one group).
std::vector<std::string> sso_groups(const boost::json::object& claims, const std::string& groups_claim);
std::optional<Role> role_for_groups(const std::vector<GroupRole>& mapping,
                                    const std::vector<std::string>& groups);

}  // namespace trainwatch::auth
