// Typed, error-collecting access to one YAML mapping. Every getter marks its key as
// known and reports a wrong type or value as a ConfigError at the value's position;
// finish() reports the keys nobody asked for. Used only by the config loader.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/loader.h"

namespace trainwatch::config_detail {

class Diagnostics {
 public:
  Diagnostics(std::string file, const EnvLookup& env) : file_(std::move(file)), env_(env) {}

  void error(const YAML::Mark& mark, std::string key, std::string message);
  SourceLocation location(const YAML::Mark& mark) const;
  // Replaces ${NAME} with the environment's value; reports unset names.
  std::string expand(const YAML::Node& scalar, const std::string& key);

  std::vector<ConfigError> take() { return std::move(errors_); }
  bool has_errors() const { return !errors_.empty(); }

 private:
  std::string file_;
  const EnvLookup& env_;
  std::vector<ConfigError> errors_;
};

class Section {
 public:
  // `node` must be a map or null (an empty section); `path` prefixes key names.
  Section(Diagnostics& diag, const YAML::Node& node, std::string path);

  bool valid() const { return valid_; }
  bool has(const char* key);
  YAML::Node raw(const char* key);  // marks the key known; null node when absent
  const YAML::Mark& mark() const { return mark_; }
  std::string key_path(const char* key) const;

  std::optional<std::string> string(const char* key, bool required = false);
  std::optional<bool> boolean(const char* key);
  std::optional<int64_t> integer(const char* key, int64_t min, int64_t max);
  std::optional<Millis> duration(const char* key);
  std::optional<double> number(const char* key, double min, double max);
  std::optional<std::vector<std::string>> string_list(const char* key);

  // Reports every key in the mapping that no getter asked for.
  void finish();

  Diagnostics& diag() { return diag_; }

 private:
  Diagnostics& diag_;
  YAML::Node node_;
  std::string path_;
  YAML::Mark mark_;
  bool valid_ = true;
  std::set<std::string> known_;
};

// "found 'x'" for a scalar, "found a list" / "found a mapping" otherwise.
std::string describe(const YAML::Node& node);

}  // namespace trainwatch::config_detail
