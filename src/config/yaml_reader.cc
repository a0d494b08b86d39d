#include "config/yaml_reader.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "core/duration.h"

namespace trainwatch {

std::string ConfigError::to_string() const {
  return where.file + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) + ": " + key +
         ": " + message;
}

std::optional<std::string> process_env(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

namespace config_detail {
namespace {

// "0.5", "100": the shortest spelling a person would write.
std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar: return "found '" + node.Scalar() + "'";
    case YAML::NodeType::Sequence: return "found a list";
    case YAML::NodeType::Map: return "found a mapping";
    default: return "found nothing";
  }
}

SourceLocation Diagnostics::location(const YAML::Mark& mark) const {
  // yaml-cpp counts from 0; editors and compilers count from 1.
  return SourceLocation{file_, mark.line + 1, mark.column + 1};
}

void Diagnostics::error(const YAML::Mark& mark, std::string key, std::string message) {
  errors_.push_back(ConfigError{location(mark), std::move(key), std::move(message)});
}

std::string Diagnostics::expand(const YAML::Node& scalar, const std::string& key) {
  const std::string& text = scalar.Scalar();
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t start = text.find("${", pos);
    if (start == std::string::npos) break;
    size_t end = text.find('}', start);
    if (end == std::string::npos) break;
    out.append(text, pos, start - pos);
    std::string name = text.substr(start + 2, end - start - 2);
    if (auto value = env_(name)) {
      out += *value;
    } else {
      error(scalar.Mark(), key,
            "environment variable " + name + " is not set; expected it to be set for ${" + name + "}");
    }
    pos = end + 1;
  }
  out.append(text, pos);
  return out;
}

Section::Section(Diagnostics& diag, const YAML::Node& node, std::string path)
    : diag_(diag), node_(node), path_(std::move(path)), mark_(node_.Mark()) {
  if (!node_.IsMap() && !node_.IsNull()) {
    diag_.error(mark_, path_, describe(node_) + "; expected a mapping of keys to values");
    valid_ = false;
  }
}

std::string Section::key_path(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

// Lookups go through a const Node: yaml-cpp's non-const operator[] inserts an empty node
// for every absent key, which with 10,000 monitors cost ~100 MB during a load.
bool Section::has(const char* key) {
  if (!valid_ || !node_.IsMap()) return false;
  const YAML::Node value = std::as_const(node_)[key];
  return value.IsDefined() && !value.IsNull();
}

YAML::Node Section::raw(const char* key) {
  known_.insert(key);
  if (!valid_ || !node_.IsMap()) return YAML::Node();
  YAML::Node value = std::as_const(node_)[key];
  return value.IsDefined() ? value : YAML::Node();
}

std::optional<std::string> Section::string(const char* key, bool required) {
  YAML::Node value = raw(key);
  if (value.IsNull() || !value.IsDefined()) {
    if (required && valid_) diag_.error(mark_, key_path(key), "missing; expected a value");
    return std::nullopt;
  }
  if (!value.IsScalar()) {
    diag_.error(value.Mark(), key_path(key), describe(value) + "; expected a string");
    return std::nullopt;
  }
  return diag_.expand(value, key_path(key));
}

std::optional<bool> Section::boolean(const char* key) {
  YAML::Node value = raw(key);
  if (value.IsNull() || !value.IsDefined()) return std::nullopt;
  const std::string text = value.IsScalar() ? value.Scalar() : "";
  if (text == "true") return true;
  if (text == "false") return false;
  diag_.error(value.Mark(), key_path(key), describe(value) + "; expected true or false");
  return std::nullopt;
}

std::optional<int64_t> Section::integer(const char* key, int64_t min, int64_t max) {
  YAML::Node value = raw(key);
  if (value.IsNull() || !value.IsDefined()) return std::nullopt;
  if (value.IsScalar()) {
    const std::string& text = value.Scalar();
    int64_t number = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (ec == std::errc() && end == text.data() + text.size() && number >= min && number <= max)
      return number;
  }
  diag_.error(value.Mark(), key_path(key),
              describe(value) + "; expected a whole number from " + std::to_string(min) + " to " +
                  std::to_string(max));
  return std::nullopt;
}

std::optional<double> Section::number(const char* key, double min, double max) {
  YAML::Node value = raw(key);
  if (value.IsNull() || !value.IsDefined()) return std::nullopt;
  if (value.IsScalar()) {
    const std::string& text = value.Scalar();
    double number = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (ec == std::errc() && end == text.data() + text.size() && number >= min && number <= max)
      return number;
  }
  diag_.error(
      value.Mark(), key_path(key),
      describe(value) + "; expected a number from " + format_number(min) + " to " + format_number(max));
  return std::nullopt;
}

std::optional<Millis> Section::duration(const char* key) {
  YAML::Node value = raw(key);
  if (value.IsNull() || !value.IsDefined()) return std::nullopt;
  if (value.IsScalar()) {
    if (auto d = parse_duration(value.Scalar())) return d;
  }
  diag_.error(value.Mark(), key_path(key),
              describe(value) + "; expected a duration such as 500ms, 30s, 5m, 1h or 1d");
  return std::nullopt;
}

std::optional<std::vector<std::string>> Section::string_list(const char* key) {
  YAML::Node value = raw(key);
  if (value.IsNull() || !value.IsDefined()) return std::nullopt;
  if (!value.IsSequence()) {
    diag_.error(value.Mark(), key_path(key), describe(value) + "; expected a list of strings");
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < value.size(); ++i) {
    const YAML::Node item = value[i];
    std::string item_path = key_path(key) + "[" + std::to_string(i) + "]";
    if (!item.IsScalar()) {
      diag_.error(item.Mark(), item_path, describe(item) + "; expected a string");
      continue;
    }
    out.push_back(diag_.expand(item, item_path));
  }
  return out;
}

void Section::finish() {
  if (!valid_ || !node_.IsMap()) return;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string name = it->first.Scalar();
    if (known_.count(name) != 0) continue;
    std::string expected;
    for (const auto& k : known_) expected += (expected.empty() ? "" : ", ") + k;
    diag_.error(it->first.Mark(), key_path(name.c_str()), "unknown key; expected one of: " + expected);
  }
}

}  // namespace config_detail
}  // namespace trainwatch
