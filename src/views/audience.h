// Who is reading: the Audience (core/redaction.h) of a request, by the rule that already
// guards heartbeat ping URLs (auth::may_read_secrets): an admin bearer token or a live
// dashboard session is an admin; so is everybody on a server without admin tokens (a
// single-user server has nobody to hide from).
#pragma once

#include "auth/admin_auth.h"
#include "core/redaction.h"
#include "http/server.h"

namespace trainwatch::views {

// `admin` null: no admin auth was wired in, so everybody is an admin (as above).
Audience audience_of(const auth::AdminAuth* admin, const http::Request& request);

}  // namespace trainwatch::views
