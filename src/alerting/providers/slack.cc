// Slack incoming webhook, Block Kit: a header, the summary, the fields (ten to a
// section), and a context line. `text` is the notification fallback (lock screens).
// Every text is escaped (slack_text), ours included (a monitor name may hold '&'): Slack
// reads <...> as mentions and links in mrkdwn and in `text`, and a cause, a rank's error
// text or a job name from a report is not ours to trust.
//   - name: ml-slack
//     type: slack
//     webhook_url: ${SLACK_WEBHOOK_URL}   # https://hooks.slack.com/services/...
#include <boost/json.hpp>

#include "alerting/providers/provider_util.h"
#include "alerting/providers/providers.h"
#include "core/html_escape.h"
#include "core/json_text.h"

namespace trainwatch::alerting {
namespace {

namespace json = boost::json;

// Block Kit's limits: header text 150 chars, section text 3000, 10 fields of 2000.
constexpr size_t kHeaderChars = 150;
constexpr size_t kSectionChars = 3000;
constexpr size_t kFieldChars = 2000;
constexpr size_t kFieldsPerSection = 10;
// A message's top-level text: Slack cuts it at 40,000; a templated one stays well inside.
constexpr size_t kTextChars = 4000;

class SlackProvider final : public Provider {
 public:
  explicit SlackProvider(std::string url) : url_(std::move(url)) {}

  OutboundRequest build(const AlertEvent&, const Message& m, int64_t delivery_id, SystemTime) const override {
    OutboundRequest r;
    r.url = url_;
    r.headers = {"Content-Type: application/json"};
    if (m.templated) {  // the team's wording, as mrkdwn text
      r.body = json_text(json::object{{"text", slack_text(*m.templated, kTextChars)}});
      return r;
    }
    json::array blocks;
    blocks.push_back(json::object{
        {"type", "header"},
        {"text", json::object{{"type", "plain_text"}, {"text", slack_text(m.title, kHeaderChars)}}}});
    blocks.push_back(json::object{
        {"type", "section"},
        {"text", json::object{{"type", "mrkdwn"}, {"text", slack_text(m.summary, kSectionChars)}}}});
    json::array fields;
    for (const auto& [label, value] : m.fields) {
      if (fields.size() == kFieldsPerSection) {
        blocks.push_back(json::object{{"type", "section"}, {"fields", std::move(fields)}});
        fields = json::array();
      }
      fields.push_back(
          json::object{{"type", "mrkdwn"}, {"text", slack_text("*" + label + "*\n" + value, kFieldChars)}});
    }
    if (!fields.empty()) blocks.push_back(json::object{{"type", "section"}, {"fields", std::move(fields)}});
    std::string context = "trainwatch";
    if (delivery_id != 0) context += " · delivery " + std::to_string(delivery_id);
    blocks.push_back(json::object{
        {"type", "context"}, {"elements", json::array{json::object{{"type", "mrkdwn"}, {"text", context}}}}});
    r.body = json_text(json::object{{"text", escape_markup_text(m.title + ": " + m.summary)},
                                    {"blocks", std::move(blocks)}});
    return r;
  }

  std::string target() const override { return url_origin(url_); }

 private:
  std::string url_;
};

}  // namespace

std::unique_ptr<Provider> make_slack(ChannelFields& f) {
  auto url = f.url("webhook_url", true, {"https", "http"});
  f.finish();
  if (!url) return nullptr;
  return std::make_unique<SlackProvider>(*url);
}

}  // namespace trainwatch::alerting
