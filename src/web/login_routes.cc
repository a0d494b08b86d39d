#include "web/login_routes.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "auth/admin_token_check.h"
#include "auth/cookie_names.h"
#include "auth/form.h"
#include "auth/login_forms.h"
#include "core/constant_time.h"
#include "views/browser_request.h"
#include "web/dashboard_common.h"
#include "web/pages.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

using Forms = std::shared_ptr<auth::LoginForms>;

// `name_of` picks the name for the request's scheme (`__Host-` over HTTPS, which needs
// Secure and Path=/ without Domain: auth/cookie_names.h).
std::string cookie(const Request& request, std::string (*name_of)(bool), std::string_view value,
                   std::string_view max_age) {
  const bool https = views::over_https(request);
  std::string c = name_of(https) + "=" + std::string(value) +
                  "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" + std::string(max_age);
  if (https) c += "; Secure";
  return c;
}

// `status` is 403 for a wrong token, 429 (with Retry-After from the caller) when the
// client's source is out of attempts; the form is shown either way so the person can try
// later, with a new pre-login session (each is good for one post).
void login_page(const WebContext& ctx, const Forms& forms, const Request& request, const Responder& respond,
                const std::string& error, int status = 403,
                std::optional<Millis> retry_after = std::nullopt) {
  // Before a session exists, the form is a pre-login session kept here (auth/login_forms.h).
  const auto form = forms->open();
  if (!form) return respond(Response::problem(503, "no randomness for a login form; try again"));
  json::object m = layout_model(ctx, request, "Log in · trainwatch");
  m["csrf"] = form->csrf_token;
  if (!ctx.sso_button.empty()) m["sso_button"] = ctx.sso_button;
  if (!ctx.auth.enabled()) {
    m["error"] =
        "No admin token or user is configured (auth.admin_tokens, auth.users or TRAINWATCH_ADMIN_TOKEN), so "
        "nobody can log in.";
  } else if (!error.empty()) {
    m["error"] = error;
  }
  Response r = html(error.empty() ? 200 : status, render_page("login", m));
  const auto form_ttl_s =
      std::chrono::duration_cast<std::chrono::seconds>(auth::LoginForms::kFormTtl).count();
  r.headers.emplace_back("Set-Cookie",
                         cookie(request, auth::login_form_cookie_name, form->id, std::to_string(form_ttl_s)));
  if (retry_after) r.headers.emplace_back("Retry-After", std::to_string((retry_after->count() + 999) / 1000));
  respond(std::move(r));
}

void login(const WebContext& ctx, const Forms& forms, const Request& request, const Responder& respond) {
  // Login CSRF: another port's page can plant cookies and post this form; the browser
  // still says where the post comes from (auth/request_origin.h).
  if (auto refusal = views::cross_origin_refusal(request)) return respond(std::move(*refusal));
  auto form = auth::parse_form(request.body);
  const bool https = views::over_https(request);
  if (!forms->redeem(auth::cookie_value(request.header("cookie"), auth::login_form_cookie_name(https)),
                     form["csrf"])) {
    return respond(Response::problem(
        403,
        "the login form is not one this server handed out, was used already, or expired; reload the login page"));
  }
  std::optional<auth::Session> session;
  auto throttled = [&](Millis wait, const char* what) {
    const auto seconds = std::to_string((wait.count() + 999) / 1000);
    login_page(ctx, forms, request, respond, std::string(what) + "; try again in " + seconds + " s.", 429,
               wait);
  };
  if (!form["token"].empty()) {
    // A source out of attempts is not answered on its token at all (auth/guess_throttle.h).
    const auth::TokenCheck checked =
        auth::check_token(ctx.auth, auth::CredentialKind::kLogin, form["token"], request.remote_address);
    if (checked.gate.verdict == auth::GateVerdict::kThrottled)
      return throttled(checked.gate.retry_after, "Too many wrong tokens from this address");
    if (checked.gate.verdict == auth::GateVerdict::kAccepted) session = ctx.auth.login(form["token"]);
    if (!session)
      return login_page(ctx, forms, request, respond,
                        "That token is not an admin token or a live API token.");
  } else {
    auto outcome = ctx.auth.login_user(form["name"], form["password"], form["code"], request.remote_address);
    if (!outcome.session) {
      if (outcome.refusal == auth::LoginRefusal::kThrottled)
        return throttled(outcome.retry_after, "Too many wrong passwords from this address");
      // One answer whichever factor was wrong (auth::LoginRefusal).
      return login_page(ctx, forms, request, respond,
                        "Wrong user name, password or code (a code is needed if you set one up).");
    }
    session = std::move(outcome.session);
  }
  Response r = redirect("/");
  // The cookie lasts as long as the session (auth.session_ttl); the server expires it too.
  const auto ttl_s = std::chrono::duration_cast<std::chrono::seconds>(ctx.auth.session_ttl()).count();
  r.headers.emplace_back("Set-Cookie",
                         cookie(request, auth::session_cookie_name, session->id, std::to_string(ttl_s)));
  r.headers.emplace_back("Set-Cookie", cookie(request, auth::login_form_cookie_name, "", "0"));
  respond(std::move(r));
}

void logout(const WebContext& ctx, const Request& request, const Responder& respond) {
  if (auto refusal = views::cross_origin_refusal(request)) return respond(std::move(*refusal));
  auto session = session_of(ctx, request);
  auto form = auth::parse_form(request.body);
  if (!session || !constant_time_equal(form["csrf"], session->csrf_token)) {
    return respond(Response::problem(403, "the form's CSRF token is missing or wrong for this session"));
  }
  ctx.auth.logout(session->id);
  Response r = redirect("/login");
  r.headers.emplace_back("Set-Cookie", cookie(request, auth::session_cookie_name, "", "0"));
  respond(std::move(r));
}

}  // namespace

void add_login_routes(http::Router& router, const WebContext& ctx) {
  const std::vector<std::string> get = {"GET", "HEAD"};
  auto forms = std::make_shared<auth::LoginForms>(ctx.clock);
  router.add(get, "/login", [ctx, forms](const Request& r, const Responder& respond) {
    login_page(ctx, forms, r, respond, "");
  });
  router.add("POST", "/login",
             [ctx, forms](const Request& r, const Responder& respond) { login(ctx, forms, r, respond); });
  router.add("POST", "/logout",
             [ctx](const Request& r, const Responder& respond) { logout(ctx, r, respond); });
}

}  // namespace trainwatch::web
