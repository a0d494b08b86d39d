#include "web/maintenance_page.h"

#include "core/duration.h"
#include "core/json_text.h"
#include "core/time_format.h"
#include "views/maintenance_views.h"
#include "views/write_access.h"
#include "web/dashboard_common.h"
#include "web/pages.h"
#include "web/time_text.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

// "a, b c" -> ["a", "b", "c"]: the form takes names separated by commas or spaces.
json::array split_names(const std::string& text) {
  json::array out;
  std::string current;
  for (char c : text + ",") {
    if (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (!current.empty()) out.emplace_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  return out;
}

// A browser's datetime-local value ("2026-05-01T02:00", no zone) is read as UTC, as every
// time on the dashboard is; anything else goes to the loader as typed.
std::string as_utc(const std::string& text) {
  if (text.size() == 16 && text[10] == 'T') return text + ":00Z";
  if (text.size() == 19 && text[10] == 'T') return text + "Z";
  return text;
}

void page(const MaintenancePageContext& ctx, const Request& request, const Responder& respond,
          const std::string& error) {
  const SystemTime now = ctx.web.clock.system_time();
  json::object m = layout_model(ctx.web, request, "Maintenance · trainwatch");
  json::array rows;
  for (const auto& w : ctx.maintenance.list()) {
    json::object row = views::window_json(w, now);
    std::string when;
    if (row.contains("daily")) {
      when = "every day " + std::string(row["daily"].as_string()) + " UTC";
    } else if (row.contains("weekly")) {
      when = "every " + std::string(row["weekly"].as_string()) + " UTC";
    } else {
      when = utc_text_of(row["start"].as_string()) + " to " + utc_text_of(row["end"].as_string());
    }
    row["when"] = when;
    add_time_fields(row, {"active_until", "created_at"}, now);
    std::string covers;
    for (const auto& name : row["monitors"].as_array())
      covers += (covers.empty() ? "" : ", ") + std::string(name.as_string());
    for (const auto& tag : row["tags"].as_array())
      covers += (covers.empty() ? "tag " : ", tag ") + std::string(tag.as_string());
    row["covers"] = covers;
    rows.push_back(std::move(row));
  }
  m["windows"] = std::move(rows);
  m["max_api_windows"] = catalog::MaintenanceCatalog::kMaxApiWindows;
  if (!error.empty()) m["error"] = error;
  respond(html(error.empty() ? 200 : 400, render_page("maintenance", m)));
}

// The form's fields, turned into the API's JSON object. `duration` (from `start`, or from
// now when `start` is empty) stands in for `end`.
void create_form(const MaintenancePageContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx.web, request, form, respond, auth::Role::kEditor)) return;
  json::object spec;
  if (auto monitors = split_names(form["monitors"]); !monitors.empty())
    spec["monitors"] = std::move(monitors);
  if (auto tags = split_names(form["tags"]); !tags.empty()) spec["tags"] = std::move(tags);
  if (!form["daily"].empty()) spec["daily"] = form["daily"];
  if (!form["weekly"].empty()) spec["weekly"] = form["weekly"];
  const std::string& duration = form["duration"];
  if (!form["start"].empty() || !form["end"].empty() || !duration.empty()) {
    const std::string start =
        form["start"].empty() ? format_rfc3339(ctx.web.clock.system_time()) : as_utc(form["start"]);
    spec["start"] = start;
    if (!form["end"].empty()) {
      spec["end"] = as_utc(form["end"]);
    } else if (!duration.empty()) {
      const auto length = parse_duration(duration);
      if (!length || length->count() <= 0) {
        return page(ctx, request, respond,
                    "duration: found '" + duration + "'; expected a duration such as 30m, 2h or 1d");
      }
      if (const auto from = parse_rfc3339(start)) spec["end"] = format_rfc3339(*from + *length);
    }
  }
  ctx.maintenance.create(json_text(spec), [ctx, request, respond](const Result<std::string>& r) {
    if (r) return respond(redirect("/maintenance"));
    if (views::status_for(r.error()) == 400) return page(ctx, request, respond, r.error().message);
    respond(Response::problem(views::status_for(r.error()), r.error().message));
  });
}

void delete_form(const MaintenancePageContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx.web, request, form, respond, auth::Role::kEditor)) return;
  ctx.maintenance.remove(request.params.at("id"), [respond](const Result<std::string>& r) {
    respond(r ? redirect("/maintenance")
              : Response::problem(views::status_for(r.error()), r.error().message));
  });
}

}  // namespace

void add_maintenance_page(http::Router& router, const MaintenancePageContext& ctx) {
  router.add(std::vector<std::string>{"GET", "HEAD"}, "/maintenance",
             [ctx](const Request& r, const Responder& respond) { page(ctx, r, respond, ""); });
  router.add("POST", "/maintenance",
             [ctx](const Request& r, const Responder& respond) { create_form(ctx, r, respond); });
  router.add("POST", "/maintenance/{id}/delete",
             [ctx](const Request& r, const Responder& respond) { delete_form(ctx, r, respond); });
}

}  // namespace trainwatch::web
