// OneShotTable<Value>: values the server keeps for a while under a random key it handed
// out, each taken back at most once. The login page's pre-login forms and the single
// sign-on logins under way are both such tables: what the browser brings back must be a
// key this server gave, not yet used, not yet expired.
//
// Bounds: at most `max` entries, each for `ttl`. Putting one more drops the oldest (its
// holder's post is refused, and opening a new one works). Every entry lives the same ttl,
// so the order of putting is the order of expiry and both are kept in one list.
//
// Threading: every call is safe from any thread (one mutex).
#pragma once

#include <cstddef>
#include <iterator>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/clock.h"

namespace trainwatch::auth {

template <typename Value>
class OneShotTable {
 public:
  OneShotTable(const Clock& clock, size_t max, Millis ttl) : clock_(clock), max_(max), ttl_(ttl) {}

  void put(std::string key, Value value) {
    const MonoTime now = clock_.monotonic_time();
    std::lock_guard lock(mu_);
    drop_expired(now);
    while (!oldest_first_.empty() && entries_.size() >= max_) drop_oldest();
    oldest_first_.push_back(key);
    entries_.emplace(std::move(key), Entry{std::move(value), now + ttl_, std::prev(oldest_first_.end())});
  }

  // The value under `key` while it is there and unexpired; gone from the table either way.
  std::optional<Value> take(std::string_view key) {
    std::lock_guard lock(mu_);
    drop_expired(clock_.monotonic_time());
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    Value value = std::move(it->second.value);
    oldest_first_.erase(it->second.age);
    entries_.erase(it);
    return value;
  }

  size_t size() const {
    std::lock_guard lock(mu_);
    return entries_.size();
  }

 private:
  struct Entry {
    Value value;
    MonoTime expires{};
    std::list<std::string>::iterator age;  // place in oldest_first_
  };

  void drop_oldest() {  // mu_ held
    entries_.erase(oldest_first_.front());
    oldest_first_.pop_front();
  }

  void drop_expired(MonoTime now) {  // mu_ held
    while (!oldest_first_.empty() && entries_.find(oldest_first_.front())->second.expires <= now)
      drop_oldest();
  }

  const Clock& clock_;
  const size_t max_;
  const Millis ttl_;
  mutable std::mutex mu_;
  std::map<std::string, Entry, std::less<>> entries_;
  std::list<std::string> oldest_first_;
};

}  // namespace trainwatch::auth
