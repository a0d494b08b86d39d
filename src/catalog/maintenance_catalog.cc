#include "catalog/maintenance_catalog.h"

#include <algorithm>
#include <boost/json.hpp>

#include "config/loader.h"
#include "core/json_text.h"
#include "storage/store_errors.h"

namespace trainwatch::catalog {
namespace {

constexpr std::string_view kApiPrefix = "api-";

// "api-7" -> 7; nullopt for anything else.
std::optional<int64_t> api_id(const std::string& id) {
  if (id.rfind(kApiPrefix, 0) != 0 || id.size() == kApiPrefix.size() || id.size() > kApiPrefix.size() + 18) {
    return std::nullopt;
  }
  int64_t n = 0;
  for (char c : id.substr(kApiPrefix.size())) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

Result<MaintenanceWindow> parse_window(const std::string& body,
                                       const MaintenanceCatalog::IsMonitor* is_monitor,
                                       std::string* canonical) {
  boost::system::error_code ec;
  boost::json::value parsed = boost::json::parse(body, ec);
  if (ec || !parsed.is_object()) {
    return make_error("maintenance.invalid",
                      "the body must be one JSON object describing a maintenance window");
  }
  const std::string text = json_text(parsed);
  // No environment: an API client must not be able to read the server's.
  LoadedWindow loaded =
      load_window_text(text, "body", [](const std::string&) { return std::optional<std::string>(); });
  if (!loaded.window) {
    std::string message;
    for (const auto& e : loaded.errors) {
      const std::string key = e.key.rfind("maintenance[0].", 0) == 0 ? e.key.substr(15) : e.key;
      message += (message.empty() ? "" : "; ") + key + ": " + e.message;
    }
    return make_error("maintenance.invalid", message);
  }
  if (is_monitor != nullptr) {
    const auto& names = loaded.window->monitors;
    for (size_t i = 0; i < names.size(); ++i) {
      if (!(*is_monitor)(names[i])) {
        return make_error("maintenance.invalid", "monitors[" + std::to_string(i) + "]: found '" + names[i] +
                                                     "'; expected the name of a monitor");
      }
    }
  }
  if (canonical != nullptr) *canonical = text;
  return std::move(*loaded.window);
}

}  // namespace

Result<MaintenanceWindow> parse_api_window(const std::string& body,
                                           const MaintenanceCatalog::IsMonitor& is_monitor) {
  return parse_window(body, &is_monitor, nullptr);
}

std::map<int64_t, MaintenanceCatalog::ApiWindow> MaintenanceCatalog::parse_stored(
    const std::vector<ApiWindowSpec>& stored, std::vector<std::string>& skipped) {
  std::map<int64_t, ApiWindow> out;
  for (const auto& spec : stored) {
    // Monitor names are not checked here: the monitors are not all running yet, and a
    // window naming a monitor that has gone covers nothing.
    auto parsed = parse_window(spec.spec_json, nullptr, nullptr);
    if (!parsed) {
      skipped.push_back("api-" + std::to_string(spec.id) + ": " + parsed.error().message);
      continue;
    }
    out[spec.id] = ApiWindow{std::move(*parsed), spec.created};
  }
  return out;
}

Result<std::vector<std::string>> MaintenanceCatalog::load() {
  auto stored = store_.api_windows();
  if (!stored) return stored.error();
  auto next = store_.next_api_window_id();
  if (!next) return next.error();
  std::vector<std::string> skipped;
  auto parsed = parse_stored(*stored, skipped);
  std::lock_guard lock(mu_);
  next_id_ = *next;
  api_ = std::move(parsed);
  return skipped;
}

Result<bool> MaintenanceCatalog::follow_store() {
  uint64_t changes_before = 0;
  {
    std::lock_guard lock(mu_);
    changes_before = local_changes_;
  }
  auto stored = store_.api_windows();
  if (!stored) return stored.error();
  auto next = store_.next_api_window_id();
  if (!next) return next.error();
  std::lock_guard lock(mu_);
  // Ids are handed out here; another replica's windows move the next one past theirs.
  next_id_ = std::max(next_id_, *next);
  // A window of ours committed or deleted while the read ran: the read may miss it, and
  // the next beat reads both.
  if (local_changes_ != changes_before || pending_ > 0) return false;
  auto same = [&](const ApiWindowSpec& spec) { return api_.count(spec.id) != 0; };
  if (stored->size() == api_.size() && std::all_of(stored->begin(), stored->end(), same)) return false;
  std::vector<std::string> skipped;  // named once, by load() at this replica's start
  api_ = parse_stored(*stored, skipped);
  apply_locked();
  return true;
}

void MaintenanceCatalog::set_yaml(std::vector<MaintenanceWindow> windows) {
  std::lock_guard lock(mu_);
  yaml_ = std::move(windows);
  apply_locked();
}

std::vector<MaintenanceWindow> MaintenanceCatalog::merged_locked() const {
  std::vector<MaintenanceWindow> out = yaml_;
  for (const auto& [id, w] : api_) out.push_back(w.window);
  return out;
}

std::vector<MaintenanceWindow> MaintenanceCatalog::windows() const {
  std::lock_guard lock(mu_);
  return merged_locked();
}

std::vector<CatalogWindow> MaintenanceCatalog::list() const {
  std::lock_guard lock(mu_);
  std::vector<CatalogWindow> out;
  out.reserve(yaml_.size() + api_.size());
  for (size_t i = 0; i < yaml_.size(); ++i)
    out.push_back(CatalogWindow{"yaml-" + std::to_string(i), false, yaml_[i], std::nullopt});
  for (const auto& [id, w] : api_)
    out.push_back(CatalogWindow{"api-" + std::to_string(id), true, w.window, w.created});
  return out;
}

void MaintenanceCatalog::create(const std::string& body, const Done& done) {
  std::string json;
  auto parsed = parse_window(body, &is_monitor_, &json);
  if (!parsed) return done(parsed.error());
  int64_t id = 0;
  {
    std::lock_guard lock(mu_);
    if (api_.size() + pending_ < kMaxApiWindows || drop_oldest_ended_locked(clock_.system_time())) {
      id = next_id_++;
      ++pending_;
    }
  }
  // (`done` never runs under the lock: it may well read the catalog.)
  if (id == 0) {
    return done(
        make_error("maintenance.full", "there are already " + std::to_string(kMaxApiWindows) +
                                           " API maintenance windows, the most kept; delete some first"));
  }
  const SystemTime created = clock_.system_time();
  auto on_commit = [this, id, created, window = std::move(*parsed), done](const Status& status) {
    {
      std::lock_guard lock(mu_);
      --pending_;
      if (status) {
        api_[id] = ApiWindow{window, created};
        ++local_changes_;
        apply_locked();
      }
    }
    if (!status) return done(status.error());
    done("api-" + std::to_string(id));
  };
  if (!store_.write(SaveApiWindow{id, json, created}, on_commit)) {
    {
      std::lock_guard lock(mu_);
      --pending_;
    }
    done(make_error(store_error::kUnavailable, "the store's write queue is full; try again"));
  }
}

bool MaintenanceCatalog::drop_oldest_ended_locked(SystemTime now) {
  auto oldest = api_.end();
  for (auto it = api_.begin(); it != api_.end(); ++it) {
    const MaintenanceWindow& w = it->second.window;
    if (w.recurring || !w.end || *w.end > now) continue;
    if (oldest == api_.end() || *w.end < *oldest->second.window.end) oldest = it;
  }
  if (oldest == api_.end()) return false;
  // Queued before the new window's save, so the store never holds more than the bound;
  // if the delete fails, the window comes back at the next start and nothing else breaks.
  if (!store_.write(DeleteApiWindow{oldest->first})) return false;
  api_.erase(oldest);
  ++local_changes_;
  return true;
}

void MaintenanceCatalog::remove(const std::string& id, const Done& done) {
  const auto n = api_id(id);
  bool known = false;
  {
    std::lock_guard lock(mu_);
    if (n) {
      known = api_.count(*n) != 0;
    } else {
      for (size_t i = 0; i < yaml_.size() && !known; ++i) known = id == "yaml-" + std::to_string(i);
    }
  }
  if (!known) return done(make_error("maintenance.not_found", "no maintenance window '" + id + "'"));
  if (!n)
    return done(
        make_error("maintenance.read_only", "'" + id + "' comes from the config file; edit it there"));
  const bool queued = store_.write(DeleteApiWindow{*n}, [this, number = *n, id, done](const Status& status) {
    if (!status) return done(status.error());
    {
      std::lock_guard lock(mu_);
      api_.erase(number);
      ++local_changes_;
      apply_locked();
    }
    done(id);
  });
  if (!queued) done(make_error(store_error::kUnavailable, "the store's write queue is full; try again"));
}

}  // namespace trainwatch::catalog
