#include "cli/server_app.h"

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <boost/asio/executor_work_guard.hpp>

#include "alerting/channels.h"
#include "alerting/maintenance.h"
#include "api/account_routes.h"
#include "api/incident_routes.h"
#include "api/job_routes.h"
#include "api/maintenance_routes.h"
#include "api/monitor_write_routes.h"
#include "api/notification_routes.h"
#include "api/ping_routes.h"
#include "api/routes.h"
#include "api/snooze_routes.h"
#include "catalog/heartbeat_tokens.h"
#include "cli/checked_config.h"
#include "cli/fd_limit.h"
#include "cli/listen_address.h"
#include "cli/serve_connection_limits.h"
#include "cluster/membership.h"
#include "config/loader.h"
#include "config/reload_guard.h"
#include "config/reload_scope.h"
#include "storage/open_store.h"
#include "storage/store_errors.h"
#include "web/maintenance_page.h"
#include "web/notifications_page.h"
#include "web/people_pages.h"
#include "web/routes.h"
#include "web/sso_routes.h"

namespace trainwatch::cli {
namespace {

namespace asio = boost::asio;

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
    spdlog::info("{} heartbeat monitors; each one's ping_url is in GET /api/v1/monitors/NAME",
                 heartbeats.size());
    return;
  }
  for (const auto* m : heartbeats) {
    spdlog::info("heartbeat {}: ping http://{}:{}/ping/{}", m->name, host, port,
                 std::get<HeartbeatSpec>(m->spec).token);
  }
}

std::vector<std::string> channel_names(const std::vector<alerting::Channel>& channels) {
  std::vector<std::string> names;
  names.reserve(channels.size());
  for (const auto& c : channels) names.push_back(c.name);
  return names;
}

void warn_without_job_token() {
  spdlog::warn("jobs: no jobs.token or TRAINWATCH_TOKEN; node reports are accepted without a token");
}

}  // namespace

ServerApp::ServerApp(ServeOptions options) : options_(std::move(options)) {}

ServerApp::~ServerApp() = default;

// Every serve on one PostgreSQL is a replica of one installation: it checks only the
// monitors it owns, and takes over those of a replica that stops beating.
bool ServerApp::join_replicas() {
  const std::string& id = member_id_;
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  replicas_ = std::make_unique<cluster::ReplicaSet>(*members_table_, clock_, id,
                                                    fmt::format("{}:{}", host.data(), getpid()));
  replicas_->set_config(cluster::config_fingerprint(config_));
  engine_->set_ownership(replicas_.get());
  engine_reads_ = std::make_unique<boost::asio::thread_pool>(1);
  engine_->set_store_reads(engine_reads_->get_executor());  // a locked table must not hold up the checks
  peers_ = std::make_unique<cluster::ReplicaPeers>(*replicas_, clock_);
  dispatcher_->claim_as(id, cluster::kMemberTtl);
  // After each beat: what other replicas changed through the API, then who owns what.
  follower_ = std::make_unique<cluster::StoreFollower>(
      clock_, *replicas_, *peers_,
      cluster::StoreFollower::Followed{
          [this] { return channel_catalog_->follow_store(); },
          [this] { return monitors_->follow_store(); },
          [this] { return maintenance_->follow_store(); },
          [this] { engine_->sync_ownership(); },
          [this] { dispatcher_->wake(); },
          [this] { return journal_->follow(); },
          [this](const auto& writes_here, const auto& held_here) {
            journal_->write_kept(writes_here, held_here);
          },
          [this](const auto& standby_only) { job_registry_->analyse_others(standby_only); },
      });
  auto follow = [this](bool) {
    if (serving_) follower_->follow();
  };
  auto nudged = [this](const std::string& monitor) { engine_->on_nudge(monitor); };
  if (auto joined = replicas_->start(follow, nudged); !joined) {
    spdlog::error("replicas: cannot join: {}", joined.error().message);
    return false;
  }
  return true;
}

// start()'s steps, in the order it runs them. Each one that can fail logs why and
// returns false; later steps use the components the earlier ones built.
bool ServerApp::start() {
  if (!read_config()) return false;
  if (!open_storage()) return false;
  create_http_contexts();
  if (!load_api_channels()) return false;
  std::vector<alerting::Channel> channels = build_alerting();
  build_engine();
  if (!load_api_monitors()) return false;
  choose_member_id();
  build_journal();
  if (members_table_ && !join_replicas()) return false;
  if (!start_engine()) return false;
  restore_jobs();
  if (!load_maintenance_windows()) return false;
  if (!start_notifications(std::move(channels))) return false;
  build_ping_ingest();
  add_routes();
  if (!load_accounts()) return false;
  start_pruner();
  add_job_report_routes();
  if (!start_http()) return false;
  serving_ = true;
  return true;
}

