#include "catalog/monitor_catalog.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include <boost/json.hpp>

#include "catalog/heartbeat_tokens.h"
#include "config/dependencies.h"
#include "config/loader.h"
#include "core/json_text.h"
#include "heartbeat/tokens.h"
#include "storage/store_errors.h"

namespace trainwatch::catalog {

Result<MonitorConfig> parse_api_monitor(const std::string& body, const std::vector<ChannelConfig>& channels) {
  boost::system::error_code ec;
  boost::json::value parsed = boost::json::parse(body, ec);
  if (ec || !parsed.is_object())
    return make_error("monitor.invalid", "the body must be one JSON object describing a monitor");
  // `notify` names channels the loader cannot see from here (the API's): checked
  // against them apart, then taken out of what the loader reads.
  std::vector<std::string> notify;
  if (const boost::json::value* list = parsed.as_object().if_contains("notify")) {
    if (!list->is_array()) return make_error("monitor.invalid", "notify: expected a list of channel names");
    std::string known;
    for (const auto& c : channels) known += (known.empty() ? "" : ", ") + c.name;
    for (size_t i = 0; i < list->as_array().size(); ++i) {
      const boost::json::value& item = list->as_array()[i];
      const std::string at = "notify[" + std::to_string(i) + "]: ";
      if (!item.is_string()) return make_error("monitor.invalid", at + "expected a channel name");
      std::string name(item.as_string());
      const bool found = std::any_of(channels.begin(), channels.end(),
                                     [&](const ChannelConfig& c) { return c.name == name; });
      if (!found) {
        return make_error("monitor.invalid", at + "found '" + name +
                                                 "'; expected one of the notification channels (" +
                                                 (known.empty() ? "none defined" : known) + ")");
      }
      notify.push_back(std::move(name));
    }
    parsed.as_object().erase("notify");
  }
  // `depends_on` names other monitors, which the loader cannot see from here either: taken
  // out the same way and judged against every monitor by the catalog (dependency_error).
  std::vector<std::string> depends_on;
  if (const boost::json::value* list = parsed.as_object().if_contains("depends_on")) {
    if (!list->is_array())
      return make_error("monitor.invalid", "depends_on: expected a list of monitor names");
    for (size_t i = 0; i < list->as_array().size(); ++i) {
      const boost::json::value& item = list->as_array()[i];
      if (!item.is_string()) {
        return make_error("monitor.invalid",
                          "depends_on[" + std::to_string(i) + "]: expected a monitor name");
      }
      depends_on.emplace_back(item.as_string());
    }
    parsed.as_object().erase("depends_on");
  }
  // One line, so the loader's column points into the body (less the wrapper's width).
  const std::string text = "monitors: [" + json_text(parsed) + "]";
  LoadedConfig loaded =
      load_config_text(text, "body", [](const std::string&) { return std::optional<std::string>(); });
  if (!loaded.config) {
    std::string message;
    for (const auto& e : loaded.errors) {
      std::string key = e.key.rfind("monitors[0].", 0) == 0 ? e.key.substr(12) : e.key;
      message += (message.empty() ? "" : "; ") + key + ": " + e.message;
    }
    return make_error("monitor.invalid", message);
  }
  if (loaded.config->monitors.size() != 1)
    return make_error("monitor.invalid", "the body must describe one monitor");
  MonitorConfig monitor = std::move(loaded.config->monitors.front());
  monitor.notify = std::move(notify);
  monitor.depends_on = std::move(depends_on);
  return monitor;
}

std::optional<Error> dependency_error(const std::vector<MonitorConfig>& monitors, const std::string& name) {
  std::string message;
  for (const auto& problem : dependency_problems(monitors)) {
    const MonitorConfig& m = monitors[problem.monitor];
    // This monitor's own entries, and any cycle: the rest were there before this write.
    if (m.name != name && problem.message.find("cycle") == std::string::npos) continue;
    message += (message.empty() ? "" : "; ") + std::string(m.name == name ? "" : m.name + ".") +
               "depends_on[" + std::to_string(problem.entry) + "]: " + problem.message;
  }
  if (message.empty()) return std::nullopt;
  return make_error("monitor.invalid", message);
}

Result<std::vector<std::string>> MonitorCatalog::load() {
  auto stored = store_.api_monitors();
  if (!stored) return stored.error();
  std::vector<std::string> skipped;
  auto parsed = parse_stored(*stored, skipped);
  if (!parsed) return parsed.error();
  std::lock_guard lock(mu_);
  api_ = std::move(*parsed);
  return skipped;
}

Result<bool> MonitorCatalog::follow_store() {
  auto stored = store_.api_monitors();
  if (!stored) return stored.error();
  {
    std::lock_guard lock(mu_);
    auto same = [&](const ApiMonitorSpec& spec) {
      auto it = api_.find(spec.name);
      return it != api_.end() && it->second.first == spec.spec_json;
    };
    if (stored->size() == api_.size() && std::all_of(stored->begin(), stored->end(), same)) return false;
  }
  std::vector<std::string> skipped;
  auto parsed = parse_stored(*stored, skipped);
  if (!parsed) return parsed.error();
  for (const auto& why : skipped) spdlog::warn("API monitor skipped: {}", why);
  {
    std::lock_guard lock(mu_);
    api_ = std::move(*parsed);
  }
  apply_to_engine([] {});
  return true;
}

Result<std::map<std::string, std::pair<std::string, MonitorConfig>>> MonitorCatalog::parse_stored(
    const std::vector<ApiMonitorSpec>& stored, std::vector<std::string>& skipped) {
  std::vector<ChannelConfig> channels;
  {
    std::lock_guard lock(mu_);
    channels = channels_;
  }
  std::vector<std::string> jsons;
  Config loaded;  // the API monitors alone, to resolve their tokens in one pass
  for (const auto& spec : stored) {
    auto parsed = parse_api_monitor(spec.spec_json, channels);
    if (!parsed) {
      skipped.push_back(spec.name + ": " + parsed.error().message);
      continue;
    }
    jsons.push_back(spec.spec_json);
    loaded.monitors.push_back(std::move(*parsed));
  }
  // Heartbeat monitors created before they were given tokens get one now.
  if (Status resolved = resolve_tokens(loaded, store_, random_); !resolved) return resolved.error();
  std::map<std::string, std::pair<std::string, MonitorConfig>> api;
  for (size_t i = 0; i < loaded.monitors.size(); ++i) {
    std::string name = loaded.monitors[i].name;
    api[name] = {jsons[i], std::move(loaded.monitors[i])};
  }
  return api;
}

std::string MonitorCatalog::token_owner(const std::string& token, const std::string& name) const {
  std::lock_guard lock(mu_);
  auto owns = [&](const MonitorConfig& m) {
    const auto* hb = std::get_if<HeartbeatSpec>(&m.spec);
    return m.name != name && hb != nullptr && hb->token == token;
  };
  for (const auto& m : yaml_.monitors) {
    if (owns(m)) return m.name;
  }
  for (const auto& [other, entry] : api_) {
    if (owns(entry.second)) return other;
  }
  return "";
}

Config MonitorCatalog::merged(const Config& yaml) const {
  std::lock_guard lock(mu_);
  Config out = yaml;
  for (const auto& [name, entry] : api_) {
    bool taken = false;
    for (const auto& m : yaml.monitors) taken = taken || m.name == name;
    if (!taken) out.monitors.push_back(entry.second);
  }
  return out;
}

void MonitorCatalog::set_channels(std::vector<ChannelConfig> channels) {
  std::lock_guard lock(mu_);
  channels_ = std::move(channels);
}

std::vector<std::string> MonitorCatalog::notifying(const std::string& channel) const {
  std::vector<std::string> out;
  for (const auto& m : merged(yaml_copy()).monitors) {
    if (std::find(m.notify.begin(), m.notify.end(), channel) != m.notify.end()) out.push_back(m.name);
  }
  return out;
}

Config MonitorCatalog::set_yaml(const Config& yaml) {
  {
    std::lock_guard lock(mu_);
    yaml_ = yaml;
  }
  return merged(yaml);
}

std::optional<std::string> MonitorCatalog::api_spec(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = api_.find(name);
  if (it == api_.end()) return std::nullopt;
  return it->second.first;
}

Config MonitorCatalog::yaml_copy() const {
  std::lock_guard lock(mu_);
  return yaml_;
}

bool MonitorCatalog::is_yaml(const std::string& name) const {
  std::lock_guard lock(mu_);
  for (const auto& m : yaml_.monitors) {
    if (m.name == name) return true;
  }
  return false;
}

bool MonitorCatalog::is_api(const std::string& name) const {
  std::lock_guard lock(mu_);
  return api_.count(name) != 0 && !std::any_of(yaml_.monitors.begin(), yaml_.monitors.end(),
                                               [&](const MonitorConfig& m) { return m.name == name; });
}

void MonitorCatalog::apply_to_engine(std::function<void()> applied) {
  Config yaml;
  {
    std::lock_guard lock(mu_);
    yaml = yaml_;
  }
  auto next = std::make_shared<const Config>(merged(yaml));
  engine_.reload(*next, [this, next, applied = std::move(applied)] {
    if (on_applied_) on_applied_(*next);
    applied();
  });
}

void MonitorCatalog::put(const std::string& name, const std::string& body, bool create, const Done& done) {
  if (!name.empty() && is_yaml(name)) {
    return done(make_error("monitor.read_only", "'" + name + "' comes from the config file; edit it there"));
  }
  std::string json_body = body;
  if (!name.empty()) {
    // PUT /monitors/{name}: the path names it; a different name in the body is an error.
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(body, ec);
    if (!ec && v.is_object()) {
      auto& o = v.as_object();
      if (o.contains("name") && (!o["name"].is_string() || o["name"].as_string() != name)) {
        return done(make_error("monitor.invalid", "name: the body names another monitor than the path"));
      }
      o["name"] = name;
      json_body = json_text(v);
    }
  }
  std::vector<ChannelConfig> channels;
  {
    std::lock_guard lock(mu_);
    channels = channels_;
  }
  auto parsed = parse_api_monitor(json_body, channels);
  if (!parsed) return done(parsed.error());
  const std::string monitor = parsed->name;
  if (is_yaml(monitor))
    return done(
        make_error("monitor.read_only", "'" + monitor + "' comes from the config file; edit it there"));
  {
    std::lock_guard lock(mu_);
    const bool exists = api_.count(monitor) != 0;
    if (create && exists)
      return done(make_error("monitor.exists", "a monitor named '" + monitor + "' exists"));
    if (!create && !exists)
      return done(make_error("monitor.not_found", "no API monitor named '" + monitor + "'"));
  }
  // Judged against every monitor as they will be after this write.
  std::vector<MonitorConfig> after = merged(yaml_copy()).monitors;
  std::erase_if(after, [&](const MonitorConfig& m) { return m.name == monitor; });
  after.insert(after.begin(), *parsed);  // walked first: a cycle is named from it
  if (auto problem = dependency_error(after, monitor)) return done(*problem);
  MonitorConfig config = std::move(*parsed);
  auto* heartbeat = std::get_if<HeartbeatSpec>(&config.spec);
  if (heartbeat == nullptr) return save(monitor, json_body, config, done);
  if (!heartbeat->token.empty()) {
    if (std::string owner = token_owner(heartbeat->token, monitor); !owner.empty()) {
      return done(make_error("monitor.invalid",
                             "token: monitor '" + owner + "' has this token; expected one of its own"));
    }
    return save(monitor, json_body, config, done);
  }
  // The name's generated token, as for the file's heartbeat monitors; a new one is
  // committed before the monitor, so no restart can give the monitor another URL.
  auto stored = store_.heartbeat_tokens();
  if (!stored) return done(stored.error());
  if (auto it = stored->find(monitor); it != stored->end()) {
    heartbeat->token = it->second;
    return save(monitor, json_body, config, done);
  }
  heartbeat->token = heartbeat::generate_token(random_);
  const std::string token = heartbeat->token;
  const bool queued =
      store_.write(SaveToken{monitor, token}, [this, monitor, json_body, config, done](const Status& status) {
        if (!status) return done(status.error());
        save(monitor, json_body, config, done);
      });
  if (!queued) done(make_error(store_error::kUnavailable, "the store's write queue is full; try again"));
}

void MonitorCatalog::save(const std::string& monitor, const std::string& json_body,
                          const MonitorConfig& config, const Done& done) {
  const bool queued = store_.write(SaveApiMonitor{monitor, json_body},
                                   [this, monitor, json_body, config, done](const Status& status) {
                                     if (!status) return done(status.error());
                                     {
                                       std::lock_guard lock(mu_);
                                       api_[monitor] = {json_body, config};
                                     }
                                     // Answered once the engine runs it: whoever
                                     // reads the monitor next finds it.
                                     apply_to_engine([done, monitor] { done(monitor); });
                                   });
  if (!queued) done(make_error(store_error::kUnavailable, "the store's write queue is full; try again"));
}

void MonitorCatalog::remove(const std::string& name, const Done& done) {
  if (is_yaml(name))
    return done(make_error("monitor.read_only", "'" + name + "' comes from the config file; edit it there"));
  {
    std::lock_guard lock(mu_);
    if (api_.count(name) == 0)
      return done(make_error("monitor.not_found", "no API monitor named '" + name + "'"));
  }
  // A monitor others depend on stays until they no longer do: removing it would leave
  // their depends_on naming nothing.
  for (const auto& m : merged(yaml_copy()).monitors) {
    if (std::find(m.depends_on.begin(), m.depends_on.end(), name) != m.depends_on.end()) {
      return done(make_error("monitor.in_use",
                             "'" + m.name + "' depends on '" + name + "'; change its depends_on first"));
    }
  }
  const bool queued = store_.write(DeleteApiMonitor{name}, [this, name, done](const Status& status) {
    if (!status) return done(status.error());
    {
      std::lock_guard lock(mu_);
      api_.erase(name);
    }
    apply_to_engine([done, name] { done(name); });
  });
  if (!queued) done(make_error(store_error::kUnavailable, "the store's write queue is full; try again"));
}

}  // namespace trainwatch::catalog
