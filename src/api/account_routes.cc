#include "api/account_routes.h"

#include <boost/json.hpp>

#include "core/duration.h"
#include "core/json_text.h"
#include "core/time_format.h"
#include "views/write_access.h"

namespace trainwatch::api {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

// The request's JSON object, or nullopt after answering 400.
std::optional<json::object> body_object(const Request& request, const Responder& respond) {
  boost::system::error_code ec;
  json::value v = json::parse(request.body, ec);
  if (ec || !v.is_object()) {
    respond(Response::problem(400, "expected a JSON object"));
    return std::nullopt;
  }
  return v.as_object();
}

std::string string_field(const json::object& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->value().is_string() ? std::string(it->value().as_string()) : std::string();
}

Response problem_for(const Error& e) { return Response::problem(views::status_for(e), e.message); }

json::object user_json(const auth::UserView& u) {
  return json::object{{"name", u.name},
                      {"role", auth::role_name(u.role)},
                      {"source", u.source},
                      {"second_factor", u.second_factor},
                      {"read_only", u.source == "config"}};
}

json::object token_json(const ApiTokenRecord& t) {
  json::object o{{"id", t.id},
                 {"name", t.name},
                 {"owner", t.owner},
                 {"role", t.role},
                 {"created", format_rfc3339(t.created)}};
  o["expires"] = t.expires ? json::value(format_rfc3339(*t.expires)) : json::value(nullptr);
  o["revoked"] = t.revoked ? json::value(format_rfc3339(*t.revoked)) : json::value(nullptr);
  return o;
}

void list_users(const AccountContext& ctx, const Request& request, const Responder& respond) {
  if (!views::read_allowed(ctx.auth, request, respond, auth::Role::kAdmin)) return;
  json::array users;
  for (const auto& u : ctx.auth.users()) users.push_back(user_json(u));
  respond(Response::json(200, json_text(json::object{{"users", std::move(users)}})));
}

void create_user(const AccountContext& ctx, const Request& request, const Responder& respond) {
  if (!views::write_allowed(ctx.auth, request, respond, auth::Role::kAdmin)) return;
  auto body = body_object(request, respond);
  if (!body) return;
  const std::string name = string_field(*body, "name");
  ctx.accounts.create_user(name, string_field(*body, "role"), string_field(*body, "password"),
                           [ctx, respond, name](const Status& status) {
                             if (!status) return respond(problem_for(status.error()));
                             Response r = Response::json(201, json_text(user_json(*ctx.auth.user(name))));
                             r.headers.emplace_back("Location", "/api/v1/users/" + name);
                             respond(std::move(r));
                           });
}

void update_user(const AccountContext& ctx, const Request& request, const Responder& respond) {
  if (!views::write_allowed(ctx.auth, request, respond, auth::Role::kAdmin)) return;
  auto body = body_object(request, respond);
  if (!body) return;
  const std::string name = request.params.at("name");
  ctx.accounts.update_user(name, string_field(*body, "role"), string_field(*body, "password"),
                           [ctx, respond, name](const Status& status) {
                             if (!status) return respond(problem_for(status.error()));
                             respond(Response::json(200, json_text(user_json(*ctx.auth.user(name)))));
                           });
}

void delete_user(const AccountContext& ctx, const Request& request, const Responder& respond) {
  if (!views::write_allowed(ctx.auth, request, respond, auth::Role::kAdmin)) return;
  ctx.accounts.delete_user(request.params.at("name"), [respond](const Status& status) {
    if (!status) return respond(problem_for(status.error()));
    respond(Response::no_content());
  });
}

void list_tokens(const AccountContext& ctx, const Request& request, const Responder& respond) {
  auto who = views::read_allowed(ctx.auth, request, respond, auth::Role::kViewer);
  if (!who) return;
  auto tokens = ctx.accounts.tokens_for(*who);
  if (!tokens) return respond(problem_for(tokens.error()));
  json::array out;
  for (const auto& t : *tokens) out.push_back(token_json(t));
  respond(Response::json(200, json_text(json::object{{"tokens", std::move(out)}})));
}

void create_token(const AccountContext& ctx, const Request& request, const Responder& respond) {
  auto who = views::write_allowed(ctx.auth, request, respond, auth::Role::kViewer);
  if (!who) return;
  auto body = body_object(request, respond);
  if (!body) return;
  // A user's token is theirs; an admin may make one for another user ("owner").
  std::string owner = string_field(*body, "owner");
  if (owner.empty()) owner = who->user;
  if (owner.empty()) {
    return respond(Response::problem(
        400, "an admin token belongs to nobody: name the token's user in \"owner\", or log in as a user"));
  }
  if (owner != who->user && who->role != auth::Role::kAdmin)
    return respond(Response::problem(403, "only an admin may make a token for another user"));
  const std::string role_text = string_field(*body, "role");
  const auth::Role role = role_text.empty() ? ctx.auth.role_of(owner).value_or(auth::Role::kViewer)
                                            : auth::parse_role(role_text).value_or(auth::Role::kAdmin);
  if (!role_text.empty() && !auth::parse_role(role_text))
    return respond(
        Response::problem(400, "role: found '" + role_text + "'; expected viewer, editor or admin"));
  std::optional<SystemTime> expires;
  if (const std::string in = string_field(*body, "expires_in"); !in.empty()) {
    auto d = parse_duration(in);
    if (!d || d->count() <= 0)
      return respond(
          Response::problem(400, "expires_in: found '" + in + "'; expected a duration such as 90d"));
    expires = ctx.clock.system_time() + *d;
  }
  ctx.accounts.create_token(owner, string_field(*body, "name"), role, expires,
                            [respond](Result<catalog::NewToken> made) {
                              if (!made) return respond(problem_for(made.error()));
                              json::object o = token_json(made->record);
                              o["token"] = made->token;  // this once; only its digest is kept
                              Response r = Response::json(201, json_text(o));
                              r.headers.emplace_back("Location", "/api/v1/tokens/" + made->record.id);
                              r.headers.emplace_back("Cache-Control", "no-store");
                              respond(std::move(r));
                            });
}

void revoke_token(const AccountContext& ctx, const Request& request, const Responder& respond) {
  auto who = views::write_allowed(ctx.auth, request, respond, auth::Role::kViewer);
  if (!who) return;
  ctx.accounts.revoke_token(request.params.at("id"), *who, [respond](const Status& status) {
    if (!status) return respond(problem_for(status.error()));
    respond(Response::no_content());
  });
}

void list_audit(const AccountContext& ctx, const Request& request, const Responder& respond) {
  if (!views::read_allowed(ctx.auth, request, respond, auth::Role::kAdmin)) return;
  AuditQuery q;
  try {
    if (auto it = request.query.find("before"); it != request.query.end())
      q.before_id = std::stoll(it->second);
    if (auto it = request.query.find("limit"); it != request.query.end()) q.limit = std::stoi(it->second);
  } catch (const std::exception&) {
    return respond(Response::problem(400, "before and limit: expected whole numbers"));
  }
  auto rows = ctx.store.audit(q);
  if (!rows) return respond(Response::problem(503, "cannot read the audit log: " + rows.error().message));
  json::array out;
  for (const AuditEntry& e : *rows) {
    out.push_back(json::object{{"id", e.id},
                               {"at", format_rfc3339(e.at)},
                               {"actor", e.actor},
                               {"actor_kind", e.actor_kind},
                               {"action", e.action},
                               {"source", e.source}});
  }
  respond(Response::json(200, json_text(json::object{{"entries", std::move(out)}})));
}

}  // namespace

void add_account_routes(http::Router& router, const AccountContext& ctx) {
  const std::vector<std::string> get = {"GET", "HEAD"};
  router.add(get, "/api/v1/users", [ctx](const Request& r, const Responder& w) { list_users(ctx, r, w); });
  router.add("POST", "/api/v1/users",
             [ctx](const Request& r, const Responder& w) { create_user(ctx, r, w); });
  router.add("PATCH", "/api/v1/users/{name}",
             [ctx](const Request& r, const Responder& w) { update_user(ctx, r, w); });
  router.add("DELETE", "/api/v1/users/{name}",
             [ctx](const Request& r, const Responder& w) { delete_user(ctx, r, w); });
  router.add(get, "/api/v1/tokens", [ctx](const Request& r, const Responder& w) { list_tokens(ctx, r, w); });
  router.add("POST", "/api/v1/tokens",
             [ctx](const Request& r, const Responder& w) { create_token(ctx, r, w); });
  router.add("DELETE", "/api/v1/tokens/{id}",
             [ctx](const Request& r, const Responder& w) { revoke_token(ctx, r, w); });
  router.add(get, "/api/v1/audit", [ctx](const Request& r, const Responder& w) { list_audit(ctx, r, w); });
}

}  // namespace trainwatch::api