// The file, with --listen and --data-dir on top, and the descriptor limit raised.
bool ServerApp::read_config() {
  LoadedConfig loaded = load_checked_config(options_.config_path);
  if (!loaded.config) {
    print_errors(loaded);
    return false;
  }
  config_ = std::move(*loaded.config);
  if (!apply_overrides(options_, config_)) return false;
  file_monitors_ = config_.monitors.size();
  const FdLimit fd_limit = raise_fd_limit();
  spdlog::info("{}", describe(fd_limit));
  fd_soft_limit_ = fd_limit.soft;
  return true;
}

// The store store.url names, and the heartbeat tokens kept in it.
bool ServerApp::open_storage() {
  auto opened = open_store(config_.store.url, config_.server.data_dir, config_.store.session);
  if (!opened) {
    spdlog::error("{}", opened.error().message);
    return false;
  }
  spdlog::info("store: {}", opened->description);
  store_ = std::move(opened->store);
  members_table_ = std::move(opened->members);
  if (auto resolved = catalog::resolve_tokens(config_, *store_, random_); !resolved) {
    spdlog::error("cannot keep heartbeat tokens: {}", resolved.error().message);
    return false;
  }
  auto link_key = catalog::resolve_alert_link_key(*store_, random_, clock_.system_time());
  if (!link_key) {
    spdlog::error("cannot keep the key alert links are signed with: {}", link_key.error().message);
    return false;
  }
  alert_link_key_ = std::move(*link_key);
  return true;
}

void ServerApp::create_http_contexts() {
  for (int i = 0; i < options_.http_threads; ++i) http_ios_.push_back(std::make_unique<asio::io_context>(1));
}

// Notification channels created through the API or the dashboard are sent to beside the
// file's (alerting/channel_catalog.h).
bool ServerApp::load_api_channels() {
  const std::string file_name = std::filesystem::path(options_.config_path).filename().string();
  channel_catalog_ = std::make_unique<alerting::ChannelCatalog>(
      *store_, file_name, [this](const std::vector<ChannelConfig>& merged) { apply_channels(merged); });
  auto skipped = channel_catalog_->load();
  if (!skipped) {
    spdlog::error("cannot read API notification channels: {}", skipped.error().message);
    return false;
  }
  for (const auto& why : *skipped) spdlog::warn("API notification channel skipped: {}", why);
  channel_catalog_->set_file(config_.notifications);
  return true;
}

// Runs under the channel catalog's lock, so changes arrive in the order they happened.
void ServerApp::apply_channels(const std::vector<ChannelConfig>& merged) {
  Config config;
  config.notifications = merged;
  std::vector<ConfigError> ignored;  // the file's reported by load_checked_config; the API's validated
  std::vector<alerting::Channel> built = alerting::build_channels(config, ignored);
  if (planner_) planner_->configure(config, channel_names(built));
  if (monitors_) monitors_->set_channels(merged);
  if (dispatcher_started_) dispatcher_->reconfigure(std::move(built));
}

// The dispatcher and the planner, and what they run with. Returns the channels, which the
// dispatcher takes when it starts (start_notifications()).
std::vector<alerting::Channel> ServerApp::build_alerting() {
  Config merged;
  merged.notifications = channel_catalog_->channels();
  std::vector<ConfigError> channel_errors;  // already reported by load_checked_config
  std::vector<alerting::Channel> channels = alerting::build_channels(merged, channel_errors);
  alert_timers_ = std::make_unique<AsioTimers>(alert_io_, clock_);
  transport_ = std::make_unique<alerting::Transport>(alert_io_, config_.server.allow_local_channel_targets);
  auto uniform = [this] {
    return std::uniform_real_distribution<double>(0.0, 1.0)(random_engine_);  // alert thread only
  };
  dispatcher_ = std::make_unique<alerting::Dispatcher>(alert_io_, clock_, *alert_timers_, *store_,
                                                       *transport_, uniform);
  planner_ = std::make_unique<alerting::AlertPlanner>(clock_, [this] { dispatcher_->wake(); });
  planner_->configure(merged, channel_names(channels));
  planner_->set_public_url(config_.server.public_url);
  planner_->set_alert_link_key(alert_link_key_);
  return channels;
}

