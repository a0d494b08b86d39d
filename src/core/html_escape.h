// Escaping by entities, for text placed by hand into markup: the status page's day bars,
// badges, HTML e-mail and Telegram messages (html_escape), and Slack's mrkdwn, which
// reserves only & < > (escape_markup_text). Templates escape on their own: every {{name}}
// in a mustache template is escaped.
#pragma once

#include <string>
#include <string_view>

namespace trainwatch {

// Replaces & < > " ' with entities: safe in element text and in quoted attributes.
std::string html_escape(std::string_view text);

// Replaces & < > only: safe in element text, and all that Slack's mrkdwn asks (its
// "<!channel>" and "<url|label>" are what an escaped < can never start).
std::string escape_markup_text(std::string_view text);

}  // namespace trainwatch
