// Config: the typed form of the one YAML file `trainwatch serve --config FILE` reads.
// Produced only by load_config() (config/loader.h), which validates everything, so a
// Config value is always complete and consistent: code downstream never re-validates.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "config/condition.h"
#include "config/notifications.h"
#include "config/source_location.h"
#include "config/web_config.h"
#include "core/clock.h"
#include "cron/schedule.h"

namespace trainwatch {

struct ListenAddress {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
};

struct ServerConfig {
  ListenAddress listen;
  std::string data_dir = "./data";
  int max_checks_in_flight = 256;  // the bound on concurrent checks; excess waits its turn
  // Client connections in all, lowered at start to what the fd limit leaves after the
  // descriptors reserved for checks, the store and alerts (http/connection_budget.h).
  int max_connections = 10'000;
  int max_connections_per_address = 256;  // a new connection over it is closed at once
  // HOST:PORT at which the other replicas reach this one (they hand it the reports and
  // reads of the jobs it holds); empty: the listen address, or this host's name with the
  // listen port when it listens on every address.
  std::string advertise;
  // Notification channels may send to this host (loopback, link-local, its own
  // addresses: net/local_address.h); off, such a send is refused before it connects.
  bool allow_local_channel_targets = false;
};

// Where state lives (`store:`). An empty url: SQLite under server.data_dir.
struct StoreConfig {
  // postgresql://user:pass@host:5432/db?sslmode=... (libpq's URL; PGPASSWORD and
  // PGPASSFILE work too). Holds a secret: log it only through redact_url.
  std::string url;
};

struct HttpCheckSpec {
  std::string url;
  std::string method = "GET";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool follow_redirects = true;
  bool tls_verify = true;
  std::string keyword;         // the body must contain it (empty: no check)
  std::string keyword_absent;  // the body must not contain it (empty: no check)
  std::vector<Condition> conditions;
};

struct TcpCheckSpec {
  std::string host;
  uint16_t port = 0;
};

// A TLS handshake with host:port (checks/tls_checker.h): the chain against the system
// store or ca_file, the host name, and how long the leaf certificate has left.
struct TlsCheckSpec {
  std::string host;
  uint16_t port = 0;
  std::string server_name;  // sent as SNI and matched against the certificate; empty: host
  std::string ca_file;      // PEM bundle trusted instead of the system store; empty: the system's
  // Less validity left than warn_before: UP with a warning, notified once and never paged;
  // less than down_before: DOWN. An expired certificate is always DOWN.
  Millis warn_before{14 * 86'400'000};
  Millis down_before{0};
};

// A push monitor: nothing is checked; jobs ping /ping/{token} and a missed deadline is a
// failure (see heartbeat/rules.h for the rules). Exactly one of period and schedule says
// when pings are due.
struct HeartbeatSpec {
  Millis period{0};                        // expected time between pings; 0 with a schedule
  std::optional<cron::Schedule> schedule;  // pings due at its fire times, instead of a period
  Millis grace{0};    // extra time after a missed due time, and the limit on a start's run
  std::string token;  // empty: generated at start and kept in the store under the monitor's name
  size_t ping_body_limit = 10 * 1024;  // bytes of a ping's body kept; the rest is cut, not refused
};

// What a `type: job` monitor tolerates before it calls a finding (docs/failure-modes.md). A
// fixed timeout always wins over the learned one; unset optionals mean "learn it".
struct JobThresholds {
  Millis startup_timeout{30 * 60'000};  // no first step for this long: start-up stuck
  std::optional<Millis> step_timeout;   // fixed; else max(step_timeout_min, 5 x learned)
  Millis step_timeout_min{60'000};
  std::optional<Millis> checkpoint_timeout;  // fixed; else max(checkpoint_timeout_min, 5 x longest seen)
  Millis checkpoint_timeout_min{10 * 60'000};
  int missed_reports = 3;                           // a node is silent after this many report intervals
  std::optional<Millis> node_silent_after;          // fixed; else missed_reports x the node's report_every
  double straggler_ratio = 1.5;                     // a rank's step cost >= this x the job median: warning
  double throughput_drop = 0.5;                     // job throughput below this x its recent median: warning
  int overflow_streak = 50;                         // consecutive fp16 overflow steps: down
  double min_loss_scale = 1;                        // loss scale at or below: down
  double gpu_memory_pct = 95;                       // GPU memory used at or above: warning
  uint64_t disk_free_bytes = 10'000'000'000;        // free space on a watched path below: warning
  uint64_t host_memory_free_bytes = 1'000'000'000;  // available host memory below: warning
};

// A job's channels are MonitorConfig::notify, like every monitor's.
struct JobCheckSpec {
  int world_size = 0;  // expected ranks; 0: whatever reports
  JobThresholds thresholds;
  bool auto_created = false;  // created by a first report under jobs.auto_create
};

// The `jobs:` section: how the server accepts node reports.
struct JobsConfig {
  bool auto_create = false;         // a report for an unknown job creates a job monitor
  std::string token;                // bearer token agents must send; empty: TRAINWATCH_TOKEN, else none
  std::vector<std::string> notify;  // channels for auto-created jobs (their MonitorConfig::notify)
  JobThresholds thresholds;         // thresholds of auto-created jobs
  // Ranks one job may have when its monitor declares no world_size (a declared world_size
  // is the cap instead). A report that would add ranks beyond it is refused whole (422).
  // 16,384-rank jobs exist; the default leaves room for four times that.
  int max_ranks = 262'144;
  // Ranks one node's report may carry; a report with more is refused (422). Real nodes run
  // 8-64 ranks; the report body bounds it at 1,024 anyway (jobs/report.h).
  int max_ranks_per_node = 1'024;
  // An auto-created job with no report for this long is released: its monitor and state
  // go, its slot under the auto-created job cap frees, and a later report creates it anew.
  Millis expire_after{24 * 3'600'000};
};

// The record types a dns monitor asks for, as their type codes on the wire (RFC 1035, 3596).
enum class DnsRecordType : uint16_t {
  kA = 1,
  kNs = 2,
  kCname = 5,
  kSoa = 6,
  kMx = 15,
  kTxt = 16,
  kAaaa = 28
};

std::string_view to_string(DnsRecordType t);

// A query for one name and record type, sent to one resolver.
struct DnsCheckSpec {
  std::string name;  // as written, trailing dot removed; valid by core/dns_name.h
  DnsRecordType record = DnsRecordType::kA;
  std::string resolver_host;  // an IP address; empty: the first nameserver of /etc/resolv.conf
  uint16_t resolver_port = 53;
  std::vector<Condition> conditions;  // on [DNS_RCODE], [BODY] (the answers) and [RESPONSE_TIME]
};

// Which kind of socket sends ICMP echo requests. kAuto tries an unprivileged datagram
// socket first (allowed by net.ipv4.ping_group_range), then a raw one (CAP_NET_RAW).
enum class IcmpSocket { kAuto, kDatagram, kRaw };

struct IcmpCheckSpec {
  std::string host;  // a name or an IP address
  int count = 3;     // echo requests per check
  IcmpSocket socket = IcmpSocket::kAuto;
  std::vector<Condition> conditions;  // on [PACKET_LOSS] (percent) and [RESPONSE_TIME] (average RTT)
};

enum class MonitorType { kHttp, kTcp, kHeartbeat, kJob, kDns, kIcmp, kTls };

struct MonitorConfig {
  std::string name;  // unique, [a-z0-9._-]+
  MonitorType type = MonitorType::kHttp;
  Millis interval{60'000};
  Millis timeout{10'000};
  int retries = 0;  // consecutive failures beyond the first before DOWN
  std::vector<std::string> tags;
  std::variant<HttpCheckSpec, TcpCheckSpec, HeartbeatSpec, JobCheckSpec, DnsCheckSpec, IcmpCheckSpec,
               TlsCheckSpec>
      spec;
  SourceLocation where;  // the monitor's entry in the file

  // Alerting (config/notifications.h). Channel names, checked against `notifications`;
  // empty: the channels marked `default: true`.
  std::vector<std::string> notify;
  Millis notify_after{0};              // hold a DOWN alert this long; a recovery before sends nothing
  std::optional<Millis> remind_every;  // repeat while down; unset: never

  // Monitors this one depends on (config/dependencies.h: no cycles, no unknown names).
  // While one of them is DOWN, this monitor's new incident is marked caused by it and
  // sends no alert of its own; the parent's alerts list it instead.
  std::vector<std::string> depends_on;
};

std::string_view to_string(MonitorType t);

struct Config {
  std::string path;  // the file it was read from
  ServerConfig server;
  StoreConfig store;
  std::vector<MonitorConfig> monitors;
  std::vector<ChannelConfig> notifications;
  std::vector<MaintenanceWindow> maintenance;
  std::vector<StatusPageConfig> status_pages;  // config/web_config.h
  AuthConfig auth;
  RetentionConfig retention;
  JobsConfig jobs;
};

// True when two monitor configs would check the same thing the same way: a reload keeps
// the state and history of monitors whose config is unchanged.
bool same_check(const MonitorConfig& a, const MonitorConfig& b);

}  // namespace trainwatch
