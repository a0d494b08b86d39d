#include "web/status_page_routes.h"

#include <memory>
#include <string>

#include "core/json_text.h"
#include "http/fresh_cache.h"
#include "web/dashboard_common.h"
#include "web/status_page.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

// A status page shows every change of state the engine had applied when it was asked for
// (a monitor down or up, an incident opened or closed, a monitor removed: the cache's
// generation), and its uptime, durations and incident updates are at most this much older
// than the request: a burst of visitors costs one build.
constexpr Millis kStatusPageMaxAge{5'000};

// The page of that slug in the current set; it keeps that set alive while in use.
std::shared_ptr<const StatusPageConfig> find_page(const WebContext& ctx, const std::string& slug) {
  auto pages = ctx.status_pages->get();
  for (const auto& p : *pages) {
    if (p.slug == slug) return std::shared_ptr<const StatusPageConfig>(pages, &p);
  }
  return nullptr;
}

// A status page as the bytes sent, both forms.
struct BuiltStatusPage {
  std::string json;
  std::string html;
};
using StatusPageCache = http::FreshCache<BuiltStatusPage>;

void status_page(const WebContext& ctx, StatusPageCache& cache, const Request& request,
                 const Responder& respond, bool as_json) {
  std::shared_ptr<const StatusPageConfig> page = find_page(ctx, request.params.at("slug"));
  if (page == nullptr)
    return respond(Response::problem(404, "no status page '" + request.params.at("slug") + "'"));
  const std::string key = page->slug + '#' + std::to_string(ctx.status_pages->generation());
  // One form for every reader, an admin included: what the public may see.
  auto build = [ctx, page](Audience /*always kPublic*/) -> Result<BuiltStatusPage> {
    auto model = build_status_page(*page, ctx.engine, ctx.store, ctx.clock.system_time());
    if (!model) return model.error();
    return BuiltStatusPage{json_text(*model), render_status_page_html(*model)};
  };
  cache.get(Audience::kPublic, key, build, [respond, as_json](Result<StatusPageCache::Value> built) {
    if (!built) {
      Response r = Response::problem(503, "the status page cannot be read: " + built.error().message);
      r.headers.emplace_back("Retry-After", "1");
      return respond(std::move(r));
    }
    // The cached bytes go out as they are, shared (aliasing the cache entry), not copied:
    // the page is 136 KB with 20 monitors, and the copy per request was most of its cost.
    const StatusPageCache::Value& entry = *built;
    Response r = as_json ? Response::json(200, "") : html(200, "");
    r.shared_body = std::shared_ptr<const std::string>(entry, as_json ? &entry->json : &entry->html);
    respond(std::move(r));
  });
}

}  // namespace

void add_status_page_routes(http::Router& router, const WebContext& ctx) {
  const std::vector<std::string> get = {"GET", "HEAD"};
  const engine::Engine& engine = ctx.engine;
  auto cache = std::make_shared<StatusPageCache>(ctx.clock, kStatusPageMaxAge,
                                                 [&engine] { return engine.state_generation(); });
  router.add(get, "/status/{slug}", [ctx, cache](const Request& r, const Responder& respond) {
    status_page(ctx, *cache, r, respond, false);
  });
  router.add(get, "/api/v1/status/{slug}", [ctx, cache](const Request& r, const Responder& respond) {
    status_page(ctx, *cache, r, respond, true);
  });
}

}  // namespace trainwatch::web
