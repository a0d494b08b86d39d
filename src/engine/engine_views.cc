// Engine's readers: what the API and pages see of the monitors (views, deltas), stats and
// metrics, copied under mu_.
// Threading: any thread; each holds mu_ while it copies.
#include "engine/engine.h"

#include <algorithm>

#include "engine/engine_runtime.h"
#include "heartbeat/rules.h"

namespace trainwatch::engine {

std::vector<MonitorView> Engine::monitors() const {
  std::lock_guard lock(mu_);
  std::vector<MonitorView> views;
  views.reserve(monitors_.size());
  for (const auto& [name, r] : monitors_) views.push_back(view_of(*r));
  return views;
}

MonitorListDelta Engine::monitors_since(uint64_t since) const {
  MonitorListDelta delta;
  std::lock_guard lock(mu_);
  delta.revision = next_revision_ - 1;
  delta.names.reserve(monitors_.size());
  for (const auto& [name, r] : monitors_) {
    delta.names.push_back(name);
    if (r->revision > since) delta.changed.push_back(view_of(*r));
  }
  return delta;
}

std::optional<MonitorView> Engine::monitor(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = monitors_.find(name);
  if (it == monitors_.end()) return std::nullopt;
  return view_of(*it->second);
}

MonitorView Engine::view_of(const Runtime& r) const {
  MonitorView view{r.config,   r.state,      r.open_incident,    r.last_result,
                   r.revision, std::nullopt, r.maintenance_until};
  if (r.quiet_success) add_quiet_success(*r.quiet_success, r.config->retries, view.state, view.last_result);
  if (r.heartbeat) {
    const auto& spec = std::get<HeartbeatSpec>(r.config->spec);
    HeartbeatView hb;
    hb.last_ping = r.last_ping;
    hb.open_start = r.started_at;
    hb.late = r.state.status == MonitorStatus::kUp &&
              heartbeat::is_late(spec, *r.heartbeat, clock_.monotonic_time());
    hb.next_expected = r.heartbeat->due_at;
    view.heartbeat = std::move(hb);
  }
  return view;
}

std::vector<std::string> Engine::down_dependents(const std::string& parent) const {
  std::vector<std::string> out;
  std::lock_guard lock(mu_);
  for (const auto& [name, r] : monitors_) {
    const auto& deps = r->config->depends_on;
    if (r->state.status == MonitorStatus::kDown && std::find(deps.begin(), deps.end(), parent) != deps.end())
      out.push_back(name);
  }
  return out;
}

EngineStats Engine::stats() const {
  std::lock_guard lock(mu_);
  EngineStats stats = stats_;
  if (ownership_ == nullptr) stats.owned = stats.monitors;
  return stats;
}

CheckMetrics Engine::metrics() const {
  std::lock_guard lock(mu_);
  return metrics_;
}

}  // namespace trainwatch::engine
