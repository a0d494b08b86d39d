// Shields-style SVG badges: /badge/{monitor}/status.svg and /badge/{monitor}/uptime-30d.svg.
// The label and value are escaped; widths are estimated from the character count (no font
// metrics at hand), generous enough for the words the server itself writes.
#pragma once

#include <string>
#include <string_view>

namespace trainwatch::web {

// `colour` is a CSS colour the caller chose from a fixed set; it is not escaped.
std::string render_badge(std::string_view label, std::string_view value, std::string_view colour);

}  // namespace trainwatch::web
