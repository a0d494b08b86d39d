// Gatus-style conditions: a hand-written parser (positions in errors) and an evaluator that
// parses the body as JSON at most once per response.
//
// Semantics worth knowing (see also condition.h):
//   - Both sides compare as numbers when both parse as finite numbers, as strings otherwise.
//   - A [BODY] path that is missing fails every condition except has(...).
//   - A literal may be written in double quotes to keep spaces or an empty string: "".
//   - Placeholders appear only on the left; any(...) and pat(...) only on the right, with
//     == or != (!= negates them).
#include "config/condition.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include <boost/json.hpp>

#include "core/duration.h"
#include "core/json_text.h"
#include "core/redaction.h"

namespace trainwatch {
namespace {

// Hostile bodies: deeper nesting is rejected by the parser (the body then counts as not JSON).
constexpr std::size_t kMaxJsonDepth = 64;
// Found values quoted in failure descriptions are cut here, so a huge body can't bloat incidents.
constexpr std::size_t kMaxDescribedValueChars = 200;
// First bytes of a parsed body live on the stack; bigger bodies spill to the heap.
constexpr std::size_t kJsonArenaBytes = 4096;

enum class Source { kStatus, kResponseTime, kBody, kDnsRcode, kPacketLoss, kCertificateExpiration };
enum class Function { kNone, kLen, kHas };

constexpr std::string_view kPlaceholders =
    "[STATUS], [RESPONSE_TIME], [BODY], [DNS_RCODE], [PACKET_LOSS] or [CERTIFICATE_EXPIRATION]";
constexpr std::string_view kLeftSides =
    "[STATUS], [RESPONSE_TIME], [BODY], [DNS_RCODE], [PACKET_LOSS], [CERTIFICATE_EXPIRATION], len(...) or has(...)";
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

struct Spec {
  Function function = Function::kNone;
  Source source = Source::kStatus;
  std::string placeholder;  // as written, e.g. "[BODY].ranks[0].step"
  std::vector<PathStep> path;
  Operator op = Operator::kEq;
  Matcher matcher = Matcher::kLiteral;
  std::vector<Literal> values;  // one for a literal or pat(...); the list of any(...)

