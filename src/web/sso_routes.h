// Single sign-on through OpenID Connect (authorization code flow with PKCE):
//   GET /login/oidc           opens a login (auth/oidc_logins.h: state, nonce, PKCE
//                             verifier, bound to this browser by a cookie) and redirects
//                             to the provider's authorization endpoint;
//   GET /login/oidc/callback  takes the provider's code back, exchanges it at the token
//                             endpoint, verifies the ID token (auth/id_token.h), maps the
//                             user's groups to a role (auth/sso_claims.h), stores the user
//                             (catalog::Accounts::upsert_sso_user) and only after that
//                             commit opens a dashboard session.
// The provider's calls run on the SsoClient's worker (web/sso_client.h), never on an HTTP
// thread. Added only when auth.oidc is configured.
#pragma once

#include <memory>

#include "catalog/accounts.h"
#include "http/server.h"
#include "web/sso_client.h"
#include "web/web_context.h"

namespace trainwatch::web {

struct SsoContext {
  WebContext web;
  catalog::Accounts& accounts;
  SsoClient& client;  // outlives the routes (the server stops first)
};

void add_sso_routes(http::Router& router, const SsoContext& context);

}  // namespace trainwatch::web
