// Slack's escaping: text that a target, a rank or a report controls reaches a Slack
// channel as text, never as a mention or a link.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "alerting/message.h"
#include "alerting/providers/provider_util.h"
#include "alerting/providers/providers.h"

namespace trainwatch::alerting {
namespace {

TEST(SlackText, AmpersandAndAngleBracketsBecomeEntitiesAndQuotesStay) {
  EXPECT_EQ(slack_text("<!channel> a & b > c", 100), "&lt;!channel&gt; a &amp; b &gt; c");
  EXPECT_EQ(slack_text("plain *bold* \"quoted\" text's", 100), "plain *bold* \"quoted\" text's");
}

TEST(SlackText, ACutNeverSplitsAnEntity) {
  // "ab&lt;" is 6 bytes; with "…" (3 bytes) a cut at 7 keeps "ab" and drops the entity.
  EXPECT_EQ(slack_text("ab<cd", 7), "ab\u2026");
  EXPECT_EQ(slack_text("ab<cd", 100), "ab&lt;cd");
  const std::string cut = slack_text(std::string(5000, '<'), 3000);
  EXPECT_LE(cut.size(), 3000u);
  EXPECT_TRUE(cut.ends_with("&lt;\u2026"));
}

std::unique_ptr<Provider> slack_provider() {
  ChannelConfig channel;
  channel.name = "team";
  channel.type = "slack";
  channel.fields["webhook_url"].text = "https://hooks.slack.com/services/T/B/x";
  std::vector<ConfigError> errors;
  ChannelFields fields(channel, errors);
  auto provider = make_slack(fields);
  EXPECT_TRUE(errors.empty());
  return provider;
}

TEST(SlackProvider, AMentionInACauseOrAJobNameIsSentEscaped) {
  AlertEvent event;
  event.kind = EventKind::kDown;
  event.monitor = "job <!here>";
  event.monitor_type = "job";
  event.cause = "rank 3: <!channel> CUDA error & <https://evil.example|click>";
  const Message message = render_message(event, SystemTime{});
  auto provider = slack_provider();
  ASSERT_NE(provider, nullptr);
  const OutboundRequest request = provider->build(event, message, 7, SystemTime{});
  // No '<' survives anywhere in what Slack reads: text, header, sections and fields.
  const boost::json::value body = boost::json::parse(request.body);
  const std::string text(body.at("text").as_string());
  EXPECT_EQ(text.find('<'), std::string::npos) << text;
  EXPECT_NE(text.find("&lt;!channel&gt;"), std::string::npos) << text;
  for (const auto& block : body.at("blocks").as_array()) {
    EXPECT_EQ(boost::json::serialize(block).find('<'), std::string::npos) << boost::json::serialize(block);
  }
  EXPECT_NE(request.body.find("&amp; &lt;https://evil.example|click&gt;"), std::string::npos) << request.body;
}

// A channel's template replaces the layout, and is escaped like every other text.
TEST(SlackProvider, ATemplatedTextIsSentAloneAndEscaped) {
  AlertEvent event;
  event.kind = EventKind::kDown;
  event.monitor = "api";
  Message message = render_message(event, SystemTime{});
  message.templated = "*down*: api <!channel>";
  auto provider = slack_provider();
  ASSERT_NE(provider, nullptr);
  const boost::json::value body = boost::json::parse(provider->build(event, message, 7, SystemTime{}).body);
  EXPECT_EQ(boost::json::serialize(body), R"({"text":"*down*: api &lt;!channel&gt;"})");
}

}  // namespace
}  // namespace trainwatch::alerting
