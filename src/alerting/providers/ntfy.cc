// ntfy (ntfy.sh or self-hosted): JSON publishing to the server root, so titles with
// emoji need no header encoding. DOWN is priority 5 (urgent), a warning 4, recovery 3.
//   - name: phone
//     type: ntfy
//     topic: trainwatch-alerts
//     url: https://ntfy.sh          # optional
//     token: ${NTFY_TOKEN}          # optional: access token (Authorization: Bearer)
#include <boost/json.hpp>

#include "alerting/providers/provider_util.h"
#include "alerting/providers/providers.h"
#include "core/json_text.h"

namespace trainwatch::alerting {
namespace {

namespace json = boost::json;

// ntfy keeps messages up to 4096 bytes as text; longer ones become attachments.
constexpr size_t kMessageBytes = 4000;

class NtfyProvider final : public Provider {
 public:
  NtfyProvider(std::string url, std::string topic, std::string token)
      : url_(std::move(url)), topic_(std::move(topic)), token_(std::move(token)) {}

  OutboundRequest build(const AlertEvent& e, const Message& m, int64_t, SystemTime) const override {
    std::string text;
    if (m.templated) {  // the team's wording
      text = *m.templated;
    } else {
      text = m.summary + "\n";
      for (const auto& [label, value] : m.fields) text += "\n" + label + ": " + value;
    }
    const bool up = m.kind == EventKind::kUp;
    const bool warning = m.kind == EventKind::kWarning;  // high, not urgent: it does not page
    json::object body{{"topic", topic_},
                      {"title", m.title},
                      {"message", cut_text(text, kMessageBytes)},
                      {"priority", up || m.kind == EventKind::kTest ? 3
                                   : warning                        ? 4
                                                                    : 5},
                      {"tags", json::array{up                           ? "white_check_mark"
                                           : m.kind == EventKind::kTest ? "test_tube"
                                           : warning                    ? "warning"
                                                                        : "rotating_light"}}};
    if (!e.url.empty()) body["click"] = e.url;  // tapping the notification opens the page
    OutboundRequest r;
    r.url = url_;
    r.headers = {"Content-Type: application/json"};
    if (!token_.empty()) r.headers.push_back("Authorization: Bearer " + token_);
    r.body = json_text(body);
    return r;
  }

  std::string target() const override { return url_origin(url_) + " topic " + topic_; }

 private:
  std::string url_;
  std::string topic_;
  std::string token_;
};

}  // namespace

std::unique_ptr<Provider> make_ntfy(ChannelFields& f) {
  auto topic = f.string("topic", true);
  auto url = f.url("url", false, {"https", "http"});
  auto token = f.string("token");
  f.finish();
  if (!topic) return nullptr;
  return std::make_unique<NtfyProvider>(url.value_or("https://ntfy.sh"), *topic, token.value_or(""));
}

}  // namespace trainwatch::alerting
