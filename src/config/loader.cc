#include "config/loader.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <boost/url/parse.hpp>

#include "config/conditions_reader.h"
#include "config/dependencies.h"
#include "config/notifications_reader.h"
#include "config/probe_readers.h"
#include "config/web_sections.h"
#include "config/yaml_reader.h"
#include "core/duration.h"
#include "core/names.h"
#include "core/redaction.h"
#include "cron/expression.h"
#include "cron/zone.h"

namespace trainwatch {
namespace {

using config_detail::describe;
using config_detail::Diagnostics;
using config_detail::Section;

void read_listen(Section& s, ListenAddress& out) {
  auto text = s.string("listen");
  if (!text) return;
  size_t colon = text->rfind(':');
  int port = -1;
  if (colon != std::string::npos) {
    try {
      size_t used = 0;
      port = std::stoi(text->substr(colon + 1), &used);
      if (used != text->size() - colon - 1) port = -1;
    } catch (const std::exception&) {
      port = -1;
    }
  }
  if (colon == std::string::npos || colon == 0 || port < 0 || port > 65535) {
    s.diag().error(s.raw("listen").Mark(), s.key_path("listen"),
                   "found '" + *text + "'; expected HOST:PORT such as 127.0.0.1:8080");
    return;
  }
  out.host = text->substr(0, colon);
  out.port = static_cast<uint16_t>(port);
}

void read_server(Diagnostics& diag, const YAML::Node& node, ServerConfig& out) {
  Section s(diag, node, "server");
  read_listen(s, out.listen);
  if (auto dir = s.string("data_dir")) out.data_dir = *dir;
  if (auto n = s.integer("max_checks_in_flight", 1, 100'000)) out.max_checks_in_flight = static_cast<int>(*n);
  if (auto n = s.integer("max_connections", 1, 1'000'000)) out.max_connections = static_cast<int>(*n);
  if (auto n = s.integer("max_connections_per_address", 1, 1'000'000)) {
    out.max_connections_per_address = static_cast<int>(*n);
  }
  s.finish();
}

// Only the shape is judged here; libpq judges the rest when the store opens. Messages
// show the URL through redact_url: it may carry a password.
void read_store(Diagnostics& diag, const YAML::Node& node, StoreConfig& out) {
  Section s(diag, node, "store");
  if (!s.valid()) return;
  if (auto url = s.string("url"); url && !url->empty()) {
    auto parsed = boost::urls::parse_uri(*url);
    const bool postgres = parsed && (parsed->scheme() == "postgresql" || parsed->scheme() == "postgres");
    std::string bad_sslmode;
    if (postgres) {
      static const std::set<std::string> kSslModes = {"disable", "allow",     "prefer",
                                                      "require", "verify-ca", "verify-full"};
      for (const auto& param : parsed->params()) {
        if (param.key == "sslmode" && kSslModes.count(param.value) == 0) bad_sslmode = param.value;
      }
    }
    if (!postgres) {
      // Text that does not parse is not shown at all: where its password is cannot be told.
      const std::string found = parsed ? "'" + redact_url(*url) + "'" : "text that is not a URL";
      diag.error(s.raw("url").Mark(), s.key_path("url"),
                 "found " + found + "; expected postgresql://USER@HOST:PORT/DATABASE, or no url for SQLite");
    } else if (!bad_sslmode.empty()) {
      diag.error(s.raw("url").Mark(), s.key_path("url"),
                 "found sslmode '" + bad_sslmode +
                     "'; expected disable, allow, prefer, require, verify-ca or verify-full");
    }
    out.url = *url;
  }
  s.finish();
}

// Plain HTTP has no certificate: [CERTIFICATE_EXPIRATION] there would always fail, so it
// is refused at load, where the URL can be corrected.
void refuse_certificate_conditions(Section& s) {
  const YAML::Node list = s.raw("conditions");
  if (!list.IsSequence()) return;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].IsScalar()) continue;
    auto condition = Condition::parse(list[i].Scalar());
    if (!condition || !condition->reads_certificate_expiration()) continue;
    s.diag().error(list[i].Mark(), s.key_path("conditions") + "[" + std::to_string(i) + "]",
                   "found [CERTIFICATE_EXPIRATION] on an http:// url, which has no certificate; "
                   "expected an https:// url");
  }
}

void read_http(Section& s, MonitorConfig& m) {
  HttpCheckSpec spec;
  if (auto url = s.string("url", true)) {
    auto parsed = boost::urls::parse_uri(*url);
    if (!parsed || (parsed->scheme() != "http" && parsed->scheme() != "https") || parsed->host().empty()) {
      s.diag().error(s.raw("url").Mark(), s.key_path("url"),
                     "found '" + *url + "'; expected an http:// or https:// URL with a host");
    }
    spec.url = *url;
  }
  if (auto method = s.string("method")) {
    static const std::set<std::string> kMethods = {"GET",   "HEAD",   "POST",   "PUT",
                                                   "PATCH", "DELETE", "OPTIONS"};
    if (kMethods.count(*method) == 0) {
      s.diag().error(s.raw("method").Mark(), s.key_path("method"),
                     "found '" + *method + "'; expected GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS");
    }
    spec.method = *method;
  }
  if (YAML::Node headers = s.raw("headers"); headers.IsDefined() && !headers.IsNull()) {
    if (!headers.IsMap()) {
      s.diag().error(headers.Mark(), s.key_path("headers"),
                     describe(headers) + "; expected a mapping of header names to values");
    } else {
      for (auto it = headers.begin(); it != headers.end(); ++it) {
        std::string key = s.key_path("headers") + "." + it->first.Scalar();
        if (!it->second.IsScalar()) {
          s.diag().error(it->second.Mark(), key, describe(it->second) + "; expected a string");
          continue;
        }
        spec.headers.emplace_back(it->first.Scalar(), s.diag().expand(it->second, key));
      }
    }
  }
  if (auto body = s.string("body")) spec.body = *body;
  if (auto b = s.boolean("follow_redirects")) spec.follow_redirects = *b;
  if (auto b = s.boolean("tls_verify")) spec.tls_verify = *b;
  if (auto k = s.string("keyword")) spec.keyword = *k;
  if (auto k = s.string("keyword_absent")) spec.keyword_absent = *k;
  config_detail::read_conditions(s, "http",
                                 {"[STATUS]", "[RESPONSE_TIME]", "[BODY]", "[CERTIFICATE_EXPIRATION]"},
                                 /*json_paths=*/true, spec.conditions);
  if (spec.url.starts_with("http://")) refuse_certificate_conditions(s);
  m.spec = std::move(spec);
}

void read_tcp(Section& s, MonitorConfig& m) {
  TcpCheckSpec spec;
  if (auto host = s.string("host", true)) spec.host = *host;
  if (auto port = s.integer("port", 1, 65535)) {
    spec.port = static_cast<uint16_t>(*port);
  } else if (!s.has("port")) {
    s.diag().error(s.mark(), s.key_path("port"), "missing; expected a port number from 1 to 65535");
  }
  m.spec = spec;
}

void read_tls(Section& s, MonitorConfig& m) {
  TlsCheckSpec spec;
  if (auto host = s.string("host", true)) spec.host = *host;
  if (auto port = s.integer("port", 1, 65535)) {
    spec.port = static_cast<uint16_t>(*port);
  } else if (!s.has("port")) {
    s.diag().error(s.mark(), s.key_path("port"),
                   "missing; expected the port TLS is served on, such as 443, from 1 to 65535");
  }
  if (auto name = s.string("server_name")) spec.server_name = *name;
  if (auto file = s.string("ca_file")) spec.ca_file = *file;
  const auto down_before = s.duration("down_before");
  if (down_before) spec.down_before = *down_before;
  // Unset, the warning starts two weeks ahead, or with the DOWN when that is set earlier.
  spec.warn_before = std::max(spec.warn_before, spec.down_before);
  if (auto warn_before = s.duration("warn_before")) {
    if (*warn_before < spec.down_before) {
      s.diag().error(s.raw("warn_before").Mark(), s.key_path("warn_before"),
                     "found " + format_duration_config(*warn_before) + ", less than down_before " +
                         format_duration_config(spec.down_before) +
                         "; expected at least down_before (the warning comes before the DOWN)");
    }
    spec.warn_before = *warn_before;
  }
  m.spec = std::move(spec);
}

// Tokens are path segments users paste into URLs: URL-safe characters only, long enough
// not to be guessed when chosen by hand (generated ones are 128-bit).
bool valid_token(const std::string& token) {
  auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-' || c == '~';
  };
  return token.size() >= 8 && token.size() <= 128 && std::all_of(token.begin(), token.end(), allowed);
}

