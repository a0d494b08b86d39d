#include "web/notifications_page.h"

#include <algorithm>

#include "alerting/providers/providers.h"
#include "auth/form.h"
#include "core/json_text.h"
#include "views/audience.h"
#include "views/notification_views.h"
#include "views/write_access.h"
#include "web/channel_form.h"
#include "web/dashboard_common.h"
#include "web/pages.h"
#include "web/time_text.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

constexpr int kLogRows = 100;

std::string query_value(const Request& request, const char* key) {
  auto it = request.query.find(key);
  return it == request.query.end() ? std::string() : it->second;
}

std::string_view channel_health_icon(std::string_view health) {
  if (health == "failing") return "\u2715";
  if (health == "ok") return "\u2713";
  return "\u2026";
}

// The add or edit form's model: what it posts to, its values, and which secrets are set.
struct ChannelFormModel {
  std::string action = "/notifications";
  std::string name;
  std::string type = "webhook";
  bool is_default = false;
  std::string settings;
  std::map<std::string, std::string> fields;  // the chosen type's readable fields, "k.<type>.<key>"
  json::object secrets;                       // key -> "set" / "not set" (edit only)
  bool editing = false;
  std::string error;
  std::string error_field;
};

json::object form_json(const ChannelFormModel& f) {
  json::array types;
  for (const auto& t : alerting::provider_types()) {
    std::string keys;
    for (const char* k : t.secret_keys) keys += (keys.empty() ? "" : ", ") + std::string(k);
    types.push_back(json::object{{"value", t.name}, {"selected", f.type == t.name}, {"secret_keys", keys}});
  }
  json::array secrets;
  for (const auto& [key, state] : f.secrets) secrets.push_back(json::object{{"key", key}, {"state", state}});
  // A field per key of every type; the page shows the chosen type's (static/forms.js).
  json::array keys;
  for (const ChannelKey& k : channel_keys()) {
    const std::string name = std::string(k.secret ? "s." : "k.") + k.type + "." + k.key;
    json::object o{{"type", k.type},
                   {"name", name},
                   {"id", "c-" + std::string(k.type) + "-" + k.key},
                   {"label", k.label},
                   {"key", k.key},
                   {"secret", k.secret},
                   {"placeholder", k.placeholder},
                   {"area", k.kind == ChannelKeyKind::kMap && !k.secret},
                   {"shown", f.type == k.type}};
    if (auto it = f.fields.find(name); it != f.fields.end() && !k.secret) o["value"] = it->second;
    if (k.secret && f.type == k.type && f.secrets.contains(k.key))
      o["state"] =
          std::string(f.secrets.at(k.key).as_string()) + (f.editing ? "; leave empty to keep it" : "");
    if (k.kind == ChannelKeyKind::kChoice || k.kind == ChannelKeyKind::kBoolean) {
      json::array options{json::object{{"value", ""}, {"label", "default"}}};
      std::string list = k.options;
      for (size_t pos = 0; pos < list.size();) {
        size_t end = list.find(' ', pos);
        if (end == std::string::npos) end = list.size();
        const std::string v = list.substr(pos, end - pos);
        const bool selected = o.contains("value") && o["value"].as_string() == v;
        options.push_back(json::object{{"value", v}, {"label", v}, {"selected", selected}});
        pos = end + 1;
      }
      o["options"] = std::move(options);
      o["has_options"] = true;
    }
    keys.push_back(std::move(o));
  }
  json::object out{{"keys", std::move(keys)},   {"action", f.action},           {"name", f.name},
                   {"types", std::move(types)}, {"default", f.is_default},      {"settings", f.settings},
                   {"editing", f.editing},      {"secrets", std::move(secrets)}};
  if (!f.error.empty()) out["error"] = json::object{{"text", f.error}, {"field", f.error_field}};
  return out;
}

