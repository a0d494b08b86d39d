// trainwatch: one binary, one subcommand per job (see commands.h).
#include <vector>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"trainwatch: monitoring for distributed training jobs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", TRAINWATCH_VERSION);
  std::vector<trainwatch::cli::Command> commands = {
      trainwatch::cli::add_version_command(app),
      trainwatch::cli::add_check_command(app),
      trainwatch::cli::add_serve_command(app),
#ifdef TRAINWATCH_HAS_AGENT
      trainwatch::cli::add_agent_command(app),
#endif
  };
  CLI11_PARSE(app, argc, argv);
  for (const auto& command : commands) {
    if (command.app->parsed()) return command.run();
  }
  return 2;
}
