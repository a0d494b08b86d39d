// Whether a write request may proceed: either `Authorization: Bearer <admin token>` (API
// clients; no cookie, so no CSRF risk), or a live session cookie together with that
// session's CSRF token in `X-CSRF-Token` or the form's `csrf` field (the dashboard).
#pragma once

#include <string_view>

#include "auth/admin_auth.h"

namespace trainwatch::auth {

enum class WriteAccess { kAllowed, kNoCredentials, kBadToken, kBadCsrf };

WriteAccess check_write(const AdminAuth& auth, std::string_view authorization, std::string_view cookie_header,
                        std::string_view csrf);

// Whether a request may read secrets (heartbeat ping URLs): an admin bearer token or a
// live session; or anybody while no admin token is configured (a single-user server).
bool may_read_secrets(const AdminAuth& auth, std::string_view authorization, std::string_view cookie_header);

inline constexpr const char* kSessionCookie = "tw_session";

}  // namespace trainwatch::auth
