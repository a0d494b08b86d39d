#include "api/incident_routes.h"

#include <boost/json.hpp>

#include <string>

#include "core/json_text.h"
#include "core/time_format.h"
#include "storage/store_errors.h"
#include "views/audience.h"
#include "views/incident_views.h"
#include "views/json_views.h"
#include "views/write_access.h"

namespace trainwatch::api {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

// The {id} of the path as a positive number; answers 404 (no incident can have that id)
// and returns nullopt otherwise.
std::optional<int64_t> incident_id(const Request& request, const Responder& respond) {
  const std::string& text = request.params.at("id");
  auto id = views::parse_incident_id(text);
  if (!id) {
    respond(Response::problem(404,
                              "no incident '" + text.substr(0, 32) + "'; incident ids are positive numbers"));
  }
  return id;
}

void get_incident(const IncidentContext& ctx, const Request& request, const Responder& respond) {
  auto id = incident_id(request, respond);
  if (!id) return;
  auto incident = ctx.store.incident(*id);
  if (!incident)
    return respond(Response::problem(503, "incidents cannot be read: " + incident.error().message));
  if (!incident->has_value()) return respond(Response::problem(404, "no incident " + std::to_string(*id)));
  auto updates = ctx.store.incident_updates({*id});
  if (!updates) return respond(Response::problem(503, "updates cannot be read: " + updates.error().message));
  json::object out = views::incident_json(**incident, views::audience_of(&ctx.auth, request));
  json::array items;
  if (auto it = updates->find(*id); it != updates->end()) {
    for (const IncidentUpdate& u : it->second) items.push_back(views::incident_update_json(u));
  }
  out["updates"] = std::move(items);
  respond(Response::json(200, json_text(out)));
}

void post_update(const IncidentContext& ctx, const Request& request, const Responder& respond) {
  if (!views::write_allowed(ctx.auth, request, respond, auth::Role::kEditor)) return;
  auto id = incident_id(request, respond);
  if (!id) return;
  auto posted = views::parse_update_body(request.body);
  if (!posted) return respond(Response::problem(400, posted.error().message));
  IncidentUpdate update;
  update.incident_id = *id;
  update.at = ctx.clock.system_time();
  update.status = posted->status;
  update.text = std::move(posted->text);
  json::object body = views::incident_update_json(update);
  body.erase("id");  // the store picks it; GET of the incident shows it
  body["incident_id"] = *id;
  const std::string answer = json_text(body);
  // The store checks inside the write's transaction that the incident exists and has room
  // (store.h: AddIncidentUpdate), so no read is needed here first.
  const bool queued = ctx.store.write(
      AddIncidentUpdate{std::move(update)}, [respond, answer, incident = *id](const Status& status) {
        if (!status) {
          const Error& e = status.error();
          if (e.code == store_error::kNotFound)
            return respond(Response::problem(404, "no incident " + std::to_string(incident)));
          return respond(Response::problem(views::status_for(e), "the update was not saved: " + e.message));
        }
        Response r = Response::json(201, answer);
        r.headers.emplace_back("Location", "/api/v1/incidents/" + std::to_string(incident));
        respond(std::move(r));
      });
  if (!queued) respond(Response::problem(503, "the store's write queue is full; try again"));
}

}  // namespace

void add_incident_routes(http::Router& router, const IncidentContext& ctx) {
  router.add(std::vector<std::string>{"GET", "HEAD"}, "/api/v1/incidents/{id}",
             [ctx](const Request& r, const Responder& respond) { get_incident(ctx, r, respond); });
  router.add("POST", "/api/v1/incidents/{id}/updates",
             [ctx](const Request& r, const Responder& respond) { post_update(ctx, r, respond); });
}

}  // namespace trainwatch::api