// The engine, its checkers and the job registry its job checks read.
void ServerApp::build_engine() {
  job_registry_ = std::make_unique<jobs::JobRegistry>(clock_);
  job_registry_->configure(config_);
  engine_timers_ = std::make_unique<AsioTimers>(engine_io_, clock_);
  checkers_ = std::make_unique<DefaultCheckers>(engine_io_, clock_, *engine_timers_, *job_registry_, random_);
  engine_ = std::make_unique<engine::Engine>(engine_io_, clock_, *engine_timers_, *store_, *checkers_,
                                             planner_.get());
  job_registry_->set_on_expired([this](const std::string& job) { engine_->release_monitor(job); });
  dispatcher_->list_affected_with(
      [this](const std::string& monitor) { return engine_->down_dependents(monitor); });
}

// Monitors created through the API run beside the file's (catalog/monitor_catalog.h).
bool ServerApp::load_api_monitors() {
  monitors_ = std::make_unique<catalog::MonitorCatalog>(*engine_, *store_, random_);
  monitors_->set_yaml(config_);
  monitors_->set_channels(channel_catalog_->channels());
  channel_catalog_->set_notifying(
      [monitors = monitors_.get()](const std::string& channel) { return monitors->notifying(channel); });
  auto skipped = monitors_->load();
  if (!skipped) {
    spdlog::error("cannot read API monitors: {}", skipped.error().message);
    return false;
  }
  for (const auto& why : *skipped) spdlog::warn("API monitor skipped: {}", why);
  return true;
}

// On replicas (a members table): a random id for this one among the others.
void ServerApp::choose_member_id() {
  if (!members_table_) return;
  std::array<uint8_t, 8> bytes{};
  random_.fill(bytes);
  for (uint8_t b : bytes) member_id_ += fmt::format("{:02x}", b);
}

// Node reports through the store, and the memos the registry keeps with them.
void ServerApp::build_journal() {
  journal_ = std::make_unique<jobs::JobJournal>(
      *store_, *job_registry_, clock_, member_id_,
      [this](const std::string& job) { engine_->ensure_monitor(job_registry_->auto_monitor(job)); });
  job_registry_->set_on_memo(
      [this](const std::string& job, std::string memo) { journal_->save_memo(job, std::move(memo)); });
}

bool ServerApp::start_engine() {
  if (auto started = engine_->start(monitors_->merged(config_)); !started) {
    spdlog::error("cannot start: {}", started.error().message);
    return false;
  }
  return true;
}

// The jobs the server watched before it stopped, from their nodes' last reports.
void ServerApp::restore_jobs() {
  if (auto restored = journal_->restore(config_.jobs.expire_after); !restored) {
    spdlog::warn("cannot read the stored node reports; jobs start from their next reports: {}",
                 restored.error().message);
  } else if (*restored > 0) {
    spdlog::info("{} stored node report(s) applied: jobs resume where they were", *restored);
  }
}

// Maintenance windows created through the API hold notifications beside the file's
// (catalog/maintenance_catalog.h): every change reaches the planner and the dispatcher,
// and the engine, whose results inside a window count as up time (storage/store.h). A
// snooze is such a window that holds alerts only: the engine does not see it.
bool ServerApp::load_maintenance_windows() {
  maintenance_ = std::make_unique<catalog::MaintenanceCatalog>(
      *store_, clock_, [this](const std::string& name) { return engine_->monitor(name).has_value(); },
      [this](const std::vector<MaintenanceWindow>& windows) {
        planner_->set_maintenance(windows);
        dispatcher_->set_maintenance(windows);
        engine_->set_maintenance(
            [planned = alerting::planned_work(windows)](const std::string& monitor,
                                                        const std::vector<std::string>& tags, SystemTime at) {
              return alerting::held_until(planned, monitor, tags, at);
            });
      });
  snoozes_ = std::make_unique<catalog::MonitorSnoozes>(*maintenance_, clock_);
  alert_links_ = std::make_unique<catalog::AlertLinks>(alert_link_key_, *store_, *snoozes_, clock_);
  auto skipped = maintenance_->load();
  if (!skipped) {
    spdlog::error("cannot read API maintenance windows: {}", skipped.error().message);
    return false;
  }
  for (const auto& why : *skipped) spdlog::warn("API maintenance window skipped: {}", why);
  maintenance_->set_yaml(config_.maintenance);
  return true;
}

