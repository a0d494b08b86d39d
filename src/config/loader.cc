// The config loader (loader.h): parses the file, reads the top-level sections and the
// keys every monitor shares, then checks what spans sections (notify names, jobs.notify,
// depends_on). Each monitor type's own keys are read by its reader: http_reader.h,
// tcp_tls_readers.h, heartbeat_reader.h, job_readers.h, probe_readers.h (dns, icmp).
#include "config/loader.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include <boost/url/parse.hpp>

#include "config/alias_bound.h"
#include "config/conditions_reader.h"
#include "config/dependencies.h"
#include "config/heartbeat_reader.h"
#include "config/http_reader.h"
#include "config/job_readers.h"
#include "config/notifications_reader.h"
#include "config/probe_readers.h"
#include "config/tcp_tls_readers.h"
#include "config/web_sections.h"
#include "config/yaml_reader.h"
#include "core/duration.h"
#include "core/names.h"
#include "core/redaction.h"

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
  if (auto text = s.string("advertise")) {
    const size_t colon = text->rfind(':');
    const std::string port = colon == std::string::npos ? "" : text->substr(colon + 1);
    if (colon == 0 || port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) == 0 ||
        std::stoi(port) > 65535) {
      s.diag().error(s.raw("advertise").Mark(), s.key_path("advertise"),
                     "found '" + *text +
                         "'; expected HOST:PORT at which the other replicas reach this one, "
                         "such as trainwatch-2.internal:8080");
    } else {
      out.advertise = *text;
    }
  }
  if (auto allow = s.boolean("allow_local_channel_targets")) out.allow_local_channel_targets = *allow;
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

struct MonitorTypeInfo {
  const char* name;
  MonitorType type;
  void (*read)(Section&, MonitorConfig&);
};
constexpr MonitorTypeInfo kMonitorTypes[] = {
    {"http", MonitorType::kHttp, config_detail::read_http},
    {"tcp", MonitorType::kTcp, config_detail::read_tcp},
    {"heartbeat", MonitorType::kHeartbeat, config_detail::read_heartbeat},
    {"job", MonitorType::kJob, config_detail::read_job},
    {"dns", MonitorType::kDns, config_detail::read_dns},
    {"icmp", MonitorType::kIcmp, config_detail::read_icmp},
    {"tls", MonitorType::kTls, config_detail::read_tls},
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

// Aliases repeated past what the readers may copy (alias_bound.h): an error at the anchored
// value, and nothing read.
bool aliases_too_big(Diagnostics& diag, const YAML::Node& root) {
  const auto excess = config_detail::alias_excess(root);
  if (!excess) return false;
  constexpr double kMiB = 1024.0 * 1024.0;
  char size[160];
  std::snprintf(size, sizeof size, "%.1f MiB once every alias is expanded, %.1f MiB of it repeated",
                static_cast<double>(excess->expanded) / kMiB,
                static_cast<double>(excess->expanded - excess->distinct) / kMiB);
  diag.error(excess->anchored, "yaml",
             "aliases read this anchored value " + std::to_string(excess->repeats) +
                 " times and make the document " + size + "; expected aliases to add at most " +
                 std::to_string(config_detail::kMaxAliasExpansion >> 20) + " MiB");
  return true;
}

}  // namespace

// A type's word is its row's in kMonitorTypes, the one table of types.
std::string_view to_string(MonitorType t) {
  for (const auto& candidate : kMonitorTypes) {
    if (candidate.type == t) return candidate.name;
  }
  return kMonitorTypes[0].name;
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
  if (aliases_too_big(diag, root)) {
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
      config_detail::read_jobs(diag, top.raw("jobs"), config.jobs);
      top.finish();
      config_detail::check_alerting_references(diag, root, config);
      config_detail::check_jobs_notify(diag, root, config);
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
    if (!aliases_too_big(diag, list)) config_detail::read_maintenance(diag, list, windows);
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

}  // namespace trainwatch
