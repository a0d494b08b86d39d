#include "api/notification_routes.h"

#include "core/json_text.h"
#include "views/notification_views.h"

#include <algorithm>

#include <boost/json.hpp>

#include "api/query_params.h"
#include "core/time_format.h"
#include "views/audience.h"
#include "views/write_access.h"

namespace trainwatch::api {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

constexpr int64_t kMaxDeliveryPage = 1000;

// Every channel of the catalog with its health, as `audience` may read it.
std::vector<json::object> channel_views(const NotificationContext& ctx, Audience audience,
                                        const std::string& only = "") {
  const std::vector<alerting::ChannelHealth> health = ctx.dispatcher.health();
  std::vector<json::object> out;
  for (const auto& c : ctx.channels.list()) {
    if (!only.empty() && c.config.name != only) continue;
    auto h = std::find_if(health.begin(), health.end(),
                          [&](const alerting::ChannelHealth& one) { return one.name == c.config.name; });
    out.push_back(views::catalog_channel_json(c, h == health.end() ? nullptr : &*h, audience,
                                              ctx.channels.file_name()));
  }
  return out;
}

void list_channels(const NotificationContext& ctx, const Request& request, const Responder& respond) {
  json::array items;
  // At most kMaxChannels: small enough for one answer.
  for (auto& c : channel_views(ctx, views::audience_of(&ctx.auth, request))) items.push_back(std::move(c));
  respond(Response::json(200, json_text(json::object{{"notifications", std::move(items)}})));
}

void get_channel(const NotificationContext& ctx, const Request& request, const Responder& respond) {
  const std::string& name = request.params.at("name");
  auto found = channel_views(ctx, views::audience_of(&ctx.auth, request), name);
  if (found.empty()) return respond(Response::problem(404, "no notification channel named '" + name + "'"));
  respond(Response::json(200, json_text(found.front())));
}

// The answer to a write: the channel as listed (an admin's view), or the refusal.
alerting::ChannelCatalog::Done answer_write(const NotificationContext& ctx, const Responder& respond,
                                            int status) {
  return [ctx, respond, status](const alerting::ChannelWrite& w) {
    if (!w.name) return respond(views::problem_for(w.name.error(), w.field));
    auto found = channel_views(ctx, Audience::kAdmin, *w.name);
    Response response =
        Response::json(status, json_text(found.empty() ? json::object{{"name", *w.name}} : found.front()));
    response.headers.emplace_back("Location", "/api/v1/notifications/" + *w.name);
    respond(std::move(response));
  };
}

void create_channel(const NotificationContext& ctx, const Request& request, const Responder& respond) {
  if (!views::write_allowed(ctx.auth, request, respond, auth::Role::kAdmin)) return;
  ctx.channels.put("", request.body, true, answer_write(ctx, respond, 201));
}

void replace_channel(const NotificationContext& ctx, const Request& request, const Responder& respond) {
  if (!views::write_allowed(ctx.auth, request, respond, auth::Role::kAdmin)) return;
  ctx.channels.put(request.params.at("name"), request.body, false, answer_write(ctx, respond, 200));
}

void remove_channel(const NotificationContext& ctx, const Request& request, const Responder& respond) {
  if (!views::write_allowed(ctx.auth, request, respond, auth::Role::kAdmin)) return;
  ctx.channels.remove(request.params.at("name"), [respond](const alerting::ChannelWrite& w) {
    if (!w.name) return respond(views::problem_for(w.name.error(), w.field));
    respond(Response::no_content());
  });
}

void list_deliveries(const NotificationContext& ctx, const Request& request, const Responder& respond) {
  DeliveryQuery query;
  if (auto it = request.query.find("channel"); it != request.query.end()) query.channel = it->second;
  if (auto it = request.query.find("monitor"); it != request.query.end()) query.monitor = it->second;
  if (auto it = request.query.find("status"); it != request.query.end()) {
    query.status = delivery_status_from_string(it->second);
    if (!query.status) {
      return respond(Response::problem(
          400, "status: found '" + it->second + "'; expected pending, delivered, failed or cancelled"));
    }
  }
  auto page = page_params(request, kMaxDeliveryPage);
  if (!page) return respond(Response::problem(400, page.error().message));
  query.limit = page->limit;
  query.before_id = page->before_id;
  auto rows = ctx.store.deliveries(query);
  if (!rows) return respond(Response::problem(503, "deliveries cannot be read: " + rows.error().message));
  json::array items;
  const Audience audience = views::audience_of(&ctx.auth, request);
  for (const auto& d : *rows) items.push_back(views::delivery_json(d, audience));
  json::object out{{"deliveries", std::move(items)}};
  if (!rows->empty() && static_cast<int>(rows->size()) == page->limit) out["next_before"] = rows->back().id;
  respond(Response::json(200, json_text(out)));
}

void test_channel(const NotificationContext& ctx, const Request& request, const Responder& respond) {
  // It stores nothing of its own: its answer waits for the record of who asked.
  Responder answer = respond;
  const auto who = views::write_allowed_recorded(ctx.auth, request, respond, auth::Role::kEditor, answer);
  if (!who) return;
  // What the receiver answered, and what the error says of it, is for admins: they alone
  // read where a channel sends (docs/operations.md, "Users and single sign-on").
  const bool admin = auth::allows(who->role, auth::Role::kAdmin);
  const std::string name = request.params.at("name");
  // The catalog, not the dispatcher's health: a channel created a moment ago is known
  // here, and the dispatcher has taken it up before it runs the test (both on its thread,
  // in order).
  if (!ctx.channels.find(name)) {
    return answer(Response::problem(404, "no notification channel named '" + name + "'"));
  }
  if (auto wait = ctx.test_sends->take(name, ctx.clock.monotonic_time())) {
    return answer(views::too_many_attempts(*wait, "too many test messages on '" + name + "'"));
  }
  ctx.dispatcher.test(name, [answer, name, admin](alerting::TestOutcome o) {
    json::object out{{"channel", name},
                     {"delivered", o.ok},
                     {"status", o.status != 0 ? json::value(o.status) : json::value(nullptr)},
                     {"reason", o.reason},
                     {"error", o.error.empty() || !admin ? json::value(nullptr) : json::value(o.error)},
                     {"latency_ms", o.latency_ms}};
    answer(Response::json(o.ok ? 200 : 502, json_text(out)));
  });
}

}  // namespace

