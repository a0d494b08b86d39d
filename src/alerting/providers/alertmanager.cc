// An existing Prometheus Alertmanager: POST /api/v2/alerts with one alert per event.
// DOWN and reminders send the alert firing (no endsAt); recovery sends it again with
// endsAt = the recovery time, which resolves it. The labels identify the alert, so the
// same labels are sent for every event of one incident.
//
// Alertmanager resolves a firing alert on its own after its resolve_timeout (5m by
// default) unless it is sent again: set `remind_every` below that on monitors routed here,
// or raise resolve_timeout.
//   - name: am
//     type: alertmanager
//     url: http://alertmanager:9093
//     labels: {team: ml}            # optional, added to every alert
#include <boost/json.hpp>

#include "alerting/providers/provider_util.h"
#include "alerting/providers/providers.h"
#include "core/time_format.h"

namespace trainwatch::alerting {
namespace {

namespace json = boost::json;

class AlertmanagerProvider final : public Provider {
 public:
  AlertmanagerProvider(std::string url, std::vector<std::pair<std::string, std::string>> labels,
                       std::vector<std::pair<std::string, std::string>> headers)
      : url_(std::move(url)), labels_(std::move(labels)), headers_(std::move(headers)) {}

  OutboundRequest build(const AlertEvent& e, const Message& m, int64_t, SystemTime now) const override {
    const bool test = e.kind == EventKind::kTest;
    json::object labels{{"alertname", test ? "TrainwatchTest" : "TrainwatchMonitorDown"},
                        {"monitor", e.monitor},
                        {"severity", test ? "info" : "critical"},
                        {"source", "trainwatch"}};
    if (!e.monitor_type.empty()) labels["monitor_type"] = e.monitor_type;
    if (e.incident_id) labels["incident"] = std::to_string(*e.incident_id);
    for (const auto& [name, value] : labels_) labels[name] = value;
    std::string description = m.summary;
    for (const auto& [label, value] : m.fields) description += "\n" + label + ": " + value;
    json::object alert{{"labels", std::move(labels)},
                       {"annotations", json::object{{"summary", m.headline}, {"description", description}}},
                       {"startsAt", format_rfc3339(e.since.value_or(e.at))}};
    if (e.kind == EventKind::kUp) {
      alert["endsAt"] = format_rfc3339(e.ended.value_or(e.at));
    } else if (test) {
      // A test shows up once and resolves by itself.
      alert["endsAt"] = format_rfc3339(now + std::chrono::minutes(5));
    }
    if (!e.target.empty() && (e.target.rfind("http://", 0) == 0 || e.target.rfind("https://", 0) == 0)) {
      alert["generatorURL"] = e.target;
    }
    OutboundRequest r;
    r.url = join_url(url_, "/api/v2/alerts");
    r.headers = {"Content-Type: application/json"};
    for (const auto& [name, value] : headers_) r.headers.push_back(name + ": " + value);
    r.body = json::serialize(json::array{std::move(alert)});
    return r;
  }

  std::string target() const override { return url_origin(url_); }

 private:
  std::string url_;
  std::vector<std::pair<std::string, std::string>> labels_;
  std::vector<std::pair<std::string, std::string>> headers_;
};

}  // namespace

std::unique_ptr<Provider> make_alertmanager(ChannelFields& f) {
  auto url = f.url("url", true, {"http", "https"});
  auto labels = f.map("labels");
  auto headers = f.map("headers");
  f.finish();
  if (!url) return nullptr;
  return std::make_unique<AlertmanagerProvider>(*url, std::move(labels), std::move(headers));
}

}  // namespace trainwatch::alerting
