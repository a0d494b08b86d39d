// The condition parser, and evaluation of what it accepts against a response.
// Input: condition lines, an empty line, then the response body:
//   [BODY].status == ok
//   len([BODY].ranks) == 8
//
//   {"status":"ok","ranks":[1,2]}
// Without an empty line every line is a condition and the body is empty.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "config/condition.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view body;
  if (size_t blank = input.find("\n\n"); blank != std::string_view::npos) {
    body = input.substr(blank + 2);
    input = input.substr(0, blank);
  }
  std::vector<trainwatch::Condition> conditions;
  while (!input.empty()) {
    size_t end = input.find('\n');
    std::string_view line = input.substr(0, end);
    input = end == std::string_view::npos ? std::string_view() : input.substr(end + 1);
    auto parsed = trainwatch::Condition::parse(line);
    if (parsed) conditions.push_back(std::move(*parsed));
  }
  // Two responses: a healthy one (its certificate long expired) and a failing one (no TLS),
  // so both outcomes' descriptions are built.
  for (int status : {200, 503}) {
    trainwatch::ConditionInput response{status, status == 200 ? 42.0 : 9000.5, body};
    if (status == 200) response.certificate_expiration_ms = -9.5e15;
    for (const auto& outcome : trainwatch::evaluate_conditions(conditions, response))
      (void)outcome.description.size();
  }
  return 0;
}