// A heartbeat's `schedule` and `tz`: a five-field cron expression that fires on some
// date, in a zone of the system's tz database.
constexpr Millis kDefaultScheduleGrace{3'600'000};

std::optional<cron::Schedule> read_schedule(Section& s) {
  cron::Schedule schedule;
  bool ok = true;
  if (auto text = s.string("schedule")) {
    schedule.text = *text;
    auto parsed = cron::parse_expression(*text);
    if (!parsed) {
      s.diag().error(s.raw("schedule").Mark(), s.key_path("schedule"),
                     "found '" + *text + "': " + parsed.error().message);
      ok = false;
    } else if (std::string why = cron::never_fires(*parsed); !why.empty()) {
      s.diag().error(s.raw("schedule").Mark(), s.key_path("schedule"),
                     "found '" + *text + "', which never fires (" + why +
                         "); expected a schedule with at least one date that exists");
      ok = false;
    } else {
      schedule.expression = *parsed;
    }
  } else {
    ok = false;  // s.string reported the wrong type
  }
  if (auto tz = s.string("tz")) {
    auto zone = cron::load_zone(*tz);
    if (!zone) {
      s.diag().error(
          s.raw("tz").Mark(), s.key_path("tz"),
          "found '" + *tz +
              "'; expected a time zone of the tz database, such as Europe/Berlin, America/New_York "
              "or UTC");
      ok = false;
    } else {
      schedule.zone_name = *tz;
      schedule.zone = *zone;
    }
  }
  if (!ok) return std::nullopt;
  return schedule;
}

