// What every page of the dashboard reads from: the engine's view, the store's read side,
// the sign-in and the catalogs. Its own header, of declarations only, so that a page
// includes this and what it uses, never the aggregator of every route (web/routes.h).
#pragma once

#include <memory>
#include <string>

namespace trainwatch {
class Clock;
class Store;
namespace alerting {
class ChannelCatalog;
}
namespace auth {
class AdminAuth;
}
namespace catalog {
class MonitorCatalog;
class AlertLinks;
class MonitorSnoozes;
class StatusPageSet;
}  // namespace catalog
namespace engine {
class Engine;
}
namespace jobs {
class JobPeers;
class JobRegistry;
}  // namespace jobs
}  // namespace trainwatch

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
  // A monitor page's snooze, shown and changed; null: the page offers none.
  catalog::MonitorSnoozes* snoozes = nullptr;
  // What an alert's snooze link does (/snooze/{link}); null: no such links.
  catalog::AlertLinks* alert_links = nullptr;
};

}  // namespace trainwatch::web
