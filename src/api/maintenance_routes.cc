#include "api/maintenance_routes.h"

#include <boost/json.hpp>

#include "core/json_text.h"
#include "views/maintenance_views.h"
#include "views/write_access.h"

namespace trainwatch::api {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

void list(const MaintenanceContext& ctx, const Responder& respond) {
  const SystemTime now = ctx.clock.system_time();
  json::array windows;
  // At most kMaxApiWindows plus the file's: small enough for one answer.
  for (const auto& w : ctx.catalog.list()) windows.push_back(views::window_json(w, now));
  respond(Response::json(200, json_text(json::object{{"windows", std::move(windows)}})));
}

void create(const MaintenanceContext& ctx, const Request& request, const Responder& respond) {
  if (!views::write_allowed(ctx.auth, request, respond, auth::Role::kEditor)) return;
  ctx.catalog.create(request.body, [ctx, respond](Result<std::string> r) {
    if (!r) return respond(Response::problem(views::status_for(r.error()), r.error().message));
    // Answer with the window as listed, so the client sees how it was read.
    json::object body{{"id", *r}};
    for (const auto& w : ctx.catalog.list()) {
      if (w.id == *r) body = views::window_json(w, ctx.clock.system_time());
    }
    Response response = Response::json(201, json_text(body));
    response.headers.emplace_back("Location", "/api/v1/maintenance/" + *r);
    respond(std::move(response));
  });
}

void remove(const MaintenanceContext& ctx, const Request& request, const Responder& respond) {
  if (!views::write_allowed(ctx.auth, request, respond, auth::Role::kEditor)) return;
  ctx.catalog.remove(request.params.at("id"), [respond](const Result<std::string>& r) {
    if (!r) return respond(Response::problem(views::status_for(r.error()), r.error().message));
    respond(Response::no_content());
  });
}

}  // namespace

void add_maintenance_routes(http::Router& router, const MaintenanceContext& ctx) {
  router.add(std::vector<std::string>{"GET", "HEAD"}, "/api/v1/maintenance",
             [ctx](const Request&, const Responder& respond) { list(ctx, respond); });
  router.add("POST", "/api/v1/maintenance",
             [ctx](const Request& request, const Responder& respond) { create(ctx, request, respond); });
  router.add("DELETE", "/api/v1/maintenance/{id}",
             [ctx](const Request& request, const Responder& respond) { remove(ctx, request, respond); });
}

}  // namespace trainwatch::api
