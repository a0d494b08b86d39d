// Principal: who a request acts for, once its credential proved itself. The audit log
// names it; the role decides what it may do.
#pragma once

#include <string>

#include "auth/role.h"

namespace trainwatch::auth {

struct Principal {
  enum class Kind {
    kServiceToken,  // one of auth.admin_tokens: no person behind it
    kUserToken,     // an API token a user made (catalog/accounts.h), at most the user's role
    kUser,          // a person logged in to the dashboard (password or single sign-on)
    kAlertLink,     // whoever holds an alert, through its snooze link (auth/alert_link.h)
  };
  // As the audit log shows it: the user's name; "token <name> of <user>"; "admin token".
  std::string name;
  Role role = Role::kViewer;
  Kind kind = Kind::kUser;
  // The user behind it (empty for a service token): what revoking a user ends.
  std::string user;
};

constexpr std::string_view kind_name(Principal::Kind kind) {
  switch (kind) {
    case Principal::Kind::kServiceToken: return "service_token";
    case Principal::Kind::kUserToken: return "user_token";
    case Principal::Kind::kUser: return "user";
    case Principal::Kind::kAlertLink: return "alert_link";
  }
  return "user";
}

}  // namespace trainwatch::auth
