#include "web/notifications_page.h"

#include "views/audience.h"
#include "views/notification_views.h"
#include "web/dashboard_common.h"
#include "web/pages.h"

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

std::string_view health_icon(std::string_view health) {
  if (health == "failing") return "\u2715";
  if (health == "ok") return "\u2713";
  return "\u2026";
}

void page(const NotificationsPageContext& ctx, const Request& request, const Responder& respond,
          json::object notice) {
  json::object m = layout_model(ctx.web, request, "Notifications · trainwatch");
  const std::string channel = query_value(request, "channel"), status = query_value(request, "status");
  const Audience audience = views::audience_of(&ctx.web.auth, request);
  json::array channels, channel_options;
  for (const auto& health : ctx.dispatcher.health()) {
    json::object c = views::channel_json(health, audience);
    c["health_icon"] = health_icon(views::health_word(health));
    channels.push_back(std::move(c));
    channel_options.push_back(json::object{{"value", health.name}, {"selected", health.name == channel}});
  }
  m["channels"] = std::move(channels);
  m["channel_options"] = std::move(channel_options);
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
    for (const auto& d : *rows) log.push_back(views::delivery_json(d, audience));
    m["deliveries"] = std::move(log);
  } else {
    m["log_error"] = rows.error().message;
  }
  if (!notice.empty()) m["notice"] = std::move(notice);
  respond(html(200, render_page("notifications", m)));
}

// "Send a test": the result is shown on the page it came from.
void test_form(const NotificationsPageContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx.web, request, form, respond, auth::Role::kEditor)) return;
  const std::string name = request.params.at("name");
  bool known = false;
  for (const auto& h : ctx.dispatcher.health()) known = known || h.name == name;
  if (!known) return respond(Response::problem(404, "no notification channel named '" + name + "'"));
  if (auto wait = ctx.test_sends->take(name, ctx.web.clock.monotonic_time())) {
    const std::string seconds = std::to_string((wait->count() + 999) / 1000);
    return page(
        ctx, request, respond,
        json::object{{"ok", false},
                     {"text", "Too many test messages on " + name + "; try again in " + seconds + " s"}});
  }
  ctx.dispatcher.test(name, [ctx, request, respond, name](alerting::TestOutcome o) {
    std::string text = o.ok ? "Test message delivered on " + name : "Test message on " + name + " failed";
    if (o.status != 0) text += " (HTTP " + std::to_string(o.status) + ")";
    if (!o.error.empty()) text += ": " + o.error;
    page(ctx, request, respond, json::object{{"ok", o.ok}, {"text", text}});
  });
}

}  // namespace

void add_notifications_page(http::Router& router, const NotificationsPageContext& ctx) {
  router.add(std::vector<std::string>{"GET", "HEAD"}, "/notifications",
             [ctx](const Request& r, const Responder& respond) { page(ctx, r, respond, {}); });
  router.add("POST", "/notifications/{name}/test",
             [ctx](const Request& r, const Responder& respond) { test_form(ctx, r, respond); });
}

}  // namespace trainwatch::web