bool ServerApp::start_notifications(std::vector<alerting::Channel> channels) {
  if (auto started = dispatcher_->start(std::move(channels), maintenance_->windows()); !started) {
    spdlog::error("cannot start notifications: {}", started.error().message);
    return false;
  }
  // From here on every change reaches the dispatcher; none comes before serving (the
  // replica set's beats follow the store only once start() is done).
  dispatcher_started_ = true;
  return true;
}

void ServerApp::build_ping_ingest() {
  pings_ = std::make_unique<heartbeat::PingIngest>(clock_, *engine_);
  // The index holds the file's heartbeat tokens and the API monitors'; the catalog
  // re-indexes after each API change it has applied.
  pings_->configure(monitors_->merged(config_));
  monitors_->on_applied([this](const Config& merged) { pings_->configure(merged); });
}

// What the API's handlers read; admin_auth_ and http_stats_ exist by now.
api::ApiContext ServerApp::api_context() {
  api::ApiContext context{*engine_, *store_, clock_, clock_.system_time(), job_registry_.get()};
  context.admin = admin_auth_.get();
  if (replicas_) {
    context.replicas = [replicas = replicas_.get(), clock = &clock_] {
      boost::json::array members;
      for (const auto& id : replicas->members()) members.emplace_back(id);
      boost::json::object out{{"self", replicas->id()},
                              {"members", std::move(members)},
                              {"wall_clock_ahead_ms", clock->wall_clock_ahead().count()}};
      if (auto why = replicas->standing_down()) out["stands_down"] = *why;
      return out;
    };
    context.replica_trouble = [replicas = replicas_.get()] { return replicas->trouble(); };
    context.job_metrics_here = [replicas = replicas_.get()](const std::string& job) {
      return replicas->owns(job);
    };
  }
  context.outbox_trouble = [dispatcher = dispatcher_.get()]() -> std::optional<std::string> {
    auto trouble = dispatcher->outbox_trouble();
    if (!trouble || trouble->failing_for < WriteHealth::kLateWrites) return std::nullopt;
    return fmt::format("the outbox cannot be read, so no alert leaves: failing for {:.1f} s: {}",
                       static_cast<double>(trouble->failing_for.count()) / 1000.0, trouble->error);
  };
  context.extra_metrics = [this, dispatcher = dispatcher_.get(), stats = http_stats_,
                           admin = admin_auth_.get()](PrometheusWriter& w) {
    api::write_notification_metrics(*dispatcher, w);
    http::write_server_metrics(*stats, w);
    admin->gate().write_metrics(w);
    if (intake_) api::write_intake_metrics(*intake_, w);  // built later, before the server listens
  };
  return context;
}

