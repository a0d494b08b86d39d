#include "web/monitor_forms.h"

#include <map>
#include <string>

#include "alerting/channel_catalog.h"
#include "catalog/monitor_catalog.h"
#include "catalog/monitor_snooze.h"
#include "core/duration.h"
#include "core/json_text.h"
#include "engine/engine.h"
#include "storage/store.h"
#include "views/incident_views.h"
#include "views/write_access.h"
#include "web/dashboard_common.h"
#include "web/monitor_form.h"
#include "web/pages.h"

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

// Snooze and unsnooze (catalog/monitor_snooze.h), then back to the monitor's page, which
// says until when.
void snooze_form(const WebContext& ctx, const Request& request, const Responder& respond, bool snooze) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond, auth::Role::kEditor)) return;
  const std::string name = request.params.at("name");
  if (ctx.snoozes == nullptr || !ctx.engine.monitor(name))
    return respond(Response::problem(404, "no monitor named '" + name + "'"));
  if (!snooze) {
    return ctx.snoozes->unsnooze(name, [respond, name](const Status& done) {
      respond(done ? redirect("/monitors/" + name) : views::problem_for(done.error()));
    });
  }
  const auto length = parse_duration(form["for"]);
  if (!length) return respond(Response::problem(400, "for: expected a length such as 1h"));
  ctx.snoozes->snooze(name, *length, [respond, name](const Result<SystemTime>& done) {
    respond(done ? redirect("/monitors/" + name) : views::problem_for(done.error()));
  });
}

void delete_form(const WebContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond, auth::Role::kEditor)) return;
  ctx.catalog.remove(request.params.at("name"), [respond](const Result<std::string>& r) {
    respond(r ? redirect("/") : Response::problem(views::status_for(r.error()), r.error().message));
  });
}

// What the form offers to pick: every channel for notify, every other monitor for
// depends_on.
FormChoices choices_for(const WebContext& ctx, const std::string& self) {
  FormChoices c;
  if (ctx.channels != nullptr) {
    for (const auto& channel : ctx.channels->list()) c.channels.push_back(channel.config.name);
  }
  for (const auto& v : ctx.engine.monitors()) {
    if (v.config->name != self) c.monitors.push_back(v.config->name);
  }
  return c;
}

// The form page: the fields with `values` and `error` beside the field it names, and on
// an edit the JSON editor with `spec_text` (what was stored, or what was just posted).
void form_page(const WebContext& ctx, const Request& request, const Responder& respond, int status,
               const FormValues& values, const std::string& error, const std::string& editing,
               const std::string& spec_text = "", const std::string& json_error = "") {
  json::object m =
      layout_model(ctx, request, (editing.empty() ? "New monitor" : "Edit " + editing) + " · trainwatch");
  json::object form = monitor_form_model(values, json_error.empty() ? error : "", choices_for(ctx, editing),
                                         !editing.empty());
  const std::string csrf = m.contains("session") ? std::string(m["session"].at("csrf").as_string()) : "";
  form["csrf"] = csrf;
  form["action"] = editing.empty() ? "/monitors" : "/monitors/" + editing + "/edit";
  form["cancel"] = editing.empty() ? "/" : "/monitors/" + editing;
  m["form"] = std::move(form);
  m["editing"] = !editing.empty();
  m["name"] = editing;
  if (!editing.empty()) {
    json::object editor{{"text", spec_text}, {"csrf", csrf}, {"action", "/monitors/" + editing + "/edit"}};
    if (!json_error.empty()) editor["json_error"] = json_error;  // "" would read as true
    m["json"] = std::move(editor);
  }
  respond(html(status, render_page("monitor_form", m)));
}

void new_monitor_page(const WebContext& ctx, const Request& request, const Responder& respond) {
  if (!page_reader(ctx, request, respond, auth::Role::kEditor)) return;
  FormValues values{{"type", request.query.count("type") ? request.query.at("type") : "http"}};
  form_page(ctx, request, respond, 200, values, "", "");
}

