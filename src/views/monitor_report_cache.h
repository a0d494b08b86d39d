// MonitorReportCache: the reads behind a monitor's report (views::read_report), shared by
// its API route and its page. A report reads a day's rollups per day of its range (up to a
// year) and every incident in it; the route is open to whoever may read the monitor, so a
// burst of readers, or one asking for range after range, must cost one read at a time on
// the cache's thread and never hold an HTTP thread (http/fresh_cache.h has the bounds: 64
// ranges kept, 4,096 requests waiting, then 503 with Retry-After).
//
// A read is at most kMaxAge old, and includes every change of state the engine had applied
// when the request came (a monitor down shows at once). What it holds does not depend on
// who reads it: incident causes are kept as stored and each route writes them as its
// reader may see them, so one read serves every audience.
#pragma once

#include <functional>
#include <memory>

#include "core/clock.h"
#include "engine/engine.h"
#include "http/fresh_cache.h"
#include "storage/store.h"
#include "views/report_request.h"

namespace trainwatch::views {

class MonitorReportCache {
 public:
  // The days a report covers are mostly past: a minute behind is nothing to its reader.
  static constexpr Millis kMaxAge{60'000};

  MonitorReportCache(const engine::Engine& engine, Store& store, const Clock& clock);

  using Deliver = std::function<void(Result<std::shared_ptr<const ReadReport>>)>;
  // The report of `monitor` over what `asked` names; `deliver` runs once, on the caller's
  // thread or the cache's. Errors: the store's, "cache.busy", "report.monitor_gone" (the
  // monitor was deleted before the read).
  void get(const std::string& monitor, const ReportRequest& asked, Deliver deliver);

 private:
  const engine::Engine& engine_;
  Store& store_;
  const Clock& clock_;
  http::FreshCache<ReadReport> cache_;
};

}  // namespace trainwatch::views