// The API's routes and the dashboard's. Handlers hold references to the components above,
// which outlive the server and the router (members declared before them).
void ServerApp::add_routes() {
  router_ = std::make_shared<http::Router>();
  admin_auth_ = std::make_unique<auth::AdminAuth>(config_.auth, clock_);
  http_stats_ = std::make_shared<http::ServerStats>();
  api::add_api_routes(*router_, api_context());
  // One limit per channel for test sends, whether asked through the API or the dashboard.
  test_sends_ = std::make_shared<auth::BucketTable>(api::kTestSendLimits);
  api::add_notification_routes(*router_, api::NotificationContext{*dispatcher_, *channel_catalog_, *store_,
                                                                  *admin_auth_, clock_, test_sends_});
  api::add_ping_routes(*router_, *pings_);
  api::add_monitor_write_routes(*router_, api::WriteContext{*engine_, *monitors_, *admin_auth_});
  status_pages_ = std::make_shared<catalog::StatusPageSet>(config_.status_pages);
  const std::string sso_button = config_.auth.oidc ? config_.auth.oidc->button_text : std::string();
  const web::WebContext web_context{
      *engine_,      *store_,    clock_,       *admin_auth_,           *monitors_,     *job_registry_,
      status_pages_, sso_button, peers_.get(), channel_catalog_.get(), snoozes_.get(), alert_links_.get()};
  web::add_web_routes(*router_, web_context);
  api::add_maintenance_routes(*router_, api::MaintenanceContext{*maintenance_, *admin_auth_, clock_});
  api::add_snooze_routes(*router_,
                         api::SnoozeContext{*snoozes_, *maintenance_, *engine_, *admin_auth_, clock_});
  api::add_incident_routes(*router_, api::IncidentContext{*store_, *admin_auth_, clock_});
  // Every write the routes allow is audited, queued before the write itself (so committed
  // no later than it); a row the store refuses is logged, and the write it describes goes
  // on (the audit must not become a way to stop monitoring).
  admin_auth_->set_audit_sink([store = store_.get(), clock = &clock_](
                                  AuditEntry entry, const auth::AdminAuth::Recorded& recorded) {
    static LogThrottle refused(std::chrono::seconds(60));
    const std::string what = entry.actor + " " + entry.action;
    auto done = [what, clock, recorded](const Status& status) {
      if (!status.ok()) {
        if (auto n = refused.admit(clock->monotonic_time()))
          spdlog::error("audit log: cannot store \"{}\" ({} time(s)): {}", what, *n, status.error().message);
      }
      if (recorded) recorded(status);
    };
    if (!store->write(AppendAudit{std::move(entry)}, done))
      done(make_error(store_error::kUnavailable, "the store's write queue is full"));
  });
  accounts_ = std::make_unique<catalog::Accounts>(*store_, *admin_auth_, clock_, *alert_timers_);
  api::add_account_routes(*router_, api::AccountContext{*accounts_, *admin_auth_, *store_, clock_});
  if (config_.auth.oidc) {
    sso_client_ = std::make_unique<web::SsoClient>(*config_.auth.oidc, clock_);
    web::add_sso_routes(*router_, web::SsoContext{web_context, *accounts_, *sso_client_});
  }
  web::add_maintenance_page(*router_, web::MaintenancePageContext{web_context, *maintenance_});
  web::add_tokens_page(*router_, web::PeoplePagesContext{web_context, *accounts_});
  web::add_users_page(*router_, web::PeoplePagesContext{web_context, *accounts_});
  web::add_audit_page(*router_, web_context);
  web::add_notifications_page(
      *router_, web::NotificationsPageContext{web_context, *dispatcher_, *channel_catalog_, test_sends_});
}

// Users and API tokens from the store, then followed every AdminAuth::kAccountsRefresh.
bool ServerApp::load_accounts() {
  if (auto loaded = accounts_->start(); !loaded) {
    spdlog::error("cannot read users and API tokens: {}", loaded.error().message);
    return false;
  }
  return true;
}

void ServerApp::start_pruner() {
  pruner_ = std::make_unique<RetentionPruner>(clock_, *engine_timers_, *store_, config_.retention.raw);
  pruner_->start();
}

// POST /api/v1/jobs/{job}/report and the job API, behind the agents' token.
void ServerApp::add_job_report_routes() {
  job_token_ = std::make_shared<auth::ReloadableSecret>(report_token(config_));
  if (job_token_->get().empty()) warn_without_job_token();
  intake_ = std::make_unique<jobs::ReportIntake>(
      *job_registry_, *journal_, job_token_, admin_auth_->gate(),
      [this](const std::string& job) { engine_->ensure_monitor(job_registry_->auto_monitor(job)); },
      peers_.get());
  api::add_job_routes(*router_, api::JobApiContext{*engine_, *job_registry_, *intake_, peers_.get()});
}

http::ServerOptions ServerApp::http_server_options() const {
  http::ServerOptions http_options;
  http_options.host = config_.server.listen.host;
  http_options.port = config_.server.listen.port;
  const ServeConnectionLimits limits =
      serve_connection_limits(config_, fd_soft_limit_, options_.http_threads);
  if (limits.starved) {
    spdlog::warn("{}", limits.log_line);
  } else {
    spdlog::info("{}", limits.log_line);
  }
  http_options.max_connections = limits.max_connections;
  http_options.max_connections_per_address = static_cast<size_t>(config_.server.max_connections_per_address);
  http_options.stats = http_stats_;
  http_options.warn = [](const std::string& line) { spdlog::warn("{}", line); };
  http_options.clock = &clock_;
  return http_options;
}

// Binds the listen address; connections wait in the backlog until run() starts the threads.
bool ServerApp::start_http() {
  const http::ServerOptions http_options = http_server_options();
  std::vector<asio::io_context*> http_contexts;
  http_contexts.reserve(http_ios_.size());
  for (auto& io : http_ios_) http_contexts.push_back(io.get());
  auto server = http::Server::start(http_contexts, http_options, router_);
  if (!server) {
    spdlog::error("{}", server.error().message);
    return false;
  }
  server_ = std::move(*server);
  host_ = http_options.host;
  if (replicas_) {
    const std::string address = advertised_address();
    replicas_->set_address(address);
    spdlog::info("replicas: the others reach this one at {} (server.advertise)", address);
  }
  return true;
}

