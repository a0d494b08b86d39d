#include "web/status_page_routes.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>

#include "catalog/status_page_set.h"
#include "core/json_text.h"
#include "http/fresh_cache.h"
#include "web/atom_feed.h"
#include "web/dashboard_common.h"
#include "web/status_feed.h"
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

// A status page as the bytes sent, both forms, and the model they came from, which the
// feed is written from per request: its links name the host the reader asked.
struct BuiltStatusPage {
  json::object model;
  std::string json;
  std::string html;
};
using StatusPageCache = http::FreshCache<BuiltStatusPage>;

enum class PageForm { kHtml, kJson, kAtom };

// A Host a browser could have sent: a name or address and a port, nothing that could
// step out of a URL's authority.
bool plain_host(std::string_view host) {
  if (host.empty() || host.size() > 255) return false;
  return std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == ':' || c == '[' ||
           c == ']';
  });
}

// Where the reader reached us, for the feed's absolute links: https when a proxy in
// front says so. Built per request, never cached, so one reader's Host is no other's.
std::string base_url_of(const Request& request) {
  const std::string_view host = request.header("host");
  if (!plain_host(host)) return "";  // the links stay relative
  const std::string scheme = request.header("x-forwarded-proto") == "https" ? "https" : "http";
  return scheme + "://" + std::string(host);
}

Response page_response(const StatusPageCache::Value& entry, PageForm form, const std::string& base_url) {
  if (form == PageForm::kAtom) {
    Response r = Response::text(200, atom_xml(status_feed(entry->model, base_url)));
    r.content_type = "application/atom+xml; charset=utf-8";
    return r;
  }
  // The cached bytes go out as they are, shared (aliasing the cache entry), not copied:
  // the page is 136 KB with 20 monitors, and the copy per request was most of its cost.
  const bool as_json = form == PageForm::kJson;
  Response r = as_json ? Response::json(200, "") : html(200, "");
  r.shared_body = std::shared_ptr<const std::string>(entry, as_json ? &entry->json : &entry->html);
  return r;
}

void status_page(const WebContext& ctx, StatusPageCache& cache, const Request& request,
                 const Responder& respond, PageForm form) {
  std::shared_ptr<const StatusPageConfig> page = ctx.status_pages->find(request.params.at("slug"));
  if (page == nullptr)
    return respond(Response::problem(404, "no status page '" + request.params.at("slug") + "'"));
  const std::string key = page->slug + '#' + std::to_string(ctx.status_pages->generation());
  // One form for every reader, an admin included: what the public may see.
  auto build = [ctx, page](Audience /*always kPublic*/) -> Result<BuiltStatusPage> {
    auto model = build_status_page(*page, ctx.engine, ctx.store, ctx.clock.system_time());
    if (!model) return model.error();
    std::string json = json_text(*model);
    std::string html = render_status_page_html(*model);
    return BuiltStatusPage{std::move(*model), std::move(json), std::move(html)};
  };
  std::string base_url = form == PageForm::kAtom ? base_url_of(request) : std::string();
  cache.get(Audience::kPublic, key, build,
            [respond, form, base_url = std::move(base_url)](Result<StatusPageCache::Value> built) {
              if (!built) {
                Response r =
                    Response::problem(503, "the status page cannot be read: " + built.error().message);
                r.headers.emplace_back("Retry-After", "1");
                return respond(std::move(r));
              }
              respond(page_response(*built, form, base_url));
            });
}

}  // namespace

void add_status_page_routes(http::Router& router, const WebContext& ctx) {
  const std::vector<std::string> get = {"GET", "HEAD"};
  const engine::Engine& engine = ctx.engine;
  auto cache = std::make_shared<StatusPageCache>(ctx.clock, kStatusPageMaxAge,
                                                 [&engine] { return engine.state_generation(); });
  router.add(get, "/status/{slug}", [ctx, cache](const Request& r, const Responder& respond) {
    status_page(ctx, *cache, r, respond, PageForm::kHtml);
  });
  // A feed reader's subscription to the page: the same public copy, as Atom.
  router.add(get, "/status/{slug}/feed.atom", [ctx, cache](const Request& r, const Responder& respond) {
    status_page(ctx, *cache, r, respond, PageForm::kAtom);
  });
  router.add(get, "/api/v1/status/{slug}", [ctx, cache](const Request& r, const Responder& respond) {
    status_page(ctx, *cache, r, respond, PageForm::kJson);
  });
}

}  // namespace trainwatch::web
