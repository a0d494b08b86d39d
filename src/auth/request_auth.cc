#include "auth/request_auth.h"

#include "core/constant_time.h"

namespace trainwatch::auth {

WriteAccess check_write(const AdminAuth& auth, std::string_view session_id, std::string_view csrf) {
  auto session = auth.session(session_id);
  if (!session) return WriteAccess::kNoCredentials;
  if (csrf.empty() || !constant_time_equal(csrf, session->csrf_token)) return WriteAccess::kBadCsrf;
  return WriteAccess::kAllowed;
}

bool may_read_secrets(const AdminAuth& auth, std::string_view session_id) {
  return !auth.enabled() || auth.session(session_id).has_value();
}

}  // namespace trainwatch::auth
