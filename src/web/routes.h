// The pages' HTTP surface: public status pages (/status/{slug}, /api/v1/status/{slug}),
// badges, static assets, the login page and the dashboard. Reads come from the engine's
// in-memory view and the store's read side; nothing here waits on the store's writer.
//
// Access: status pages, badges and static files are public. The dashboard reads like the
// GET API (public on the listen address); logging in with an admin token is what allows
// changes. Every form carries a CSRF token and every POST checks it.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "api/monitor_catalog.h"
#include "auth/admin_auth.h"
#include "config/config.h"
#include "core/clock.h"
#include "engine/engine.h"
#include "http/server.h"
#include "jobs/job_registry.h"
#include "storage/store.h"

namespace trainwatch::web {

// The configured status pages, replaced whole by a SIGHUP reload; readers take a snapshot.
class StatusPageSet {
 public:
  explicit StatusPageSet(std::vector<StatusPageConfig> pages) { set(std::move(pages)); }
  std::shared_ptr<const std::vector<StatusPageConfig>> get() const {
    std::lock_guard lock(mu_);
    return pages_;
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

struct WebContext {
  Engine& engine;
  Store& store;
  const Clock& clock;
  auth::AdminAuth& auth;
  api::MonitorCatalog& catalog;
  jobs::JobRegistry& jobs;
  std::shared_ptr<StatusPageSet> status_pages;
};

void add_web_routes(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
