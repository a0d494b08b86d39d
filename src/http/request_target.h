// Reading a request's target: the step between parsing a request and routing it, shared
// by the server (http/server.cc) and anything else that hands requests to a Router, so
// both see exactly the path and query the server would.
#pragma once

#include "http/server.h"

namespace trainwatch::http {

// Fills request.path (decoded, no query) and request.query (decoded; the last of a
// repeated key wins) from request.target. False when the target is not a valid
// origin-form URL ("/path?query"); the server answers that with 400.
bool parse_target(Request& request);

}  // namespace trainwatch::http
