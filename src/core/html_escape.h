// Escaping for text placed into HTML or SVG by hand: the status page's day bars, badges,
// HTML e-mail and Telegram messages. (Templates escape on their own: every {{name}} in a
// mustache template is escaped.)
#pragma once

#include <string>
#include <string_view>

namespace trainwatch {

// Replaces & < > " ' with entities: safe in element text and in quoted attributes.
std::string html_escape(std::string_view text);

}  // namespace trainwatch
