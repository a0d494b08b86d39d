#include "checks/resolv_conf.h"

namespace trainwatch::checks {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

}  // namespace

std::optional<std::string> first_nameserver(std::string_view text) {
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    if (const size_t comment = line.find_first_of("#;"); comment != std::string_view::npos) {
      line = line.substr(0, comment);
    }
    while (!line.empty() && is_blank(line.front())) line.remove_prefix(1);
    constexpr std::string_view kKeyword = "nameserver";
    if (!line.starts_with(kKeyword) || line.size() == kKeyword.size() || !is_blank(line[kKeyword.size()])) {
      continue;
    }
    line.remove_prefix(kKeyword.size());
    while (!line.empty() && is_blank(line.front())) line.remove_prefix(1);
    size_t end = 0;
    while (end < line.size() && !is_blank(line[end])) ++end;
    if (end > 0) return std::string(line.substr(0, end));
  }
  return std::nullopt;
}

}  // namespace trainwatch::checks
