// The monitor list's rows (templates/part_monitor_rows.mustache), for one filter: each
// monitor with its state and since in words, a bar of its recent checks (web/
// recent_checks.h), its uptime over 24 hours and 30 days (views/monitor_uptime.h), a
// latency sparkline and its last error on one line; grouped by tag when asked.
//
// Bounds and reads: at most kMaxListRows rows (what is down first; the page says how many
// more match). For them: two batched rollup reads per Store::kMaxRowsPerBatch monitors
// (24 hourly, 30 daily rows each), and per monitor its kBeats newest results (a heartbeat:
// also its kBeats newest pings, and views/monitor_uptime.h's reads).
#pragma once

#include <string>

#include "core/redaction.h"
#include "web/routes.h"

namespace trainwatch::web {

inline constexpr size_t kMaxListRows = 1'000;
inline constexpr size_t kBeats = 30;

struct ListFilter {
  std::string state;  // a shown state (views/shown_state.h), or "" for any
  std::string type;
  std::string tag;
  std::string query;  // a part of the name, target or a tag, any case
  bool by_tag = false;
};

// The rows' HTML for a reader of `audience`. Every reader but the public gets a box a row
// for the bulk pause and resume form (a page without a session hides them).
std::string render_monitor_rows(const WebContext& ctx, Audience audience, const ListFilter& filter);

}  // namespace trainwatch::web
