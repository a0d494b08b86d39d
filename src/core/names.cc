#include "core/names.h"

#include <algorithm>

namespace trainwatch {

std::string name_problem(std::string_view name) {
  auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  };
  if (name.empty() || !std::all_of(name.begin(), name.end(), allowed)) {
    return "expected lower-case letters, digits, '.', '_' or '-'";
  }
  if (name.size() > kMaxNameLength) {
    return "expected at most " + std::to_string(kMaxNameLength) + " characters, not " +
           std::to_string(name.size());
  }
  if (name.front() == '.') return "expected a name that does not start with '.'";
  return {};
}

bool valid_name(std::string_view name) { return name_problem(name).empty(); }

}  // namespace trainwatch
