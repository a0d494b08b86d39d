// trainwatch-agent: `trainwatch agent` as a program of its own, linking only the agent
// (slots, probes, the HTTP server, the report pusher), so a node's sidecar maps none of
// the server's libraries: libcurl and its dependencies, SQLite, yaml-cpp. Same options.
#include "cli/commands.h"

// NOLINTNEXTLINE(bugprone-exception-escape): std::terminate prints what escapes; nothing to add.
int main(int argc, char** argv) {
  CLI::App app{"trainwatch-agent: serve /health and /metrics for the training ranks on this node"};
  trainwatch::cli::Command agent = trainwatch::cli::add_agent_options(app);
  CLI11_PARSE(app, argc, argv);
  return agent.run();
}