void page(const NotificationsPageContext& ctx, const Request& request, const Responder& respond,
          json::object notice, const ChannelFormModel& form = {}) {
  json::object m = layout_model(ctx.web, request, "Notifications · trainwatch");
  const std::string channel = query_value(request, "channel"), status = query_value(request, "status");
  const Audience audience = views::audience_of(&ctx.web.auth, request);
  const std::vector<alerting::ChannelHealth> health = ctx.dispatcher.health();
  json::array channels, channel_options;
  for (const auto& c : ctx.channels.list()) {
    const std::string& name = c.config.name;
    auto h = std::find_if(health.begin(), health.end(),
                          [&](const alerting::ChannelHealth& one) { return one.name == name; });
    json::object row =
        views::catalog_channel_json(c, h == health.end() ? nullptr : &*h, audience, ctx.channels.file_name());
    row["health_icon"] = channel_health_icon(std::string_view(row["health"].as_string()));
    add_time_fields(row, {"last_success", "last_failure"}, ctx.web.clock.system_time());
    // The page shows no settings nor secrets' states: the edit form does.
    row.erase("settings");
    row.erase("secrets");
    channels.push_back(std::move(row));
    channel_options.push_back(json::object{{"value", name}, {"selected", name == channel}});
  }
  m["channels"] = std::move(channels);
  m["channel_options"] = std::move(channel_options);
  m["file_name"] = ctx.channels.file_name();
  m["channel_form"] = form_json(form);
  json::array status_options;
  for (const char* s : {"pending", "delivered", "failed", "cancelled"}) {
    status_options.push_back(json::object{{"value", s}, {"selected", status == s}});
  }
  m["status_options"] = std::move(status_options);

  DeliveryQuery query;
  if (!channel.empty()) query.channel = channel;
  query.status = delivery_status_from_string(status);  // an unknown word filters nothing
  query.limit = kLogRows;
  if (auto rows = ctx.web.store.deliveries(query)) {
    json::array log;
    for (const auto& d : *rows) {
      json::object row = views::delivery_json(d, audience);
      add_time_fields(row, {"created"}, ctx.web.clock.system_time());
      log.push_back(std::move(row));
    }
    m["deliveries"] = std::move(log);
  } else {
    m["log_error"] = rows.error().message;
  }
  if (!notice.empty()) m["notice"] = std::move(notice);
  respond(html(form.error.empty() ? 200 : 400, render_page("notifications", m)));
}

// The edit form of a stored channel, as stored: settings readable, secrets only named.
std::optional<ChannelFormModel> edit_model(const NotificationsPageContext& ctx, const std::string& name) {
  auto found = ctx.channels.find(name);
  if (!found || found->from_file) return std::nullopt;
  ChannelFormModel f;
  f.action = "/notifications/" + name + "/edit";
  f.name = name;
  f.type = found->config.type;
  f.is_default = found->config.is_default;
  f.settings = settings_text(found->config);
  f.fields = field_values(found->config);
  f.secrets = views::secrets_json(found->config);
  f.editing = true;
  return f;
}

// A refused form comes back with what was typed (secrets excepted) and the reason.
ChannelFormModel refused_model(const NotificationsPageContext& ctx, std::map<std::string, std::string>& form,
                               const std::string& name, std::string error, std::string field) {
  ChannelFormModel f;
  if (!name.empty()) {
    if (auto edit = edit_model(ctx, name)) f = std::move(*edit);
  }
  if (name.empty()) f.name = form["name"];
  f.type = form["type"];
  f.is_default = form["default"] == "on";
  f.settings = form["settings"];
  for (const auto& [key, value] : form) {
    if (key.starts_with("k.")) f.fields[key] = value;  // secrets ("s.") are never sent back
  }
  f.error = std::move(error);
  f.error_field = std::move(field);
  return f;
}

void save_form(const NotificationsPageContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx.web, request, form, respond, auth::Role::kAdmin)) return;
  const auto it = request.params.find("name");
  const std::string name = it == request.params.end() ? "" : it->second;
  auto [object, error] = channel_form_object(form);
  if (!object) {
    return page(ctx, request, respond, {}, refused_model(ctx, form, name, error->message, error->field));
  }
  ctx.channels.put(name, json_text(*object), name.empty(),
                   [ctx, request, respond, form, name](const alerting::ChannelWrite& w) mutable {
                     if (!w.name) {
                       return page(ctx, request, respond, {},
                                   refused_model(ctx, form, name, w.name.error().message, w.field));
                     }
                     respond(redirect("/notifications#channel-" + *w.name));
                   });
}

