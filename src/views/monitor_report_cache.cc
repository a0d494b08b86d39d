#include "views/monitor_report_cache.h"

#include <string>

namespace trainwatch::views {

MonitorReportCache::MonitorReportCache(const engine::Engine& engine, Store& store, const Clock& clock)
    : engine_(engine),
      store_(store),
      clock_(clock),
      cache_(clock, kMaxAge, [&engine] { return engine.state_generation(); }) {}

void MonitorReportCache::get(const std::string& monitor, const ReportRequest& asked, Deliver deliver) {
  const std::string key = monitor + '#' + std::to_string(asked.range.from_ms) + '#' +
                          std::to_string(asked.range.to_ms) + '#' + std::to_string(asked.slo_percent);
  auto build = [this, monitor, asked](Audience /*one read for every audience*/) -> Result<ReadReport> {
    auto view = engine_.monitor(monitor);
    if (!view) return make_error("report.monitor_gone", "no monitor named '" + monitor + "'");
    return read_report(store_, *view, asked, clock_.system_time());
  };
  // One key for every audience: the read holds nothing a route has not yet redacted.
  cache_.get(Audience::kPublic, key, build, std::move(deliver));
}

}  // namespace trainwatch::views
