// Gatus-style conditions (condition.h): the Condition handle, and the evaluator, which
// parses the body as JSON at most once per response. The parser is condition_parser.cc.
//
// Semantics worth knowing (see also condition.h):
//   - Both sides compare as numbers when both parse as finite numbers, as strings otherwise.
//   - A [BODY] path that is missing fails every condition except has(...).
#include "config/condition.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include <boost/json.hpp>

#include "config/condition_parser.h"
#include "core/duration.h"
#include "core/json_text.h"
#include "core/redaction.h"

namespace trainwatch {
namespace {

using namespace condition;  // NOLINT(google-build-using-namespace): this file is its evaluator

// Hostile bodies: deeper nesting is rejected by the parser (the body then counts as not JSON).
constexpr std::size_t kMaxJsonDepth = 64;
// Found values quoted in failure descriptions are cut here, so a huge body can't bloat incidents.
constexpr std::size_t kMaxDescribedValueChars = 200;
// First bytes of a parsed body live on the stack; bigger bodies spill to the heap.
constexpr std::size_t kJsonArenaBytes = 4096;

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

void resolve(const ConditionSpec& spec, const ConditionInput& input, const Body& body, Value& out) {
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

bool satisfied(const ConditionSpec& spec, const Value& left) {
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
void append_expectation(std::string& out, const ConditionSpec& spec, bool explicit_eq) {
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

std::string describe_failure(const ConditionSpec& spec, const Value& left, const Body& body) {
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
  ConditionSpec spec;
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
  auto parsed = parse_condition(text);
  if (!parsed) return parsed.error();
  try {
    return Condition(std::make_unique<Impl>(Impl{std::move(parsed->text), std::move(parsed->spec)}));
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
