// How both stores save a user (SaveUser) so that one single sign-on subject can never take
// over another's user, nor a local one (OpenID Connect Core 5.7: `iss` + `sub` is who a
// person is; the name a token claims is not unique). Both run the same statement after
// their INSERT; the store's one writer (SQLite) or the statement itself (PostgreSQL,
// replicas) makes the check and the write one step.
//
// A save that carries no subject (an admin's change, a local user) updates the user as
// before and keeps any subject it has. A save that carries one updates only a single
// sign-on user of that same subject, or one made before subjects were kept (it is bound
// to this subject from then on); anything else changes nothing, and the save is refused.
#pragma once

#include <string>

#include "core/result.h"

namespace trainwatch {

inline constexpr const char* kSaveUserConflict =
    "ON CONFLICT (name) DO UPDATE SET role = excluded.role, password_hash = excluded.password_hash, "
    "totp_secret = excluded.totp_secret, "
    "oidc_issuer = CASE WHEN excluded.oidc_subject = '' THEN users.oidc_issuer ELSE excluded.oidc_issuer END, "
    "oidc_subject = CASE WHEN excluded.oidc_subject = '' THEN users.oidc_subject ELSE excluded.oidc_subject END "
    "WHERE excluded.oidc_subject = '' OR (users.source = 'oidc' AND (users.oidc_subject = '' OR "
    "(users.oidc_issuer = excluded.oidc_issuer AND users.oidc_subject = excluded.oidc_subject)))";

// The refusal of a save the statement above did not apply.
inline Error another_subjects_user(const std::string& name) {
  return make_error("store.exists", "the user " + name +
                                        " is someone else's: a local user, or another "
                                        "single sign-on subject's");
}

}  // namespace trainwatch
