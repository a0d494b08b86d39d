#include "web/sso_routes.h"

#include <chrono>
#include <string>

#include <curl/curl.h>

#include "auth/cookie_names.h"
#include "auth/form.h"
#include "auth/oidc_logins.h"
#include "auth/sso_claims.h"
#include "core/html_escape.h"
#include "views/browser_request.h"
#include "web/dashboard_common.h"

namespace trainwatch::web {
namespace {

using http::Request;
using http::Responder;
using http::Response;

std::string url_escape(const std::string& text) {
  char* escaped = curl_easy_escape(nullptr, text.c_str(), static_cast<int>(text.size()));
  std::string out = escaped != nullptr ? escaped : "";
  curl_free(escaped);
  return out;
}

std::string oidc_cookie(const Request& request, std::string_view value, long max_age_s) {
  const bool https = views::over_https(request);
  std::string c = auth::oidc_login_cookie_name(https) + "=" + std::string(value) +
                  "; Path=/; HttpOnly; SameSite=Lax; Max-Age=" + std::to_string(max_age_s);
  if (https) c += "; Secure";
  return c;
}

std::vector<auth::GroupRole> role_mapping(const OidcConfig& config) {
  std::vector<auth::GroupRole> mapping;
  for (const auto& m : config.role_mapping) {
    if (auto role = auth::parse_role(m.role)) mapping.push_back({m.group, *role});
  }
  return mapping;
}

// A name taken by another is 409, a name that cannot be a user's 403, the store 503.
int refusal_status(const Error& error) {
  if (error.code == "accounts.exists") return 409;
  if (error.code == "accounts.invalid") return 403;
  return 503;
}

void refuse(const Responder& respond, int status, const std::string& why) {
  respond(html(status,
               "<!doctype html><title>Single sign-on refused · trainwatch</title><h1>Single sign-on "
               "refused</h1><p role=\"alert\" id=\"sso-error\">" +
                   html_escape(why) + "</p><p><a href=\"/login\">Back to the login page</a></p>"));
}

void start(const SsoContext& ctx, const std::shared_ptr<auth::OidcLogins>& logins, const Request& request,
           const Responder& respond) {
  auto login = logins->open();
  if (!login) return respond(Response::problem(503, "no randomness for a login; try again"));
  const bool queued = ctx.client.post([client = &ctx.client, login = *login, request, respond] {
    auto endpoints = client->discovery();
    if (!endpoints) return refuse(respond, 502, endpoints.error().message);
    const OidcConfig& c = client->config();
    std::string scopes;
    for (const auto& s : c.scopes) scopes += (scopes.empty() ? "" : " ") + s;
    const std::string& base = endpoints->authorization_endpoint;
    const std::string location = base + (base.find('?') == std::string::npos ? "?" : "&") +
                                 "response_type=code&client_id=" + url_escape(c.client_id) +
                                 "&redirect_uri=" + url_escape(c.redirect_url) +
                                 "&scope=" + url_escape(scopes) + "&state=" + url_escape(login.state) +
                                 "&nonce=" + url_escape(login.nonce) +
                                 "&code_challenge=" + url_escape(auth::pkce_challenge(login.code_verifier)) +
                                 "&code_challenge_method=S256";
    Response r;
    r.status = 302;
    r.headers.emplace_back("Location", location);
    r.headers.emplace_back(
        "Set-Cookie",
        oidc_cookie(request, login.browser,
                    std::chrono::duration_cast<std::chrono::seconds>(auth::OidcLogins::kTtl).count()));
    respond(std::move(r));
  });
  if (!queued) respond(Response::problem(503, "too many single sign-on logins under way; try again"));
}

// After the session opened: a page, not a redirect. The provider's redirect made this a
// cross-site navigation, and a browser sends no SameSite=Strict cookie on the rest of
// that chain; the refresh below is a new, same-site navigation that carries it.
Response logged_in(const WebContext& ctx, const Request& request, const auth::Session& session) {
  Response r =
      html(200,
           "<!doctype html><meta http-equiv=\"refresh\" content=\"0;url=/\"><title>Logged in · "
           "trainwatch</title><p id=\"sso-done\">Logged in. <a href=\"/\">Continue to the dashboard</a></p>");
  const bool https = views::over_https(request);
  const auto ttl_s = std::chrono::duration_cast<std::chrono::seconds>(ctx.auth.session_ttl()).count();
  std::string c = auth::session_cookie_name(https) + "=" + session.id +
                  "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" + std::to_string(ttl_s);
  if (https) c += "; Secure";
  r.headers.emplace_back("Set-Cookie", c);
  r.headers.emplace_back("Set-Cookie", oidc_cookie(request, "", 0));
  return r;
}

void callback(const SsoContext& ctx, const std::shared_ptr<auth::OidcLogins>& logins, const Request& request,
              const Responder& respond) {
  auto q = [&](const char* key) {
    auto it = request.query.find(key);
    return it == request.query.end() ? std::string() : it->second;
  };
  if (!q("error").empty()) return refuse(respond, 403, "The provider refused the login: " + q("error") + ".");
  const bool https = views::over_https(request);
  auto login = logins->redeem(
      q("state"), auth::cookie_value(request.header("cookie"), auth::oidc_login_cookie_name(https)));
  if (!login) {
    return refuse(respond, 403,
                  "This login was not started from this browser, expired (10 minutes) or was used already; "
                  "start again.");
  }
  const std::string code = q("code");
  if (code.empty()) return refuse(respond, 400, "The provider sent no code back.");
  const bool queued = ctx.client.post([ctx, login = *login, code, request, respond] {
    auto id_token = ctx.client.exchange_code(code, login.code_verifier);
    if (!id_token) return refuse(respond, 502, id_token.error().message);
    auto claims = ctx.client.verify(*id_token, login.nonce);
    if (!claims && claims.error().code == "oidc.keys_unreachable")
      return refuse(respond, 502, "The provider cannot be reached now: " + claims.error().message + ".");
    if (!claims)
      return refuse(respond, 403, "The provider's ID token was refused: " + claims.error().message);
    const OidcConfig& c = ctx.client.config();
    const std::string name = auth::sso_user_name(*claims, c.username_claim);
    const auto groups = auth::sso_groups(*claims, c.groups_claim);
    auto role = auth::role_for_groups(role_mapping(c), groups);
    if (!role) {
      std::string listed;
      for (const auto& g : groups) listed += (listed.empty() ? "" : ", ") + g;
      return refuse(respond, 403,
                    "None of " + name + "'s groups (" + (listed.empty() ? "none" : listed) +
                        ") is given a role by auth.oidc.role_mapping; ask an admin to map one.");
    }
    const auth::Role granted = *role;
    // Who the person is: the provider's issuer and subject, verified above; the name the
    // token claims only names a user made at its first login.
    const std::string subject(claims->at("sub").as_string());
    ctx.accounts.upsert_sso_user(
        name, c.issuer, subject, granted,
        [ctx, granted, request, respond](const Result<std::string>& stored) {
          if (!stored) return refuse(respond, refusal_status(stored.error()), stored.error().message);
          const std::string& user = *stored;
          auto session =
              ctx.web.auth.open_session(auth::Principal{user, granted, auth::Principal::Kind::kUser, user});
          if (!session) return refuse(respond, 503, "No session could be opened; try again.");
          respond(logged_in(ctx.web, request, *session));
        });
  });
  if (!queued) respond(Response::problem(503, "too many single sign-on logins under way; try again"));
}

}  // namespace

void add_sso_routes(http::Router& router, const SsoContext& ctx) {
  auto logins = std::make_shared<auth::OidcLogins>(ctx.web.clock);
  router.add("GET", "/login/oidc",
             [ctx, logins](const Request& r, const Responder& respond) { start(ctx, logins, r, respond); });
  router.add("GET", "/login/oidc/callback", [ctx, logins](const Request& r, const Responder& respond) {
    callback(ctx, logins, r, respond);
  });
}

}  // namespace trainwatch::web
