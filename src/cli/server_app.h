// ServerApp: everything `trainwatch serve` runs, built and started by start(), changed
// by reload() (SIGHUP) and taken down by stop() (SIGINT, SIGTERM). serve_command.cc
// parses the options, builds one and turns signals into those calls.
//
// Threads: every thread the server runs, what it owns and how it ends.
//
//   engine        the thread that calls run(); runs engine_io_: the checks (http, tcp,
//                 tls, dns, icmp; a job's analysis runs on the job checker's thread),
//                 schedules and retries, heartbeat deadlines, retention pruning, the
//                 signal set, and so reload() and stop(). Owns the Engine's monitor state, the
//                 checkers, the pruner. Ends when stop() stops engine_io_.
//   engine reads  replicas only: engine_reads_, where the engine reads the store (claims,
//                 a heartbeat's pings at its deadline, a state to follow), so a locked
//                 table never holds up a check; results are posted back to engine_io_.
//                 Joined when engine_reads_ is destroyed, before the engine.
//   alert         runs alert_io_: the Dispatcher's deliveries, retries and holds, so a
//                 slow provider never delays a check (nor a check a delivery). Owns the
//                 outbox's channel state, its timers and the Transport's curl transfers.
//                 stop() stops alert_io_ (deliveries in flight stay pending: the next
//                 start sends them); run() joins it.
//   http x N      one per --http-threads, each running one of http_ios_ (http/server.h):
//                 connections and the route handlers, which read the engine's copies and
//                 the store's read pool and post changes to the engine's thread. stop()
//                 stops accepting and stops each io_context; run() joins them.
//   store writer  the store's only write connection (storage/write_queue.h):
//                 commits batches; write `done` callbacks run here. run() flushes it
//                 after the others have ended; the store's destructor joins it.
//   checkpointer  SQLite only: copies the WAL into the database on its own connection
//                 (storage/sqlite/checkpointer.h); joined by the store's destructor.
//   caches x 3    one http::FreshCache thread each for the status pages, the dashboard's
//                 monitors table and the API's monitor list: builds off the HTTP
//                 threads. Owned by their routes; joined when the router is destroyed.
//   job checker   jobs::JobChecker's: each job check's analysis, its verdict posted back
//                 to engine_io_. Owned by the checkers; run() joins it once engine_io_
//                 has stopped.
//   report intake jobs::ReportIntake's: applies each node report once the store committed
//                 it, and answers the agent. Joined when intake_ is destroyed, after the
//                 store was flushed.
//   job views x 2 api::JobViewWorker, one for the job API and one for the job pages;
//                 owned and joined like the caches.
//   sso worker    web::SsoClient's, where sso.* is set: the provider's discovery and
//                 code exchanges, off the HTTP threads. Owned by the SSO routes; joined
//                 when the router is destroyed.
//   sso keys      web::ProviderKeys's, beside the sso worker: reads the provider's keys
//                 (each within 5 s), so a hanging key endpoint never holds a login.
//                 Owned by the SsoClient; joined by its destructor.
//   replica beat  PostgreSQL only: cluster::ReplicaSet's beat through the members table
//                 and the nudges between beats; after each beat it reads back what other
//                 replicas changed (cluster::StoreFollower). stop() stops it before the
//                 store flushes.
//   peers x 4     PostgreSQL only: cluster::ReplicaPeers's senders, which hand a job's
//                 report and reads to the replicas that hold it. Joined by its destructor.
//   resolvers     asio's resolver thread (started by the first TCP check's lookup, ended
//                 when engine_io_ is destroyed) and libcurl's threaded resolver (one
//                 short-lived thread per lookup of an HTTP check or a delivery).
//
// Shutdown order (stop(), then the end of run()): stop accepting, stop the pruner and the
// engine's timers, stop the io_contexts; join the HTTP and alert threads; flush the store,
// so every result already produced is on disk. Destruction then frees the server, the
// router (joining the cache and job-view threads) and the components in the reverse of
// the order start() built them, the store last.
//
// Threading: construct, start() and run() on one thread; reload() and stop() on the
// engine thread (the signal handler's: main_context()) once run() is running.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "alerting/channel_catalog.h"
#include "alerting/channels.h"
#include "alerting/dispatcher.h"
#include "alerting/planner.h"
#include "alerting/transport.h"
#include "api/routes.h"
#include "auth/admin_auth.h"
#include "auth/bucket_table.h"
#include "auth/reloadable_secret.h"
#include "catalog/accounts.h"
#include "catalog/alert_links.h"
#include "catalog/maintenance_catalog.h"
#include "catalog/monitor_catalog.h"
#include "catalog/monitor_snooze.h"
#include "catalog/status_page_set.h"
#include "cli/default_checkers.h"
#include "cluster/database_clock.h"
#include "cluster/replica_peers.h"
#include "cluster/replica_set.h"
#include "cluster/store_follower.h"
#include "config/config.h"
#include "core/asio_timers.h"
#include "core/clock.h"
#include "core/log_throttle.h"
#include "core/random.h"
#include "engine/engine.h"
#include "heartbeat/ingest.h"
#include "http/server.h"
#include "http/server_stats.h"
#include "jobs/job_journal.h"
#include "jobs/job_registry.h"
#include "jobs/report_intake.h"
#include "storage/member_registry.h"
#include "storage/retention.h"
#include "storage/store.h"
#include "web/sso_client.h"