  bool reads_json() const { return source == Source::kBody && !path.empty(); }
};

std::optional<double> parse_number(std::string_view s) {
  double d = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, d);
  if (s.empty() || ec != std::errc() || ptr != end || !std::isfinite(d)) return std::nullopt;
  return d;
}

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

std::string_view operator_text(Operator op) {
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

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  // Fills spec; on failure returns false and error() says what and where.
  bool run(Spec& spec) {
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
  bool read_duration_value(Spec& spec) {
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

  bool parse_left(Spec& spec) {
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

  bool parse_placeholder(Spec& spec) {
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

  bool parse_path(Spec& spec) {
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

  bool parse_operator(Spec& spec) {
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

  bool parse_right(Spec& spec) {
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

// What the left side resolved to. `text` views the input, the parsed body, a static string,
// `buf` or `owned`; it is never copied, so the views stay valid.
struct Value {
  bool missing = false;
  std::string_view text;
  std::optional<double> number;
  std::array<char, 32> buf{};
  std::string owned;

  Value() = default;
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  template <typename Int>
  void set_integer(Int n) {
    auto [ptr, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), n);
    text = std::string_view(buf.data(), static_cast<std::size_t>(ptr - buf.data()));
    number = static_cast<double>(n);
  }

  // Numbers render as JSON would: integral values without ".0".
  void set_double(double d) {
    if (std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 1e15) {
      set_integer(static_cast<int64_t>(d));
      return;
    }
    auto [ptr, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), d);
    text = std::string_view(buf.data(), static_cast<std::size_t>(ptr - buf.data()));
    // A huge JSON number parses to infinity and still orders as a number; only NaN can't.
    number = std::isnan(d) ? std::nullopt : std::optional<double>(d);
  }

  void set_text(std::string_view s) {
    text = s;
    number = parse_number(s);
  }

  void set_bool(bool b) {
    text = b ? "true" : "false";
    number.reset();
  }

  void set_json(const boost::json::value& v) {
    switch (v.kind()) {
      case boost::json::kind::string:
        set_text(std::string_view(v.get_string().data(), v.get_string().size()));
        break;
      case boost::json::kind::int64: set_integer(v.get_int64()); break;
      case boost::json::kind::uint64: set_integer(v.get_uint64()); break;
      case boost::json::kind::double_: set_double(v.get_double()); break;
      case boost::json::kind::bool_: set_bool(v.get_bool()); break;
      case boost::json::kind::null:
        text = "null";
        number.reset();
        break;
      case boost::json::kind::array:
      case boost::json::kind::object:
        owned = json_text(v);
        text = owned;
        number.reset();
        break;
    }
  }
};

// The body as parsed for this evaluation, or why it could not be.
struct Body {
  std::string_view raw;
  const boost::json::value* json = nullptr;  // null when not JSON (or not parsed)
  std::string error;                         // the parser's reason when not JSON
};

const boost::json::value* lookup(const boost::json::value& root, const std::vector<PathStep>& path) {
  const boost::json::value* node = &root;
  for (const PathStep& step : path) {
    if (step.is_index) {
      const boost::json::array* array = node->if_array();
      if (array == nullptr || step.index >= array->size()) return nullptr;
      node = &(*array)[step.index];
    } else {
      const boost::json::object* object = node->if_object();
      if (object == nullptr) return nullptr;
      node = object->if_contains(step.key);
      if (node == nullptr) return nullptr;
    }
  }
  return node;
}

void resolve(const Spec& spec, const ConditionInput& input, const Body& body, Value& out) {
  if (spec.source == Source::kStatus) {
    out.set_integer(input.status);
    if (spec.function == Function::kHas) out.set_bool(true);
    if (spec.function == Function::kLen) out.set_integer(out.text.size());
    return;
  }
  if (spec.source == Source::kDnsRcode) {
    out.set_text(input.dns_rcode);
    if (spec.function == Function::kHas) out.set_bool(true);
    if (spec.function == Function::kLen) out.set_integer(out.text.size());
    return;
  }
  if (spec.source == Source::kResponseTime || spec.source == Source::kPacketLoss) {
    out.set_double(spec.source == Source::kResponseTime ? input.response_time_ms : input.packet_loss_pct);
    if (spec.function == Function::kHas) out.set_bool(true);
    if (spec.function == Function::kLen) out.set_integer(out.text.size());
    return;
  }
  if (spec.source == Source::kCertificateExpiration) {
    const std::optional<double>& left_ms = input.certificate_expiration_ms;
    if (spec.function == Function::kHas) {
      out.set_bool(left_ms.has_value());
      return;
    }
    if (!left_ms) {
      out.missing = true;
      return;
    }
    // Shown as a duration ("2d 23h", "-1d 2h" once expired), compared in milliseconds.
    const double clamped = std::clamp(*left_ms, -9e15, 9e15);
    out.owned = (clamped < 0 ? "-" : "") + format_duration(Millis(static_cast<int64_t>(clamped)));
    out.text = out.owned;
    out.number = clamped;
    if (spec.function == Function::kLen) out.set_integer(out.text.size());
    return;
  }
  if (spec.path.empty()) {  // the raw body
    if (spec.function == Function::kHas)
      out.set_bool(!body.raw.empty());
    else if (spec.function == Function::kLen)
      out.set_integer(body.raw.size());
    else
      out.set_text(body.raw);
    return;
  }
  const boost::json::value* node = body.json == nullptr ? nullptr : lookup(*body.json, spec.path);
  if (spec.function == Function::kHas) {
    out.set_bool(node != nullptr);
    return;
  }
  if (node == nullptr) {
    out.missing = true;
    return;
  }
  if (spec.function != Function::kLen) {
    out.set_json(*node);
  } else if (const boost::json::array* array = node->if_array()) {
    out.set_integer(array->size());
  } else if (const boost::json::object* object = node->if_object()) {
    out.set_integer(object->size());
  } else {
    out.set_json(*node);  // a string's length, or that of a scalar's rendering, like Gatus
    out.set_integer(out.text.size());
  }
}

int compare(const Value& left, const Literal& right) {
  if (left.number && right.number) {
    return *left.number < *right.number ? -1 : (*left.number > *right.number ? 1 : 0);
  }
  const int c = left.text.compare(right.text);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

bool holds(Operator op, int c) {
  switch (op) {
    case Operator::kEq: return c == 0;
    case Operator::kNe: return c != 0;
    case Operator::kLt: return c < 0;
    case Operator::kLe: return c <= 0;
    case Operator::kGt: return c > 0;
    case Operator::kGe: return c >= 0;
  }
  return false;
}

// '*' matches any run of characters. Greedy with one backtrack point: O(n*m) worst case,
// no recursion, so a hostile body can't blow the stack.
bool glob_match(std::string_view s, std::string_view p) {
  std::size_t si = 0, pi = 0, star = std::string_view::npos, mark = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = si;
    } else if (pi < p.size() && p[pi] == s[si]) {
      ++pi;
      ++si;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      si = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

bool satisfied(const Spec& spec, const Value& left) {
  switch (spec.matcher) {
    case Matcher::kLiteral: return holds(spec.op, compare(left, spec.values[0]));
    case Matcher::kAny: {
      const bool found = std::any_of(spec.values.begin(), spec.values.end(),
                                     [&](const Literal& v) { return compare(left, v) == 0; });
      return found == (spec.op == Operator::kEq);
    }
    case Matcher::kPat: return glob_match(left.text, spec.values[0].text) == (spec.op == Operator::kEq);
  }
  return false;
}

// Cuts at a UTF-8 character boundary so descriptions stay valid text.
void append_truncated(std::string& out, std::string_view s) {
  if (s.size() <= kMaxDescribedValueChars) {
    out.append(s);
    return;
  }
  std::size_t cut = kMaxDescribedValueChars;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  out.append(s.substr(0, cut)).append("...");
}

// The right side as written, e.g. "ok", "< 500", "!= any(a, b)"; `explicit_eq` writes "== ".
void append_expectation(std::string& out, const Spec& spec, bool explicit_eq) {
  if (spec.op != Operator::kEq || explicit_eq) out.append(operator_text(spec.op)).append(" ");
  if (spec.matcher == Matcher::kLiteral) {
    out.append(spec.values[0].text);
    return;
  }
  out.append(spec.matcher == Matcher::kAny ? "any(" : "pat(");
  for (std::size_t i = 0; i < spec.values.size(); ++i) {
    if (i > 0) out.append(", ");
    out.append(spec.values[i].text);
  }
  out.append(")");
}

std::string describe_failure(const Spec& spec, const Value& left, const Body& body) {
  std::string out;
  const std::string_view not_json_note =
      spec.reads_json() && body.json == nullptr ? std::string_view(body.error) : std::string_view();
  auto append_missing = [&] {
    out.append(spec.placeholder).append(" is missing");
    if (spec.source == Source::kCertificateExpiration) out.append(" (no TLS certificate was seen)");
    if (!not_json_note.empty()) out.append(" (body is not valid JSON: ").append(not_json_note).append(")");
    out.append(", expected ");
  };
  if (spec.function == Function::kHas) {
    const bool want_present = (spec.values[0].text == "true") == (spec.op == Operator::kEq);
    if (want_present) {
      append_missing();
      out.append("has(").append(spec.placeholder).append(")");
    } else {
      out.append(spec.placeholder)
          .append(" is present, expected has(")
          .append(spec.placeholder)
          .append(") == false");
    }
    return out;
  }
  if (left.missing) {
    append_missing();
    if (spec.function == Function::kLen) {
      out.append("len(").append(spec.placeholder).append(") ");
      append_expectation(out, spec, /*explicit_eq=*/true);
    } else {
      append_expectation(out, spec, /*explicit_eq=*/false);
    }
    return out;
  }
  if (spec.function == Function::kLen)
    out.append("len(").append(spec.placeholder).append(")");
  else
    out.append(spec.placeholder);
  out.append(" == ");
  // What the target answered is marked, so that public views can hide it (core/redaction.h):
  // a monitor of an internal service must not publish what that service returns.
  std::string found;
  append_truncated(found, left.text);
  out.append(spec.source == Source::kBody ? mark_body_value(found) : found);
  out.append(", expected ");
  append_expectation(out, spec, /*explicit_eq=*/false);
  return out;
}

}  // namespace

struct Condition::Impl {
  std::string text;
  Spec spec;
};

Condition::Condition(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Condition::~Condition() = default;
Condition::Condition(const Condition& other)
    : impl_(other.impl_ ? std::make_unique<Impl>(*other.impl_) : nullptr) {}
Condition& Condition::operator=(const Condition& other) {
  if (this != &other) impl_ = other.impl_ ? std::make_unique<Impl>(*other.impl_) : nullptr;
  return *this;
}
Condition::Condition(Condition&&) noexcept = default;
Condition& Condition::operator=(Condition&&) noexcept = default;

const std::string& Condition::text() const {
  static const std::string kEmpty;
  return impl_ ? impl_->text : kEmpty;
}

const std::string& Condition::placeholder() const {
  static const std::string kEmpty;
  return impl_ ? impl_->spec.placeholder : kEmpty;
}

bool Condition::reads_certificate_expiration() const {
  return impl_ && impl_->spec.source == Source::kCertificateExpiration;
}

Result<Condition> Condition::parse(std::string_view text) {
  try {
    auto impl = std::make_unique<Impl>();
    Parser parser(text);
    if (!parser.run(impl->spec)) return make_error("config.condition", parser.error());
    impl->text = std::string(trim(text));
    return Condition(std::move(impl));
  } catch (const std::exception& e) {  // allocation failure: report, never throw across the module
    return make_error("config.condition", std::string("could not parse condition: ") + e.what());
  }
}

std::vector<ConditionOutcome> evaluate_conditions(const std::vector<Condition>& conditions,
                                                  const ConditionInput& input) {
  std::vector<ConditionOutcome> outcomes(conditions.size());
  Body body;
  body.raw = input.body;

  // Declared before `parsed`, which allocates from it.
  std::array<unsigned char, kJsonArenaBytes> arena;
  boost::json::monotonic_resource resource(arena.data(), arena.size());
  boost::json::value parsed;
  const bool reads_json = std::any_of(conditions.begin(), conditions.end(), [](const Condition& c) {
    return c.impl_ && c.impl_->spec.reads_json();
  });
  if (reads_json) {
    try {
      boost::json::parse_options options;
      options.max_depth = kMaxJsonDepth;
      boost::json::error_code ec;
      parsed = boost::json::parse(boost::json::string_view(input.body.data(), input.body.size()), ec,
                                  &resource, options);
      if (ec)
        body.error = ec.message();
      else
        body.json = &parsed;
    } catch (const std::exception& e) {  // only allocation failure; parse errors come as ec
      body.error = e.what();
    }
  }

  for (std::size_t i = 0; i < conditions.size(); ++i) {
    ConditionOutcome& outcome = outcomes[i];
    const Condition::Impl* impl = conditions[i].impl_.get();
    if (impl == nullptr) {  // a moved-from condition: nothing to check, so it can't pass
      outcome = {false, "empty condition"};
      continue;
    }
    try {
      Value left;
      resolve(impl->spec, input, body, left);
      if (!left.missing && satisfied(impl->spec, left)) continue;
      outcome.ok = false;
      outcome.description = describe_failure(impl->spec, left, body);
    } catch (const std::exception& e) {
      outcome = {false, impl->text + ": could not evaluate: " + e.what()};
    }
  }
  return outcomes;
}

}  // namespace trainwatch