// Where the other replicas reach this one: server.advertise, else the listen address; a
// server listening on every address is reached by its host's name.
std::string ServerApp::advertised_address() const {
  if (!config_.server.advertise.empty()) return config_.server.advertise;
  std::string host = host_;
  if (host.empty() || host == "0.0.0.0" || host == "::") {
    std::array<char, 256> name{};
    if (gethostname(name.data(), name.size() - 1) == 0) host = name.data();
  }
  if (host.find(':') != std::string::npos) host = "[" + host + "]";  // an IPv6 address
  return host + ":" + std::to_string(server_->port());
}

void ServerApp::announce() const {
  // Tests and scripts read this line to learn the port when listening on port 0.
  std::cout << "trainwatch serving " << config_.monitors.size() << " monitors on http://" << host_ << ":"
            << server_->port() << "/" << std::endl;
  log_ping_urls(config_, host_, server_->port());
}

void ServerApp::run() {
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> http_guards;
  std::vector<std::thread> http_threads;
  for (auto& io : http_ios_) {
    http_guards.push_back(asio::make_work_guard(*io));
    http_threads.emplace_back([io = io.get()] { io->run(); });
  }
  auto alert_guard = asio::make_work_guard(alert_io_);
  std::thread alert_thread([this] { alert_io_.run(); });
  engine_io_.run();
  checkers_->stop();                          // job analyses: they hand memos to the journal
  if (replicas_) journal_->write_all_kept();  // what the jobs held here were, for whoever takes them
  for (auto& io : http_ios_) io->stop();
  alert_io_.stop();
  for (auto& t : http_threads) t.join();
  alert_thread.join();
  store_->flush();
}

void ServerApp::reload() {
  const std::string& path = options_.config_path;
  LoadedConfig next = load_checked_config(path);
  if (!next.config) {
    spdlog::error("reload of {} refused; keeping the running config:", path);
    print_errors(next);
    return;
  }
  if (!apply_overrides(options_, *next.config)) return;
  if (auto refusal = reload_refusal(file_monitors_, next)) {
    spdlog::error("reload refused; keeping the running config: {}", *refusal);
    return;
  }
  if (auto resolved = catalog::resolve_tokens(*next.config, *store_, random_); !resolved) {
    spdlog::error("reload of {} refused: cannot keep heartbeat tokens: {}", path, resolved.error().message);
    return;
  }
  // Tokens first (see the header).
  if (admin_auth_->reconfigure(next.config->auth)) {
    spdlog::info("reload: admin tokens changed; every login session was ended");
  }
  if (job_token_->set(report_token(*next.config))) {
    spdlog::info("reload: the node report token changed");
    if (job_token_->get().empty()) warn_without_job_token();
  }
  // config_ is what started: the keys read only then still hold its values.
  for (const std::string& key : keys_needing_restart(config_, *next.config)) {
    spdlog::warn("reload: {} changed in {}, but is read only at start; restart trainwatch serve to apply it",
                 key, path);
  }
  spdlog::info("reloaded {}: {} monitors", path, next.config->monitors.size());
  pruner_->set_keep_raw(next.config->retention.raw);
  file_monitors_ = next.config->monitors.size();
  job_registry_->configure(*next.config);
  const Config merged = monitors_->set_yaml(*next.config);
  engine_->reload(merged);
  pings_->configure(merged);
  // The planner, the dispatcher and the monitor catalog get the file's channels merged
  // with the API's (apply_channels).
  channel_catalog_->set_file(next.config->notifications);
  planner_->set_public_url(next.config->server.public_url);
  transport_->allow_local_targets(next.config->server.allow_local_channel_targets);
  maintenance_->set_yaml(next.config->maintenance);
  log_ping_urls(*next.config, host_, server_->port());
  status_pages_->set(next.config->status_pages);
  if (replicas_) replicas_->set_config(cluster::config_fingerprint(*next.config));
}

void ServerApp::stop() {
  if (replicas_) replicas_->stop();  // first: the others take over at their next beat
  server_->stop();
  pruner_->stop();
  engine_->stop();
  for (auto& io : http_ios_) io->stop();
  engine_io_.stop();
  alert_io_.stop();
}

}  // namespace trainwatch::cli
