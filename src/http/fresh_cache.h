// FreshCache: built values by audience and key, shared by every request of that audience
// that may see them, and never older than their bound when served.
//
// The audience (core/redaction.h) is part of every key and is what the build is given:
// a value is built for the one audience whose requests it answers, so a copy built for a
// viewer (ping bodies, quoted causes) can never reach an anonymous reader, nor the public
// copy a viewer, whichever request came first.
//
// The source a value is built from has a generation (engine::Engine::state_generation):
// a counter it moves on every change a reader must see at once (a monitor down, deleted).
// What moves without it (times, durations, uptime) is bounded by `max_age`. A request is
// answered with the value held when that value was built from the generation the request
// found, or a later one, and its build started less than `max_age` before the request
// arrived. Otherwise the request waits for a build that satisfies it: the one running, if
// it does, or the next. So a response includes every change its source had applied when
// the request arrived, and shows nothing older than `max_age` before that.
//
// Builds run on the cache's own thread, one at a time: a burst of requests for a stale key
// costs one build (single flight), and a request that waits is answered from that thread
// through its callback, so no HTTP thread ever waits for a build (a status page reads 90
// days of rollups). A request the value held satisfies is answered at once, on its thread.
//
// Bounds: kMaxKeys keys (filters typed by users make keys, so their number is not ours to
// choose): past it the key built longest ago with no build running is forgotten.
// kMaxWaiting requests waiting over all keys: one more is answered at once with
// "cache.busy" (the caller answers 503 with Retry-After) instead of queueing. A build that
// fails answers the requests that were waiting when it started with its error; the value
// held before is kept but not served past its bound, and the next request builds again.
#pragma once

#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "core/clock.h"
#include "core/redaction.h"
#include "core/result.h"

namespace trainwatch::http {

template <typename V>
class FreshCache {
 public:
  static constexpr size_t kMaxKeys = 64;
  static constexpr size_t kMaxWaiting = 4'096;

  using Value = std::shared_ptr<const V>;
  // Builds the value for an audience; must stay valid to call later, on the cache's thread.
  using Build = std::function<Result<V>(Audience)>;
  // Gets the value, or why there is none; called once, on the caller's thread or the cache's.
  using Deliver = std::function<void(Result<Value>)>;
  // Reads the source's generation; any thread.
  using Generation = std::function<uint64_t()>;

  FreshCache(const Clock& clock, Millis max_age, Generation generation)
      : clock_(clock), max_age_(max_age), generation_(std::move(generation)) {}

  Millis max_age() const { return max_age_; }

  void get(Audience audience, const std::string& key, Build build, Deliver deliver) {
    const Key full{audience, key};
    // The generation first: a value built from it was built after this request arrived.
    const Waiter waiter{generation_(), clock_.monotonic_time(), std::move(deliver)};
    Value hit;
    {
      std::lock_guard lock(mu_);
      auto it = entries_.find(full);
      if (it == entries_.end()) {
        if (entries_.size() >= kMaxKeys) forget_oldest();
        it = entries_.emplace(full, Entry{}).first;
      }
      Entry& e = it->second;
      if (e.value && satisfies(e.generation, e.started, waiter)) {
        hit = e.value;
      } else if (waiting_ >= kMaxWaiting) {
        // answered below, outside the lock
      } else {
        e.build = std::move(build);  // the newest: it reads the newest page config
        e.waiting.push_back(waiter);
        ++waiting_;
        if (!e.building) start_build(full, e);
        return;
      }
    }
    if (hit) return waiter.deliver(std::move(hit));
    waiter.deliver(
        make_error("cache.busy", std::to_string(kMaxWaiting) + " requests wait for a view already"));
  }

 private:
  using Key = std::pair<Audience, std::string>;
  struct Waiter {
    uint64_t generation = 0;  // what it must show
    MonoTime arrived{};
    Deliver deliver;
  };
  struct Entry {
    Value value;
    uint64_t generation = 0;  // of the source when the value's build started
    MonoTime started{};       // when the value's build started
    bool building = false;
    Build build;
    std::vector<Waiter> waiting;
  };

  bool satisfies(uint64_t generation, MonoTime started, const Waiter& w) const {
    return generation >= w.generation && w.arrived - started < max_age_;
  }

  void start_build(const Key& key, Entry& e) {  // call with mu_ held
    e.building = true;
    boost::asio::post(pool_, [this, key] { run_build(key); });
  }

  // On the cache's thread. The entry stays: a building key is never forgotten.
  void run_build(const Key& key) {
    Build build;
    {
      std::lock_guard lock(mu_);
      build = entries_.at(key).build;
    }
    const uint64_t generation = generation_();
    const MonoTime started = clock_.monotonic_time();
    Result<V> built = make_error("cache.build", "the view could not be built");
    // No exception may leave the cache's thread (it would end the process).
    try {
      built = build(key.first);
    } catch (const std::exception& e) {
      built = make_error("cache.build", std::string("the view could not be built: ") + e.what());
    }
    std::vector<std::pair<Deliver, Result<Value>>> answers;
    {
      std::lock_guard lock(mu_);
      Entry& e = entries_.at(key);
      std::vector<Waiter> still;
      Value value;
      if (built) {
        value = std::make_shared<const V>(std::move(*built));
        e.value = value;
        e.generation = generation;
        e.started = started;
      }
      for (Waiter& w : e.waiting) {
        if (built ? satisfies(generation, started, w) : w.arrived <= started) {
          answers.emplace_back(std::move(w.deliver),
                               built ? Result<Value>(value) : Result<Value>(built.error()));
        } else {
          still.push_back(std::move(w));  // it arrived after a change this build may miss
        }
      }
      waiting_ -= e.waiting.size() - still.size();
      e.waiting = std::move(still);
      e.building = false;
      if (!e.waiting.empty()) start_build(key, e);
    }
    for (auto& [deliver, answer] : answers) deliver(std::move(answer));
  }

  void forget_oldest() {  // call with mu_ held
    auto oldest = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.building) continue;
      if (oldest == entries_.end() || it->second.started < oldest->second.started) oldest = it;
    }
    if (oldest != entries_.end()) entries_.erase(oldest);
  }

  const Clock& clock_;
  const Millis max_age_;
  const Generation generation_;
  std::mutex mu_;  // guards entries_ and waiting_
  std::map<Key, Entry> entries_;
  size_t waiting_ = 0;
  boost::asio::thread_pool pool_{1};  // last: joined first, while the rest still exists
};

}  // namespace trainwatch::http