void read_heartbeat(Section& s, MonitorConfig& m) {
  HeartbeatSpec spec;
  // The checked monitors' timing keys mean nothing here; accepting them would let
  // `interval: 1h` silently stand for a period that is never applied.
  for (const char* key : {"interval", "timeout", "retries"}) {
    if (s.has(key)) {
      s.diag().error(s.raw(key).Mark(), s.key_path(key),
                     "is not used by heartbeat monitors; expected period or schedule, and grace");
    }
  }
  constexpr Millis kMinPeriod{1000};
  s.raw("schedule");  // known even when empty: the checks below say what it lacks
  const bool has_period = s.has("period");
  const bool has_schedule = s.has("schedule");
  if (has_period && has_schedule) {
    s.diag().error(s.raw("schedule").Mark(), s.key_path("schedule"),
                   "found both schedule and period; expected exactly one of them");
  } else if (!has_period && !has_schedule) {
    s.diag().error(s.mark(), s.key_path("period"),
                   "missing; expected the time between pings, such as 60m, or a cron schedule, such as "
                   "\"0 3 * * *\"");
  }
  if (auto period = s.duration("period")) {
    if (*period < kMinPeriod) {
      s.diag().error(s.raw("period").Mark(), s.key_path("period"),
                     "found " + format_duration_config(*period) + "; expected at least 1s");
    }
    spec.period = *period;
  }
  if (has_schedule) spec.schedule = read_schedule(s);
  if (s.has("tz") && !has_schedule) {
    s.diag().error(s.raw("tz").Mark(), s.key_path("tz"),
                   "is used only with schedule; expected a cron schedule beside it, or no tz");
  }
  // Without a grace a period monitor is DOWN after two missed periods, the seeds' rule
  // ("alert when no ping arrives within twice the checkpoint interval"). A schedule has
  // no period to double: an hour, as in Healthchecks.
  spec.grace = spec.schedule ? kDefaultScheduleGrace : spec.period;
  if (auto grace = s.duration("grace")) {
    if (*grace < kMinPeriod) {
      s.diag().error(s.raw("grace").Mark(), s.key_path("grace"),
                     "found " + format_duration_config(*grace) + "; expected at least 1s");
    }
    spec.grace = *grace;
  }
  if (auto token = s.string("token")) {
    if (!valid_token(*token)) {
      s.diag().error(s.raw("token").Mark(), s.key_path("token"),
                     "found '" + *token + "'; expected 8 to 128 of the characters A-Z a-z 0-9 . _ - ~");
    }
    spec.token = *token;
  }
  constexpr int64_t kMaxPingBodyLimit = 1024 * 1024;  // the HTTP server's body bound
  if (auto limit = s.integer("ping_body_limit", 0, kMaxPingBodyLimit))
    spec.ping_body_limit = static_cast<size_t>(*limit);
  m.spec = std::move(spec);
}