void edit_monitor_page(const WebContext& ctx, const Request& request, const Responder& respond) {
  if (!page_reader(ctx, request, respond, auth::Role::kEditor)) return;
  const std::string name = request.params.at("name");
  auto spec = ctx.catalog.api_spec(name);
  if (!spec) {
    return respond(html(404,
                        "<!doctype html><title>Not editable</title><p>No monitor made here named that: "
                        "monitors from the config file are changed there.</p>"));
  }
  boost::system::error_code ec;
  json::value parsed = json::parse(*spec, ec);
  FormValues values = ec || !parsed.is_object() ? FormValues{} : form_from_spec(parsed.as_object());
  form_page(ctx, request, respond, 200, values, "", name, *spec);
}

int status_of(const Error& e) { return views::status_for(e); }

// The dashboard's monitor form, for every type: the fields become the API's JSON object,
// validated by the same loader. A refusal re-renders the form with what was typed and the
// error beside its field.
void create_form(const WebContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond, auth::Role::kEditor)) return;
  const json::object spec = spec_from_form(form, json::object());
  ctx.catalog.put("", json_text(spec), true, [ctx, request, respond, form](Result<std::string> r) {
    if (r) return respond(redirect("/monitors/" + *r));
    const std::string message =
        r.error().code == "monitor.exists" ? "name: " + r.error().message : r.error().message;
    form_page(ctx, request, respond, status_of(r.error()), form, message, "");
  });
}

// The edit form: the fields on the stored object (keys without a field kept), or the
// whole JSON object from the JSON editor ("spec"), replaced as PUT does.
void edit_form(const WebContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx, request, form, respond, auth::Role::kEditor)) return;
  const std::string name = request.params.at("name");
  const bool as_json = form.count("spec") != 0;
  std::string body = form["spec"];
  if (!as_json) {
    json::object base;
    if (auto stored = ctx.catalog.api_spec(name)) {
      boost::system::error_code ec;
      json::value parsed = json::parse(*stored, ec);
      if (!ec && parsed.is_object()) base = parsed.as_object();
    }
    form["name"] = name;
    body = json_text(spec_from_form(form, std::move(base)));
  }
  ctx.catalog.put(name, body, false,
                  [ctx, request, respond, form, name, as_json, body](Result<std::string> r) {
                    if (r) return respond(redirect("/monitors/" + *r));
                    if (as_json) {
                      boost::system::error_code ec;
                      json::value stored = json::parse(ctx.catalog.api_spec(name).value_or("{}"), ec);
                      const FormValues values =
                          ec || !stored.is_object() ? FormValues{} : form_from_spec(stored.as_object());
                      return form_page(ctx, request, respond, status_of(r.error()), values, "", name, body,
                                       r.error().message);
                    }
                    form_page(ctx, request, respond, status_of(r.error()), form, r.error().message, name,
                              ctx.catalog.api_spec(name).value_or(""));
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
  const std::vector<std::string> get = {"GET", "HEAD"};
  router.add(get, "/add-monitor",
             [ctx](const Request& r, const Responder& respond) { new_monitor_page(ctx, r, respond); });
  router.add(get, "/monitors/{name}/edit",
             [ctx](const Request& r, const Responder& respond) { edit_monitor_page(ctx, r, respond); });
  router.add("POST", "/monitors",
             [ctx](const Request& r, const Responder& respond) { create_form(ctx, r, respond); });
  router.add("POST", "/monitors/{name}/pause",
             [ctx](const Request& r, const Responder& respond) { pause_form(ctx, r, respond, true); });
  router.add("POST", "/monitors/{name}/resume",
             [ctx](const Request& r, const Responder& respond) { pause_form(ctx, r, respond, false); });
  router.add("POST", "/monitors/{name}/snooze",
             [ctx](const Request& r, const Responder& respond) { snooze_form(ctx, r, respond, true); });
  router.add("POST", "/monitors/{name}/unsnooze",
             [ctx](const Request& r, const Responder& respond) { snooze_form(ctx, r, respond, false); });
  router.add("POST", "/monitors/{name}/edit",
             [ctx](const Request& r, const Responder& respond) { edit_form(ctx, r, respond); });
  router.add("POST", "/monitors/{name}/delete",
             [ctx](const Request& r, const Responder& respond) { delete_form(ctx, r, respond); });
  router.add("POST", "/incidents/{id}/updates",
             [ctx](const Request& r, const Responder& respond) { incident_update_form(ctx, r, respond); });
}

}  // namespace trainwatch::web
