#include "auth/request_auth.h"

#include "core/constant_time.h"

namespace trainwatch::auth {

WriteCheck check_write(const AdminAuth& auth, std::string_view session_id, std::string_view csrf) {
  auto session = auth.session(session_id);
  if (!session) return {WriteAccess::kNoCredentials, std::nullopt};
  if (csrf.empty() || !constant_time_equal(csrf, session->csrf_token))
    return {WriteAccess::kBadCsrf, std::nullopt};
  return {WriteAccess::kAllowed, std::move(session->who)};
}

std::optional<Principal> session_reader(const AdminAuth& auth, std::string_view session_id) {
  auto session = auth.session(session_id);
  if (!session) return std::nullopt;
  return std::move(session->who);
}

}  // namespace trainwatch::auth
