#include "alerting/providers/provider_util.h"

#include <boost/url/parse.hpp>

#include "core/html_escape.h"

namespace trainwatch::alerting {

std::string url_origin(std::string_view url) {
  auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed) return "(invalid url)";
  std::string out = std::string(parsed->scheme()) + "://" + std::string(parsed->encoded_host());
  if (parsed->has_port()) out += ":" + std::string(parsed->port());
  return out;
}

std::string slack_text(std::string_view text, size_t max) {
  std::string escaped = escape_markup_text(text);
  if (escaped.size() <= max) return escaped;
  constexpr std::string_view kEllipsis = "\u2026";
  size_t end = max > kEllipsis.size() ? max - kEllipsis.size() : 0;
  while (end > 0 && (static_cast<unsigned char>(escaped[end]) & 0xC0) == 0x80) --end;
  // An entity is at most "&amp;": an '&' in the last four bytes kept starts a cut one.
  const size_t amp = escaped.rfind('&', end == 0 ? 0 : end - 1);
  if (amp != std::string::npos && end - amp < 5 && escaped.find(';', amp) >= end) end = amp;
  escaped.resize(end);
  return escaped + std::string(kEllipsis);
}

std::string join_url(std::string_view base, std::string_view path) {
  while (!base.empty() && base.back() == '/') base.remove_suffix(1);
  return std::string(base) + std::string(path);
}

std::string cut_text(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  constexpr std::string_view kEllipsis = "…";
  size_t end = max > kEllipsis.size() ? max - kEllipsis.size() : 0;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end)) + std::string(kEllipsis);
}

}  // namespace trainwatch::alerting
