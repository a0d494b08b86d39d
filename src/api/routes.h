// The server's HTTP surface: the REST API under /api/v1, /healthz and /metrics, added to
// a Router. Handlers read the engine's in-memory view and the store's read side; they
// never block on the store's writer.
#pragma once

#include <functional>
#include <optional>

#include <boost/json/object.hpp>

#include "auth/admin_auth.h"
#include "core/clock.h"
#include "core/prometheus.h"
#include "engine/engine.h"
#include "http/server.h"
#include "jobs/job_registry.h"
#include "storage/store.h"

namespace trainwatch::api {

struct ApiContext {
  engine::Engine& engine;
  Store& store;
  const Clock& clock;
  SystemTime started_at;
  const jobs::JobRegistry* jobs = nullptr;  // adds per-job families to /metrics when set
  // Replicas: the jobs whose families this one writes (render_job_metrics); unset: all.
  std::function<bool(const std::string&)> job_metrics_here = {};
  // Who may read secrets (views/audience.h): ping URLs and bodies, URL credentials, what
  // targets answered; null: everybody.
  const auth::AdminAuth* admin = nullptr;
  // Appends other components' metric families to /metrics (alerting); may be empty.
  std::function<void(PrometheusWriter&)> extra_metrics = {};
  // Replicas on one PostgreSQL: this one and the members it sees, for /healthz
  // (cluster/replica_set.h); empty for a lone server.
  std::function<boost::json::object()> replicas = {};
  // Why alerts cannot go out although the store takes writes (the outbox cannot be read or
  // claimed for longer than WriteHealth::kLateWrites), for /healthz; nullopt: they can.
  std::function<std::optional<std::string>()> outbox_trouble = {};
  // Why this replica acts on nothing although it runs (its beats fail: the database out
  // of reach, its clock refused), for /healthz; nullopt: it acts, or it is alone.
  std::function<std::optional<std::string>()> replica_trouble = {};
};

void add_api_routes(http::Router& router, const ApiContext& context);

}  // namespace trainwatch::api
