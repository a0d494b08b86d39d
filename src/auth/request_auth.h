// Whether a dashboard request may proceed on its session cookie. `session_id` is the
// value of the session cookie of the request's scheme (auth/cookie_names.h). A bearer
// token (API clients; no cookie, so no CSRF risk) is not checked here: it goes through
// the guess throttle (auth/admin_token_check.h).
#pragma once

#include <string_view>

#include "auth/admin_auth.h"

namespace trainwatch::auth {

enum class WriteAccess { kAllowed, kNoCredentials, kBadCsrf };

// A live session together with that session's CSRF token (`X-CSRF-Token` or the form's
// `csrf` field) may write.
WriteAccess check_write(const AdminAuth& auth, std::string_view session_id, std::string_view csrf);

// Whether a session may read secrets (heartbeat ping URLs): a live one; or anybody while
// no admin token is configured (a single-user server).
bool may_read_secrets(const AdminAuth& auth, std::string_view session_id);

}  // namespace trainwatch::auth
