#include "api/ping_routes.h"

#include <optional>

namespace trainwatch::api {
namespace {

using heartbeat::PingAction;
using heartbeat::PingOutcome;
using http::Request;
using http::Responder;
using http::Response;

Response healthchecks_answer(PingOutcome outcome) {
  switch (outcome) {
    case PingOutcome::kAccepted: return Response::text(200, "OK");
    case PingOutcome::kUnknownToken: return Response::text(404, "not found");
    case PingOutcome::kRateLimited: return Response::text(429, "rate limited");
    case PingOutcome::kUnavailable: break;
  }
  // Not stored (a full disk, say): a problem the client can act on, and never a 200.
  Response r = Response::problem(503, "the ping was not stored: the store refuses writes; retry later");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

// Uptime Kuma's answers, so its push scripts that check `"ok":true` keep working.
Response kuma_answer(PingOutcome outcome) {
  Response r = healthchecks_answer(outcome);
  r.content_type = "application/json";
  const std::string msg = outcome == PingOutcome::kUnavailable ? "store unavailable, retry" : r.body;
  r.body = outcome == PingOutcome::kAccepted ? R"({"ok":true})" : R"({"ok":false,"msg":")" + msg + R"("})";
  return r;
}

void submit(heartbeat::PingIngest& ingest, const Request& request, PingAction action, std::string_view body,
            Responder respond, Response (*answer)(PingOutcome)) {
  heartbeat::PingRequest ping{request.params.at("token"), action, body, request.remote_address,
                              std::string(request.header("user-agent"))};
  ingest.ingest(ping,
                [respond = std::move(respond), answer](PingOutcome outcome) { respond(answer(outcome)); });
}

}  // namespace

void add_ping_routes(http::Router& router, heartbeat::PingIngest& pings) {
  const std::vector<std::string> methods = {"GET", "HEAD", "POST"};
  heartbeat::PingIngest* in = &pings;
  auto success = [in](const Request& request, Responder respond) {
    submit(*in, request, PingAction{}, request.body, std::move(respond), healthchecks_answer);
  };
  router.add(methods, "/ping/{token}", success);
  router.add(methods, "/api/heartbeat/{token}", success);
  // One route for every suffix, so that /ping/{token}/a/b is a 400 like any bad action.
  router.add(methods, "/ping/{token}/{action...}", [in](const Request& request, Responder respond) {
    auto action = heartbeat::parse_ping_action(request.params.at("action"));
    if (!action) return respond(Response::text(400, action.error().message));
    submit(*in, request, *action, request.body, std::move(respond), healthchecks_answer);
  });
  router.add(methods, "/api/push/{token}", [in](const Request& request, Responder respond) {
    std::optional<std::string> status;
    if (auto it = request.query.find("status"); it != request.query.end()) status = it->second;
    auto action = heartbeat::parse_push_status(status);
    if (!action) {
      Response r = Response::json(400, R"({"ok":false,"msg":"bad status"})");
      return respond(std::move(r));
    }
    // Kuma sends its message as `msg`; a POST body is kept when there is none.
    auto msg = request.query.find("msg");
    std::string_view body =
        msg != request.query.end() ? std::string_view(msg->second) : std::string_view(request.body);
    submit(*in, request, *action, body, std::move(respond), kuma_answer);
  });
}

}  // namespace trainwatch::api
