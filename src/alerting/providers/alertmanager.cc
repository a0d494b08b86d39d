// An existing Prometheus Alertmanager: POST /api/v2/alerts with one alert per event.
// The labels identify the alert, so every event of one incident carries the same labels
// and Alertmanager keeps it as one alert.
//
// Keeping an incident firing, the way Prometheus does: Alertmanager resolves an alert at
// its endsAt, or after its resolve_timeout when it has none, unless it hears of it again.
// So a DOWN (and a reminder) goes out with endsAt = now + 4 × resend_every, and while the
// incident stays open the dispatcher re-sends it every resend_every (Resender), each time
// with a fresh endsAt: three re-sends in a row may fail (Alertmanager restarting, a
// network blip) before the alert lapses, and once trainwatch stops or the monitor is
// deleted it lapses within 4 × resend_every. Prometheus uses the same factor with its
// resend delay (default 1m). The recovery sends endsAt = when it recovered, which
// resolves it at once. No remind_every is needed for any of this.
//   - name: am
//     type: alertmanager
//     url: http://alertmanager:9093
//     labels: {team: ml}            # optional, added to every alert
//     resend_every: 1m              # optional, how often a firing alert is re-sent
#include <boost/json.hpp>

#include "alerting/providers/provider_util.h"
#include "alerting/providers/providers.h"
#include "core/duration.h"
#include "core/json_text.h"
#include "core/time_format.h"

namespace trainwatch::alerting {
namespace {

namespace json = boost::json;

constexpr Millis kDefaultResendEvery = std::chrono::minutes(1);
// Below this, re-sends would only load Alertmanager; its own resolution is in seconds.
constexpr Millis kMinResendEvery = std::chrono::seconds(1);
// How many re-send periods ahead a firing alert's endsAt lies (see the top of the file).
constexpr int kEndsAfterPeriods = 4;

class AlertmanagerProvider final : public Provider, public Resender {
 public:
  AlertmanagerProvider(std::string url, std::vector<std::pair<std::string, std::string>> labels,
                       std::vector<std::pair<std::string, std::string>> headers, Millis resend_every)
      : url_(std::move(url)),
        labels_(std::move(labels)),
        headers_(std::move(headers)),
        resend_every_(resend_every) {}

  OutboundRequest build(const AlertEvent& e, const Message& m, int64_t, SystemTime now) const override {
    return request(json::array{alert(e, m, now)});
  }

  OutboundRequest build_resend(const std::vector<std::pair<AlertEvent, Message>>& alerts,
                               SystemTime now) const override {
    json::array body;
    body.reserve(alerts.size());
    for (const auto& [event, message] : alerts) body.push_back(alert(event, message, now));
    return request(body);
  }

  std::string target() const override { return url_origin(url_); }
  const Resender* resender() const override { return this; }
  Millis resend_every() const override { return resend_every_; }

 private:
  json::object alert(const AlertEvent& e, const Message& m, SystemTime now) const {
    const bool test = e.kind == EventKind::kTest;
    const bool job = e.monitor_type == "job";
    json::object labels{
        {"alertname", test ? "TrainwatchTest" : (job ? "TrainwatchJobDown" : "TrainwatchMonitorDown")},
        {"monitor", e.monitor},
        {"severity", test ? "ticket" : "page"},
        {"source", "trainwatch"}};
    if (!e.monitor_type.empty()) labels["monitor_type"] = e.monitor_type;
    if (e.incident_id) labels["incident"] = std::to_string(*e.incident_id);
    for (const auto& [name, value] : e.labels) labels[name] = value;
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
    } else {
      alert["endsAt"] = format_rfc3339(now + kEndsAfterPeriods * resend_every_);
    }
    if (!e.url.empty()) {
      alert["generatorURL"] = e.url;
    } else if (e.target.rfind("http://", 0) == 0 || e.target.rfind("https://", 0) == 0) {
      alert["generatorURL"] = e.target;
    }
    return alert;
  }

  OutboundRequest request(const json::array& alerts) const {
    OutboundRequest r;
    r.url = join_url(url_, "/api/v2/alerts");
    r.headers = {"Content-Type: application/json"};
    for (const auto& [name, value] : headers_) r.headers.push_back(name + ": " + value);
    r.body = json_text(alerts);
    return r;
  }

  std::string url_;
  std::vector<std::pair<std::string, std::string>> labels_;
  std::vector<std::pair<std::string, std::string>> headers_;
  Millis resend_every_;
};

}  // namespace

std::unique_ptr<Provider> make_alertmanager(ChannelFields& f) {
  auto url = f.url("url", true, {"http", "https"});
  auto labels = f.map("labels");
  auto headers = f.map("headers");
  Millis resend_every = kDefaultResendEvery;
  if (const auto given = f.duration("resend_every")) {
    if (given->count() < kMinResendEvery.count()) {
      f.error("resend_every", "found " + format_duration_config(*given) + "; expected at least 1s");
      url.reset();
    }
    resend_every = *given;
  }
  f.finish();
  if (!url) return nullptr;
  return std::make_unique<AlertmanagerProvider>(*url, std::move(labels), std::move(headers), resend_every);
}

}  // namespace trainwatch::alerting
