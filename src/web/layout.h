// What every dashboard page shares: the HTML response with the pages' security headers,
// and the layout's model (the nav's status pages, the session for the log-out form).
#pragma once

#include <optional>
#include <string>

#include <boost/json.hpp>

#include "auth/admin_auth.h"
#include "http/server.h"
#include "web/routes.h"

namespace trainwatch::web {

http::Response html(int status, std::string body);

std::optional<auth::Session> session_of(const WebContext& ctx, const http::Request& request);

boost::json::object layout_model(const WebContext& ctx, const http::Request& request, std::string title);

}  // namespace trainwatch::web
