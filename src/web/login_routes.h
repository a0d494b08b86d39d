// The dashboard's session: GET /login (the form), POST /login (an admin token in, a
// session cookie out) and POST /logout. Before a session exists the form is a pre-login
// session kept on the server (auth/login_forms.h); a post from another origin is refused
// (auth/request_origin.h); a source out of attempts gets 429 without its token being
// looked at (auth/guess_throttle.h). Cookies are HttpOnly, SameSite=Strict, and behind
// an HTTPS proxy (X-Forwarded-Proto) Secure and named with the `__Host-` prefix.
#pragma once

#include "http/server.h"
#include "web/web_context.h"

namespace trainwatch::web {

void add_login_routes(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
