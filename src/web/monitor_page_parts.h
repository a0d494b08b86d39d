// The parts of a monitor's page (web/monitor_page.h) beyond its header, each from what
// the page has read: the certificate's days left, the chart's range links, the last
// check's timing breakdown, the events with their incident updates, a job's verdicts and
// interruptions, and a heartbeat's bar, due time and ping log with each ping's timing.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "core/redaction.h"
#include "engine/engine.h"
#include "http/server.h"
#include "web/monitor_events.h"
#include "web/routes.h"

namespace trainwatch::web {

// Days left on the certificate the last check saw (tls, https); nullopt without one.
std::optional<boost::json::object> certificate_card(const engine::MonitorView& view, SystemTime now);

// 1 h, 24 h, 7 d, 30 d as links (?range=…), the current one marked.
boost::json::array range_links(const std::string& current);

// DNS, connect, TLS, first byte and total of the last HTTP check; nullopt for other types.
std::optional<boost::json::object> timings_card(const engine::MonitorView& view);

// Events as the template lists them; an incident's updates go with its "down" event.
boost::json::array event_rows(const WebContext& ctx, const std::vector<MonitorEvent>& events,
                              Audience audience, SystemTime now);

// A job monitor's verdicts, newest first, one line per run of the same verdict.
boost::json::array verdict_rows(std::span<const CheckResult> results, Audience audience, SystemTime now);

// A job's interruptions and goodput (jobs/job_registry.h), when this replica holds the job.
void add_job_interruptions(const WebContext& ctx, const std::string& job, SystemTime now,
                           boost::json::object& m);

// The heartbeat card: ping URL (admins), due time, the bar of age against period and
// grace, its recent beats, and the ping log with each ping's timing.
void add_heartbeat(const WebContext& ctx, const http::Request& request, Audience audience,
                   const engine::MonitorView& view, SystemTime now, boost::json::object& m);

}  // namespace trainwatch::web
