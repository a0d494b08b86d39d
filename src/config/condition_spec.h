// The parsed form of a condition (condition.h): what the parser (condition_parser.h)
// makes of its text once, at config load, and the evaluator (condition.cc) reads at
// every check. Internal to config/.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace trainwatch::condition {

enum class Source { kStatus, kResponseTime, kBody, kDnsRcode, kPacketLoss, kCertificateExpiration };
enum class Function { kNone, kLen, kHas };
enum class Operator { kEq, kNe, kLt, kLe, kGt, kGe };
enum class Matcher { kLiteral, kAny, kPat };

struct PathStep {
  std::string key;        // object member, when !is_index
  std::size_t index = 0;  // array element, when is_index
  bool is_index = false;
};

struct Literal {
  std::string text;
  std::optional<double> number;  // parsed once here so evaluation never reparses the config side
};

struct ConditionSpec {
  Function function = Function::kNone;
  Source source = Source::kStatus;
  std::string placeholder;  // as written, e.g. "[BODY].ranks[0].step"
  std::vector<PathStep> path;
  Operator op = Operator::kEq;
  Matcher matcher = Matcher::kLiteral;
  std::vector<Literal> values;  // one for a literal or pat(...); the list of any(...)

  bool reads_json() const { return source == Source::kBody && !path.empty(); }
};

// A finite number, or none (either side of a comparison is a number only when it reads
// as one whole).
inline std::optional<double> parse_number(std::string_view s) {
  double d = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, d);
  if (s.empty() || ec != std::errc() || ptr != end || !std::isfinite(d)) return std::nullopt;
  return d;
}

inline std::string_view operator_text(Operator op) {
  switch (op) {
    case Operator::kEq: return "==";
    case Operator::kNe: return "!=";
    case Operator::kLt: return "<";
    case Operator::kLe: return "<=";
    case Operator::kGt: return ">";
    case Operator::kGe: return ">=";
  }
  return "==";
}

}  // namespace trainwatch::condition
