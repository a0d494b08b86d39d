// Generic webhook: a JSON POST in a documented, versioned schema (docs/configuration.md,
// "Webhook payload"), optionally signed, with custom headers.
//   - name: ops-webhook
//     type: webhook
//     url: http://127.0.0.1:9000/hook
//     secret: ${WEBHOOK_SECRET}     # optional: X-Trainwatch-Signature: sha256=<hex HMAC of the body>
//     headers: {Authorization: "Bearer ${TOKEN}"}
//
// Schema "trainwatch.alert.v1": new keys may be added within v1; a key is never removed
// or changes meaning without a new version.
#include <boost/json.hpp>

#include "alerting/providers/provider_util.h"
#include "alerting/providers/providers.h"
#include "auth/sha256.h"
#include "core/json_text.h"
#include "core/time_format.h"

namespace trainwatch::alerting {
namespace {

namespace json = boost::json;

constexpr const char* kSchema = "trainwatch.alert.v1";

json::value time_or_null(const std::optional<SystemTime>& t) {
  return t ? json::value(format_rfc3339(*t)) : json::value(nullptr);
}

class WebhookProvider final : public Provider {
 public:
  WebhookProvider(std::string url, std::string secret,
                  std::vector<std::pair<std::string, std::string>> headers)
      : url_(std::move(url)), secret_(std::move(secret)), headers_(std::move(headers)) {}

  OutboundRequest build(const AlertEvent& e, const Message& m, int64_t delivery_id,
                        SystemTime now) const override {
    json::array tags;
    for (const auto& t : e.tags) tags.emplace_back(t);
    json::array affected;
    for (const auto& a : e.affected) affected.emplace_back(a);
    json::array fields;
    for (const auto& [label, value] : m.fields)
      fields.push_back(json::object{{"label", label}, {"value", value}});
    json::value duration_ms = nullptr;
    if (e.since)
      duration_ms = std::chrono::duration_cast<Millis>((e.ended ? *e.ended : now) - *e.since).count();
    json::object body{
        {"schema", kSchema},
        {"event", to_string(e.kind)},
        {"delivery_id", delivery_id},
        {"incident_id", e.incident_id ? json::value(*e.incident_id) : json::value(nullptr)},
        {"monitor",
         json::object{
             {"name", e.monitor}, {"type", e.monitor_type}, {"target", e.target}, {"tags", std::move(tags)}}},
        {"state", e.kind == EventKind::kUp || e.kind == EventKind::kWarning ? "up"
                  : e.kind == EventKind::kTest                              ? "test"
                                                                            : "down"},
        {"cause", e.cause},
        {"at", format_rfc3339(e.at)},
        {"started_at", time_or_null(e.since)},
        {"ended_at", time_or_null(e.ended)},
        {"duration_ms", duration_ms},
        {"check",
         json::object{{"http_status", e.http_status != 0 ? json::value(e.http_status) : json::value(nullptr)},
                      {"latency_ms", e.latency_ms},
                      {"body_excerpt", e.body_excerpt}}},
        {"title", m.title},
        {"summary", m.summary},
        {"text", m.templated ? json::value(*m.templated) : json::value(nullptr)},
        {"fields", std::move(fields)},
        {"affected", std::move(affected)},
        {"url", e.url.empty() ? json::value(nullptr) : json::value(e.url)},
        {"snooze_url", e.snooze_url.empty() ? json::value(nullptr) : json::value(e.snooze_url)},
        {"sent_at", format_rfc3339(now)}};
    OutboundRequest r;
    r.url = url_;
    r.body = json_text(body);
    r.headers = {"Content-Type: application/json", "X-Trainwatch-Event: " + std::string(to_string(e.kind)),
                 "X-Trainwatch-Delivery: " + std::to_string(delivery_id)};
    if (!secret_.empty())
      r.headers.push_back("X-Trainwatch-Signature: sha256=" + auth::hmac_sha256_hex(secret_, r.body));
    for (const auto& [name, value] : headers_) r.headers.push_back(name + ": " + value);
    return r;
  }

  std::string target() const override { return url_origin(url_); }

 private:
  std::string url_;
  std::string secret_;
  std::vector<std::pair<std::string, std::string>> headers_;
};

}  // namespace

std::unique_ptr<Provider> make_webhook(ChannelFields& f) {
  auto url = f.url("url", true, {"http", "https"});
  auto secret = f.string("secret");
  auto headers = f.map("headers");
  for (const auto& [name, value] : headers) {
    const bool token = !name.empty() && name.find_first_of(" :\r\n\t") == std::string::npos;
    if (!token || value.find_first_of("\r\n") != std::string::npos) {
      f.error("headers",
              "found header '" + name +
                  "' that cannot be sent; expected a name without spaces or ':' and a one-line value");
    }
  }
  f.finish();
  if (!url) return nullptr;
  return std::make_unique<WebhookProvider>(*url, secret.value_or(""), std::move(headers));
}

}  // namespace trainwatch::alerting