namespace trainwatch::cli {

struct ServeOptions {
  std::string config_path;
  std::string listen_override;  // HOST:PORT; port 0 picks a free one
  std::string data_dir_override;
  int http_threads = 2;
};

class ServerApp {
 public:
  explicit ServerApp(ServeOptions options);
  ~ServerApp();
  ServerApp(const ServerApp&) = delete;
  ServerApp& operator=(const ServerApp&) = delete;

  // Reads the config, opens the store, builds every component, starts the engine and
  // the dispatcher and binds the listen address; no thread runs yet (connections wait in
  // the backlog). False: why has been logged and serve exits 1.
  bool start();
  // Where signals are delivered: the engine's io_context, which run() runs.
  boost::asio::io_context& main_context() { return engine_io_; }
  // Prints "trainwatch serving N monitors on http://HOST:PORT/" (tests and scripts read
  // the port from it) and the heartbeat monitors' ping URLs.
  void announce() const;
  // Starts the alert and HTTP threads and runs the engine's io_context on the calling
  // thread until stop(); then joins the threads and flushes the store.
  void run();

  // SIGHUP: re-reads the config file and applies it, or logs why not and keeps the
  // running config. Tokens change first, so that once "reloaded" is logged a removed
  // token gets 401 and a changed admin set has logged everyone out.
  void reload();
  // SIGINT, SIGTERM: the shutdown order above; run() returns once its threads have ended.
  void stop();

 private:
  // start()'s steps (server_app.cc), in the order it runs them.
  bool read_config();
  bool open_storage();
  void create_http_contexts();
  bool load_api_channels();
  // Hands the merged channels (the file's and the API's) to all that use them.
  void apply_channels(const std::vector<ChannelConfig>& merged);
  std::vector<alerting::Channel> build_alerting();
  void build_engine();
  bool load_api_monitors();
  void choose_member_id();
  void build_journal();
  bool join_replicas();
  bool start_engine();
  void restore_jobs();
  bool load_maintenance_windows();
  bool load_accounts();
  bool start_notifications(std::vector<alerting::Channel> channels);
  void build_ping_ingest();
  void add_routes();
  api::ApiContext api_context();
  void start_pruner();
  void add_job_report_routes();
  http::ServerOptions http_server_options() const;
  bool start_http();
  std::string advertised_address() const;

  const ServeOptions options_;
  Config config_;             // the file's, as started (reloads do not keep theirs)
  size_t file_monitors_ = 0;  // monitors in the file last applied, at start or reload (reload_guard.h)
  uint64_t fd_soft_limit_ = 0;
  std::unique_ptr<Store> store_;  // SQLite or PostgreSQL, as store.url says (storage/open_store.h)
  SystemRandom random_;
  SystemClock local_clock_;
  // Every time serve reads: the local wall clock alone, or the database's on replicas.
  cluster::DatabaseClock clock_{local_clock_};
  boost::asio::io_context engine_io_;
  // One io_context per HTTP thread (http/server.h); hint 1: each is run by one thread.
  std::vector<std::unique_ptr<boost::asio::io_context>> http_ios_;
  boost::asio::io_context alert_io_;
  std::mt19937_64 random_engine_{std::random_device{}()};  // the alert thread's only

