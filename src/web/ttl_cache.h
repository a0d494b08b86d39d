// TtlCache: built values by key, rebuilt at most every `ttl`, by one request at a time.
// While one request rebuilds a key, the others get its previous value (at most one ttl
// older), so a burst of visitors costs one build, and nobody queues behind it. Keys are
// bounded: past kMaxKeys the oldest builds are forgotten (filters typed by users make
// keys, so their number is not ours to choose).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/clock.h"
#include "core/result.h"

namespace trainwatch::web {

template <typename V>
class TtlCache {
 public:
  static constexpr size_t kMaxKeys = 64;

  explicit TtlCache(Millis ttl) : ttl_(ttl) {}

  Result<std::shared_ptr<const V>> get(const std::string& key, MonoTime now, const std::function<Result<V>()>& build) {
    {
      std::lock_guard lock(mu_);
      Entry& e = entries_[key];
      if (e.value && (now - e.built < ttl_ || e.building)) return e.value;
      e.building = true;
    }
    Result<V> built = build();
    std::lock_guard lock(mu_);
    if (entries_.size() > kMaxKeys) forget_oldest_but(key);
    Entry& e = entries_[key];
    e.building = false;
    if (!built) return built.error();
    e.value = std::make_shared<const V>(std::move(*built));
    e.built = now;
    return e.value;
  }

 private:
  struct Entry {
    MonoTime built{};
    bool building = false;
    std::shared_ptr<const V> value;
  };

  void forget_oldest_but(const std::string& keep) {
    auto oldest = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == keep || it->second.building) continue;
      if (oldest == entries_.end() || it->second.built < oldest->second.built) oldest = it;
    }
    if (oldest != entries_.end()) entries_.erase(oldest);
  }

  const Millis ttl_;
  std::mutex mu_;
  std::map<std::string, Entry> entries_;
};

}  // namespace trainwatch::web
