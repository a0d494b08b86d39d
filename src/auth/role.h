// Roles: what a person or a token may do. Each is a strict superset of the one before:
//   viewer  reads every private view and the API, secrets still hidden
//   editor  + monitors, maintenance, pause/resume, incident updates, test sends
//   admin   + users, tokens, channels, status pages, settings
// docs/api.md lists each route's minimum role.
#pragma once

#include <optional>
#include <string_view>

namespace trainwatch::auth {

enum class Role { kViewer = 0, kEditor = 1, kAdmin = 2 };

constexpr std::string_view role_name(Role role) {
  switch (role) {
    case Role::kViewer: return "viewer";
    case Role::kEditor: return "editor";
    case Role::kAdmin: return "admin";
  }
  return "viewer";
}

constexpr std::optional<Role> parse_role(std::string_view name) {
  if (name == "viewer") return Role::kViewer;
  if (name == "editor") return Role::kEditor;
  if (name == "admin") return Role::kAdmin;
  return std::nullopt;
}

// Whether a holder of `held` may do what needs `needed`.
constexpr bool allows(Role held, Role needed) { return static_cast<int>(held) >= static_cast<int>(needed); }

}  // namespace trainwatch::auth
