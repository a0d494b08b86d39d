// ChannelCatalog: the notification channels in force are the config file's plus those
// created through the API or the dashboard. The file's are read-only over HTTP; the
// others persist in the store (api_channels) and survive restarts and SIGHUP reloads.
// Whenever either side changes (start, reload, a write, another replica's write) the
// merged list goes to `apply`, which hands it to the planner, the dispatcher and the
// monitor catalog (a monitor's `notify` may name any channel in it).
//
// Names: a name belongs to one side. Creating a channel with a name the file has is
// refused ("channel.exists"); a stored channel whose name the file takes later (a reload)
// is hidden while the file has it, and shows again once the file lets the name go.
//
// Validation: alerting/channel_spec.h, the file's own rules. Secrets are write-only:
// replacing a channel without a secret key keeps the stored value.
//
// Removal: a channel some monitor's `notify` names is not removed ("channel.in_use",
// naming the monitors): detaching it silently would leave those monitors without the
// alerts someone expected. Monitors that notify the default channels need no change.
//
// Bound: kMaxChannels (channels.h) in all, the file's included; a new channel beyond it
// is refused ("channel.full", 409) until one is removed.
//
// Threading: every call is safe from any thread; `apply` runs under the catalog's lock,
// so lists are applied in the order the changes happened. A write's `done` runs on the
// store's writer thread once `apply` has run (or on the caller's, for a refusal).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "alerting/channel_spec.h"
#include "config/config.h"
#include "core/result.h"
#include "storage/store.h"

namespace trainwatch::alerting {

// One channel as listed.
struct CatalogChannel {
  ChannelConfig config;
  bool from_file = false;
};

// How a write ended: the channel's name, or why not (with the field an invalid body is
// wrong about, "" when none).
struct ChannelWrite {
  Result<std::string> name;
  std::string field;
};

class ChannelCatalog {
 public:
  using Apply = std::function<void(const std::vector<ChannelConfig>&)>;
  // The monitors whose `notify` names a channel.
  using Notifying = std::function<std::vector<std::string>(const std::string& channel)>;
  using Done = std::function<void(const ChannelWrite&)>;

  // `file_name` names the config file in refusals ("comes from trainwatch.yaml").
  ChannelCatalog(Store& store, std::string file_name, Apply apply)
      : store_(store), file_name_(std::move(file_name)), apply_(std::move(apply)) {}

  // Set once, before serving: who may still notify a channel that is to be removed.
  void set_notifying(Notifying notifying) { notifying_ = std::move(notifying); }

  // Reads the stored channels; call once at start, before set_file. A stored spec that
  // no longer validates (after an upgrade) is skipped and named in the list.
  Result<std::vector<std::string>> load();

  // What other replicas created, changed and removed (several replicas on one
  // PostgreSQL): reads the stored channels at every beat and applies them when they
  // differ from the ones held here. True when something changed.
  Result<bool> follow_store();

  // Remembers the file's channels (at start and on every reload) and applies the merge.
  void set_file(std::vector<ChannelConfig> channels);

  // The file's channels, then the stored ones the file does not hide, by name.
  std::vector<CatalogChannel> list() const;
  std::vector<ChannelConfig> channels() const;
  std::optional<CatalogChannel> find(const std::string& name) const;
  const std::string& file_name() const { return file_name_; }

  // Creates (`name` empty: the body names it) or replaces a stored channel from a JSON
  // object (channel_spec.h). Errors: "channel.invalid" (400), "channel.exists",
  // "channel.read_only", "channel.full" (409), "channel.not_found" (404), "store.*" (503).
  void put(const std::string& name, const std::string& body, bool create, const Done& done);
  // Errors: "channel.not_found", "channel.read_only", "channel.in_use", "store.*".
  void remove(const std::string& name, const Done& done);

 private:
  struct Stored {
    std::string json;
    ChannelConfig config;
  };

  static std::map<std::string, Stored> parse_stored(const std::vector<ApiChannelSpec>& stored,
                                                    std::vector<std::string>& skipped);
  bool in_file_locked(const std::string& name) const;
  std::vector<ChannelConfig> merged_locked() const;
  void apply_locked() { apply_(merged_locked()); }
  Error read_only(const std::string& name) const;

  Store& store_;
  const std::string file_name_;
  Apply apply_;
  Notifying notifying_;
  mutable std::mutex mu_;
  std::vector<ChannelConfig> file_;
  std::map<std::string, Stored> stored_;  // by name
  std::set<std::string> pending_;         // creations queued to the store: counted, and named once
  uint64_t local_changes_ = 0;            // writes of this replica: follow_store's guard
};

}  // namespace trainwatch::alerting
