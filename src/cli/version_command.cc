#include <iostream>

#include "cli/commands.h"

namespace trainwatch::cli {

Command add_version_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("version", "Print the version");
  return Command{sub, [] {
                   std::cout << "trainwatch " << TRAINWATCH_VERSION << "\n";
                   return 0;
                 }};
}

}  // namespace trainwatch::cli
