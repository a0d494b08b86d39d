// The dashboard's pages for people, each a thin layer over catalog::Accounts (so the
// rules and errors are the API's, api/account_routes.h) and the audit log:
//   GET  /settings/tokens                 viewer  one's own API tokens (an admin: every
//   POST /settings/tokens                         user's, with the owner); a form makes
//   POST /settings/tokens/{id}/revoke             one, shown once on the answer to the POST
//   GET  /settings/users                  admin   every user; forms add a user, change a
//   POST /settings/users                          role, reset a password, remove a user
//   POST /settings/users/{name}/role|password|delete
//   GET  /audit?before=<id>               admin   the audit log, newest first, paged
// Pages answer with Cache-Control: no-store (one of them carries a token). A session
// below the role a page needs gets a 403 page with none of its data.
#pragma once

#include "catalog/accounts.h"
#include "http/server.h"
#include "web/web_context.h"

namespace trainwatch::web {

struct PeoplePagesContext {
  WebContext web;
  catalog::Accounts& accounts;
};

void add_tokens_page(http::Router& router, const PeoplePagesContext& context);
void add_users_page(http::Router& router, const PeoplePagesContext& context);
void add_audit_page(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
