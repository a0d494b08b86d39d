// Escaping for text placed into HTML or SVG by hand (templates escape on their own:
// every {{name}} in a mustache template is escaped; {{{name}}} is never used).
#pragma once

#include <string>
#include <string_view>

namespace trainwatch::web {

// Replaces & < > " ' with entities: safe in element text and in quoted attributes.
std::string html_escape(std::string_view text);

}  // namespace trainwatch::web
