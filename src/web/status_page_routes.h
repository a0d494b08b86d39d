// Public status pages: GET /status/{slug} (HTML) and GET /api/v1/status/{slug} (JSON),
// both built from one model (web/status_page.h) and cached together for kStatusPageTtl,
// so a burst of visitors costs one build. A reload's new set shows at once: the set's
// generation is part of the cache key.
#pragma once

#include "http/server.h"
#include "web/web_context.h"

namespace trainwatch::web {

void add_status_page_routes(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
