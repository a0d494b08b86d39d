// Telegram Bot API: sendMessage with HTML formatting. The bot token is part of the URL:
// the URL is never logged or shown (target() is the origin only).
//   - name: tg
//     type: telegram
//     bot_token: ${TELEGRAM_BOT_TOKEN}
//     chat_id: "-1001234567890"
//     url: https://api.telegram.org   # optional
#include <boost/json.hpp>

#include "alerting/providers/provider_util.h"
#include "alerting/providers/providers.h"
#include "core/json_text.h"

namespace trainwatch::alerting {
namespace {

namespace json = boost::json;

// Telegram's limit on a message's text, after entity parsing; cut the parts before
// escaping so that no tag or entity is cut in half.
constexpr size_t kTelegramSummaryChars = 1000;
constexpr size_t kTelegramValueChars = 300;
constexpr size_t kTelegramTextChars = 3000;

class TelegramProvider final : public Provider {
 public:
  TelegramProvider(std::string url, std::string token, std::string chat_id)
      : url_(std::move(url)), token_(std::move(token)), chat_id_(std::move(chat_id)) {}

  OutboundRequest build(const AlertEvent&, const Message& m, int64_t, SystemTime) const override {
    std::string text;
    if (m.templated) {  // the team's wording, as text
      text = html_escape(cut_text(*m.templated, kTelegramTextChars));
    } else {
      text = "<b>" + html_escape(m.title) + "</b>\n" +
             html_escape(cut_text(m.summary, kTelegramSummaryChars)) + "\n";
      for (const auto& [label, value] : m.fields) {
        text += "\n<b>" + html_escape(label) + ":</b> " + html_escape(cut_text(value, kTelegramValueChars));
      }
    }
    OutboundRequest r;
    r.url = join_url(url_, "/bot" + token_ + "/sendMessage");
    r.headers = {"Content-Type: application/json"};
    r.body = json_text(json::object{
        {"chat_id", chat_id_}, {"text", text}, {"parse_mode", "HTML"}, {"disable_web_page_preview", true}});
    return r;
  }

  std::string target() const override { return url_origin(url_) + " chat " + chat_id_; }

 private:
  std::string url_;
  std::string token_;
  std::string chat_id_;
};

}  // namespace

std::unique_ptr<Provider> make_telegram(ChannelFields& f) {
  auto token = f.string("bot_token", true);
  auto chat = f.string("chat_id", true);
  auto url = f.url("url", false, {"https", "http"});
  if (token && token->find_first_of("/?# ") != std::string::npos) {
    f.error("bot_token", "found characters that cannot be in a bot token; expected the token BotFather gave");
  }
  f.finish();
  if (!token || !chat) return nullptr;
  return std::make_unique<TelegramProvider>(url.value_or("https://api.telegram.org"), *token, *chat);
}

}  // namespace trainwatch::alerting
