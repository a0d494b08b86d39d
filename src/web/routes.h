// The pages' HTTP surface: public status pages (/status/{slug}, /api/v1/status/{slug}),
// badges, static assets, the login page and the dashboard. Reads come from the engine's
// in-memory view and the store's read side; nothing here waits on the store's writer.
//
// Access: status pages, badges and static files are public. The dashboard reads like the
// GET API (public on the listen address); logging in with an admin token is what allows
// changes. Every form carries a CSRF token and every POST checks it.
//
// One file per group of routes: status_page_routes, badge_routes, static_routes,
// login_routes, monitors_page, monitor_page, monitor_forms and job_page; add_web_routes
// adds them all. (maintenance_page, notifications_page and the people pages,
// web/people_pages.h, take contexts of their own.)
#pragma once

#include <memory>

#include "alerting/channel_catalog.h"
#include "auth/admin_auth.h"
#include "catalog/monitor_catalog.h"
#include "catalog/status_page_set.h"
#include "config/config.h"
#include "core/clock.h"
#include "engine/engine.h"
#include "http/server.h"
#include "jobs/job_peers.h"
#include "jobs/job_registry.h"
#include "storage/store.h"

namespace trainwatch::web {

struct WebContext {
  engine::Engine& engine;
  Store& store;
  const Clock& clock;
  auth::AdminAuth& auth;
  catalog::MonitorCatalog& catalog;
  jobs::JobRegistry& jobs;
  std::shared_ptr<catalog::StatusPageSet> status_pages;
  // "Log in with <this>" on the login page; empty: single sign-on is not configured.
  std::string sso_button;
  // Replicas: the pages of jobs held elsewhere are theirs (views/held_elsewhere.h).
  jobs::JobPeers* job_peers = nullptr;
  // The channels the monitor form's notify picker offers; null: none.
  const alerting::ChannelCatalog* channels = nullptr;
};

void add_web_routes(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
