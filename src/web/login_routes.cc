#include "web/login_routes.h"

#include <chrono>
#include <optional>
#include <string>

#include "auth/form.h"
#include "auth/request_auth.h"
#include "auth/sha256.h"
#include "core/constant_time.h"
#include "web/dashboard_common.h"
#include "web/pages.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

using auth::kSessionCookie;
constexpr const char* kLoginCsrfCookie = "tw_login_csrf";

bool behind_https(const Request& request) { return request.header("x-forwarded-proto") == "https"; }

std::string cookie(const Request& request, std::string_view name, std::string_view value,
                   std::string_view max_age) {
  std::string c = std::string(name) + "=" + std::string(value) +
                  "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" + std::string(max_age);
  if (behind_https(request)) c += "; Secure";
  return c;
}

// `status` is 403 for a wrong token, 429 (with Retry-After from the caller) when the
// address is out of attempts; the form is shown either way so the person can try later.
void login_page(const WebContext& ctx, const Request& request, const Responder& respond,
                const std::string& error, int status = 403,
                std::optional<Millis> retry_after = std::nullopt) {
  // Double-submit: before a session exists, the form's token must equal a cookie that
  // only this site could set.
  const std::string csrf = auth::random_token();
  json::object m = layout_model(ctx, request, "Log in · trainwatch");
  m["csrf"] = csrf;
  if (!ctx.auth.enabled()) {
    m["error"] =
        "No admin token or user is configured (auth.admin_tokens, auth.users or TRAINWATCH_ADMIN_TOKEN), so "
        "nobody can log in.";
  } else if (!error.empty()) {
    m["error"] = error;
  }
  Response r = html(error.empty() ? 200 : status, render_page("login", m));
  r.headers.emplace_back("Set-Cookie", cookie(request, kLoginCsrfCookie, csrf, "3600"));
  if (retry_after) r.headers.emplace_back("Retry-After", std::to_string((retry_after->count() + 999) / 1000));
  respond(std::move(r));
}

void login(const WebContext& ctx, const Request& request, const Responder& respond) {
  auto form = auth::parse_form(request.body);
  const std::string expected = auth::cookie_value(request.header("cookie"), kLoginCsrfCookie);
  if (expected.empty() || !constant_time_equal(form["csrf"], expected)) {
    return respond(
        Response::problem(403, "the form's CSRF token is missing or wrong; reload the login page"));
  }
  // An address out of attempts is not answered on its token at all (auth/admin_auth.h).
  if (auto wait = ctx.auth.throttled(request.remote_address)) {
    const auto seconds = std::to_string((wait->count() + 999) / 1000);
    return login_page(ctx, request, respond,
                      "Too many wrong tokens from this address; try again in " + seconds + " s.", 429, *wait);
  }
  std::optional<auth::Session> session;
  if (!form["token"].empty()) {
    session = ctx.auth.login(form["token"], request.remote_address);
    if (!session)
      return login_page(ctx, request, respond, "That token is not an admin token or a live API token.");
  } else {
    auto outcome = ctx.auth.login_user(form["name"], form["password"], form["code"], request.remote_address);
    if (!outcome.session) {
      switch (outcome.refusal) {
        case auth::LoginRefusal::kNeedsCode:
          return login_page(ctx, request, respond, "Enter the code from your authenticator app too.", 401);
        case auth::LoginRefusal::kWrongCode:
          return login_page(ctx, request, respond, "That code is wrong or was used already.");
        case auth::LoginRefusal::kWrongCredentials:
          return login_page(ctx, request, respond, "Wrong user name or password.");
      }
    }
    session = std::move(outcome.session);
  }
  Response r = redirect("/");
  // The cookie lasts as long as the session (auth.session_ttl); the server expires it too.
  const auto ttl_s = std::chrono::duration_cast<std::chrono::seconds>(ctx.auth.session_ttl()).count();
  r.headers.emplace_back("Set-Cookie", cookie(request, kSessionCookie, session->id, std::to_string(ttl_s)));
  r.headers.emplace_back("Set-Cookie", cookie(request, kLoginCsrfCookie, "", "0"));
  respond(std::move(r));
}

void logout(const WebContext& ctx, const Request& request, const Responder& respond) {
  auto session = session_of(ctx, request);
  auto form = auth::parse_form(request.body);
  if (!session || !constant_time_equal(form["csrf"], session->csrf_token)) {
    return respond(Response::problem(403, "the form's CSRF token is missing or wrong for this session"));
  }
  ctx.auth.logout(session->id);
  Response r = redirect("/login");
  r.headers.emplace_back("Set-Cookie", cookie(request, kSessionCookie, "", "0"));
  respond(std::move(r));
}

}  // namespace

void add_login_routes(http::Router& router, const WebContext& ctx) {
  const std::vector<std::string> get = {"GET", "HEAD"};
  router.add(get, "/login",
             [ctx](const Request& r, const Responder& respond) { login_page(ctx, r, respond, ""); });
  router.add("POST", "/login", [ctx](const Request& r, const Responder& respond) { login(ctx, r, respond); });
  router.add("POST", "/logout",
             [ctx](const Request& r, const Responder& respond) { logout(ctx, r, respond); });
}

}  // namespace trainwatch::web
