// ReloadableSecret: a shared secret (the agents' jobs.token) that a SIGHUP reload replaces
// while requests read it. Readers take a copy, so a request checks against one value
// from start to end; a request that read the old value before the reload may still pass
// with it, every later one sees the new value.
//
// Threading: get() and set() are safe from any thread (one mutex around a string copy).
#pragma once

#include <mutex>
#include <string>

namespace trainwatch::auth {

class ReloadableSecret {
 public:
  explicit ReloadableSecret(std::string value = {}) : value_(std::move(value)) {}

  std::string get() const {
    std::lock_guard lock(mu_);
    return value_;
  }
  // Returns whether the value changed.
  bool set(std::string value) {
    std::lock_guard lock(mu_);
    if (value == value_) return false;
    value_ = std::move(value);
    return true;
  }

 private:
  mutable std::mutex mu_;
  std::string value_;
};

}  // namespace trainwatch::auth
