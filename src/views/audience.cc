#include "views/audience.h"

#include "auth/admin_token_check.h"
#include "auth/request_auth.h"
#include "views/browser_request.h"

namespace trainwatch::views {

Audience audience_of(const auth::AdminAuth* admin, const http::Request& request) {
  if (admin == nullptr || !admin->enabled()) return Audience::kAdmin;
  constexpr std::string_view kBearer = "Bearer ";
  const std::string_view authorization = request.header("authorization");
  std::optional<auth::Principal> who;
  if (authorization.rfind(kBearer, 0) == 0) {
    // A read that shows more to the right token tells a guesser whether it was right, so
    // a bearer token on a read is throttled and counted like one on a write: a source out
    // of attempts reads the public view, whatever it sends.
    who = auth::check_token(*admin, auth::CredentialKind::kBearer, authorization.substr(kBearer.size()),
                            request.remote_address)
              .who;
  } else {
    who = auth::session_reader(*admin, session_id_of(request));
  }
  if (!who) return Audience::kPublic;
  switch (who->role) {
    case auth::Role::kAdmin: return Audience::kAdmin;
    case auth::Role::kEditor: return Audience::kEditor;
    case auth::Role::kViewer: return Audience::kViewer;
  }
  return Audience::kViewer;
}

}  // namespace trainwatch::views
