#include "web/alert_link_routes.h"

#include <optional>
#include <string>

#include "auth/admin_auth.h"
#include "auth/form.h"
#include "catalog/alert_links.h"
#include "core/duration.h"
#include "engine/engine.h"
#include "web/dashboard_common.h"
#include "web/pages.h"
#include "web/time_text.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

// The lengths offered, as the monitor page's snooze offers them.
constexpr std::string_view kLengths[][2] = {
    {"15m", "15 min"}, {"1h", "1 hour"}, {"4h", "4 hours"}, {"1d", "1 day"}};

int status_of(const Error& e) {
  if (e.code == "link.invalid" || e.code == "link.monitor_gone") return 404;
  if (e.code == "link.expired" || e.code == "link.used") return 410;
  if (e.code == "snooze.invalid") return 400;
  return 503;
}

Response link_page(int status, json::object m) {
  m["page_title"] = "Snooze alerts";
  return html(status, render_page("snooze_link", m));
}

Response refusal(const Error& e, const std::string& monitor) {
  json::object m{{"error", e.message}};
  if (!monitor.empty()) m["monitor"] = monitor;
  return link_page(status_of(e), std::move(m));
}

// The link's, if it is good now, not spent, and its monitor still exists (a deleted one
// has nothing to snooze: 404, before the link is spent); otherwise answers the refusal.
std::optional<auth::AlertLink> live_link(const WebContext& ctx, const std::string& token,
                                         const Responder& respond) {
  auto link = ctx.alert_links->read(token);
  if (!link) {
    respond(refusal(link.error(), ""));
    return std::nullopt;
  }
  if (!ctx.engine.monitor(link->monitor)) {
    respond(
        refusal(make_error("link.monitor_gone", "the monitor " + link->monitor + " no longer exists"), ""));
    return std::nullopt;
  }
  if (Status unused = ctx.alert_links->unused(token); !unused) {
    respond(refusal(unused.error(), link->monitor));
    return std::nullopt;
  }
  return *link;
}

std::string incident_text(const auth::AlertLink& link) {
  return link.incident_id ? "incident #" + std::to_string(*link.incident_id) : "a warning";
}

void show_choices(const WebContext& ctx, const Request& request, const Responder& respond) {
  const std::string& token = request.params.at("link");
  auto link = live_link(ctx, token, respond);
  if (!link) return;
  json::array lengths;
  for (const auto& [value, label] : kLengths)
    lengths.push_back(json::object{{"value", value}, {"label", label}, {"selected", value == "1h"}});
  respond(link_page(200, json::object{{"monitor", link->monitor},
                                      {"about", incident_text(*link)},
                                      {"token", token},
                                      {"lengths", std::move(lengths)},
                                      {"expires_t", time_json(link->expires, ctx.clock.system_time())}}));
}

void use_link(const WebContext& ctx, const Request& request, const Responder& respond) {
  const std::string token = request.params.at("link");
  auto link = live_link(ctx, token, respond);
  if (!link) return;
  const std::string asked = auth::parse_form(request.body)["for"];
  const auto length = parse_duration(asked);
  if (!length) return respond(refusal(make_error("snooze.invalid", "for: expected a length such as 1h"), ""));
  const auth::Principal who{"alert link of " + incident_text(*link), auth::Role::kEditor,
                            auth::Principal::Kind::kAlertLink, ""};
  const std::string action = "snooze " + link->monitor + " for " + asked;
  ctx.alert_links->snooze(
      token, *length,
      [ctx, who, action, monitor = link->monitor, source = request.remote_address,
       respond](const Result<SystemTime>& until) {
        if (!until) return respond(refusal(until.error(), monitor));
        // Answered once the audit row is committed: what the page says done is on the record.
        ctx.auth.audit(who, action, source, [ctx, monitor, until = *until, respond](const Status&) {
          respond(link_page(200, json::object{{"monitor", monitor},
                                              {"done", true},
                                              {"until_t", time_json(until, ctx.clock.system_time())}}));
        });
      });
}

}  // namespace

void add_alert_link_routes(http::Router& router, const WebContext& ctx) {
  if (ctx.alert_links == nullptr) return;
  router.add("GET", "/snooze/{link}",
             [ctx](const Request& r, const Responder& w) { show_choices(ctx, r, w); });
  router.add("POST", "/snooze/{link}", [ctx](const Request& r, const Responder& w) { use_link(ctx, r, w); });
}

}  // namespace trainwatch::web