void edit_page(const NotificationsPageContext& ctx, const Request& request, const Responder& respond) {
  // Its settings are where the channel sends: for admins only, like its target.
  if (!page_reader(ctx.web, request, respond, auth::Role::kAdmin)) return;
  const std::string& name = request.params.at("name");
  auto found = ctx.channels.find(name);
  if (!found) return respond(Response::problem(404, "no notification channel named '" + name + "'"));
  if (found->from_file) {
    return respond(views::problem_for(make_error(
        "channel.read_only",
        "'" + name + "' comes from " + ctx.channels.file_name() + " and is read-only here; edit it there")));
  }
  page(ctx, request, respond, {}, *edit_model(ctx, name));
}

void delete_form(const NotificationsPageContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx.web, request, form, respond, auth::Role::kAdmin)) return;
  const std::string name = request.params.at("name");
  ctx.channels.remove(name, [ctx, request, respond, name](const alerting::ChannelWrite& w) {
    if (!w.name)
      return page(ctx, request, respond, json::object{{"ok", false}, {"text", w.name.error().message}});
    page(ctx, request, respond, json::object{{"ok", true}, {"text", "Channel " + name + " removed"}});
  });
}

// "Send a test": the result is shown on the page it came from.
void test_form(const NotificationsPageContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  // It stores nothing of its own: its answer waits for the record of who asked.
  Responder answer = respond;
  if (!form_allowed_recorded(ctx.web, request, form, respond, auth::Role::kEditor, answer)) return;
  // The receiver's answer is for admins (test_channel in api/notification_routes.cc).
  const auto session = session_of(ctx.web, request);
  const bool admin = session && auth::allows(session->who.role, auth::Role::kAdmin);
  const std::string name = request.params.at("name");
  if (!ctx.channels.find(name)) {
    return answer(Response::problem(404, "no notification channel named '" + name + "'"));
  }
  if (auto wait = ctx.test_sends->take(name, ctx.web.clock.monotonic_time())) {
    const std::string seconds = std::to_string((wait->count() + 999) / 1000);
    return page(
        ctx, request, answer,
        json::object{{"ok", false},
                     {"text", "Too many test messages on " + name + "; try again in " + seconds + " s"}});
  }
  ctx.dispatcher.test(name, [ctx, request, answer, name, admin](alerting::TestOutcome o) {
    std::string text = o.ok ? "Test message delivered on " + name : "Test message on " + name + " failed";
    if (o.status != 0) text += " (HTTP " + std::to_string(o.status) + ")";
    if (!o.ok) text += ": " + (admin && !o.error.empty() ? o.error : std::string(o.reason));
    page(ctx, request, answer, json::object{{"ok", o.ok}, {"text", text}});
  });
}

}  // namespace

void add_notifications_page(http::Router& router, const NotificationsPageContext& ctx) {
  router.add(std::vector<std::string>{"GET", "HEAD"}, "/notifications",
             [ctx](const Request& r, const Responder& respond) { page(ctx, r, respond, {}); });
  router.add("POST", "/notifications",
             [ctx](const Request& r, const Responder& respond) { save_form(ctx, r, respond); });
  router.add(std::vector<std::string>{"GET", "HEAD"}, "/notifications/{name}/edit",
             [ctx](const Request& r, const Responder& respond) { edit_page(ctx, r, respond); });
  router.add("POST", "/notifications/{name}/edit",
             [ctx](const Request& r, const Responder& respond) { save_form(ctx, r, respond); });
  router.add("POST", "/notifications/{name}/delete",
             [ctx](const Request& r, const Responder& respond) { delete_form(ctx, r, respond); });
  router.add("POST", "/notifications/{name}/test",
             [ctx](const Request& r, const Responder& respond) { test_form(ctx, r, respond); });
}

}  // namespace trainwatch::web
