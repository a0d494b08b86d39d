#include "web/monitor_forms.h"

#include <map>
#include <string>

#include "core/json_text.h"
#include "views/incident_views.h"
#include "views/write_access.h"
#include "web/dashboard_common.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

void pause_form(const WebContext& ctx, const Request& request, const Responder& respond, bool paused) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond, auth::Role::kEditor)) return;
  const std::string name = request.params.at("name");
  ctx.engine.set_paused(name, paused, [respond, name](const Status& stored) {
    respond(stored ? redirect("/monitors/" + name) : views::problem_for(stored.error()));
  });
}

void delete_form(const WebContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond, auth::Role::kEditor)) return;
  ctx.catalog.remove(request.params.at("name"), [respond](const Result<std::string>& r) {
    respond(r ? redirect("/") : Response::problem(views::status_for(r.error()), r.error().message));
  });
}

// The dashboard's "new monitor" form: a few fields turned into the API's JSON object, so
// both are validated by the same loader.
void create_form(const WebContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond, auth::Role::kEditor)) return;
  json::object spec{{"name", form["name"]},
                    {"type", form["type"]},
                    {"interval", form["interval"].empty() ? "60s" : form["interval"]}};
  if (form["type"] == "tcp" || form["type"] == "tls") {
    const std::string& target = form["target"];
    const auto colon = target.rfind(':');
    spec["host"] = target.substr(0, colon);
    spec["port"] = colon == std::string::npos ? json::value("") : json::value(target.substr(colon + 1));
  } else {
    spec["url"] = form["target"];
  }
  ctx.catalog.put("", json_text(spec), true, [respond](Result<std::string> r) {
    respond(r ? redirect("/monitors/" + *r)
              : Response::problem(views::status_for(r.error()), r.error().message));
  });
}

// The dashboard's edit form: an API monitor's whole JSON object, replaced as PUT does.
void edit_form(const WebContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond, auth::Role::kEditor)) return;
  ctx.catalog.put(request.params.at("name"), form["spec"], false, [respond](Result<std::string> r) {
    respond(r ? redirect("/monitors/" + *r)
              : Response::problem(views::status_for(r.error()), r.error().message));
  });
}

// The incident timeline's "post an update" form: the same checks as the API's POST
// /api/v1/incidents/{id}/updates, then back to the incident's monitor page.
void incident_update_form(const WebContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond, auth::Role::kEditor)) return;
  const std::string& id_text = request.params.at("id");
  const auto parsed_id = views::parse_incident_id(id_text);
  if (!parsed_id) return respond(Response::problem(404, "no incident '" + id_text.substr(0, 32) + "'"));
  const int64_t id = *parsed_id;
  auto incident = ctx.store.incident(id);
  if (!incident)
    return respond(Response::problem(503, "incidents cannot be read: " + incident.error().message));
  if (!incident->has_value()) return respond(Response::problem(404, "no incident " + std::to_string(id)));
  auto posted = views::check_update(form["status"], form["text"]);
  if (!posted) return respond(Response::problem(400, posted.error().message));
  IncidentUpdate update{0, id, ctx.clock.system_time(), posted->status, std::move(posted->text)};
  const std::string back = "/monitors/" + (*incident)->monitor + "#incident-" + std::to_string(id);
  const bool queued = ctx.store.write(AddIncidentUpdate{std::move(update)}, [respond, back](const Status& s) {
    respond(s ? redirect(back)
              : Response::problem(views::status_for(s.error()),
                                  "the update was not saved: " + s.error().message));
  });
  if (!queued) respond(Response::problem(503, "the store's write queue is full; try again"));
}

}  // namespace

void add_monitor_forms(http::Router& router, const WebContext& ctx) {
  router.add("POST", "/monitors",
             [ctx](const Request& r, const Responder& respond) { create_form(ctx, r, respond); });
  router.add("POST", "/monitors/{name}/pause",
             [ctx](const Request& r, const Responder& respond) { pause_form(ctx, r, respond, true); });
  router.add("POST", "/monitors/{name}/resume",
             [ctx](const Request& r, const Responder& respond) { pause_form(ctx, r, respond, false); });
  router.add("POST", "/monitors/{name}/edit",
             [ctx](const Request& r, const Responder& respond) { edit_form(ctx, r, respond); });
  router.add("POST", "/monitors/{name}/delete",
             [ctx](const Request& r, const Responder& respond) { delete_form(ctx, r, respond); });
  router.add("POST", "/incidents/{id}/updates",
             [ctx](const Request& r, const Responder& respond) { incident_update_form(ctx, r, respond); });
}

}  // namespace trainwatch::web