// Thresholds of a job, under `thresholds:` of a job monitor or of the `jobs:` section.
void read_job_thresholds(Section& parent, JobThresholds& t) {
  if (!parent.has("thresholds")) {
    parent.raw("thresholds");
    return;
  }
  Section s(parent.diag(), parent.raw("thresholds"), parent.key_path("thresholds"));
  if (!s.valid()) return;
  auto positive = [&](const char* key) -> std::optional<Millis> {
    auto d = s.duration(key);
    if (d && d->count() == 0) {
      s.diag().error(s.raw(key).Mark(), s.key_path(key), "found 0s; expected more than 0");
      return std::nullopt;
    }
    return d;
  };
  if (auto d = positive("startup_timeout")) t.startup_timeout = *d;
  if (auto d = positive("step_timeout")) t.step_timeout = *d;
  if (auto d = positive("step_timeout_min")) t.step_timeout_min = *d;
  if (auto d = positive("checkpoint_timeout")) t.checkpoint_timeout = *d;
  if (auto d = positive("checkpoint_timeout_min")) t.checkpoint_timeout_min = *d;
  if (auto n = s.integer("missed_reports", 1, 1000)) t.missed_reports = static_cast<int>(*n);
  if (auto d = positive("node_silent_after")) t.node_silent_after = *d;
  if (auto x = s.number("straggler_ratio", 1.0, 100.0)) t.straggler_ratio = *x;
  if (auto x = s.number("throughput_drop", 0.0, 1.0)) t.throughput_drop = *x;
  if (auto n = s.integer("overflow_streak", 1, 1'000'000)) t.overflow_streak = static_cast<int>(*n);
  if (auto x = s.number("min_loss_scale", 0.0, 1e30)) t.min_loss_scale = *x;
  if (auto x = s.number("gpu_memory_pct", 1.0, 100.0)) t.gpu_memory_pct = *x;
  if (auto x = s.number("disk_free_gb", 0.0, 1e9)) t.disk_free_bytes = static_cast<uint64_t>(*x * 1e9);
  if (auto x = s.number("host_memory_free_gb", 0.0, 1e9))
    t.host_memory_free_bytes = static_cast<uint64_t>(*x * 1e9);
  s.finish();
}

