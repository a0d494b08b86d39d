// `trainwatch serve`: the monitoring server.
//
// Threads: one runs the engine's io_context (checks, timers, signals); one runs the
// alert dispatcher's (deliveries never wait behind checks, nor checks behind a slow
// Slack); each of `http_threads` runs one of the HTTP server's. Shutdown order (SIGINT/SIGTERM): stop
// accepting, stop the engine's timers, let the io_contexts return (deliveries in flight
// stay pending and are re-sent by the next start), then flush the store so every result
// already produced is on disk.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include "alerting/channels.h"
#include "alerting/dispatcher.h"
#include "alerting/planner.h"
#include "alerting/transport.h"
#include "api/notification_routes.h"
#include "api/ping_routes.h"
#include "catalog/maintenance_catalog.h"
#include "api/maintenance_routes.h"
#include "catalog/monitor_catalog.h"
#include "api/monitor_write_routes.h"
#include "api/job_routes.h"
#include "api/routes.h"
#include "auth/admin_auth.h"
#include "auth/reloadable_secret.h"
#include "checks/http_checker.h"
#include "checks/tcp_checker.h"
#include "cli/checked_config.h"
#include "cli/commands.h"
#include "cli/fd_limit.h"
#include "cli/listen_address.h"
#include "cli/serve_connection_limits.h"
#include "config/loader.h"
#include "core/asio_timers.h"
#include "core/random.h"
#include "engine/engine.h"
#include "heartbeat/ingest.h"
#include "heartbeat/tokens.h"
#include "http/server.h"
#include "http/server_stats.h"
#include "storage/retention.h"
#include "jobs/job_checker.h"
#include "jobs/job_registry.h"
#include "storage/data_dir.h"
#include "storage/sqlite/sqlite_store.h"
#include "web/maintenance_page.h"
#include "web/notifications_page.h"
#include "web/routes.h"

namespace trainwatch::cli {
namespace {

namespace asio = boost::asio;

struct ServeOptions {
  std::string config_path;
  std::string listen_override;   // HOST:PORT; port 0 picks a free one
  std::string data_dir_override;
  int http_threads = 2;
};

class DefaultCheckers final : public CheckerSet {
 public:
  DefaultCheckers(asio::io_context& io, const Clock& clock, jobs::JobRegistry& jobs)
      : http_(io, clock), tcp_(io, clock), job_(io, jobs) {}
  Checker* for_type(MonitorType type) override {
    switch (type) {
      case MonitorType::kHttp: return &http_;
      case MonitorType::kTcp: return &tcp_;
      case MonitorType::kHeartbeat: return nullptr;  // pushed, not checked: see Engine::record_ping
      case MonitorType::kJob: return &job_;
    }
    return nullptr;
  }

