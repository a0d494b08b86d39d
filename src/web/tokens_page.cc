#include "core/time_format.h"
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

// What the answer to a form adds to the page: the token just made (shown this once), or
// what was wrong and with which field.
struct TokenNotice {
  std::optional<catalog::NewToken> made;
  std::string error;
  int status = 200;
};

void page(const PeoplePagesContext& ctx, const Request& request, const Responder& respond,
          const auth::Principal& who, const TokenNotice& notice = {}) {
  json::object m = layout_model(ctx.web, request, "API tokens · trainwatch");
  const bool admin = who.role == auth::Role::kAdmin;
  m["admin"] = admin;
  m["owner"] = who.user;
  if (auto session = session_of(ctx.web, request)) m["csrf"] = session->csrf_token;
  json::array rows;
  if (auto tokens = ctx.accounts.tokens_for(who)) {
    const SystemTime now = ctx.web.clock.system_time();
    for (auto it = tokens->rbegin(); it != tokens->rend(); ++it) rows.push_back(token_row(*it, now));
  } else {
    m["list_error"] = tokens.error().message;
  }
  m["tokens"] = std::move(rows);
  // A token's role is at most its owner's: the form offers the owner's role first (an
  // admin picks the owner among the users, each with their role; static/forms.js keeps
  // the roles offered within the one picked).
  json::array roles;
  roles.push_back(json::object{{"value", ""}, {"label", "the owner's role"}, {"selected", true}});
  for (auth::Role r : {auth::Role::kViewer, auth::Role::kEditor, auth::Role::kAdmin}) {
    if (auth::allows(who.role, r))
      roles.push_back(
          json::object{{"value", auth::role_name(r)}, {"label", auth::role_name(r)}, {"selected", false}});
  }
  m["roles"] = std::move(roles);
  if (admin) {
    json::array owners;
    for (const auto& user : ctx.web.auth.users()) {
      owners.push_back(json::object{
          {"name", user.name}, {"role", auth::role_name(user.role)}, {"selected", user.name == who.user}});
    }
    m["owners"] = std::move(owners);
  }
  json::array expiries;
  for (const auto& e : expiry_choices())
    expiries.push_back(json::object{{"value", e.value}, {"label", e.label}});
  m["expiries"] = std::move(expiries);
  if (notice.made) {
    m["made"] = json::object{{"token", notice.made->token}, {"name", notice.made->record.name}};
  }
  if (!notice.error.empty()) {
    m["error"] = json::object{{"text", notice.error},
                              {"field", error_field(notice.error, {"name", "role", "expires", "owner"})}};
  }
  Response r = html(notice.status, render_page("tokens", m));
  // The answer to a POST carries the token: no cache may keep it, nor any of these pages.
  r.headers.emplace_back("Cache-Control", "no-store");
  respond(std::move(r));
}

void show_tokens(const PeoplePagesContext& ctx, const Request& request, const Responder& respond) {
  if (auto who = page_reader(ctx.web, request, respond, auth::Role::kViewer))
    page(ctx, request, respond, *who);
}

void create_token(const PeoplePagesContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx.web, request, form, respond, auth::Role::kViewer)) return;
  auto session = session_of(ctx.web, request);
  if (!session) return respond(redirect("/login"));
  const auth::Principal who = session->who;
  auto refuse = [&](std::string message, int status = 400) {
    page(ctx, request, respond, who, TokenNotice{std::nullopt, std::move(message), status});
  };
  // A user's token is theirs; an admin may make one for another user.
  std::string owner = who.user;
  if (who.role == auth::Role::kAdmin && !form["owner"].empty()) owner = form["owner"];
  if (owner.empty())
    return refuse("owner: a token belongs to a user; name one (you logged in with an admin token)");
  // No role picked: the owner's own.
  std::optional<auth::Role> role =
      form["role"].empty() ? ctx.web.auth.role_of(owner) : auth::parse_role(form["role"]);
  if (!role && form["role"].empty())
    return refuse("owner: found '" + owner + "'; expected the name of a user");
  if (!role) return refuse("role: found '" + form["role"] + "'; expected viewer, editor or admin");
  const Expiry expiry = parse_expiry(form["expires"]);
  if (!expiry.error.empty()) return refuse(expiry.error);
  std::optional<SystemTime> expires;
  if (expiry.length) expires = ctx.web.clock.system_time() + *expiry.length;
  ctx.accounts.create_token(
      owner, form["name"], *role, expires, [ctx, request, respond, who](Result<catalog::NewToken> made) {
        if (!made) {
          return page(ctx, request, respond, who,
                      TokenNotice{std::nullopt, made.error().message, views::status_for(made.error())});
        }
        page(ctx, request, respond, who, TokenNotice{std::move(*made), "", 201});
      });
}

void revoke(const PeoplePagesContext& ctx, const Request& request, const Responder& respond) {
  std::map<std::string, std::string> form;
  if (!form_allowed(ctx.web, request, form, respond, auth::Role::kViewer)) return;
  auto session = session_of(ctx.web, request);
  if (!session) return respond(redirect("/login"));
  const auth::Principal who = session->who;
  ctx.accounts.revoke_token(request.params.at("id"), who, [ctx, request, respond, who](const Status& status) {
    if (status) return respond(redirect("/settings/tokens"));
    page(ctx, request, respond, who,
         TokenNotice{std::nullopt, status.error().message, views::status_for(status.error())});
  });
}

}  // namespace

void add_tokens_page(http::Router& router, const PeoplePagesContext& ctx) {
  router.add(std::vector<std::string>{"GET", "HEAD"}, "/settings/tokens",
             [ctx](const Request& r, const Responder& w) { show_tokens(ctx, r, w); });
  router.add("POST", "/settings/tokens",
             [ctx](const Request& r, const Responder& w) { create_token(ctx, r, w); });
  router.add("POST", "/settings/tokens/{id}/revoke",
             [ctx](const Request& r, const Responder& w) { revoke(ctx, r, w); });
}

}  // namespace trainwatch::web
