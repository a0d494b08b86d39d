// The dashboard's cookie names. Over HTTPS they carry the `__Host-` prefix: a browser
// accepts such a cookie only from a secure origin, with Secure, Path=/ and no Domain, so
// no plain-HTTP page and no other host under the same domain can set or overwrite it.
// Over plain HTTP that prefix cannot be set, so the names are the bare ones; there the
// Origin rule (auth/request_origin.h) and the server-side pre-login session are what
// keep another port's page from logging a browser in.
//
// A request reads only the name of its own scheme: over HTTPS a bare `tw_session` (which
// any plain-HTTP page of the host could have planted) is ignored.
#pragma once

#include <string>

namespace trainwatch::auth {

inline std::string session_cookie_name(bool https) { return https ? "__Host-tw_session" : "tw_session"; }
// The pre-login session of the login form (auth/login_forms.h).
inline std::string login_form_cookie_name(bool https) { return https ? "__Host-tw_login" : "tw_login"; }

// The browser a single sign-on login was started from (auth/oidc_logins.h). SameSite=Lax,
// not Strict: the provider's redirect back is a cross-site navigation, and a Strict
// cookie would not come with it.
inline std::string oidc_login_cookie_name(bool https) { return https ? "__Host-tw_oidc" : "tw_oidc"; }

}  // namespace trainwatch::auth