// A job is checked (its findings evaluated) every second unless `interval` says otherwise:
// reports arrive every few seconds and a finding should not wait a minute to page.
constexpr Millis kJobInterval{1'000};

void read_job(Section& s, MonitorConfig& m) {
  JobCheckSpec spec;
  if (auto n = s.integer("world_size", 1, 1'000'000)) spec.world_size = static_cast<int>(*n);
  read_job_thresholds(s, spec.thresholds);
  if (!s.has("interval")) m.interval = kJobInterval;
  m.spec = spec;
}

void read_jobs(Diagnostics& diag, const YAML::Node& node, JobsConfig& out) {
  Section s(diag, node, "jobs");
  if (!s.valid()) return;
  if (auto b = s.boolean("auto_create")) out.auto_create = *b;
  if (auto token = s.string("token")) out.token = *token;
  if (auto notify = s.string_list("notify")) out.notify = *notify;
  if (auto n = s.integer("max_ranks", 1, 1'000'000)) out.max_ranks = static_cast<int>(*n);
  if (auto n = s.integer("max_ranks_per_node", 1, 1'024)) out.max_ranks_per_node = static_cast<int>(*n);
  if (auto d = s.duration("expire_after")) {
    if (d->count() < 1'000) {
      s.diag().error(s.raw("expire_after").Mark(), s.key_path("expire_after"),
                     "found less than 1s; expected at least 1s");
    } else {
      out.expire_after = *d;
    }
  }
  read_job_thresholds(s, out.thresholds);
  s.finish();
}

// jobs.notify names channels for monitors that do not exist yet: check them now, as
// check_alerting_references does for the monitors' own notify.
void check_jobs_notify(Diagnostics& diag, const YAML::Node& root, const Config& config) {
  if (!root.IsMap()) return;
  // A const lookup of an absent key yields an invalid node that throws on the next
  // lookup: test each level before going down.
  const YAML::Node jobs = root["jobs"];
  const YAML::Node list = jobs.IsDefined() && jobs.IsMap() ? jobs["notify"] : YAML::Node();
  for (size_t j = 0; j < config.jobs.notify.size(); ++j) {
    const std::string& name = config.jobs.notify[j];
    bool known = std::any_of(config.notifications.begin(), config.notifications.end(),
                             [&](const ChannelConfig& c) { return c.name == name; });
    if (known) continue;
    diag.error(list.IsSequence() && j < list.size() ? list[j].Mark() : root.Mark(),
               "jobs.notify[" + std::to_string(j) + "]",
               "found '" + name + "'; expected a channel from notifications");
  }
}

struct MonitorTypeInfo {
  const char* name;
  MonitorType type;
  void (*read)(Section&, MonitorConfig&);
};
constexpr MonitorTypeInfo kMonitorTypes[] = {
    {"http", MonitorType::kHttp, read_http},
    {"tcp", MonitorType::kTcp, read_tcp},
    {"heartbeat", MonitorType::kHeartbeat, read_heartbeat},
    {"job", MonitorType::kJob, read_job},
    {"dns", MonitorType::kDns, config_detail::read_dns},
    {"icmp", MonitorType::kIcmp, config_detail::read_icmp},
    {"tls", MonitorType::kTls, read_tls},
};

std::optional<MonitorConfig> read_monitor(Diagnostics& diag, const YAML::Node& node, size_t index) {
  Section s(diag, node, "monitors[" + std::to_string(index) + "]");
  if (!s.valid()) return std::nullopt;
  MonitorConfig m;
  m.where = diag.location(node.Mark());
  if (auto name = s.string("name", true)) {
    if (std::string problem = name_problem(*name); !problem.empty()) {
      diag.error(s.raw("name").Mark(), s.key_path("name"), "found '" + *name + "'; " + problem);
    }
    m.name = *name;
  }
  if (auto interval = s.duration("interval")) {
    if (interval->count() < 100) {
      diag.error(s.raw("interval").Mark(), s.key_path("interval"),
                 "found " + format_duration_config(*interval) + "; expected at least 100ms");
    }
    m.interval = *interval;
  }
  if (auto timeout = s.duration("timeout")) m.timeout = *timeout;
  if (m.timeout.count() == 0)
    diag.error(s.raw("timeout").Mark(), s.key_path("timeout"), "found 0s; expected more than 0");
  if (auto retries = s.integer("retries", 0, 100)) m.retries = static_cast<int>(*retries);
  if (auto tags = s.string_list("tags")) m.tags = *tags;
  if (auto depends_on = s.string_list("depends_on")) m.depends_on = *depends_on;

  auto type = s.string("type", true);
  const MonitorTypeInfo* info = nullptr;
  for (const auto& candidate : kMonitorTypes) {
    if (type && *type == candidate.name) info = &candidate;
  }
  if (type && info == nullptr) {
    std::string expected;
    for (const auto& candidate : kMonitorTypes)
      expected += (expected.empty() ? "" : ", ") + std::string(candidate.name);
    diag.error(s.raw("type").Mark(), s.key_path("type"),
               "found '" + *type + "'; expected one of: " + expected);
  }
  if (info == nullptr) return std::nullopt;  // without a type the other keys can't be judged
  m.type = info->type;
  info->read(s, m);
  config_detail::read_monitor_alerting(s, m);
  s.finish();
  return m;
}

void read_monitors(Diagnostics& diag, const YAML::Node& node, std::vector<MonitorConfig>& out) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsSequence()) {
    diag.error(node.Mark(), "monitors", describe(node) + "; expected a list of monitors");
    return;
  }
  std::map<std::string, SourceLocation> seen;
  std::map<std::string, std::string> token_owner;  // a token must name one monitor
  for (size_t i = 0; i < node.size(); ++i) {
    auto monitor = read_monitor(diag, node[i], i);
    if (!monitor) continue;
    if (const auto* hb = std::get_if<HeartbeatSpec>(&monitor->spec); hb && !hb->token.empty()) {
      if (auto [owner, fresh] = token_owner.emplace(hb->token, monitor->name); !fresh) {
        diag.error(node[i]["token"].Mark(), "monitors[" + std::to_string(i) + "].token",
                   "found the token of monitor '" + owner->second + "' again; expected a token of its own");
      }
    }
    auto [it, inserted] = seen.emplace(monitor->name, monitor->where);
    if (!inserted && !monitor->name.empty()) {
      diag.error(node[i]["name"].Mark(), "monitors[" + std::to_string(i) + "].name",
                 "found '" + monitor->name + "' again; expected a unique name (first used at line " +
                     std::to_string(it->second.line) + ")");
    }
    out.push_back(std::move(*monitor));
  }
}

// Dependencies are judged once every monitor is read: a monitor may depend on one listed
// after it. Positions come from the YAML list by index, as in check_alerting_references.
void check_dependencies(Diagnostics& diag, const YAML::Node& root, const Config& config) {
  if (!root.IsMap()) return;
  const YAML::Node monitors = root["monitors"];
  const bool aligned =
      monitors.IsDefined() && monitors.IsSequence() && monitors.size() == config.monitors.size();
  for (const auto& problem : dependency_problems(config.monitors)) {
    YAML::Mark mark = root.Mark();
    if (aligned) {
      const YAML::Node list = monitors[problem.monitor]["depends_on"];
      mark = list.IsDefined() && list.IsSequence() && problem.entry < list.size()
                 ? list[problem.entry].Mark()
                 : monitors[problem.monitor].Mark();
    }
    diag.error(
        mark,
        "monitors[" + std::to_string(problem.monitor) + "].depends_on[" + std::to_string(problem.entry) + "]",
        problem.message);
  }
}

}  // namespace

