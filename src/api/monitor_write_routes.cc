#include "api/monitor_write_routes.h"

#include <boost/json.hpp>

#include "auth/request_auth.h"

namespace trainwatch::api {
namespace {

using http::Request;
using http::Responder;
using http::Response;

// Refuses the request (and returns false) unless it may write.
bool allowed(const WriteContext& ctx, const Request& request, const Responder& respond) {
  switch (auth::check_write(ctx.auth, request.header("authorization"), request.header("cookie"),
                            request.header("x-csrf-token"))) {
    case auth::WriteAccess::kAllowed: return true;
    case auth::WriteAccess::kNoCredentials: {
      Response r = Response::problem(401, "this needs an admin token: Authorization: Bearer <token>");
      r.headers.emplace_back("WWW-Authenticate", "Bearer");
      respond(std::move(r));
      return false;
    }
    case auth::WriteAccess::kBadToken: respond(Response::problem(403, "that is not an admin token")); return false;
    case auth::WriteAccess::kBadCsrf: respond(Response::problem(403, "the CSRF token is missing or wrong for this session")); return false;
  }
  return false;
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

int status_for(const Error& error) {
  if (error.code == "monitor.invalid") return 400;
  if (error.code == "monitor.not_found") return 404;
  if (error.code == "monitor.exists" || error.code == "monitor.read_only") return 409;
  return 503;
}

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
