// The HTTP request path in-process: raw bytes parsed by Beast exactly as the server's
// sessions do (same limits), turned into a Request, read for its target
// (http/request_target.h) and dispatched through a Router holding every route that
// `trainwatch serve` adds, over a real SQLite store in a scratch folder. No sockets: the
// Beast parser and everything behind the router are what is fuzzed.
//
// The fixture is the serve command's wiring, less what reaches the network: no checker
// runs (every CheckerSet slot is empty) and no notification channel is configured, so no
// check or alert leaves the process. Handlers that wait for a commit answer later from the
// store's writer thread; their answers are dropped. The engine's io_context is polled
// after each input, so API writes (reloads, pauses) are applied before the next one.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http.hpp>

#include "alerting/channel_catalog.h"
#include "alerting/dispatcher.h"
#include "alerting/planner.h"
#include "alerting/transport.h"
#include "api/job_routes.h"
#include "api/maintenance_routes.h"
#include "api/monitor_write_routes.h"
#include "api/notification_routes.h"
#include "api/ping_routes.h"
#include "api/routes.h"
#include "auth/admin_auth.h"
#include "auth/bucket_table.h"
#include "auth/reloadable_secret.h"
#include "catalog/maintenance_catalog.h"
#include "catalog/monitor_catalog.h"
#include "config/loader.h"
#include "core/asio_timers.h"
#include "core/random.h"
#include "engine/engine.h"
#include "fuzz_clock.h"
#include "heartbeat/ingest.h"
#include "http/request_target.h"
#include "http/server.h"
#include "jobs/job_journal.h"
#include "jobs/job_registry.h"
#include "jobs/report_intake.h"
#include "storage/sqlite/sqlite_store.h"
#include "web/maintenance_page.h"
#include "web/notifications_page.h"
#include "web/routes.h"

namespace {

using namespace trainwatch;
namespace asio = boost::asio;
namespace bhttp = boost::beast::http;

// Every kind of monitor, a status page, a job, an admin token and a report token: the
// seed corpus's requests use these names (corpus/http_router/).
constexpr std::string_view kConfig = R"(
monitors:
  - name: api-health
    type: http
    url: http://127.0.0.1:9/health?key=secret
    conditions: ["[STATUS] == 200", "[BODY].status == ok"]
  - name: redis
    type: tcp
    host: 127.0.0.1
    port: 9
  - name: nightly
    type: heartbeat
    period: 1m
    grace: 1m
    token: fuzz-heartbeat-1
  - name: llm-run
    type: job
    world_size: 8
status_pages:
  - slug: training
    title: Training
    groups:
      - name: Jobs
        monitors: [llm-run, nightly, api-health, redis]
auth:
  admin_tokens: ["fuzz-admin-token-0123456789"]
jobs:
  auto_create: true
  token: fuzz-report-token
)";

// No check runs: the fuzzer must not reach the network.
class NoCheckers final : public engine::CheckerSet {
 public:
  checks::Checker* for_type(MonitorType) override { return nullptr; }
};

// Tokens for API-created heartbeat monitors: a counter's bytes, the same in every run.
class CountingRandom final : public Random {
 public:
  void fill(std::span<uint8_t> out) override {
    std::lock_guard lock(mu_);
    for (auto& b : out) b = static_cast<uint8_t>(next_++ * 167u + 13u);
  }

 private:
  std::mutex mu_;
  uint32_t next_ = 0;
};

struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    path =
        std::filesystem::path(tmp && *tmp ? tmp : "/tmp") / ("trainwatch-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

Config load_fixture_config() {
  LoadedConfig loaded = load_config_text(std::string(kConfig), "fuzz.yaml");
  if (!loaded.config) __builtin_trap();  // the fixture itself must be valid
  return std::move(*loaded.config);
}

std::unique_ptr<sqlite::SqliteStore> open_store(const ScratchDir& dir) {
  auto store = sqlite::SqliteStore::open((dir.path / "trainwatch.db").string());
  if (!store) __builtin_trap();
  return std::move(*store);
}

struct ServerInProcess {
  ScratchDir dir;
  Config config = load_fixture_config();
  fuzz::SteppingClock clock;
  asio::io_context engine_io;
  asio::io_context alert_io;
  std::unique_ptr<sqlite::SqliteStore> store = open_store(dir);
  AsioTimers alert_timers{alert_io, clock};
  alerting::Transport transport{alert_io, config.server.allow_local_channel_targets};
  alerting::Dispatcher dispatcher{alert_io, clock, alert_timers, *store, transport, [] { return 0.5; }};
  // No channels in the fuzzed config: the catalog has nothing to apply.
  alerting::ChannelCatalog channels{*store, "trainwatch.yaml", [](const std::vector<ChannelConfig>&) {}};
  alerting::AlertPlanner planner{clock, [this] { dispatcher.wake(); }};
  jobs::JobRegistry jobs{clock};
  NoCheckers checkers;
  AsioTimers engine_timers{engine_io, clock};
  engine::Engine engine{engine_io, clock, engine_timers, *store, checkers, &planner};
  jobs::JobJournal journal{*store, jobs, clock, "",
                           [this](const std::string& job) { engine.ensure_monitor(jobs.auto_monitor(job)); }};
  std::unique_ptr<jobs::ReportIntake> intake;  // made once the config is read, before the routes
  CountingRandom random;
  catalog::MonitorCatalog catalog{engine, *store, random};
  catalog::MaintenanceCatalog maintenance{
      *store, clock, [this](const std::string& name) { return engine.monitor(name).has_value(); },
      [this](const std::vector<MaintenanceWindow>& windows) {
        planner.set_maintenance(windows);
        dispatcher.set_maintenance(windows);
      }};
  heartbeat::PingIngest pings{clock, engine};
  auth::AdminAuth admin{config.auth, clock};
  http::Router router;

  ServerInProcess() {
    planner.configure(config, {});
    jobs.configure(config);
    catalog.set_yaml(config);
    if (!catalog.load()) __builtin_trap();
    if (!engine.start(catalog.merged(config))) __builtin_trap();
    if (!maintenance.load()) __builtin_trap();
    maintenance.set_yaml(config.maintenance);
    if (!dispatcher.start({}, maintenance.windows())) __builtin_trap();
    pings.configure(catalog.merged(config));
    catalog.on_applied([this](const Config& merged) { pings.configure(merged); });

    api::ApiContext api_context{engine, *store, clock, clock.system_time(), &jobs};
    api_context.admin = &admin;
    api_context.extra_metrics = [this](PrometheusWriter& w) {
      api::write_notification_metrics(dispatcher, w);
    };
    api::add_api_routes(router, api_context);
    auto test_sends = std::make_shared<auth::BucketTable>(api::kTestSendLimits);
    api::add_notification_routes(
        router, api::NotificationContext{dispatcher, channels, *store, admin, clock, test_sends});
    api::add_ping_routes(router, pings);
    api::add_monitor_write_routes(router, api::WriteContext{engine, catalog, admin});
    const web::WebContext web_context{engine,
                                      *store,
                                      clock,
                                      admin,
                                      catalog,
                                      jobs,
                                      std::make_shared<catalog::StatusPageSet>(config.status_pages),
                                      std::string()};
    web::add_web_routes(router, web_context);
    api::add_maintenance_routes(router, api::MaintenanceContext{maintenance, admin, clock});
    web::add_maintenance_page(router, web::MaintenancePageContext{web_context, maintenance});
    web::add_notifications_page(router,
                                web::NotificationsPageContext{web_context, dispatcher, channels, test_sends});
    intake = std::make_unique<jobs::ReportIntake>(
        jobs, journal, std::make_shared<auth::ReloadableSecret>(config.jobs.token),
        [this](const std::string& job) { engine.ensure_monitor(jobs.auto_monitor(job)); });
    api::add_job_routes(router, api::JobApiContext{engine, jobs, *intake});
  }
};

// The server's bounds (http::ServerOptions' defaults): bigger inputs are refused there.
const size_t kMaxHeaderBytes = http::ServerOptions{}.max_header_bytes;
const size_t kMaxBodyBytes = http::ServerOptions{}.max_body_bytes;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Lives for the whole run: answers may come from the store's thread after an input ends.
  static ServerInProcess* server = new ServerInProcess();

  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(static_cast<uint32_t>(kMaxHeaderBytes));
  parser.body_limit(kMaxBodyBytes);
  parser.eager(true);
  boost::beast::error_code ec;
  for (size_t used = 0; !parser.is_done();) {
    size_t n = parser.put(asio::buffer(data + used, size - used), ec);
    used += n;
    if (ec == bhttp::error::need_more) {
      ec = {};
      if (used == size) parser.put_eof(ec);  // the peer closed here
      if (used == size || n == 0) break;
      continue;
    }
    if (ec || n == 0) break;
  }
  if (ec || !parser.is_done()) return 0;  // the server answers 400/413/431, or closes
  auto message = parser.release();

  // As the server's session builds it (http/server.cc).
  http::Request request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  for (const auto& field : message) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    request.headers[std::move(name)] = std::string(field.value());
  }
  request.body = std::move(message.body());
  request.remote_address = "127.0.0.1";
  if (!http::parse_target(request)) return 0;  // 400 before routing

  // The session answers an exception with 500 and goes on; so does this.
  try {
    server->router.dispatch(request, http::Responder([](http::Response r) { (void)r.body.size(); }));
  } catch (const std::exception&) {
  }
  server->engine_io.poll();
  server->engine_io.restart();
  server->alert_io.poll();
  server->alert_io.restart();
  return 0;
}
