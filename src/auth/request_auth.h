// Who a request acts for, from its credentials: `Authorization: Bearer <token>` (API
// clients; no cookie, so no CSRF risk), or a live session cookie, which for a write must
// come with that session's CSRF token in `X-CSRF-Token` or the form's `csrf` field (the
// dashboard).
#pragma once

#include <optional>
#include <string_view>

#include "auth/admin_auth.h"

namespace trainwatch::auth {

enum class WriteAccess { kAllowed, kNoCredentials, kBadToken, kBadCsrf };

struct WriteCheck {
  WriteAccess access = WriteAccess::kNoCredentials;
  std::optional<Principal> who;  // set when kAllowed
};

WriteCheck check_write(const AdminAuth& auth, std::string_view authorization, std::string_view cookie_header,
                       std::string_view csrf);

// Who reads: the principal of a valid bearer token or a live session; nullopt for anyone
// else (the public).
std::optional<Principal> reader(const AdminAuth& auth, std::string_view authorization,
                                std::string_view cookie_header);

inline constexpr const char* kSessionCookie = "tw_session";

}  // namespace trainwatch::auth
