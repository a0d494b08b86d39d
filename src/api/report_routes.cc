#include "api/report_routes.h"

#include "core/json_text.h"
#include "views/audience.h"
#include "views/report_request.h"

namespace trainwatch::api {

using http::Request;
using http::Responder;
using http::Response;

void get_monitor_report(const ApiContext& ctx, views::MonitorReportCache& cache, const Request& request,
                        const Responder& respond) {
  const std::string& name = request.params.at("name");
  if (!ctx.engine.monitor(name)) return respond(Response::problem(404, "no monitor named '" + name + "'"));
  auto asked = views::report_request(request.query, ctx.clock.system_time());
  if (!asked) return respond(Response::problem(400, asked.error().message));
  const auto format = request.query.count("format") ? request.query.at("format") : std::string("json");
  if (format != "json" && format != "csv")
    return respond(
        Response::problem(400, "query parameter 'format' is '" + format + "'; expected json or csv"));
  const Audience audience = views::audience_of(ctx.admin, request);
  cache.get(name, *asked, [respond, format, audience](const auto& read) {
    if (!read) {
      Response r = Response::problem(503, "the report cannot be read now: " + read.error().message);
      r.headers.emplace_back("Retry-After", "1");
      return respond(std::move(r));
    }
    if (format == "csv") {
      Response r = Response::text(200, views::report_csv((*read)->report));
      r.content_type = "text/csv; charset=utf-8";
      return respond(std::move(r));
    }
    boost::json::object out = views::report_json((*read)->report, audience);
    out["incidents_truncated"] = (*read)->incidents_truncated;
    respond(Response::json(200, json_text(out)));
  });
}

}  // namespace trainwatch::api
