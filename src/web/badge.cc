#include "web/badge.h"

#include "core/html_escape.h"

namespace trainwatch::web {
namespace {

// Verdana 11px averages under 7 px per character; 10 px of padding on each side.
int text_width(std::string_view text) { return static_cast<int>(text.size()) * 7 + 10; }

}  // namespace

std::string render_badge(std::string_view label, std::string_view value, std::string_view colour) {
  const int lw = text_width(label), vw = text_width(value), w = lw + vw;
  const std::string l = html_escape(label), v = html_escape(value);
  std::string svg;
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(w) +
         "\" height=\"20\" role=\"img\" aria-label=\"" + l + ": " + v + "\">";
  svg += "<title>" + l + ": " + v + "</title>";
  svg += "<rect width=\"" + std::to_string(lw) + "\" height=\"20\" fill=\"#555\"/>";
  svg += "<rect x=\"" + std::to_string(lw) + "\" width=\"" + std::to_string(vw) + "\" height=\"20\" fill=\"" +
         std::string(colour) + "\"/>";
  svg +=
      "<g fill=\"#fff\" font-family=\"Verdana,DejaVu Sans,sans-serif\" font-size=\"11\" text-anchor=\"middle\">";
  svg += "<text x=\"" + std::to_string(lw / 2) + "\" y=\"14\">" + l + "</text>";
  svg += "<text x=\"" + std::to_string(lw + vw / 2) + "\" y=\"14\">" + v + "</text></g></svg>";
  return svg;
}

}  // namespace trainwatch::web
