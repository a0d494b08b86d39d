#include "core/json_text.h"

#include <array>
#include <charconv>
#include <cmath>

namespace trainwatch {
namespace {

// Outside [kPlainMin, kPlainMax) plain decimal needs more than six leading zeros or more
// than 21 digits before the point; JavaScript switches to exponent form at the same bounds.
constexpr double kPlainMin = 1e-6;
constexpr double kPlainMax = 1e21;

void append_json_number(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  // The longest shortest form: "-2.2250738585072014e-308" (24 chars); fixed form in the
  // plain range: 21 digits, a sign, a point and 17 significant digits at most.
  std::array<char, 64> buf{};
  const double magnitude = std::fabs(value);
  const bool plain = magnitude == 0 || (magnitude >= kPlainMin && magnitude < kPlainMax);
  const auto format = plain ? std::chars_format::fixed : std::chars_format::scientific;
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), value, format);
  if (ec != std::errc()) {  // cannot happen with this buffer; never write a broken number
    out += "null";
    return;
  }
  const std::string_view text(buf.data(), static_cast<size_t>(end - buf.data()));
  out += text;
  if (plain && text.find('.') == std::string_view::npos) out += ".0";
}

bool needs_escape(char c) { return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20; }

void append_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  // Most strings escape nothing: copy each run of plain characters at once.
  size_t run_start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (!needs_escape(c)) continue;
    out.append(s.data() + run_start, i - run_start);
    run_start = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out += kHex[(static_cast<unsigned char>(c) >> 4) & 0xf];
        out += kHex[static_cast<unsigned char>(c) & 0xf];
    }
  }
  out.append(s.data() + run_start, s.size() - run_start);
  out += '"';
}

template <typename Integer>
void append_integer(std::string& out, Integer value) {
  std::array<char, 24> buf{};  // 20 digits and a sign at most
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), value);
  out.append(buf.data(), ec == std::errc() ? static_cast<size_t>(end - buf.data()) : 0);
}

void append_value(std::string& out, const boost::json::value& v);

void append_array(std::string& out, const boost::json::array& array) {
  out += '[';
  bool first = true;
  for (const auto& item : array) {
    if (!first) out += ',';
    first = false;
    append_value(out, item);
  }
  out += ']';
}

void append_object(std::string& out, const boost::json::object& object) {
  out += '{';
  bool first = true;
  for (const auto& [key, item] : object) {
    if (!first) out += ',';
    first = false;
    append_string(out, key);
    out += ':';
    append_value(out, item);
  }
  out += '}';
}

void append_value(std::string& out, const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null: out += "null"; break;
    case boost::json::kind::bool_: out += v.get_bool() ? "true" : "false"; break;
    case boost::json::kind::int64: append_integer(out, v.get_int64()); break;
    case boost::json::kind::uint64: append_integer(out, v.get_uint64()); break;
    case boost::json::kind::double_: append_json_number(out, v.get_double()); break;
    case boost::json::kind::string: append_string(out, v.get_string()); break;
    case boost::json::kind::array: append_array(out, v.get_array()); break;
    case boost::json::kind::object: append_object(out, v.get_object()); break;
  }
}

}  // namespace

std::string json_text(const boost::json::value& value) {
  std::string out;
  append_value(out, value);
  return out;
}

std::string json_text(const boost::json::object& object) {
  std::string out;
  append_object(out, object);
  return out;
}

std::string json_text(const boost::json::array& array) {
  std::string out;
  append_array(out, array);
  return out;
}

std::string json_number(double value) {
  std::string out;
  append_json_number(out, value);
  return out;
}

}  // namespace trainwatch
