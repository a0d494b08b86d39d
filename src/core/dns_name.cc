#include "core/dns_name.h"

namespace trainwatch {
namespace {

bool allowed(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '*';
}

}  // namespace

std::string_view dns_name_without_root(std::string_view name) {
  if (name.size() > 1 && name.back() == '.') name.remove_suffix(1);
  return name;
}

std::string dns_name_problem(std::string_view name) {
  name = dns_name_without_root(name);
  if (name.empty() || name == ".") return "expected a name such as host.example.com";
  if (name.size() > kMaxDnsNameLength) {
    return "expected at most " + std::to_string(kMaxDnsNameLength) + " characters, not " +
           std::to_string(name.size());
  }
  size_t label = 1;
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    const std::string_view text = name.substr(start, dot - start);
    if (text.empty()) return "expected no empty label (two dots in a row, or a leading dot)";
    if (text.size() > kMaxDnsLabelLength) {
      return "expected labels of at most " + std::to_string(kMaxDnsLabelLength) + " characters; label " +
             std::to_string(label) + " has " + std::to_string(text.size());
    }
    for (char c : text) {
      if (!allowed(c)) return "expected letters, digits, '-', '_' or '*' between the dots";
    }
    start = dot + 1;
    ++label;
  }
  return {};
}

}  // namespace trainwatch
