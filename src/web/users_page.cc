#include "views/write_access.h"
#include "web/dashboard_common.h"
#include "web/pages.h"
#include "web/people_pages.h"
#include "web/people_rows.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

// A refused form: the accounts' message, the field it names and (for a form on a user's
// row) which user.
struct UserFormError {
  std::string text;
  std::string user;
  int status = 400;
};

void page(const PeoplePagesContext& ctx, const Request& request, const Responder& respond,
          const UserFormError& error = {}) {
  json::object m = layout_model(ctx.web, request, "Users · trainwatch");
  if (auto session = session_of(ctx.web, request)) m["csrf"] = session->csrf_token;
  json::array rows;
  for (const auto& u : ctx.web.auth.users()) {
    json::object row = user_row(u);
    json::array roles;
    for (auth::Role r : {auth::Role::kViewer, auth::Role::kEditor, auth::Role::kAdmin})
      roles.push_back(json::object{{"value", auth::role_name(r)}, {"selected", r == u.role}});
    row["roles"] = std::move(roles);
    rows.push_back(std::move(row));
  }
  m["users"] = std::move(rows);
  m["min_password"] = catalog::Accounts::kMinPasswordLength;
  if (!error.text.empty()) {
    m["error"] = json::object{{"text", error.text},
                              {"field", error_field(error.text, {"name", "role", "password"})},
                              {"user", error.user}};
  }
  Response r = html(error.text.empty() ? 200 : error.status, render_page("users", m));
  r.headers.emplace_back("Cache-Control", "no-store");
  respond(std::move(r));
}

// After a write: back to the list, or the page again with what the accounts refused.
catalog::Accounts::Done answer(const PeoplePagesContext& ctx, const Request& request,
                               const Responder& respond, std::string user) {
  return [ctx, request, respond, user = std::move(user)](const Status& status) {
    if (status) return respond(redirect("/settings/users"));
    page(ctx, request, respond,
         UserFormError{status.error().message, user, views::status_for(status.error())});
  };
}

void show_users(const PeoplePagesContext& ctx, const Request& request, const Responder& respond) {
  if (page_reader(ctx.web, request, respond, auth::Role::kAdmin)) page(ctx, request, respond);
}

void create_user(const PeoplePagesContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx.web, request, form, respond, auth::Role::kAdmin)) return;
  ctx.accounts.create_user(form["name"], form["role"], form["password"], answer(ctx, request, respond, ""));
}

void change_role(const PeoplePagesContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx.web, request, form, respond, auth::Role::kAdmin)) return;
  const std::string name = request.params.at("name");
  // An empty role would mean "unchanged" to the accounts; on this form it is a mistake.
  if (form["role"].empty())
    return page(ctx, request, respond, {"role: expected viewer, editor or admin", name});
  ctx.accounts.update_user(name, form["role"], "", answer(ctx, request, respond, name));
}

void reset_password(const PeoplePagesContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx.web, request, form, respond, auth::Role::kAdmin)) return;
  const std::string name = request.params.at("name");
  if (form["password"].empty())
    return page(ctx, request, respond, {"password: expected a new password", name});
  ctx.accounts.update_user(name, "", form["password"], answer(ctx, request, respond, name));
}

void remove(const PeoplePagesContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx.web, request, form, respond, auth::Role::kAdmin)) return;
  const std::string name = request.params.at("name");
  ctx.accounts.delete_user(name, answer(ctx, request, respond, name));
}

}  // namespace

void add_users_page(http::Router& router, const PeoplePagesContext& ctx) {
  router.add(std::vector<std::string>{"GET", "HEAD"}, "/settings/users",
             [ctx](const Request& r, const Responder& w) { show_users(ctx, r, w); });
  router.add("POST", "/settings/users",
             [ctx](const Request& r, const Responder& w) { create_user(ctx, r, w); });
  router.add("POST", "/settings/users/{name}/role",
             [ctx](const Request& r, const Responder& w) { change_role(ctx, r, w); });
  router.add("POST", "/settings/users/{name}/password",
             [ctx](const Request& r, const Responder& w) { reset_password(ctx, r, w); });
  router.add("POST", "/settings/users/{name}/delete",
             [ctx](const Request& r, const Responder& w) { remove(ctx, r, w); });
}

}  // namespace trainwatch::web
