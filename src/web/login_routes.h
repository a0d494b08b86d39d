// The dashboard's session: GET /login (the form), POST /login (an admin token in, a
// session cookie out) and POST /logout. Before a session exists the form is guarded by a
// double-submit CSRF cookie; an address out of attempts gets 429 without its token being
// looked at (auth/admin_auth.h). Cookies are HttpOnly, SameSite=Strict, and Secure
// behind an HTTPS proxy (X-Forwarded-Proto).
#pragma once

#include "http/server.h"
#include "web/routes.h"

namespace trainwatch::web {

void add_login_routes(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
