#include "api/snooze_routes.h"

#include <optional>
#include <string>

#include <boost/json.hpp>

#include "core/duration.h"
#include "core/json_text.h"
#include "core/time_format.h"
#include "views/maintenance_views.h"
#include "views/write_access.h"

namespace trainwatch::api {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

json::object snooze_json(const SnoozeContext& ctx, const engine::MonitorView& view) {
  const auto until =
      views::snoozed_until(ctx.windows, view.config->name, view.config->tags, ctx.clock.system_time());
  return json::object{{"monitor", view.config->name},
                      {"snoozed", until.has_value()},
                      {"until", until ? json::value(format_rfc3339(*until)) : json::value(nullptr)}};
}

// The length asked for: {"for": "1h"}.
Result<Millis> snooze_length(const std::string& body) {
  boost::system::error_code ec;
  const json::value parsed = json::parse(body, ec);
  const json::object* object = ec ? nullptr : parsed.if_object();
  if (object == nullptr)
    return make_error("snooze.invalid", "expected a JSON object such as {\"for\": \"1h\"}");
  const json::value* length = object->if_contains("for");
  if (length == nullptr || !length->is_string())
    return make_error("snooze.invalid", "for: missing; expected a length such as \"1h\" (1m to 7d)");
  const std::string text(length->get_string());
  auto parsed_length = parse_duration(text);
  if (!parsed_length)
    return make_error("snooze.invalid",
                      "for: found '" + text.substr(0, 32) + "'; expected a length such as \"1h\"");
  return *parsed_length;
}

void snooze(const SnoozeContext& ctx, const Request& request, const Responder& respond) {
  if (!views::write_allowed(ctx.auth, request, respond, auth::Role::kEditor)) return;
  const std::string& name = request.params.at("name");
  if (!ctx.engine.monitor(name)) return respond(Response::problem(404, "no monitor named '" + name + "'"));
  auto length = snooze_length(request.body);
  if (!length) return respond(Response::problem(400, length.error().message));
  ctx.snoozes.snooze(name, *length, [ctx, name, respond](const Result<SystemTime>& done) {
    if (!done) return respond(Response::problem(views::status_for(done.error()), done.error().message));
    auto view = ctx.engine.monitor(name);
    if (!view) return respond(Response::problem(404, "no monitor named '" + name + "'"));
    respond(Response::json(200, json_text(snooze_json(ctx, *view))));
  });
}

void unsnooze(const SnoozeContext& ctx, const Request& request, const Responder& respond) {
  if (!views::write_allowed(ctx.auth, request, respond, auth::Role::kEditor)) return;
  const std::string& name = request.params.at("name");
  if (!ctx.engine.monitor(name)) return respond(Response::problem(404, "no monitor named '" + name + "'"));
  ctx.snoozes.unsnooze(name, [respond](const Status& done) {
    if (!done) return respond(Response::problem(views::status_for(done.error()), done.error().message));
    respond(Response::no_content());
  });
}

}  // namespace

void add_snooze_routes(http::Router& router, const SnoozeContext& ctx) {
  router.add(std::vector<std::string>{"GET", "HEAD"}, "/api/v1/monitors/{name}/snooze",
             [ctx](const Request& request, const Responder& respond) {
               const std::string& name = request.params.at("name");
               auto view = ctx.engine.monitor(name);
               if (!view) return respond(Response::problem(404, "no monitor named '" + name + "'"));
               respond(Response::json(200, json_text(snooze_json(ctx, *view))));
             });
  router.add("POST", "/api/v1/monitors/{name}/snooze",
             [ctx](const Request& request, const Responder& respond) { snooze(ctx, request, respond); });
  router.add("DELETE", "/api/v1/monitors/{name}/snooze",
             [ctx](const Request& request, const Responder& respond) { unsnooze(ctx, request, respond); });
}

}  // namespace trainwatch::api
