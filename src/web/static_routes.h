// Public static files: GET /static/{rest...} answers the assets embedded at build time
// (web/assets.h), cacheable for an hour; anything else under /static/ is a 404.
#pragma once

#include "http/server.h"

namespace trainwatch::web {

void add_static_routes(http::Router& router);

}  // namespace trainwatch::web
