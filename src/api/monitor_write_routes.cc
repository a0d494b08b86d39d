#include "api/monitor_write_routes.h"

#include <boost/json.hpp>

namespace trainwatch::api {
namespace {

using http::Request;
using http::Responder;
using http::Response;

bool allowed(const WriteContext& ctx, const Request& request, const Responder& respond) {
  return write_allowed(ctx.auth, request, respond);
}

void answer(const Responder& respond, const Result<std::string>& result, int ok_status) {
  if (!result) return respond(Response::problem(status_for(result.error()), result.error().message));
  if (ok_status == 204) {
    Response r;
    r.status = 204;
    r.body = "";
    return respond(std::move(r));
  }
  Response r = Response::json(ok_status, boost::json::serialize(boost::json::object{{"name", *result}}));
  r.headers.emplace_back("Location", "/api/v1/monitors/" + *result);
  respond(std::move(r));
}

void pause(const WriteContext& ctx, const Request& request, Responder respond, bool paused) {
  if (!allowed(ctx, request, respond)) return;
  const std::string name = request.params.at("name");
  ctx.engine.set_paused(name, paused, [respond, name, paused](bool found) {
    if (!found) return respond(Response::problem(404, "no monitor named '" + name + "'"));
    respond(Response::json(200, boost::json::serialize(
                                    boost::json::object{{"name", name}, {"status", paused ? "paused" : "pending"}})));
  });
}

}  // namespace

void add_monitor_write_routes(http::Router& router, const WriteContext& ctx) {
  router.add("POST", "/api/v1/monitors", [ctx](const Request& request, Responder respond) {
    if (!allowed(ctx, request, respond)) return;
    ctx.catalog.put("", request.body, true, [respond](Result<std::string> r) { answer(respond, r, 201); });
  });
  router.add("PUT", "/api/v1/monitors/{name}", [ctx](const Request& request, Responder respond) {
    if (!allowed(ctx, request, respond)) return;
    ctx.catalog.put(request.params.at("name"), request.body, false, [respond](Result<std::string> r) { answer(respond, r, 200); });
  });
  router.add("DELETE", "/api/v1/monitors/{name}", [ctx](const Request& request, Responder respond) {
    if (!allowed(ctx, request, respond)) return;
    ctx.catalog.remove(request.params.at("name"), [respond](Result<std::string> r) { answer(respond, r, 204); });
  });
  router.add("POST", "/api/v1/monitors/{name}/pause",
             [ctx](const Request& request, Responder respond) { pause(ctx, request, std::move(respond), true); });
  router.add("POST", "/api/v1/monitors/{name}/resume",
             [ctx](const Request& request, Responder respond) { pause(ctx, request, std::move(respond), false); });
}

}  // namespace trainwatch::api
