#include "web/dashboard_common.h"

#include "auth/form.h"
#include "auth/request_auth.h"
#include "views/browser_request.h"
#include "views/write_access.h"
#include "web/pages.h"

namespace trainwatch::web {

namespace json = boost::json;

http::Response html(int status, std::string body) {
  http::Response r;
  r.status = status;
  r.content_type = "text/html; charset=utf-8";
  r.body = std::move(body);
  // Pages load nothing from elsewhere and run only our own scripts.
  r.headers.emplace_back(
      "Content-Security-Policy",
      "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "same-origin");
  return r;
}

http::Response redirect(std::string location) {
  http::Response r;
  r.status = 303;
  r.body = "";
  r.headers.emplace_back("Location", std::move(location));
  return r;
}

std::optional<auth::Session> session_of(const WebContext& ctx, const http::Request& request) {
  return ctx.auth.session(views::session_id_of(request));
}

json::object layout_model(const WebContext& ctx, const http::Request& request, const std::string& title) {
  json::object m;
  m["page_title"] = title;
  m["dashboard"] = true;
  json::array pages;
  for (const auto& p : *ctx.status_pages->get())
    pages.push_back(json::object{{"slug", p.slug}, {"title", p.title}});
  m["status_pages"] = std::move(pages);
  if (auto s = session_of(ctx, request)) {
    m["session"] =
        json::object{{"csrf", s->csrf_token}, {"admin", auth::allows(s->who.role, auth::Role::kAdmin)}};
  }
  return m;
}

std::optional<auth::Principal> page_reader(const WebContext& ctx, const http::Request& request,
                                           const http::Responder& respond, auth::Role needed) {
  auto session = session_of(ctx, request);
  if (!session) {
    respond(redirect("/login"));
    return std::nullopt;
  }
  if (!auth::allows(session->who.role, needed)) {
    json::object m = layout_model(ctx, request, "Not allowed · trainwatch");
    m["needed"] = auth::role_name(needed);
    m["held"] = auth::role_name(session->who.role);
    respond(html(403, render_page("forbidden", m)));
    return std::nullopt;
  }
  return std::move(session->who);
}

namespace {

// Who may post this form (form_allowed), not yet audited.
std::optional<auth::Principal> form_principal(const WebContext& ctx, const http::Request& request,
                                              std::map<std::string, std::string>& form,
                                              const http::Responder& respond, auth::Role needed) {
  // A cookie rides along with whatever the browser sends, from whichever page.
  if (auto refusal = views::cross_origin_refusal(request)) {
    respond(std::move(*refusal));
    return std::nullopt;
  }
  form = auth::parse_form(request.body);
  auto check = auth::check_write(ctx.auth, views::session_id_of(request), form["csrf"]);
  if (check.access == auth::WriteAccess::kAllowed) {
    if (!auth::allows(check.who->role, needed)) {
      respond(views::role_refused(*check.who, needed));
      return std::nullopt;
    }
    return std::move(check.who);
  }
  if (check.access == auth::WriteAccess::kNoCredentials) {
    respond(redirect("/login"));
  } else {
    respond(http::Response::problem(403, "the form's CSRF token is missing or wrong for this session"));
  }
  return std::nullopt;
}

}  // namespace

bool form_allowed(const WebContext& ctx, const http::Request& request,
                  std::map<std::string, std::string>& form, const http::Responder& respond,
                  auth::Role needed) {
  auto who = form_principal(ctx, request, form, respond, needed);
  if (who) ctx.auth.audit(*who, request.method + " " + request.path, request.remote_address);
  return who.has_value();
}

bool form_allowed_recorded(const WebContext& ctx, const http::Request& request,
                           std::map<std::string, std::string>& form, const http::Responder& respond,
                           auth::Role needed, http::Responder& answer) {
  auto who = form_principal(ctx, request, form, respond, needed);
  if (!who) return false;
  views::HeldAnswer held = views::hold_until_recorded(respond);
  answer = held.answer;
  ctx.auth.audit(*who, request.method + " " + request.path, request.remote_address, std::move(held.recorded));
  return true;
}

}  // namespace trainwatch::web
