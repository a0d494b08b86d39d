// What the dashboard's people pages (/settings/tokens, /settings/users, /audit) show of a
// token, a user and an audit entry, as template rows; the token form's expiry choices;
// and which form field an accounts error is about. Pure: no I/O, time comes in.
//
// No row carries a token's digest or a user's password hash: the pages never hold them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "auth/admin_auth.h"
#include "core/accounts.h"
#include "core/clock.h"

namespace trainwatch::web {

// A token's row: id, name, owner, role, created, expires ("never"), and its state in
// words: "live", "expired" or "revoked" (with when); `live` when it can still be revoked.
boost::json::object token_row(const ApiTokenRecord& token, SystemTime now);

// A user's row: name, role, source in words, second factor "yes"/"no", and `read_only`
// for a user from the config file (changed only there).
boost::json::object user_row(const auth::UserView& user);

// An audit entry's row: id, when, who, what, from where.
boost::json::object audit_row(const AuditEntry& entry, SystemTime now);

// The token form's expiry choices, in the order the form lists them; the first is the
// default. `value` is what the form posts ("90d", "never").
struct ExpiryChoice {
  std::string_view value;
  std::string_view label;
};
const std::vector<ExpiryChoice>& expiry_choices();
// A posted expiry: the length, nullopt for "never"; an error message for anything that is
// not one of the choices.
struct Expiry {
  std::optional<Millis> length;
  std::string error;
};
Expiry parse_expiry(std::string_view value);

// The form field an accounts error names ("password: found 5 characters; …" -> "password"),
// among `fields`; "" when it names none.
std::string error_field(std::string_view message, const std::vector<std::string_view>& fields);

}  // namespace trainwatch::web