std::string_view to_string(MonitorType t) {
  switch (t) {
    case MonitorType::kHttp: return "http";
    case MonitorType::kTcp: return "tcp";
    case MonitorType::kHeartbeat: return "heartbeat";
    case MonitorType::kJob: return "job";
    case MonitorType::kDns: return "dns";
    case MonitorType::kIcmp: return "icmp";
    case MonitorType::kTls: return "tls";
  }
  return "http";
}

LoadedConfig load_config_text(const std::string& text, const std::string& path, const EnvLookup& env) {
  Diagnostics diag(path, env);
  LoadedConfig loaded;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    diag.error(e.mark, "yaml", e.msg + "; expected valid YAML");
    loaded.errors = diag.take();
    return loaded;
  }
  Config config;
  config.path = path;
  if (root.IsNull()) {
    // Nothing but white space and comments: most often a file caught between an editor's
    // truncate and its write. Starting or reloading on it would drop every monitor.
    diag.error(YAML::Mark(), "file",
               "is empty; expected a YAML mapping of sections (write `monitors: []` for an installation "
               "with no monitors)");
    loaded.errors = diag.take();
    return loaded;
  }
  // A const lookup (operator[] would insert the key), and only in a mapping: on a scalar or
  // a sequence yaml-cpp throws, and Section below reports what the root should be.
  const YAML::Node& const_root = root;
  loaded.monitors_listed = root.IsMap() && const_root["monitors"].IsDefined();
  Section top(diag, root, "");
  if (top.valid()) {
    try {
      read_server(diag, top.raw("server"), config.server);
      read_store(diag, top.raw("store"), config.store);
      read_monitors(diag, top.raw("monitors"), config.monitors);
      config_detail::read_notifications(diag, top.raw("notifications"), config.notifications);
      config_detail::read_maintenance(diag, top.raw("maintenance"), config.maintenance);
      config_detail::read_status_pages(diag, top.raw("status_pages"), config.monitors, config.status_pages);
      config_detail::read_auth(diag, top.raw("auth"), config.auth);
      config_detail::read_retention(diag, top.raw("retention"), config.retention);
      if (auto token = env("TRAINWATCH_ADMIN_TOKEN"); token && !token->empty())
        config.auth.admin_tokens.push_back(*token);
      read_jobs(diag, top.raw("jobs"), config.jobs);
      top.finish();
      config_detail::check_alerting_references(diag, root, config);
      check_jobs_notify(diag, root, config);
      check_dependencies(diag, root, config);
    } catch (const YAML::Exception& e) {
      // yaml-cpp throws on some malformed shapes while walking; report it where it was.
      diag.error(e.mark, "yaml", e.msg);
    }
  }
  if (diag.has_errors()) {
    loaded.errors = diag.take();
  } else {
    loaded.config = std::move(config);
  }
  return loaded;
}