void add_notification_routes(http::Router& router, const NotificationContext& ctx) {
  auto bind = [ctx](void (*fn)(const NotificationContext&, const Request&, const Responder&)) {
    return [ctx, fn](const Request& request, const Responder& respond) { fn(ctx, request, respond); };
  };
  const std::vector<std::string> get = {"GET", "HEAD"};
  router.add(get, "/api/v1/notifications", bind(list_channels));
  router.add(get, "/api/v1/notifications/{name}", bind(get_channel));
  router.add("POST", "/api/v1/notifications", bind(create_channel));
  router.add("PUT", "/api/v1/notifications/{name}", bind(replace_channel));
  router.add("DELETE", "/api/v1/notifications/{name}", bind(remove_channel));
  router.add(get, "/api/v1/deliveries", bind(list_deliveries));
  router.add("POST", "/api/v1/notifications/{name}/test", bind(test_channel));
}

void write_notification_metrics(const alerting::Dispatcher& dispatcher, PrometheusWriter& w) {
  const auto channels = dispatcher.health();
  w.family(
      "trainwatch_notifications_total", "counter",
      "Notification attempts by channel and result: delivered, error (will retry), rejected, gave_up, cancelled.");
  for (const auto& h : channels) {
    const auto& c = h.counters;
    const std::pair<const char*, uint64_t> results[] = {{"delivered", c.delivered},
                                                        {"error", c.error},
                                                        {"rejected", c.rejected},
                                                        {"gave_up", c.gave_up},
                                                        {"cancelled", c.cancelled}};
    for (const auto& [result, value] : results) {
      w.sample("trainwatch_notifications_total", {{"channel", h.name}, {"result", result}},
               static_cast<double>(value));
    }
  }
  w.family("trainwatch_notifications_queued", "gauge",
           "Deliveries waiting per channel (released, not yet delivered).");
  for (const auto& h : channels) {
    w.sample("trainwatch_notifications_queued", {{"channel", h.name}}, static_cast<double>(h.queued));
  }
  w.family("trainwatch_notifications_held", "gauge",
           "Deliveries held per channel by notify_after or maintenance.");
  for (const auto& h : channels) {
    w.sample("trainwatch_notifications_held", {{"channel", h.name}}, static_cast<double>(h.held));
  }
}

}  // namespace trainwatch::api
