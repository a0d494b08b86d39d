// Who is reading: the Audience (core/redaction.h) of a request, from the role of its
// bearer token or live dashboard session (auth/request_auth.h), one audience per role,
// anyone else the public view. Everybody is an admin on a server without admin tokens or
// users (a single-user server has nobody to hide from).
#pragma once

#include "auth/admin_auth.h"
#include "core/redaction.h"
#include "http/server.h"

namespace trainwatch::views {

// `admin` null: no admin auth was wired in, so everybody is an admin (as above).
Audience audience_of(const auth::AdminAuth* admin, const http::Request& request);

}  // namespace trainwatch::views
