#include "config/reload_guard.h"

namespace trainwatch {
namespace {

std::string path_of(const LoadedConfig& loaded) {
  return loaded.config ? loaded.config->path : std::string();
}

}  // namespace

std::optional<std::string> reload_refusal(size_t running_file_monitors, const LoadedConfig& next) {
  if (next.monitors_listed || running_file_monitors == 0) return std::nullopt;
  return path_of(next) + ": has no `monitors:` key while the running config has " +
         std::to_string(running_file_monitors) +
         " monitors from the file; expected the monitors (write `monitors: []` to remove them all)";
}

std::optional<std::string> missing_monitors_warning(const LoadedConfig& loaded) {
  if (loaded.monitors_listed) return std::nullopt;
  return path_of(loaded) +
         ": warning: no `monitors:` key; a running server whose file has monitors refuses this file on "
         "reload (write `monitors: []` to remove them all)";
}

}  // namespace trainwatch
