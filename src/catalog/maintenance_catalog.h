// MaintenanceCatalog: the maintenance windows in force are the YAML file's plus those
// created through the API. YAML ones are read-only over HTTP; API ones persist in the
// store (api_maintenance) and survive restarts and SIGHUP reloads. Whenever either side
// changes (start, reload, an API write) the merged list goes to `apply`, which hands it
// to whatever holds notifications (the dispatcher) and skips reminders (the planner).
//
// Ids: "yaml-N" is the file's N-th window (0-based; it moves when the file is edited);
// "api-N" is an API window's and never changes nor is reused.
//
// Validation: an API window's JSON object goes through the config loader's window reader
// (JSON is YAML), so the file and the API accept the same windows and errors name the
// key; ${ENV} references are refused. Names in `monitors` must be running monitors.
//
// Bound: at most kMaxApiWindows API windows. At the bound, a new window replaces the
// one-off window that ended first (ended windows stay listed until then, as a record);
// with none ended, it is refused ("maintenance.full", 409) until one is deleted.
//
// Threading: every call is safe from any thread; `apply` runs under the catalog's lock,
// so lists are applied in the order the changes happened. `done` callbacks run on the
// store's writer thread (or the caller's, for a refusal).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/clock.h"
#include "core/result.h"
#include "storage/store.h"

namespace trainwatch::catalog {

// One window as listed.
struct CatalogWindow {
  std::string id;  // "yaml-0", "api-7"
  bool from_api = false;
  MaintenanceWindow window;
  std::optional<SystemTime> created;  // API windows only
};

class MaintenanceCatalog {
 public:
  static constexpr size_t kMaxApiWindows = 1'000;

  using Apply = std::function<void(const std::vector<MaintenanceWindow>&)>;
  using IsMonitor = std::function<bool(const std::string& name)>;

  MaintenanceCatalog(Store& store, const Clock& clock, IsMonitor is_monitor, Apply apply)
      : store_(store), clock_(clock), is_monitor_(std::move(is_monitor)), apply_(std::move(apply)) {}

  // Reads the stored API windows; call once at start, before set_yaml. A stored spec
  // that no longer validates (after an upgrade) is skipped and named in the list.
  Result<std::vector<std::string>> load();

  // What other replicas created and deleted (several replicas on one PostgreSQL): reads
  // the stored API windows, at every beat, and applies them when they differ from the
  // ones held here. True when something changed.
  Result<bool> follow_store();

  // Remembers the file's windows (at start and on every reload) and applies the merge.
  void set_yaml(std::vector<MaintenanceWindow> windows);

  // The file's windows, then the API's, oldest first.
  std::vector<CatalogWindow> list() const;
  std::vector<MaintenanceWindow> windows() const;

  using Done = std::function<void(Result<std::string>)>;  // the window's id, or why not
  // Creates an API window from a JSON object. Errors: "maintenance.invalid" (400),
  // "maintenance.full" (409), "store.*" (503).
  void create(const std::string& body, const Done& done);
  // Errors: "maintenance.not_found" (404), "maintenance.read_only" (409), "store.*" (503).
  void remove(const std::string& id, const Done& done);

 private:
  struct ApiWindow {
    MaintenanceWindow window;
    SystemTime created;
  };

  // The stored windows that still validate; the others are named in `skipped`.
  static std::map<int64_t, ApiWindow> parse_stored(const std::vector<ApiWindowSpec>& stored,
                                                   std::vector<std::string>& skipped);
  std::vector<MaintenanceWindow> merged_locked() const;
  // Makes room at the bound by deleting the one-off window that ended first; false when
  // every window is still ahead, in force or recurring.
  bool drop_oldest_ended_locked(SystemTime now);
  void apply_locked() { apply_(merged_locked()); }

  Store& store_;
  const Clock& clock_;
  IsMonitor is_monitor_;
  Apply apply_;
  mutable std::mutex mu_;
  std::vector<MaintenanceWindow> yaml_;
  std::map<int64_t, ApiWindow> api_;  // by id
  int64_t next_id_ = 1;
  size_t pending_ = 0;          // creations queued to the store, counted against the bound
  uint64_t local_changes_ = 0;  // windows this replica added or removed: follow_store's guard
};

// Validates one window's JSON object with the config loader; errors name the key
// ("start: found 'tomorrow'; expected an RFC 3339 time ..."). Each name in `monitors`
// must satisfy `is_monitor`.
Result<MaintenanceWindow> parse_api_window(const std::string& body,
                                           const MaintenanceCatalog::IsMonitor& is_monitor);

}  // namespace trainwatch::catalog