LoadedWindow load_window_text(const std::string& text, const std::string& path, const EnvLookup& env) {
  Diagnostics diag(path, env);
  LoadedWindow loaded;
  std::vector<MaintenanceWindow> windows;
  try {
    // A one-entry list, so keys and messages read exactly as in a file.
    const YAML::Node list = YAML::Load("[" + text + "]");
    config_detail::read_maintenance(diag, list, windows);
  } catch (const YAML::Exception& e) {
    diag.error(e.mark, "yaml", e.msg + "; expected valid YAML");
  }
  if (!diag.has_errors() && windows.size() != 1)
    diag.error(YAML::Mark(), "maintenance", "expected one window");
  if (diag.has_errors()) {
    loaded.errors = diag.take();
  } else {
    loaded.window = std::move(windows.front());
  }
  return loaded;
}

LoadedConfig load_config_file(const std::string& path, const EnvLookup& env) {
  std::ifstream in(path);
  if (!in) {
    LoadedConfig loaded;
    loaded.errors.push_back(
        ConfigError{SourceLocation{path, 0, 0}, "file", "cannot be read; expected a readable YAML file"});
    return loaded;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return load_config_text(buffer.str(), path, env);
}

bool same_check(const MonitorConfig& a, const MonitorConfig& b) {
  if (a.name != b.name || a.type != b.type || a.interval != b.interval || a.timeout != b.timeout ||
      a.retries != b.retries || a.tags != b.tags) {
    return false;
  }
  if (const auto* ha = std::get_if<HttpCheckSpec>(&a.spec)) {
    const auto& hb = std::get<HttpCheckSpec>(b.spec);
    std::vector<std::string> ca, cb;
    for (const auto& c : ha->conditions) ca.push_back(c.text());
    for (const auto& c : hb.conditions) cb.push_back(c.text());
    return ha->url == hb.url && ha->method == hb.method && ha->headers == hb.headers && ha->body == hb.body &&
           ha->follow_redirects == hb.follow_redirects && ha->tls_verify == hb.tls_verify &&
           ha->keyword == hb.keyword && ha->keyword_absent == hb.keyword_absent && ca == cb;
  }
  if (const auto* ba = std::get_if<HeartbeatSpec>(&a.spec)) {
    const auto& bb = std::get<HeartbeatSpec>(b.spec);
    return ba->period == bb.period && ba->schedule == bb.schedule && ba->grace == bb.grace &&
           ba->token == bb.token && ba->ping_body_limit == bb.ping_body_limit;
  }
  if (const auto* ja = std::get_if<JobCheckSpec>(&a.spec)) {
    const auto& jb = std::get<JobCheckSpec>(b.spec);
    const JobThresholds& x = ja->thresholds;
    const JobThresholds& y = jb.thresholds;
    return ja->world_size == jb.world_size && x.startup_timeout == y.startup_timeout &&
           x.step_timeout == y.step_timeout && x.step_timeout_min == y.step_timeout_min &&
           x.checkpoint_timeout == y.checkpoint_timeout &&
           x.checkpoint_timeout_min == y.checkpoint_timeout_min && x.missed_reports == y.missed_reports &&
           x.node_silent_after == y.node_silent_after && x.straggler_ratio == y.straggler_ratio &&
           x.throughput_drop == y.throughput_drop && x.overflow_streak == y.overflow_streak &&
           x.min_loss_scale == y.min_loss_scale && x.gpu_memory_pct == y.gpu_memory_pct &&
           x.disk_free_bytes == y.disk_free_bytes && x.host_memory_free_bytes == y.host_memory_free_bytes;
  }
  auto texts = [](const std::vector<Condition>& conditions) {
    std::vector<std::string> out;
    out.reserve(conditions.size());
    for (const auto& c : conditions) out.push_back(c.text());
    return out;
  };
  if (const auto* da = std::get_if<DnsCheckSpec>(&a.spec)) {
    const auto& db = std::get<DnsCheckSpec>(b.spec);
    return da->name == db.name && da->record == db.record && da->resolver_host == db.resolver_host &&
           da->resolver_port == db.resolver_port && texts(da->conditions) == texts(db.conditions);
  }
  if (const auto* ia = std::get_if<IcmpCheckSpec>(&a.spec)) {
    const auto& ib = std::get<IcmpCheckSpec>(b.spec);
    return ia->host == ib.host && ia->count == ib.count && ia->socket == ib.socket &&
           texts(ia->conditions) == texts(ib.conditions);
  }
  if (const auto* la = std::get_if<TlsCheckSpec>(&a.spec)) {
    const auto& lb = std::get<TlsCheckSpec>(b.spec);
    return la->host == lb.host && la->port == lb.port && la->server_name == lb.server_name &&
           la->ca_file == lb.ca_file && la->warn_before == lb.warn_before &&
           la->down_before == lb.down_before;
  }
  const auto& ta = std::get<TcpCheckSpec>(a.spec);
  const auto& tb = std::get<TcpCheckSpec>(b.spec);
  return ta.host == tb.host && ta.port == tb.port;
}

}  // namespace trainwatch
