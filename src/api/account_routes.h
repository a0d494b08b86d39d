// Users, API tokens and the audit log over HTTP (catalog/accounts.h has the rules):
//   GET    /api/v1/users                 admin   every user, config and stored
//   POST   /api/v1/users                 admin   {"name","role","password"} -> 201
//   PATCH  /api/v1/users/{name}          admin   {"role"?, "password"?}
//   DELETE /api/v1/users/{name}          admin   the user and their tokens
//   GET    /api/v1/tokens                viewer  one's own tokens (every token for an admin)
//   POST   /api/v1/tokens                viewer  {"name","role"?,"expires_in"?,"owner"?} -> 201,
//                                                with the token itself, shown this once
//   DELETE /api/v1/tokens/{id}           viewer  one's own (any, for an admin) -> 204
//   GET    /api/v1/audit?before=&limit=  admin   newest first
// Writes answer once committed; what the store refuses is a problem+json.
#pragma once

#include "auth/admin_auth.h"
#include "catalog/accounts.h"
#include "core/clock.h"
#include "http/server.h"
#include "storage/store.h"

namespace trainwatch::api {

struct AccountContext {
  catalog::Accounts& accounts;
  auth::AdminAuth& auth;
  Store& store;
  const Clock& clock;
};

void add_account_routes(http::Router& router, const AccountContext& context);

}  // namespace trainwatch::api
