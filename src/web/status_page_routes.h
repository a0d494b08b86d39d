// Public status pages: GET /status/{slug} (HTML), GET /api/v1/status/{slug} (JSON) and
// GET /status/{slug}/feed.atom (Atom, web/status_feed.h), all from one model
// (web/status_page.h) cached for kStatusPageMaxAge, so a burst of visitors or feed readers
// costs one build. A reload's new set shows at once: the set's generation is part of the
// cache key.
#pragma once

#include "http/server.h"
#include "web/web_context.h"

namespace trainwatch::web {

void add_status_page_routes(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
