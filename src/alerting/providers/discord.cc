// Discord webhook: one embed with the title, the summary, coloured by kind, and the
// fields. `allowed_mentions` is empty, so "@everyone", "@here" or "<@id>" in a cause or a
// rank's error text never notifies anyone.
//   - name: ml-discord
//     type: discord
//     webhook_url: ${DISCORD_WEBHOOK_URL}   # https://discord.com/api/webhooks/...
#include <boost/json.hpp>

#include "alerting/providers/provider_util.h"
#include "alerting/providers/providers.h"
#include "core/json_text.h"
#include "core/time_format.h"

namespace trainwatch::alerting {
namespace {

namespace json = boost::json;

// Discord's embed limits: title 256, description 4096, 25 fields, name 256, value 1024.
constexpr size_t kTitleChars = 256;
constexpr size_t kDescriptionChars = 4096;
constexpr size_t kMaxFields = 25;
constexpr size_t kNameChars = 256;
constexpr size_t kValueChars = 1024;
constexpr size_t kContentChars = 2000;

class DiscordProvider final : public Provider {
 public:
  explicit DiscordProvider(std::string url) : url_(std::move(url)) {}

  OutboundRequest build(const AlertEvent& e, const Message& m, int64_t, SystemTime) const override {
    if (m.templated) {  // the team's wording, as the message's content
      OutboundRequest r;
      r.url = url_;
      r.headers = {"Content-Type: application/json"};
      r.body = json_text(json::object{{"content", cut_text(*m.templated, kContentChars)}});
      return r;
    }
    json::array fields;
    for (const auto& [label, value] : m.fields) {
      if (fields.size() == kMaxFields) break;
      fields.push_back(json::object{{"name", cut_text(label, kNameChars)},
                                    {"value", cut_text(value, kValueChars)},
                                    {"inline", value.size() < 40}});
    }
    const int color = m.kind == EventKind::kUp        ? 0x1A7F37
                      : m.kind == EventKind::kTest    ? 0x555555
                      : m.kind == EventKind::kWarning ? 0x9A6700
                                                      : 0xCF222E;
    json::object embed{{"title", cut_text(m.title, kTitleChars)},
                       {"description", cut_text(m.summary, kDescriptionChars)},
                       {"color", color},
                       {"fields", std::move(fields)},
                       {"timestamp", format_rfc3339(e.at)}};
    if (!e.url.empty()) embed["url"] = e.url;  // the title links to the page
    OutboundRequest r;
    r.url = url_;
    r.headers = {"Content-Type: application/json"};
    r.body = json_text(json::object{{"username", "trainwatch"},
                                    {"allowed_mentions", json::object{{"parse", json::array{}}}},
                                    {"embeds", json::array{std::move(embed)}}});
    return r;
  }

  std::string target() const override { return url_origin(url_); }

 private:
  std::string url_;
};

}  // namespace

std::unique_ptr<Provider> make_discord(ChannelFields& f) {
  auto url = f.url("webhook_url", true, {"https", "http"});
  f.finish();
  if (!url) return nullptr;
  return std::make_unique<DiscordProvider>(*url);
}

}  // namespace trainwatch::alerting
