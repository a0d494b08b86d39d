#include <iostream>
#include <memory>

#include "cli/checked_config.h"
#include "cli/commands.h"
#include "config/reload_guard.h"

namespace trainwatch::cli {

Command add_check_command(CLI::App& app) {
  CLI::App* sub =
      app.add_subcommand("check", "Validate a config file: exit 0 when good, else one line per error");
  auto path = std::make_shared<std::string>(kInstalledConfigPath);
  sub->add_option("config", *path, "The YAML config file")->capture_default_str();
  return Command{sub, [path] {
                   LoadedConfig loaded = load_checked_config(*path);
                   for (const auto& error : loaded.errors) std::cerr << error.to_string() << "\n";
                   if (!loaded.config) return 1;
                   if (auto warning = missing_monitors_warning(loaded)) std::cerr << *warning << "\n";
                   std::cout << *path << ": ok, " << loaded.config->monitors.size() << " monitors\n";
                   return 0;
                 }};
}

}  // namespace trainwatch::cli
