// `trainwatch serve`: the monitoring server. Parses the options, builds the ServerApp
// (cli/server_app.h: its threads, components and shutdown order) and turns signals into
// its reload() (SIGHUP) and stop() (SIGINT, SIGTERM).
#include <csignal>
#include <functional>
#include <memory>

#include <spdlog/spdlog.h>
#include <boost/asio/signal_set.hpp>

#include "cli/checked_config.h"
#include "cli/commands.h"
#include "cli/server_app.h"

namespace trainwatch::cli {
namespace {

namespace asio = boost::asio;

int serve(const ServeOptions& options) {
  ServerApp app(options);
  if (!app.start()) return 1;
  // Signals are caught from here on, before the line below says the server is up: a
  // SIGHUP sent as soon as the line is read would otherwise find no handler and end
  // the process (its default action). What arrives before async_wait waits for it.
  asio::signal_set signals(app.main_context(), SIGINT, SIGTERM, SIGHUP);
  app.announce();

  std::function<void(boost::system::error_code, int)> on_signal = [&](boost::system::error_code sig_ec,
                                                                      int sig) {
    if (sig_ec) return;
    if (sig == SIGHUP) {
      app.reload();
      signals.async_wait(on_signal);
      return;
    }
    spdlog::info("stopping on signal {}", sig);
    app.stop();
  };
  signals.async_wait(on_signal);
  app.run();
  return 0;
}

}  // namespace

Command add_serve_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("serve", "Run the monitoring server");
  auto options = std::make_shared<ServeOptions>();
  options->config_path = kInstalledConfigPath;
  sub->add_option("-c,--config", options->config_path, "The YAML config file")->capture_default_str();
  sub->add_option("--listen", options->listen_override,
                  "HOST:PORT to listen on, over server.listen (port 0: any free port)");
  sub->add_option("--data-dir", options->data_dir_override,
                  "Where the SQLite store lives, over server.data_dir");
  sub->add_option("--http-threads", options->http_threads, "Threads serving HTTP")->check(CLI::Range(1, 64));
  return Command{sub, [options] { return serve(*options); }};
}

}  // namespace trainwatch::cli
