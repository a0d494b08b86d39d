#include "views/write_access.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>

#include <boost/json.hpp>

#include "auth/admin_token_check.h"
#include "auth/request_auth.h"
#include "core/json_text.h"
#include "views/browser_request.h"

namespace trainwatch::views {

namespace {

// `Authorization: Bearer <token>`, through the guess throttle: who it is, or nullopt after
// answering 401 or 429.
std::optional<auth::Principal> bearer_principal(const auth::AdminAuth& auth, const http::Request& request,
                                                std::string_view token, const http::Responder& respond) {
  using http::Response;
  auth::TokenCheck checked =
      auth::check_token(auth, auth::CredentialKind::kBearer, token, request.remote_address);
  switch (checked.gate.verdict) {
    case auth::GateVerdict::kAccepted: return std::move(checked.who);
    case auth::GateVerdict::kThrottled:
      // Not looked at, right or wrong: this source used up its own attempts.
      respond(too_many_attempts(checked.gate.retry_after, "too many wrong tokens from this address"));
      return std::nullopt;
    case auth::GateVerdict::kRefused: {
      // 401 as RFC 6750 has it for a token that is not (or no longer) valid: a revoked
      // token reads the same as one that never was.
      Response r = Response::problem(401, "that token is not valid (wrong, expired or revoked)");
      r.headers.emplace_back("WWW-Authenticate", "Bearer error=\"invalid_token\"");
      respond(std::move(r));
      return std::nullopt;
    }
  }
  return std::nullopt;
}

http::Response no_credentials(auth::Role needed) {
  http::Response r =
      http::Response::problem(401, "this needs a token with the " + std::string(auth::role_name(needed)) +
                                       " role or above: Authorization: Bearer <token>");
  r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

// Who may make this write (write_allowed), not yet audited.
std::optional<auth::Principal> write_principal(auth::AdminAuth& auth, const http::Request& request,
                                               const http::Responder& respond, auth::Role needed) {
  constexpr std::string_view kBearer = "Bearer ";
  const std::string_view authorization = request.header("authorization");
  std::optional<auth::Principal> who;
  if (authorization.rfind(kBearer, 0) == 0) {
    who = bearer_principal(auth, request, authorization.substr(kBearer.size()), respond);
    if (!who) return std::nullopt;
  } else {
    // A cookie rides along with whatever the browser sends, from whichever page.
    if (auto refusal = cross_origin_refusal(request)) {
      respond(std::move(*refusal));
      return std::nullopt;
    }
    auto check = auth::check_write(auth, session_id_of(request), request.header("x-csrf-token"));
    switch (check.access) {
      case auth::WriteAccess::kAllowed: who = std::move(check.who); break;
      case auth::WriteAccess::kNoCredentials: respond(no_credentials(needed)); return std::nullopt;
      case auth::WriteAccess::kBadCsrf:
        respond(http::Response::problem(403, "the CSRF token is missing or wrong for this session"));
        return std::nullopt;
    }
  }
  if (!auth::allows(who->role, needed)) {
    respond(role_refused(*who, needed));
    return std::nullopt;
  }
  return who;
}

}  // namespace

std::optional<auth::Principal> write_allowed(auth::AdminAuth& auth, const http::Request& request,
                                             const http::Responder& respond, auth::Role needed) {
  auto who = write_principal(auth, request, respond, needed);
  if (who) auth.audit(*who, request.method + " " + request.path, request.remote_address);
  return who;
}

std::optional<auth::Principal> write_allowed_recorded(auth::AdminAuth& auth, const http::Request& request,
                                                      const http::Responder& respond, auth::Role needed,
                                                      http::Responder& answer) {
  auto who = write_principal(auth, request, respond, needed);
  if (!who) return std::nullopt;
  HeldAnswer held = hold_until_recorded(respond);
  answer = held.answer;
  auth.audit(*who, request.method + " " + request.path, request.remote_address, std::move(held.recorded));
  return who;
}

HeldAnswer hold_until_recorded(const http::Responder& respond) {
  // Whichever comes second, the answer or the record, sends the answer.
  struct Held {
    explicit Held(http::Responder r) : respond(std::move(r)) {}
    std::mutex mu;
    bool recorded = false;
    std::optional<http::Response> answer;
    http::Responder respond;
  };
  auto held = std::make_shared<Held>(respond);
  auto answer = [held](http::Response response) {
    {
      std::lock_guard lock(held->mu);
      if (!held->recorded) {
        held->answer = std::move(response);
        return;
      }
    }
    held->respond(std::move(response));
  };
  auto recorded = [held](const Status&) {
    std::optional<http::Response> ready;
    {
      std::lock_guard lock(held->mu);
      held->recorded = true;
      ready.swap(held->answer);
    }
    if (ready) held->respond(std::move(*ready));
  };
  return HeldAnswer{http::Responder(answer), recorded};
}

std::optional<auth::Principal> read_allowed(const auth::AdminAuth& auth, const http::Request& request,
                                            const http::Responder& respond, auth::Role needed) {
  constexpr std::string_view kBearer = "Bearer ";
  const std::string_view authorization = request.header("authorization");
  std::optional<auth::Principal> who;
  if (authorization.rfind(kBearer, 0) == 0) {
    who = bearer_principal(auth, request, authorization.substr(kBearer.size()), respond);
    if (!who) return std::nullopt;
  } else {
    who = auth::session_reader(auth, session_id_of(request));
    if (!who) {
      respond(no_credentials(needed));
      return std::nullopt;
    }
  }
  if (!auth::allows(who->role, needed)) {
    respond(role_refused(*who, needed));
    return std::nullopt;
  }
  return who;
}

http::Response role_refused(const auth::Principal& who, auth::Role needed) {
  return http::Response::problem(403, "this needs the " + std::string(auth::role_name(needed)) + " role; " +
                                          who.name + " has the " + std::string(auth::role_name(who.role)) +
                                          " role");
}

http::Response too_many_attempts(Millis wait, std::string_view what) {
  // Whole seconds, rounded up: a client that waits Retry-After finds its attempt back.
  const auto seconds = std::max<int64_t>(1, (wait.count() + 999) / 1000);
  http::Response r =
      http::Response::problem(429, std::string(what) + "; try again in " + std::to_string(seconds) + " s");
  r.headers.emplace_back("Retry-After", std::to_string(seconds));
  return r;
}

http::Response problem_for(const Error& error, std::string_view field) {
  http::Response r = http::Response::problem(status_for(error), error.message);
  if (field.empty()) return r;
  boost::json::value doc = boost::json::parse(r.body);
  doc.as_object()["field"] = field;
  r.body = json_text(doc);
  return r;
}

int status_for(const Error& error) {
  auto ends_with = [&](std::string_view suffix) {
    return error.code.size() > suffix.size() &&
           error.code.compare(error.code.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".invalid")) return 400;
  if (ends_with(".not_found")) return 404;
  if (ends_with(".forbidden")) return 403;
  if (ends_with(".exists") || ends_with(".read_only") || ends_with(".in_use") || ends_with(".full"))
    return 409;
  return 503;
}

}  // namespace trainwatch::views
