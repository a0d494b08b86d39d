// MonitorCatalog: the monitors the engine runs are the YAML file's plus those created
// through the API. YAML ones are read-only over HTTP; API ones persist in the store
// (api_monitors) and survive restarts and SIGHUP reloads. A name can belong to only one
// side: an API monitor whose name the file later takes is hidden while the file has it.
//
// Validation: an API monitor's JSON object goes through the same loader as the file
// (JSON is YAML), so both accept and refuse exactly the same things; ${ENV} references
// are refused in API specs (they would let an API client read the server's environment).
//
// Heartbeat tokens: an API heartbeat monitor without `token` gets the name's generated
// token (catalog/heartbeat_tokens.h: kept in the store, so its ping URL survives restarts), made
// and committed before the monitor itself when the name has none yet. A replacement
// without `token` keeps the name's generated token. A `token` in the body must not be
// another monitor's. The creating admin reads the URL in the answer (or, later, in
// GET /api/v1/monitors/{name}); it is not kept in the spec, which the dashboard shows.
//
// Threading: every call is safe from any thread; changes are applied in the order they
// commit. A write's `done` runs on the engine's thread once the engine runs the change
// (errors: on the store's writer thread or the caller's).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "config/config.h"
#include "core/random.h"
#include "core/result.h"
#include "engine/engine.h"
#include "storage/store.h"

namespace trainwatch::catalog {

class MonitorCatalog {
 public:
  MonitorCatalog(engine::Engine& engine, Store& store, Random& random)
      : engine_(engine), store_(store), random_(random) {}

  // Called with the merged config each time the engine has applied an API change, before
  // the change is answered: how the ping index learns API heartbeat tokens. Set once,
  // before serving; runs on the engine's thread.
  void on_applied(std::function<void(const Config&)> hook) { on_applied_ = std::move(hook); }

  // Every channel a monitor's `notify` may name: the file's and those created through the
  // API (alerting/channel_catalog.h), which hands them over on every change.
  void set_channels(std::vector<ChannelConfig> channels);
  // The monitors whose `notify` names `channel`, by name.
  std::vector<std::string> notifying(const std::string& channel) const;

  // Reads the stored API monitors; call once, after set_channels() (their `notify` must
  // name a channel) and before the engine starts. A stored spec that no longer
  // validates (after an upgrade, a channel removed) is skipped and named in the list.
  // Heartbeat monitors get their stored token, or a new one committed before this returns.
  Result<std::vector<std::string>> load();

  // Replicas on one PostgreSQL: takes the API monitors as stored when another replica
  // created, changed or removed one, and applies them to the engine. True when they
  // differed. Any thread but the engine's (it reads the store).
  Result<bool> follow_store();

  // The YAML config plus the API monitors, for Engine::start and reload.
  Config merged(const Config& yaml) const;
  // Remembers the file's config (at start and on every reload) and returns merged().
  Config set_yaml(const Config& yaml);

  bool is_yaml(const std::string& name) const;
  bool is_api(const std::string& name) const;
  // An API monitor's JSON object as last stored; nullopt for others.
  std::optional<std::string> api_spec(const std::string& name) const;

  using Done = std::function<void(Result<std::string>)>;  // the monitor's name, or why not
  // Creates (`name` empty: the body names it) or replaces an API monitor from a JSON object.
  // Errors: "monitor.invalid" (400), "monitor.exists" (409), "monitor.read_only" (409),
  // "monitor.not_found" (404), "store.*" (503). remove() also refuses a monitor another
  // depends on: "monitor.in_use" (409).
  void put(const std::string& name, const std::string& body, bool create, const Done& done);
  void remove(const std::string& name, const Done& done);

 private:
  void apply_to_engine(std::function<void()> applied);
  // The stored API monitors that validate, by name; the others are named in `skipped`.
  Result<std::map<std::string, std::pair<std::string, MonitorConfig>>> parse_stored(
      const std::vector<ApiMonitorSpec>& stored, std::vector<std::string>& skipped);
  // Commits `config` (with `json_body`) as the API monitor `monitor`, then applies it.
  void save(const std::string& monitor, const std::string& json_body, const MonitorConfig& config,
            const Done& done);
  // The monitor whose heartbeat token is `token`, other than `name`; "" when none.
  std::string token_owner(const std::string& token, const std::string& name) const;
  Config yaml_copy() const;

  engine::Engine& engine_;
  Store& store_;
  Random& random_;
  std::function<void(const Config&)> on_applied_;
  mutable std::mutex mu_;
  Config yaml_;
  std::vector<ChannelConfig> channels_;
  std::map<std::string, std::pair<std::string, MonitorConfig>> api_;  // name -> (json, parsed)
};

// Validates one monitor's JSON object with the config loader; the error names the key.
// `notify` must name some of `channels` (the file's and the API's notification channels).
// `depends_on` is read but not judged: dependency_error() does that against every monitor.
Result<MonitorConfig> parse_api_monitor(const std::string& body, const std::vector<ChannelConfig>& channels);

// What is wrong with monitor `name`'s dependencies among `monitors` (all of them, as they
// would be): an unknown or self dependency of its own, or a cycle. "monitor.invalid".
std::optional<Error> dependency_error(const std::vector<MonitorConfig>& monitors, const std::string& name);

}  // namespace trainwatch::catalog