  std::unique_ptr<AsioTimers> alert_timers_;
  // The engine's, the checkers' and the pruner's timers, on engine_io_.
  std::unique_ptr<AsioTimers> engine_timers_;
  std::unique_ptr<alerting::Transport> transport_;  // outlives the dispatcher, which sends through it
  std::unique_ptr<alerting::Dispatcher> dispatcher_;
  std::unique_ptr<alerting::AlertPlanner> planner_;
  std::unique_ptr<jobs::JobRegistry> job_registry_;
  std::unique_ptr<DefaultCheckers> checkers_;
  std::unique_ptr<engine::Engine> engine_;
  // On replicas: the thread where the engine reads the store (engine.h, "Store reads off
  // the io thread"). After engine_: destroyed (joined) first, its reads still use it.
  std::unique_ptr<boost::asio::thread_pool> engine_reads_;
  // Node reports through the store; before the replica set, whose beats follow it.
  std::unique_ptr<jobs::JobJournal> journal_;
  // On replicas: the others, to hand them the reports and reads of the jobs they hold
  // (cluster/replica_peers.h). Before the intake, whose apply thread relays through it.
  std::unique_ptr<cluster::ReplicaPeers> peers_;
  // Node reports from the route: stored, then applied (jobs/report_intake.h).
  std::unique_ptr<jobs::ReportIntake> intake_;
  std::string member_id_;  // on replicas: this one's id in the members table; else ""
  // PostgreSQL only: the members table and this replica's place among the others
  // (cluster/replica_set.h). After the engine: its beats call into it until stopped.
  std::unique_ptr<MemberRegistry> members_table_;
  // What the replica set's beats read back of the store (cluster/store_follower.h);
  // before it, so it is destroyed after the beat's thread was joined.
  std::unique_ptr<cluster::StoreFollower> follower_;
  std::unique_ptr<cluster::ReplicaSet> replicas_;
  std::atomic<bool> serving_{false};  // start() is done: the replica set's beats may follow the store
  std::unique_ptr<catalog::MonitorCatalog> monitors_;
  std::unique_ptr<catalog::MaintenanceCatalog> maintenance_;
  std::unique_ptr<catalog::MonitorSnoozes> snoozes_;  // windows in maintenance_
  // The key every alert's snooze link is signed with (kept in the store) and what using
  // a link does.
  std::string alert_link_key_;
  std::unique_ptr<catalog::AlertLinks> alert_links_;
  // The file's notification channels and the API's (alerting/channel_catalog.h); built
  // first, its changes reach the planner, the monitor catalog and (once it started,
  // dispatcher_started_) the dispatcher.
  std::unique_ptr<alerting::ChannelCatalog> channel_catalog_;
  std::atomic<bool> dispatcher_started_{false};
  std::unique_ptr<heartbeat::PingIngest> pings_;

  std::shared_ptr<http::Router> router_;
  std::unique_ptr<auth::AdminAuth> admin_auth_;
  std::unique_ptr<catalog::Accounts> accounts_;  // after admin_auth_: it feeds it
  // auth.oidc's provider client; after accounts_: its worker's logins store users there.
  std::unique_ptr<web::SsoClient> sso_client_;
  std::shared_ptr<http::ServerStats> http_stats_;
  std::shared_ptr<auth::BucketTable> test_sends_;
  std::shared_ptr<catalog::StatusPageSet> status_pages_;
  std::unique_ptr<RetentionPruner> pruner_;
  // Replaced by a reload, like the admin tokens: a leaked token is revoked by SIGHUP.
  std::shared_ptr<auth::ReloadableSecret> job_token_;
  std::string host_;
  std::shared_ptr<http::Server> server_;
};

}  // namespace trainwatch::cli
