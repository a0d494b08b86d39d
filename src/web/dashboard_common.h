// What every dashboard page shares: the HTML answer with its security headers, the
// redirect after a form, the layout's model (nav, session) and the form's access check.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <boost/json.hpp>

#include "auth/admin_auth.h"
#include "http/server.h"
#include "web/routes.h"

namespace trainwatch::web {

http::Response html(int status, std::string body);
// 303 See Other: after a form post, the browser GETs `location`.
http::Response redirect(std::string location);

std::optional<auth::Session> session_of(const WebContext& ctx, const http::Request& request);

// What every dashboard page's layout needs: the nav's status pages and the session (with
// `admin` for a session that may manage users and read the audit log: the nav shows
// those links only then).
boost::json::object layout_model(const WebContext& ctx, const http::Request& request,
                                 const std::string& title);

// Pages only a signed-in user of at least `needed` may open (users, tokens, the audit
// log): the session's principal, or nullopt after answering (to /login without a session,
// an HTML 403 naming the role it needs otherwise, with none of the page's data).
std::optional<auth::Principal> page_reader(const WebContext& ctx, const http::Request& request,
                                           const http::Responder& respond, auth::Role needed);

// Form posts from the dashboard: from this server's own origin (views/browser_request.h),
// with the session cookie plus the form's CSRF token, from a user with at least `needed`.
// Parses the form into `form`; reports the write to the audit log; otherwise answers (to
// /login without a session, 403 for another origin, a bad token or a role below
// `needed`) and returns false.
bool form_allowed(const WebContext& ctx, const http::Request& request,
                  std::map<std::string, std::string>& form, const http::Responder& respond,
                  auth::Role needed);
// As form_allowed, for a form that stores nothing of its own (a test send): `answer` is
// the responder to answer it with, which holds the answer until the audit row is
// committed or refused (views::write_allowed_recorded).
bool form_allowed_recorded(const WebContext& ctx, const http::Request& request,
                           std::map<std::string, std::string>& form, const http::Responder& respond,
                           auth::Role needed, http::Responder& answer);

}  // namespace trainwatch::web
