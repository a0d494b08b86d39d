#include "alerting/channel_catalog.h"

#include <algorithm>
#include <boost/json.hpp>

#include "alerting/channels.h"
#include "core/json_text.h"
#include "storage/store_errors.h"

namespace trainwatch::alerting {
namespace {

ChannelWrite refused(Error error, std::string field = "") {
  return ChannelWrite{std::move(error), std::move(field)};
}

Error store_busy() {
  return make_error(store_error::kUnavailable, "the store's write queue is full; try again");
}

// PUT /notifications/{name}: the path names the channel; a body naming another is an
// error, one naming none is given the path's name.
std::optional<ChannelWrite> name_from_path(const std::string& name, std::string& body) {
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(body, ec);
  if (ec || !v.is_object()) return std::nullopt;  // parse_channel_spec says what is wrong
  auto& o = v.as_object();
  if (o.contains("name") && (!o["name"].is_string() || o["name"].as_string() != name)) {
    return refused(make_error("channel.invalid", "name: the body names another channel than the path"),
                   "name");
  }
  o["name"] = name;
  body = json_text(v);
  return std::nullopt;
}

}  // namespace

std::map<std::string, ChannelCatalog::Stored> ChannelCatalog::parse_stored(
    const std::vector<ApiChannelSpec>& stored, std::vector<std::string>& skipped) {
  std::map<std::string, Stored> out;
  for (const auto& spec : stored) {
    auto [parsed, error] = parse_channel_spec(spec.spec_json, nullptr);
    if (!parsed) {
      // The message names the field and never a secret's value (channel_fields.h).
      skipped.push_back(spec.name + ": " + error->error.message);
      continue;
    }
    out[spec.name] = Stored{spec.spec_json, std::move(parsed->config)};
  }
  return out;
}

Result<std::vector<std::string>> ChannelCatalog::load() {
  auto stored = store_.api_channels();
  if (!stored) return stored.error();
  std::vector<std::string> skipped;
  auto parsed = parse_stored(*stored, skipped);
  std::lock_guard lock(mu_);
  stored_ = std::move(parsed);
  return skipped;
}

Result<bool> ChannelCatalog::follow_store() {
  uint64_t changes_before = 0;
  {
    std::lock_guard lock(mu_);
    changes_before = local_changes_;
  }
  auto stored = store_.api_channels();
  if (!stored) return stored.error();
  std::lock_guard lock(mu_);
  // A write of ours committed while the read ran: the read may miss it; the next beat
  // reads both.
  if (local_changes_ != changes_before || !pending_.empty()) return false;
  auto same = [&](const ApiChannelSpec& spec) {
    auto it = stored_.find(spec.name);
    return it != stored_.end() && it->second.json == spec.spec_json;
  };
  if (stored->size() == stored_.size() && std::all_of(stored->begin(), stored->end(), same)) return false;
  std::vector<std::string> skipped;  // named once, by load() at this replica's start
  stored_ = parse_stored(*stored, skipped);
  apply_locked();
  return true;
}

void ChannelCatalog::set_file(std::vector<ChannelConfig> channels) {
  std::lock_guard lock(mu_);
  file_ = std::move(channels);
  apply_locked();
}

bool ChannelCatalog::in_file_locked(const std::string& name) const {
  return std::any_of(file_.begin(), file_.end(), [&](const ChannelConfig& c) { return c.name == name; });
}

std::vector<ChannelConfig> ChannelCatalog::merged_locked() const {
  std::vector<ChannelConfig> out = file_;
  for (const auto& [name, s] : stored_) {
    if (!in_file_locked(name)) out.push_back(s.config);
  }
  return out;
}

std::vector<ChannelConfig> ChannelCatalog::channels() const {
  std::lock_guard lock(mu_);
  return merged_locked();
}

std::vector<CatalogChannel> ChannelCatalog::list() const {
  std::lock_guard lock(mu_);
  std::vector<CatalogChannel> out;
  out.reserve(file_.size() + stored_.size());
  for (const auto& c : file_) out.push_back(CatalogChannel{c, true});
  for (const auto& [name, s] : stored_) {
    if (!in_file_locked(name)) out.push_back(CatalogChannel{s.config, false});
  }
  return out;
}

std::optional<CatalogChannel> ChannelCatalog::find(const std::string& name) const {
  for (auto& c : list()) {
    if (c.config.name == name) return c;
  }
  return std::nullopt;
}

Error ChannelCatalog::read_only(const std::string& name) const {
  return make_error("channel.read_only",
                    "'" + name + "' comes from " + file_name_ + " and is read-only here; edit it there");
}

void ChannelCatalog::put(const std::string& name, const std::string& body, bool create, const Done& done) {
  std::string json_body = body;
  if (!name.empty()) {
    if (auto refusal = name_from_path(name, json_body)) return done(*refusal);
  }
  std::string stored_json;
  if (!create) {
    std::lock_guard lock(mu_);
    if (in_file_locked(name)) return done(refused(read_only(name)));
    auto it = stored_.find(name);
    if (it == stored_.end()) {
      return done(refused(make_error("channel.not_found", "no notification channel named '" + name + "'")));
    }
    stored_json = it->second.json;
  }
  auto [spec, error] = parse_channel_spec(json_body, create ? nullptr : &stored_json);
  if (!spec) return done(refused(error->error, error->field));
  const std::string channel = spec->config.name;
  {
    std::lock_guard lock(mu_);
    if (create && in_file_locked(channel)) {
      return done(refused(make_error("channel.exists", "name: '" + channel + "' is a channel of " +
                                                           file_name_ + "; expected a name of its own"),
                          "name"));
    }
    if (create && (stored_.count(channel) != 0 || pending_.count(channel) != 0)) {
      return done(refused(
          make_error("channel.exists", "name: a channel named '" + channel + "' exists; expected a new name"),
          "name"));
    }
    if (create && merged_locked().size() + pending_.size() >= kMaxChannels) {
      return done(refused(make_error("channel.full", "there are already " + std::to_string(kMaxChannels) +
                                                         " notification channels, the most kept; remove some "
                                                         "first")));
    }
    if (create) pending_.insert(channel);
  }
  auto on_commit = [this, channel, create, stored = Stored{spec->json, spec->config},
                    done](const Status& status) {
    {
      std::lock_guard lock(mu_);
      if (create) pending_.erase(channel);
      if (status) {
        stored_[channel] = stored;
        ++local_changes_;
        apply_locked();
      }
    }
    // (`done` never runs under the lock: it may well read the catalog.)
    if (!status) return done(refused(status.error()));
    done(ChannelWrite{channel, ""});
  };
  if (!store_.write(SaveApiChannel{channel, spec->json}, on_commit)) {
    if (create) {
      std::lock_guard lock(mu_);
      pending_.erase(channel);
    }
    done(refused(store_busy()));
  }
}

void ChannelCatalog::remove(const std::string& name, const Done& done) {
  {
    std::lock_guard lock(mu_);
    if (in_file_locked(name)) return done(refused(read_only(name)));
    if (stored_.count(name) == 0) {
      return done(refused(make_error("channel.not_found", "no notification channel named '" + name + "'")));
    }
  }
  if (notifying_) {
    const std::vector<std::string> monitors = notifying_(name);
    if (!monitors.empty()) {
      std::string names;
      for (const auto& m : monitors) names += (names.empty() ? "" : ", ") + m;
      return done(refused(make_error("channel.in_use", "'" + name + "' is in the notify list of " + names +
                                                           "; take it out of theirs first")));
    }
  }
  const bool queued = store_.write(DeleteApiChannel{name}, [this, name, done](const Status& status) {
    if (!status) return done(refused(status.error()));
    {
      std::lock_guard lock(mu_);
      stored_.erase(name);
      ++local_changes_;
      apply_locked();
    }
    done(ChannelWrite{name, ""});
  });
  if (!queued) done(refused(store_busy()));
}

}  // namespace trainwatch::alerting