 private:
  HttpChecker http_;
  TcpChecker tcp_;
  jobs::JobChecker job_;
};

// The token agents must send: jobs.token, else TRAINWATCH_TOKEN, else none (a warning:
// anyone who reaches the port can then report).
std::string report_token(const Config& config) {
  if (!config.jobs.token.empty()) return config.jobs.token;
  if (const char* env = std::getenv("TRAINWATCH_TOKEN"); env && *env) return env;
  return {};
}

void print_errors(const LoadedConfig& loaded) {
  for (const auto& error : loaded.errors) spdlog::error("{}", error.to_string());
}

bool apply_overrides(const ServeOptions& options, Config& config) {
  if (!options.listen_override.empty()) {
    auto listen = parse_listen_address(options.listen_override);
    if (!listen) {
      spdlog::error("--listen {}", listen.error().message);
      return false;
    }
    config.server.listen.host = listen->host;
    config.server.listen.port = listen->port;
  }
  if (!options.data_dir_override.empty()) config.server.data_dir = options.data_dir_override;
  return true;
}

// A new user's first question is where to send pings; generated tokens exist nowhere else.
// Beyond kMaxLoggedPingUrls heartbeat monitors one line points to the API instead, so a
// large install does not flood its log at every start.
void log_ping_urls(const Config& config, const std::string& host, uint16_t port) {
  constexpr size_t kMaxLoggedPingUrls = 20;
  std::vector<const MonitorConfig*> heartbeats;
  for (const auto& m : config.monitors) {
    if (m.type == MonitorType::kHeartbeat) heartbeats.push_back(&m);
  }
  if (heartbeats.size() > kMaxLoggedPingUrls) {
    spdlog::info("{} heartbeat monitors; each one's ping_url is in GET /api/v1/monitors/NAME", heartbeats.size());
    return;
  }
  for (const auto* m : heartbeats) {
    spdlog::info("heartbeat {}: ping http://{}:{}/ping/{}", m->name, host, port,
                 std::get<HeartbeatSpec>(m->spec).token);
  }
}

std::vector<std::string> channel_names(const std::vector<alerting::Channel>& channels) {
  std::vector<std::string> names;
  for (const auto& c : channels) names.push_back(c.name);
  return names;
}

int serve(const ServeOptions& options) {
  LoadedConfig loaded = load_checked_config(options.config_path);
  if (!loaded.config) {
    print_errors(loaded);
    return 1;
  }
  Config config = std::move(*loaded.config);
  if (!apply_overrides(options, config)) return 1;
  const FdLimit fd_limit = raise_fd_limit();
  spdlog::info("{}", describe(fd_limit));

  if (Status prepared = prepare_data_dir(config.server.data_dir); !prepared) {
    spdlog::error("data_dir: {}", prepared.error().message);
    return 1;
  }
  const std::string db_path = (std::filesystem::path(config.server.data_dir) / "trainwatch.db").string();
  auto store = SqliteStore::open(db_path);
  if (!store) {
    spdlog::error("{}: {}", db_path, store.error().message);
    return 1;
  }

  SystemRandom random;
  if (auto resolved = heartbeat::resolve_tokens(config, **store, random); !resolved) {
    spdlog::error("cannot keep heartbeat tokens: {}", resolved.error().message);
    return 1;
  }

  SystemClock clock;
  asio::io_context engine_io;
  // One io_context per HTTP thread (http/server.h); hint 1: each is run by one thread.
  std::vector<std::unique_ptr<asio::io_context>> http_ios;
  std::vector<asio::io_context*> http_contexts;
  for (int i = 0; i < options.http_threads; ++i) {
    http_ios.push_back(std::make_unique<asio::io_context>(1));
    http_contexts.push_back(http_ios.back().get());
  }
  asio::io_context alert_io;

  std::vector<ConfigError> channel_errors;  // already reported by load_checked_config
  std::vector<alerting::Channel> channels = alerting::build_channels(config, channel_errors);
  std::mt19937_64 random_engine{std::random_device{}()};
  AsioTimers alert_timers(alert_io, clock);
  alerting::Transport transport(alert_io);  // outlives the dispatcher, which sends through it
  alerting::Dispatcher dispatcher(alert_io, clock, alert_timers, **store, transport, [&random_engine] {
    return std::uniform_real_distribution<double>(0.0, 1.0)(random_engine);  // alert thread only
  });
  alerting::AlertPlanner planner(clock, [&dispatcher] { dispatcher.wake(); });
  planner.configure(config, channel_names(channels));

  jobs::JobRegistry job_registry(clock);
  job_registry.configure(config);
  DefaultCheckers checkers(engine_io, clock, job_registry);
  Engine engine(engine_io, clock, **store, checkers, &planner);
  job_registry.set_on_expired([&engine](const std::string& job) { engine.release_monitor(job); });
  // Monitors created through the API run beside the file's (catalog/monitor_catalog.h).
  catalog::MonitorCatalog catalog(engine, **store, random);
  catalog.set_yaml(config);
  if (auto skipped = catalog.load(); !skipped) {
    spdlog::error("cannot read API monitors: {}", skipped.error().message);
    return 1;
  } else {
    for (const auto& why : *skipped) spdlog::warn("API monitor skipped: {}", why);
  }
  if (auto started = engine.start(catalog.merged(config)); !started) {
    spdlog::error("cannot start: {}", started.error().message);
    return 1;
  }
  // Maintenance windows created through the API hold notifications beside the file's
  // (catalog/maintenance_catalog.h): every change reaches the planner and the dispatcher.
  catalog::MaintenanceCatalog maintenance(
      **store, clock, [&engine](const std::string& name) { return engine.monitor(name).has_value(); },
      [&planner, &dispatcher](const std::vector<MaintenanceWindow>& windows) {
        planner.set_maintenance(windows);
        dispatcher.set_maintenance(windows);
      });
  if (auto skipped = maintenance.load(); !skipped) {
    spdlog::error("cannot read API maintenance windows: {}", skipped.error().message);
    return 1;
  } else {
    for (const auto& why : *skipped) spdlog::warn("API maintenance window skipped: {}", why);
  }
  maintenance.set_yaml(config.maintenance);
  if (auto started = dispatcher.start(std::move(channels), maintenance.windows()); !started) {
    spdlog::error("cannot start notifications: {}", started.error().message);
    return 1;
  }

  heartbeat::PingIngest pings(clock, [&engine](const std::string& monitor, Ping ping, WriteDone done) {
    engine.record_ping(monitor, std::move(ping), std::move(done));
  });
  // The index holds the file's heartbeat tokens and the API monitors'; the catalog
  // re-indexes after each API change it has applied.
  pings.configure(catalog.merged(config));
  catalog.on_applied([&pings](const Config& merged) { pings.configure(merged); });

  auto router = std::make_shared<http::Router>();
  auth::AdminAuth admin_auth(config.auth, clock);
  api::ApiContext api_context{engine, **store, clock, clock.system_time(), &job_registry};
  api_context.admin = &admin_auth;
  auto http_stats = std::make_shared<http::ServerStats>();
  api_context.extra_metrics = [&dispatcher, http_stats](PrometheusWriter& w) {
    api::write_notification_metrics(dispatcher, w);
    http::write_server_metrics(*http_stats, w);
  };
  api::add_api_routes(*router, api_context);
  // One limit per channel for test sends, whether asked through the API or the dashboard.
  auto test_sends = std::make_shared<auth::BucketTable>(api::kTestSendLimits);
  api::add_notification_routes(*router, api::NotificationContext{dispatcher, **store, admin_auth, clock, test_sends});
  api::add_ping_routes(*router, pings);
  api::add_monitor_write_routes(*router, api::WriteContext{engine, catalog, admin_auth});
  auto status_pages = std::make_shared<catalog::StatusPageSet>(config.status_pages);
  const web::WebContext web_context{engine, **store, clock, admin_auth, catalog, job_registry,
                                    status_pages};
  web::add_web_routes(*router, web_context);
  api::add_maintenance_routes(*router, api::MaintenanceContext{maintenance, admin_auth, clock});
  web::add_maintenance_routes(*router, web::MaintenancePageContext{web_context, maintenance});
  web::add_notifications_routes(*router, web::NotificationsPageContext{web_context, dispatcher, test_sends});
  RetentionPruner pruner(engine_io, clock, **store, config.retention.raw);
  pruner.start();
  // Replaced by a reload, like the admin tokens: a leaked token is revoked by SIGHUP.
  auto job_token = std::make_shared<auth::ReloadableSecret>(report_token(config));
  if (job_token->get().empty()) spdlog::warn("jobs: no jobs.token or TRAINWATCH_TOKEN; node reports are accepted without a token");
  api::add_job_routes(*router, api::JobApiContext{engine, job_registry, job_token});
  http::ServerOptions http_options;
  http_options.host = config.server.listen.host;
  http_options.port = config.server.listen.port;
  const ServeConnectionLimits limits = serve_connection_limits(config, fd_limit.soft, options.http_threads);
  if (limits.starved) {
    spdlog::warn("{}", limits.log_line);
  } else {
    spdlog::info("{}", limits.log_line);
  }
  http_options.max_connections = limits.max_connections;
  http_options.max_connections_per_address = static_cast<size_t>(config.server.max_connections_per_address);
  http_options.stats = http_stats;
  http_options.warn = [](const std::string& line) { spdlog::warn("{}", line); };
  http_options.clock = &clock;
  auto server = http::Server::start(http_contexts, http_options, router);
  if (!server) {
    spdlog::error("{}", server.error().message);
    return 1;
  }
  // Signals are caught from here on, before the line below says the server is up: a
  // SIGHUP sent as soon as the line is read would otherwise find no handler and end
  // the process (its default action). What arrives before async_wait waits for it.
  asio::signal_set signals(engine_io, SIGINT, SIGTERM, SIGHUP);
  // Tests and scripts read this line to learn the port when listening on port 0.
  std::cout << "trainwatch serving " << config.monitors.size() << " monitors on http://" << http_options.host << ":"
            << (*server)->port() << "/" << std::endl;
  log_ping_urls(config, http_options.host, (*server)->port());

  std::function<void(boost::system::error_code, int)> on_signal = [&](boost::system::error_code sig_ec, int sig) {
    if (sig_ec) return;
    if (sig == SIGHUP) {
      LoadedConfig next = load_checked_config(options.config_path);
      if (!next.config) {
        spdlog::error("reload of {} refused; keeping the running config:", options.config_path);
        print_errors(next);
      } else if (apply_overrides(options, *next.config)) {
        if (auto resolved = heartbeat::resolve_tokens(*next.config, **store, random); !resolved) {
          spdlog::error("reload of {} refused: cannot keep heartbeat tokens: {}", options.config_path,
                        resolved.error().message);
        } else {
          // Tokens first, so that once "reloaded" is logged a removed token gets 401 and
          // a changed admin set has logged everyone out.
          if (admin_auth.reconfigure(next.config->auth)) {
            spdlog::info("reload: admin tokens changed; every login session was ended");
          }
          if (job_token->set(report_token(*next.config))) {
            spdlog::info("reload: the node report token changed");
            if (job_token->get().empty()) spdlog::warn("jobs: no jobs.token or TRAINWATCH_TOKEN; node reports are accepted without a token");
          }
          spdlog::info("reloaded {}: {} monitors", options.config_path, next.config->monitors.size());
          job_registry.configure(*next.config);
          const Config merged = catalog.set_yaml(*next.config);
          engine.reload(merged);
          pings.configure(merged);
          std::vector<ConfigError> ignored;  // load_checked_config reported them
          std::vector<alerting::Channel> next_channels = alerting::build_channels(*next.config, ignored);
          planner.configure(*next.config, channel_names(next_channels));
          dispatcher.reconfigure(std::move(next_channels));
          maintenance.set_yaml(next.config->maintenance);
          log_ping_urls(*next.config, http_options.host, (*server)->port());
          status_pages->set(next.config->status_pages);
        }
      }
      signals.async_wait(on_signal);
      return;
    }
    spdlog::info("stopping on signal {}", sig);
    (*server)->stop();
    pruner.stop();
    engine.stop();
    for (auto* io : http_contexts) io->stop();
    engine_io.stop();
    alert_io.stop();
  };
  signals.async_wait(on_signal);

  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> http_guards;
  std::vector<std::thread> http_threads;
  for (auto* io : http_contexts) {
    http_guards.push_back(asio::make_work_guard(*io));
    http_threads.emplace_back([io] { io->run(); });
  }
  auto alert_guard = asio::make_work_guard(alert_io);
  std::thread alert_thread([&] { alert_io.run(); });
  engine_io.run();
  for (auto* io : http_contexts) io->stop();
  alert_io.stop();
  for (auto& t : http_threads) t.join();
  alert_thread.join();
  (*store)->flush();
  return 0;
}

}  // namespace

Command add_serve_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("serve", "Run the monitoring server");
  auto options = std::make_shared<ServeOptions>();
  sub->add_option("-c,--config", options->config_path, "The YAML config file")->required();
  sub->add_option("--listen", options->listen_override, "HOST:PORT to listen on, over server.listen (port 0: any free port)");
  sub->add_option("--data-dir", options->data_dir_override, "Where the SQLite store lives, over server.data_dir");
  sub->add_option("--http-threads", options->http_threads, "Threads serving HTTP")->check(CLI::Range(1, 64));
  return Command{sub, [options] { return serve(*options); }};
}

}  // namespace trainwatch::cli
