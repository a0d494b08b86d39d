// PagerDuty Events API v2: DOWN and reminders trigger, recovery resolves, all with
// dedup_key = the trainwatch incident id, so one incident in trainwatch is one incident in
// PagerDuty however many times it is re-sent.
//   - name: oncall-pd
//     type: pagerduty
//     routing_key: ${PAGERDUTY_ROUTING_KEY}
//     url: https://events.pagerduty.com     # optional: EU endpoint, proxy, test receiver
//     severity: critical                    # critical | error | warning | info
#include <boost/json.hpp>

#include "alerting/providers/provider_util.h"
#include "alerting/providers/providers.h"
#include "core/json_text.h"
#include "core/time_format.h"

namespace trainwatch::alerting {
namespace {

namespace json = boost::json;

// PagerDuty's limit on payload.summary.
constexpr size_t kSummaryChars = 1024;

class PagerDutyProvider final : public Provider {
 public:
  PagerDutyProvider(std::string url, std::string routing_key, std::string severity)
      : url_(std::move(url)), routing_key_(std::move(routing_key)), severity_(std::move(severity)) {}

  OutboundRequest build(const AlertEvent& e, const Message& m, int64_t, SystemTime) const override {
    json::object details;
    for (const auto& [label, value] : m.fields) details[label] = value;
    const std::string dedup_key = e.incident_id
                                      ? std::to_string(*e.incident_id)
                                      : "trainwatch-" + std::string(to_string(e.kind)) + "-" + e.monitor;
    json::object body{
        {"routing_key", routing_key_},
        {"event_action", e.kind == EventKind::kUp ? "resolve" : "trigger"},
        {"dedup_key", dedup_key},
        {"client", "trainwatch"},
        {"payload", json::object{{"summary", cut_text(m.headline + ": " + m.summary, kSummaryChars)},
                                 {"source", e.target.empty() ? e.monitor : e.target},
                                 {"severity", e.kind == EventKind::kTest ? "info" : severity_},
                                 {"timestamp", format_rfc3339(e.at)},
                                 {"component", e.monitor},
                                 {"class", e.monitor_type},
                                 {"custom_details", std::move(details)}}}};
    if (!e.url.empty())
      body["links"] = json::array{json::object{{"href", e.url}, {"text", "trainwatch: " + e.monitor}}};
    OutboundRequest r;
    r.url = join_url(url_, "/v2/enqueue");
    r.headers = {"Content-Type: application/json"};
    r.body = json_text(body);
    return r;
  }

  std::string target() const override { return url_origin(url_); }

 private:
  std::string url_;
  std::string routing_key_;
  std::string severity_;
};

}  // namespace

std::unique_ptr<Provider> make_pagerduty(ChannelFields& f) {
  auto key = f.string("routing_key", true);
  auto url = f.url("url", false, {"https", "http"});
  auto severity = f.choice("severity", {"critical", "error", "warning", "info"});
  f.finish();
  if (!key) return nullptr;
  return std::make_unique<PagerDutyProvider>(url.value_or("https://events.pagerduty.com"), *key,
                                             severity.value_or("critical"));
}

}  // namespace trainwatch::alerting
