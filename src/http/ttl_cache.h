// TtlCache: built values by key, rebuilt in the background once older than `ttl`.
//
// A request never waits for a rebuild once a key has a value: it gets the value it finds
// (at most one ttl plus one build old) and, when that is stale, posts one rebuild to the
// cache's own thread. Only a key's first request builds inline. So a burst of visitors
// costs one build, and a slow build (a status page reads 90 days of rollups) never holds
// an HTTP thread and the connections queued behind it. Used for status pages, the
// dashboard's monitors table and the API's monitor list. Keys are bounded: past kMaxKeys
// the oldest builds are forgotten (filters typed by users make keys, so their number is
// not ours to choose).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "core/clock.h"
#include "core/result.h"

namespace trainwatch::http {

template <typename V>
class TtlCache {
 public:
  static constexpr size_t kMaxKeys = 64;
  // Builds a value; must stay valid to call later, on the cache's thread.
  using Build = std::function<Result<V>()>;

  explicit TtlCache(Millis ttl) : ttl_(ttl) {}

  Result<std::shared_ptr<const V>> get(const std::string& key, MonoTime now, Build build) {
    {
      std::lock_guard lock(mu_);
      Entry& e = entries_[key];
      if (e.value) {
        if (now - e.built >= ttl_ && !e.building) {
          e.building = true;
          boost::asio::post(pool_, [this, key, now, build = std::move(build)] {
            (void)store(key, now, build());  // a failed rebuild keeps the old value
          });
        }
        return e.value;
      }
    }
    Result<V> built = build();
    if (!built) return built.error();
    return store(key, now, std::move(built));
  }

 private:
  struct Entry {
    MonoTime built{};
    bool building = false;
    std::shared_ptr<const V> value;
  };

  // Publishes a build; a failed background build keeps the previous value.
  Result<std::shared_ptr<const V>> store(const std::string& key, MonoTime now, Result<V> built) {
    std::lock_guard lock(mu_);
    if (entries_.size() > kMaxKeys) forget_oldest_but(key);
    Entry& e = entries_[key];
    e.building = false;
    if (!built) return built.error();
    e.value = std::make_shared<const V>(std::move(*built));
    e.built = now;
    return e.value;
  }

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
  boost::asio::thread_pool pool_{1};  // last: joined first, while the rest still exists
};

}  // namespace trainwatch::http
