// trainwatch: one binary, one subcommand per job (see commands.h).
#include <string_view>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/commands.h"

// NOLINTNEXTLINE(bugprone-exception-escape): std::terminate prints what escapes; nothing to add.
int main(int argc, char** argv) {
#ifdef TRAINWATCH_HAS_AGENT
  // `trainwatch agent ...` is the smaller `trainwatch-agent ...` when it lies beside this
  // binary: the sidecar then maps none of the server's libraries (agent_command.cc).
  if (argc > 1 && std::string_view(argv[1]) == "agent")
    trainwatch::cli::exec_agent_program(argc - 2, argv + 2);
#endif
  // Logs go to stderr: stdout carries what scripts read (the serving URL, check results).
  spdlog::set_default_logger(spdlog::stderr_color_mt("trainwatch"));
  CLI::App app{"trainwatch: monitoring for distributed training jobs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", TRAINWATCH_VERSION);
  std::vector<trainwatch::cli::Command> commands = {
      trainwatch::cli::add_version_command(app),       trainwatch::cli::add_check_command(app),
      trainwatch::cli::add_serve_command(app),         trainwatch::cli::add_ping_command(app),
      trainwatch::cli::add_run_command(app),           trainwatch::cli::add_notify_test_command(app),
      trainwatch::cli::add_hash_password_command(app),
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
