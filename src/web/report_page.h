// GET /monitors/{name}/report: a monitor's availability report (views/monitor_report.h) as
// a page that prints well, for whoever has to hand it on: the figures against the SLO, the
// outages and a row per day, with a form for the range and links to its CSV and JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include <boost/json.hpp>

#include "core/model.h"
#include "core/redaction.h"
#include "http/server.h"
#include "views/monitor_report.h"
#include "views/report_request.h"
#include "web/web_context.h"

namespace trainwatch::web {

// A report's figures, a monitor's or a status page's (views::figures_of), into `m` as
// both report templates name them: availability, slo, verdict, met,
// downtime, budget, budget_left, incident_count, mttr, longest.
void add_report_summary(const views::ReportFigures& figures, boost::json::object& m);

// One row per incident (id, monitor, started, ended, duration, cause as `audience` reads
// it); an open one lasts until `until_ms`.
boost::json::array report_incident_rows(std::span<const Incident> incidents, int64_t until_ms,
                                        Audience audience);

// The range asked for, as the range form shows it: from, to, last_day, slo_value.
void add_report_range(const views::ReportRequest& asked, boost::json::object& m);

// "from=2026-11-01&to=2026-12-01&slo=99.5": the same report as CSV or JSON from the API.
std::string report_query(const views::ReportRequest& asked);

// "2026-11-01" for a UTC midnight; "99.98%" or "no data".
std::string report_date_text(int64_t ms);
std::string report_percent_text(std::optional<double> pct);

void add_report_page(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
