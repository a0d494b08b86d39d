#include "cli/checked_config.h"

#include "alerting/channels.h"

namespace trainwatch::cli {

LoadedConfig load_checked_config(const std::string& path) {
  LoadedConfig loaded = load_config_file(path);
  if (!loaded.config) return loaded;
  auto errors = alerting::check_channels(*loaded.config);
  if (!errors.empty()) {
    loaded.errors = std::move(errors);
    loaded.config.reset();
  }
  return loaded;
}

}  // namespace trainwatch::cli
