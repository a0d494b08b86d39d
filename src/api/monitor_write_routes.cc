#include "api/monitor_write_routes.h"
#include "core/json_text.h"

#include <boost/json.hpp>

namespace trainwatch::api {
namespace {

using http::Request;
using http::Responder;
using http::Response;

bool allowed(const WriteContext& ctx, const Request& request, const Responder& respond) {
  return views::write_allowed(ctx.auth, request, respond, auth::Role::kEditor).has_value();
}

// A heartbeat monitor's ping URL, for the admin who just created or replaced it: the one
// person who needs it now (GET /api/v1/monitors/{name} shows it to admins again). The
// host is the one this client reached, so the URL can be pasted as is. Empty for others.
std::string ping_url(const WriteContext& ctx, const std::string& name, const std::string& host) {
  auto view = ctx.engine.monitor(name);
  if (!view) return "";
  const auto* hb = std::get_if<HeartbeatSpec>(&view->config->spec);
  if (hb == nullptr || hb->token.empty()) return "";
  return (host.empty() ? std::string() : "http://" + host) + "/ping/" + hb->token;
}

void answer(const Responder& respond, const Result<std::string>& result, int ok_status,
            const std::string& url = "") {
  if (!result) return respond(Response::problem(views::status_for(result.error()), result.error().message));
  if (ok_status == 204) return respond(Response::no_content());
  boost::json::object body{{"name", *result}};
  if (!url.empty()) body["ping_url"] = url;
  Response r = Response::json(ok_status, json_text(body));
  r.headers.emplace_back("Location", "/api/v1/monitors/" + *result);
  respond(std::move(r));
}

void pause(const WriteContext& ctx, const Request& request, const Responder& respond, bool paused) {
  if (!allowed(ctx, request, respond)) return;
  const std::string name = request.params.at("name");
  ctx.engine.set_paused(name, paused, [respond, name, paused](const Status& stored) {
    if (!stored) return respond(views::problem_for(stored.error()));
    respond(Response::json(
        200, json_text(boost::json::object{{"name", name}, {"status", paused ? "paused" : "pending"}})));
  });
}

}  // namespace

void add_monitor_write_routes(http::Router& router, const WriteContext& ctx) {
  router.add("POST", "/api/v1/monitors", [ctx](const Request& request, const Responder& respond) {
    if (!allowed(ctx, request, respond)) return;
    ctx.catalog.put("", request.body, true,
                    [ctx, respond, host = std::string(request.header("host"))](Result<std::string> r) {
                      answer(respond, r, 201, r ? ping_url(ctx, *r, host) : "");
                    });
  });
  router.add("PUT", "/api/v1/monitors/{name}", [ctx](const Request& request, const Responder& respond) {
    if (!allowed(ctx, request, respond)) return;
    ctx.catalog.put(request.params.at("name"), request.body, false,
                    [ctx, respond, host = std::string(request.header("host"))](Result<std::string> r) {
                      answer(respond, r, 200, r ? ping_url(ctx, *r, host) : "");
                    });
  });
  router.add("DELETE", "/api/v1/monitors/{name}", [ctx](const Request& request, const Responder& respond) {
    if (!allowed(ctx, request, respond)) return;
    ctx.catalog.remove(request.params.at("name"),
                       [respond](const Result<std::string>& r) { answer(respond, r, 204); });
  });
  router.add("POST", "/api/v1/monitors/{name}/pause",
             [ctx](const Request& request, const Responder& respond) { pause(ctx, request, respond, true); });
  router.add(
      "POST", "/api/v1/monitors/{name}/resume",
      [ctx](const Request& request, const Responder& respond) { pause(ctx, request, respond, false); });
}

}  // namespace trainwatch::api
