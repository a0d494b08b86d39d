#include "auth/request_auth.h"

#include "auth/form.h"
#include "core/constant_time.h"

namespace trainwatch::auth {
namespace {
constexpr std::string_view kBearer = "Bearer ";
}  // namespace

WriteCheck check_write(const AdminAuth& auth, std::string_view authorization, std::string_view cookie_header,
                       std::string_view csrf) {
  if (authorization.rfind(kBearer, 0) == 0) {
    auto who = auth.bearer(authorization.substr(kBearer.size()));
    if (!who) return {WriteAccess::kBadToken, std::nullopt};
    return {WriteAccess::kAllowed, std::move(who)};
  }
  auto session = auth.session(cookie_value(cookie_header, kSessionCookie));
  if (!session) return {WriteAccess::kNoCredentials, std::nullopt};
  if (csrf.empty() || !constant_time_equal(csrf, session->csrf_token))
    return {WriteAccess::kBadCsrf, std::nullopt};
  return {WriteAccess::kAllowed, std::move(session->who)};
}

std::optional<Principal> reader(const AdminAuth& auth, std::string_view authorization,
                                std::string_view cookie_header) {
  if (authorization.rfind(kBearer, 0) == 0) return auth.bearer(authorization.substr(kBearer.size()));
  auto session = auth.session(cookie_value(cookie_header, kSessionCookie));
  if (!session) return std::nullopt;
  return std::move(session->who);
}

}  // namespace trainwatch::auth
