#include "core/html_escape.h"

namespace trainwatch {
namespace {

std::string replace_with_entities(std::string_view text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += quotes ? "&quot;" : "\""; break;
      case '\'': out += quotes ? "&#39;" : "'"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string html_escape(std::string_view text) { return replace_with_entities(text, true); }

std::string escape_markup_text(std::string_view text) { return replace_with_entities(text, false); }

}  // namespace trainwatch
