// StatusPageSet: the status pages the config file declares, replaced whole by a SIGHUP
// reload. Readers (the status pages, the dashboard's nav) take a snapshot and keep using
// it while a reload swaps in the next set.
//
// Threading: every call is safe from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace trainwatch::catalog {

class StatusPageSet {
 public:
  explicit StatusPageSet(std::vector<StatusPageConfig> pages) { set(std::move(pages)); }
  std::shared_ptr<const std::vector<StatusPageConfig>> get() const {
    std::lock_guard lock(mu_);
    return pages_;
  }
  // The page of that slug in the current set, or null; it keeps that set alive while in use.
  std::shared_ptr<const StatusPageConfig> find(std::string_view slug) const {
    auto pages = get();
    for (const auto& p : *pages) {
      if (p.slug == slug) return {pages, &p};
    }
    return nullptr;
  }
  void set(std::vector<StatusPageConfig> pages) {
    auto next = std::make_shared<const std::vector<StatusPageConfig>>(std::move(pages));
    std::lock_guard lock(mu_);
    pages_ = std::move(next);
    ++generation_;
  }
  // Changes with every set(): part of a built page's cache key, so a reload shows at once.
  uint64_t generation() const {
    std::lock_guard lock(mu_);
    return generation_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const std::vector<StatusPageConfig>> pages_;
  uint64_t generation_ = 0;
};

}  // namespace trainwatch::catalog
