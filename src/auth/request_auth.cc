#include "auth/request_auth.h"

#include "auth/form.h"
#include "auth/sha256.h"
#include "core/constant_time.h"

namespace trainwatch::auth {

WriteAccess check_write(const AdminAuth& auth, std::string_view authorization, std::string_view cookie_header,
                        std::string_view csrf) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.rfind(kBearer, 0) == 0) {
    return auth.token_valid(authorization.substr(kBearer.size())) ? WriteAccess::kAllowed
                                                                  : WriteAccess::kBadToken;
  }
  auto session = auth.session(cookie_value(cookie_header, kSessionCookie));
  if (!session) return WriteAccess::kNoCredentials;
  if (csrf.empty() || !constant_time_equal(csrf, session->csrf_token)) return WriteAccess::kBadCsrf;
  return WriteAccess::kAllowed;
}

bool may_read_secrets(const AdminAuth& auth, std::string_view authorization, std::string_view cookie_header) {
  if (!auth.enabled()) return true;
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.rfind(kBearer, 0) == 0) return auth.token_valid(authorization.substr(kBearer.size()));
  return auth.session(cookie_value(cookie_header, kSessionCookie)).has_value();
}

}  // namespace trainwatch::auth
