// Conditions' parser (condition_parser.h). Semantics worth knowing (see also condition.h):
//   - A literal may be written in double quotes to keep spaces or an empty string: "".
//   - Placeholders appear only on the left; any(...) and pat(...) only on the right, with
//     == or != (!= negates them).
#include "config/condition_parser.h"

#include <array>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "core/duration.h"

namespace trainwatch::condition {
namespace {

constexpr std::string_view kPlaceholders =
    "[STATUS], [RESPONSE_TIME], [BODY], [DNS_RCODE], [PACKET_LOSS] or [CERTIFICATE_EXPIRATION]";
constexpr std::string_view kLeftSides =
    "[STATUS], [RESPONSE_TIME], [BODY], [DNS_RCODE], [PACKET_LOSS], [CERTIFICATE_EXPIRATION], len(...) or has(...)";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Characters that end a JSON path key: path syntax, function syntax, spaces and operators.
bool is_key_char(char c) {
  return !is_space(c) && std::string_view(
                             ".[](),"
                             "=!<>")
                                 .find(c) == std::string_view::npos;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  // Fills spec; on failure returns false and error() says what and where.
  bool run(ConditionSpec& spec) {
    skip_space();
    if (at_end()) return fail(pos_, "empty condition", "e.g. [STATUS] == 200");
    if (!parse_left(spec)) return false;
    skip_space();
    if (at_end() && spec.function == Function::kHas) {
      spec.values.push_back(Literal{"true", std::nullopt});  // a bare has(...) means == true
      return true;
    }
    if (!parse_operator(spec)) return false;
    skip_space();
    if (!parse_right(spec)) return false;
    if (spec.source == Source::kCertificateExpiration && spec.function == Function::kNone &&
        !read_duration_value(spec)) {
      return false;
    }
    if (spec.function == Function::kHas) {
      const bool is_bool = spec.matcher == Matcher::kLiteral &&
                           (spec.values[0].text == "true" || spec.values[0].text == "false");
      if (!is_bool || (spec.op != Operator::kEq && spec.op != Operator::kNe)) {
        return fail(op_pos_, "has(...) compares only with true or false", "== true or == false");
      }
    }
    return true;
  }

  const std::string& error() const { return error_; }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  void skip_space() {
    while (!at_end() && is_space(text_[pos_])) ++pos_;
  }
  bool starts_with(std::string_view s) const { return text_.substr(pos_).starts_with(s); }

  // Records the first error; `at` is 0-based, reported 1-based.
  bool fail(std::size_t at, std::string_view what, std::string_view expected) {
    error_.assign(what).append(" at character ").append(std::to_string(at + 1));
    if (!expected.empty()) error_.append("; expected ").append(expected);
    return false;
  }

  // [CERTIFICATE_EXPIRATION] compares with a duration ("168h", "7d") or with milliseconds,
  // so the literal is read once here as a number of milliseconds.
  bool read_duration_value(ConditionSpec& spec) {
    constexpr std::string_view kExpected = "a duration such as 168h or 7d";
    if (spec.matcher != Matcher::kLiteral) {
      return fail(value_pos_, "[CERTIFICATE_EXPIRATION] compares only with a duration", kExpected);
    }
    Literal& value = spec.values[0];
    if (auto duration = parse_duration(value.text)) {
      value.number = static_cast<double>(duration->count());
    } else if (!value.number) {
      return fail(value_pos_, "found '" + value.text + "'", kExpected);
    }
    return true;
  }

  // A function name followed by optional spaces and '(', e.g. "len (": consumes it if present.
  bool take_call(std::string_view name) {
    if (!starts_with(name)) return false;
    std::size_t p = pos_ + name.size();
    while (p < text_.size() && is_space(text_[p])) ++p;
    if (p >= text_.size() || text_[p] != '(') return false;
    pos_ = p + 1;
    return true;
  }

  bool parse_left(ConditionSpec& spec) {
    if (take_call("len"))
      spec.function = Function::kLen;
    else if (take_call("has"))
      spec.function = Function::kHas;
    if (spec.function == Function::kNone) return parse_placeholder(spec);
    skip_space();
    if (!parse_placeholder(spec)) return false;
    skip_space();
    if (at_end() || text_[pos_] != ')') {
      return fail(pos_, spec.function == Function::kLen ? "unclosed len(" : "unclosed has(", "')'");
    }
    ++pos_;
    return true;
  }

  bool parse_placeholder(ConditionSpec& spec) {
    const std::size_t start = pos_;
    if (at_end() || text_[pos_] != '[') {
      return fail(pos_, "missing placeholder", kLeftSides);
    }
    const std::size_t close = text_.find(']', pos_);
    if (close == std::string_view::npos) return fail(pos_, "unclosed placeholder", "']'");
    const std::string_view name = text_.substr(pos_, close + 1 - pos_);
    if (name == "[STATUS]")
      spec.source = Source::kStatus;
    else if (name == "[RESPONSE_TIME]")
      spec.source = Source::kResponseTime;
    else if (name == "[BODY]")
      spec.source = Source::kBody;
    else if (name == "[DNS_RCODE]")
      spec.source = Source::kDnsRcode;
    else if (name == "[PACKET_LOSS]")
      spec.source = Source::kPacketLoss;
    else if (name == "[CERTIFICATE_EXPIRATION]")
      spec.source = Source::kCertificateExpiration;
    else
      return fail(pos_, "unknown placeholder " + std::string(name), kPlaceholders);
    pos_ = close + 1;
    if (!parse_path(spec)) return false;
    if (!spec.path.empty() && spec.source != Source::kBody) {
      return fail(close + 1, std::string(name) + " takes no JSON path", "an operator");
    }
    spec.placeholder = text_.substr(start, pos_ - start);
    return true;
  }

  bool parse_path(ConditionSpec& spec) {
    while (!at_end()) {
      if (text_[pos_] == '.') {
        const std::size_t key_start = ++pos_;
        while (!at_end() && is_key_char(text_[pos_])) ++pos_;
        if (pos_ == key_start) return fail(pos_, "empty key in JSON path", "a key after '.'");
        spec.path.push_back(PathStep{std::string(text_.substr(key_start, pos_ - key_start)), 0, false});
      } else if (text_[pos_] == '[') {
        const std::size_t digits_start = ++pos_;
        while (!at_end() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
        if (pos_ == digits_start) return fail(pos_, "bad array index", "digits after '['");
        std::size_t index = 0;
        auto [ptr, ec] = std::from_chars(text_.data() + digits_start, text_.data() + pos_, index);
        if (ec != std::errc()) return fail(digits_start, "array index too large", "");
        if (at_end() || text_[pos_] != ']') return fail(pos_, "unclosed array index", "']'");
        ++pos_;
        spec.path.push_back(PathStep{{}, index, true});
      } else {
        break;
      }
    }
    return true;
  }

  bool parse_operator(ConditionSpec& spec) {
    op_pos_ = pos_;
    // Two-character operators first so "<=" is not read as "<" followed by "=".
    static constexpr std::array<Operator, 6> kOrder = {Operator::kEq, Operator::kNe, Operator::kLe,
                                                       Operator::kGe, Operator::kLt, Operator::kGt};
    for (Operator op : kOrder) {
      if (starts_with(operator_text(op))) {
        spec.op = op;
        pos_ += operator_text(op).size();
        return true;
      }
    }
    return fail(pos_, at_end() ? "missing operator" : "unknown operator", "==, !=, <, <=, > or >=");
  }

  bool parse_right(ConditionSpec& spec) {
    const std::size_t start = pos_;
    value_pos_ = pos_;
    const std::string_view rest = trim(text_.substr(pos_));
    if (rest.empty()) {
      return fail(pos_, "missing value after " + std::string(operator_text(spec.op)),
                  "a value, any(...) or pat(...)");
    }
    if (rest.starts_with("[STATUS]") || rest.starts_with("[RESPONSE_TIME]") || rest.starts_with("[BODY]") ||
        rest.starts_with("[DNS_RCODE]") || rest.starts_with("[PACKET_LOSS]") ||
        rest.starts_with("[CERTIFICATE_EXPIRATION]") || take_call("len") || take_call("has")) {
      return fail(start, "placeholders and len/has belong on the left", "a value, any(...) or pat(...)");
    }
    const bool is_any = take_call("any");
    const bool is_pat = !is_any && take_call("pat");
    if (!is_any && !is_pat) {
      spec.matcher = Matcher::kLiteral;
      Literal literal;
      if (!parse_literal(rest, start, literal)) return false;
      spec.values.push_back(std::move(literal));
      return true;
    }
    const char* name = is_any ? "any(" : "pat(";
    if (spec.op != Operator::kEq && spec.op != Operator::kNe) {
      return fail(start, std::string(name) + "...) works only with == or !=", "== or !=");
    }
    // Arguments run to the last ')', so a pattern may itself contain ')'.
    const std::string_view tail = trim(text_.substr(pos_));
    const std::size_t args_start = pos_ + static_cast<std::size_t>(tail.data() - (text_.data() + pos_));
    if (tail.empty() || tail.back() != ')') return fail(text_.size(), std::string("unclosed ") + name, "')'");
    const std::string_view args = tail.substr(0, tail.size() - 1);
    spec.matcher = is_any ? Matcher::kAny : Matcher::kPat;
    if (is_pat) {
      Literal pattern;
      if (!parse_literal(trim(args), args_start, pattern)) return false;
      spec.values.push_back(std::move(pattern));
      return true;
    }
    std::size_t from = 0;
    while (true) {
      const std::size_t comma = std::min(args.find(',', from), args.size());
      const std::string_view arg = trim(args.substr(from, comma - from));
      Literal literal;
      if (!parse_literal(arg, args_start + from, literal)) return false;
      spec.values.push_back(std::move(literal));
      if (comma == args.size()) break;
      from = comma + 1;
    }
    return true;
  }

  // `text` is already trimmed; `at` is where it (roughly) starts, for messages.
  bool parse_literal(std::string_view text, std::size_t at, Literal& out) {
    if (text.empty()) return fail(at, "missing value", "a value (write \"\" for an empty string)");
    if (text.front() == '"') {
      if (text.size() < 2 || text.back() != '"') return fail(at, "unterminated quote", "a closing '\"'");
      text = text.substr(1, text.size() - 2);
    }
    out.text = std::string(text);
    out.number = parse_number(text);
    return true;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t op_pos_ = 0;
  std::size_t value_pos_ = 0;
  std::string error_;
};

}  // namespace

Result<ParsedCondition> parse_condition(std::string_view text) {
  try {
    ParsedCondition parsed;
    Parser parser(text);
    if (!parser.run(parsed.spec)) return make_error("config.condition", parser.error());
    parsed.text = std::string(trim(text));
    return parsed;
  } catch (const std::exception& e) {  // allocation failure: report, never throw across the module
    return make_error("config.condition", std::string("could not parse condition: ") + e.what());
  }
}

}  // namespace trainwatch::condition
