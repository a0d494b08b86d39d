// The `trainwatch` subcommands. Each one adds itself to the CLI11 app and returns the
// function that runs it once the command line is parsed; main() runs the one chosen.
// One file per subcommand: serve_command.cc, check_command.cc, agent_command.cc, ...
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace trainwatch::cli {

struct Command {
  CLI::App* app = nullptr;   // the subcommand, to see whether it was chosen
  std::function<int()> run;  // returns the process exit code
};

Command add_version_command(CLI::App& app);
Command add_check_command(CLI::App& app);
Command add_serve_command(CLI::App& app);
Command add_agent_command(CLI::App& app);
// The agent's options on `app` itself (the trainwatch-agent program) or a subcommand.
Command add_agent_options(CLI::App& app);
// Replaces this process with trainwatch-agent from this binary's folder, passing
// argv[0..argc); returns when there is none (then `trainwatch agent` runs in-process).
void exec_agent_program(int argc, char** argv);
Command add_ping_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_notify_test_command(CLI::App& app);
Command add_hash_password_command(CLI::App& app);

}  // namespace trainwatch::cli
