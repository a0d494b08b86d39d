// Who a dashboard request acts for, from its session cookie. `session_id` is the value of
// the session cookie of the request's scheme (auth/cookie_names.h). A bearer token (API
// clients; no cookie, so no CSRF risk) is not checked here: it goes through the guess
// throttle (auth/admin_token_check.h).
#pragma once

#include <optional>
#include <string_view>

#include "auth/admin_auth.h"

namespace trainwatch::auth {

enum class WriteAccess { kAllowed, kNoCredentials, kBadCsrf };

struct WriteCheck {
  WriteAccess access = WriteAccess::kNoCredentials;
  std::optional<Principal> who;  // set when kAllowed
};

// A live session together with that session's CSRF token (`X-CSRF-Token` or the form's
// `csrf` field) may write, as the session's principal.
WriteCheck check_write(const AdminAuth& auth, std::string_view session_id, std::string_view csrf);

// Who reads on a session: its principal while it lives; nullopt otherwise.
std::optional<Principal> session_reader(const AdminAuth& auth, std::string_view session_id);

}  // namespace trainwatch::auth
