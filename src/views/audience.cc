#include "views/audience.h"

#include "auth/request_auth.h"

namespace trainwatch::views {

Audience audience_of(const auth::AdminAuth* admin, const http::Request& request) {
  if (admin == nullptr) return Audience::kAdmin;
  const std::string_view authorization = request.header("authorization");
  const bool presents_token = admin->enabled() && authorization.rfind("Bearer ", 0) == 0;
  // A read that shows more to the right token tells a guesser whether it was right, so a
  // bearer token on a read is throttled and counted like one on a write: an address out
  // of attempts reads the public view, whatever it sends.
  if (presents_token && admin->throttled(request.remote_address)) return Audience::kPublic;
  if (!admin->enabled()) return Audience::kAdmin;
  if (auto who = auth::reader(*admin, authorization, request.header("cookie"))) {
    return auth::allows(who->role, auth::Role::kEditor) ? Audience::kAdmin : Audience::kViewer;
  }
  if (presents_token) admin->record_failure(request.remote_address);
  return Audience::kPublic;
}

}  // namespace trainwatch::views
