// Reads and validates the YAML config file. Every problem found is reported, not just the
// first, each as `FILE:LINE:COL: key: what was found; what is expected`. Unknown keys are
// errors: a typo must never silently disable a monitor.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"

namespace trainwatch {

struct ConfigError {
  SourceLocation where;
  std::string key;      // dotted path of the offending key: "monitors[2].interval"
  std::string message;  // "found '5x'; expected a duration such as 500ms, 30s, 5m, 1h or 1d"

  std::string to_string() const;  // the one-line form above
};

struct LoadedConfig {
  std::optional<Config> config;  // set only when errors is empty
  std::vector<ConfigError> errors;
  bool monitors_listed = false;  // the file has a `monitors:` key, an empty list included (reload_guard.h)
};

// Reads `${NAME}` references; returns nullopt for unset variables (an error).
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
std::optional<std::string> process_env(const std::string& name);

LoadedConfig load_config_file(const std::string& path, const EnvLookup& env = process_env);
// `path` only names the source in messages.
LoadedConfig load_config_text(const std::string& text, const std::string& path,
                              const EnvLookup& env = process_env);

struct LoadedWindow {
  std::optional<MaintenanceWindow> window;  // set only when errors is empty
  std::vector<ConfigError> errors;          // keys as in a file: "maintenance[0].start"
};

// One `maintenance:` entry on its own (a window created through the API; JSON is YAML):
// the file's checks, less the one that its `monitors` exist, because the file's monitors
// are not all there is (the caller checks the names against the running monitors).
LoadedWindow load_window_text(const std::string& text, const std::string& path,
                              const EnvLookup& env = process_env);

}  // namespace trainwatch
