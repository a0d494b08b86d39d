#include "web/monitor_forms.h"

#include <map>
#include <string>

#include "views/write_access.h"
#include "web/dashboard_common.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

void pause_form(const WebContext& ctx, const Request& request, Responder respond, bool paused) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond)) return;
  const std::string name = request.params.at("name");
  ctx.engine.set_paused(name, paused, [respond, name](bool found) {
    respond(found ? redirect("/monitors/" + name)
                  : Response::problem(404, "no monitor named '" + name + "'"));
  });
}

void delete_form(const WebContext& ctx, const Request& request, Responder respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond)) return;
  ctx.catalog.remove(request.params.at("name"), [respond](Result<std::string> r) {
    respond(r ? redirect("/") : Response::problem(views::status_for(r.error()), r.error().message));
  });
}

// The dashboard's "new monitor" form: a few fields turned into the API's JSON object, so
// both are validated by the same loader.
void create_form(const WebContext& ctx, const Request& request, Responder respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond)) return;
  json::object spec{{"name", form["name"]},
                    {"type", form["type"]},
                    {"interval", form["interval"].empty() ? "60s" : form["interval"]}};
  if (form["type"] == "tcp") {
    const std::string& target = form["target"];
    const auto colon = target.rfind(':');
    spec["host"] = target.substr(0, colon);
    spec["port"] = colon == std::string::npos ? json::value("") : json::value(target.substr(colon + 1));
  } else {
    spec["url"] = form["target"];
  }
  ctx.catalog.put("", json::serialize(spec), true, [respond](Result<std::string> r) {
    respond(r ? redirect("/monitors/" + *r)
              : Response::problem(views::status_for(r.error()), r.error().message));
  });
}

// The dashboard's edit form: an API monitor's whole JSON object, replaced as PUT does.
void edit_form(const WebContext& ctx, const Request& request, Responder respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond)) return;
  ctx.catalog.put(request.params.at("name"), form["spec"], false, [respond](Result<std::string> r) {
    respond(r ? redirect("/monitors/" + *r)
              : Response::problem(views::status_for(r.error()), r.error().message));
  });
}

}  // namespace

void add_monitor_forms(http::Router& router, const WebContext& ctx) {
  router.add("POST", "/monitors",
             [ctx](const Request& r, Responder respond) { create_form(ctx, r, std::move(respond)); });
  router.add("POST", "/monitors/{name}/pause",
             [ctx](const Request& r, Responder respond) { pause_form(ctx, r, std::move(respond), true); });
  router.add("POST", "/monitors/{name}/resume",
             [ctx](const Request& r, Responder respond) { pause_form(ctx, r, std::move(respond), false); });
  router.add("POST", "/monitors/{name}/edit",
             [ctx](const Request& r, Responder respond) { edit_form(ctx, r, std::move(respond)); });
  router.add("POST", "/monitors/{name}/delete",
             [ctx](const Request& r, Responder respond) { delete_form(ctx, r, std::move(respond)); });
}

}  // namespace trainwatch::web
