#include "catalog/accounts.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "auth/password_hash.h"
#include "auth/sha256.h"
#include "core/log_throttle.h"

namespace trainwatch::catalog {
namespace {

bool is_user_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '@' || c == '-';
  });
}

Error invalid(std::string message) { return Error{"accounts.invalid", std::move(message)}; }

}  // namespace

Accounts::Accounts(Store& store, auth::AdminAuth& auth, const Clock& clock, TimerFactory& timers)
    : store_(store), auth_(auth), clock_(clock), timer_(timers.make_timer()) {}

Accounts::~Accounts() { timer_->cancel(); }

Status Accounts::start() {
  Status first = refresh();
  tick();
  return first;
}

void Accounts::tick() {
  timer_->arm_after(clock_, auth::AdminAuth::kAccountsRefresh, [this] {
    static LogThrottle failures(std::chrono::seconds(60));
    if (Status s = refresh(); !s.ok()) {
      if (auto n = failures.admit(clock_.monotonic_time()))
        spdlog::warn("cannot read users and API tokens ({} time(s)): {}", *n, s.error().message);
    }
    tick();
  });
}

Status Accounts::refresh() {
  std::lock_guard lock(refresh_mu_);
  auto users = store_.users();
  if (!users) return users.error();
  auto tokens = store_.api_tokens();
  if (!tokens) return tokens.error();
  auth_.set_accounts(std::move(*users), std::move(*tokens));
  return Ok{};
}

void Accounts::commit(WriteOp op, Done done) {
  auto answer = std::make_shared<Done>(std::move(done));
  const bool queued = store_.write(std::move(op), [this, answer](const Status& status) {
    if (status.ok()) (void)refresh();
    (*answer)(status);
  });
  if (!queued) (*answer)(Error{"store.unavailable", "the store's queue is full; try again"});
}

bool Accounts::leaves_an_admin(const std::string& name) const {
  if (auth_.has_admin_tokens()) return true;
  const auto users = auth_.users();
  return std::any_of(users.begin(), users.end(),
                     [&](const auth::UserView& u) { return u.name != name && u.role == auth::Role::kAdmin; });
}

void Accounts::create_user(const std::string& name, const std::string& role, const std::string& password,
                           Done done) {
  if (!is_user_name(name))
    return done(invalid("name: found '" + name + "'; expected at most 64 of a-z 0-9 . _ @ -"));
  if (!auth::parse_role(role))
    return done(invalid("role: found '" + role + "'; expected viewer, editor or admin"));
  if (password.size() < kMinPasswordLength) {
    return done(invalid("password: found " + std::to_string(password.size()) +
                        " characters; expected at least " + std::to_string(kMinPasswordLength)));
  }
  if (auth_.user(name)) return done(Error{"accounts.exists", "a user named " + name + " exists"});
  std::string hash = auth::hash_password(password);
  if (hash.empty()) return done(Error{"accounts.unavailable", "cannot hash the password (out of memory)"});
  UserRecord user{name, role, std::move(hash), "", "local", clock_.system_time(), "", ""};
  commit(SaveUser{std::move(user)}, std::move(done));
}

void Accounts::update_user(const std::string& name, const std::string& role, const std::string& password,
                           Done done) {
  auto current = auth_.user(name);
  if (!current) return done(Error{"accounts.not_found", "no user named " + name});
  if (current->source == "config")
    return done(Error{"accounts.read_only", name + " comes from the config file; change it there"});
  if (!role.empty() && !auth::parse_role(role))
    return done(invalid("role: found '" + role + "'; expected viewer, editor or admin"));
  if (!password.empty() && password.size() < kMinPasswordLength) {
    return done(invalid("password: found " + std::to_string(password.size()) +
                        " characters; expected at least " + std::to_string(kMinPasswordLength)));
  }
  if (!role.empty() && role != "admin" && current->role == auth::Role::kAdmin && !leaves_an_admin(name))
    return done(Error{"accounts.in_use", name + " is the last admin; make another admin first"});
  auto stored = store_.users();
  if (!stored) return done(stored.error());
  auto it = std::find_if(stored->begin(), stored->end(), [&](const UserRecord& u) { return u.name == name; });
  if (it == stored->end()) return done(Error{"accounts.not_found", "no user named " + name});
  UserRecord user = *it;
  if (!role.empty()) user.role = role;
  if (!password.empty()) {
    user.password_hash = auth::hash_password(password);
    if (user.password_hash.empty())
      return done(Error{"accounts.unavailable", "cannot hash the password (out of memory)"});
  }
  commit(SaveUser{std::move(user)}, std::move(done));
}

void Accounts::delete_user(const std::string& name, Done done) {
  auto current = auth_.user(name);
  if (!current) return done(Error{"accounts.not_found", "no user named " + name});
  if (current->source == "config")
    return done(Error{"accounts.read_only", name + " comes from the config file; remove it there"});
  if (current->role == auth::Role::kAdmin && !leaves_an_admin(name))
    return done(Error{"accounts.in_use", name + " is the last admin; make another admin first"});
  commit(DeleteUser{name}, std::move(done));
}

void Accounts::upsert_sso_user(const std::string& name, const std::string& issuer, const std::string& subject,
                               auth::Role role, std::function<void(Result<std::string>)> done) {
  auto stored = store_.users();
  if (!stored) return done(stored.error());
  const std::string role_word(auth::role_name(role));
  auto bound = std::find_if(stored->begin(), stored->end(), [&](const UserRecord& u) {
    return u.oidc_subject == subject && u.oidc_issuer == issuer;
  });
  UserRecord user;
  if (bound != stored->end()) {
    if (bound->role == role_word) return done(bound->name);
    user = *bound;  // its name stays what it was made with
  } else {
    auto current = auth_.user(name);
    if (current && current->source != "oidc") {
      return done(Error{"accounts.exists", "a " + current->source + " user named " + name +
                                               " exists; single sign-on cannot take it over"});
    }
    if (!is_user_name(name)) {
      return done(invalid("the provider's user name '" + name +
                          "' (auth.oidc.username_claim) is not at most 64 of a-z 0-9 . _ @ -"));
    }
    auto named =
        std::find_if(stored->begin(), stored->end(), [&](const UserRecord& u) { return u.name == name; });
    if (named != stored->end() && !named->oidc_subject.empty()) {
      return done(Error{"accounts.exists", "the user " + name +
                                               " is another single sign-on account's (the provider's subject "
                                               "differs); ask an admin"});
    }
    // New, or made before subjects were kept: bound to this one from now on.
    user =
        named != stored->end() ? *named : UserRecord{name, "", "", "", "oidc", clock_.system_time(), "", ""};
    user.oidc_issuer = issuer;
    user.oidc_subject = subject;
  }
  user.role = role_word;
  commit(SaveUser{user}, [name = user.name, done = std::move(done)](const Status& status) {
    if (status.ok()) return done(name);
    if (status.error().code == "store.exists")
      return done(Error{"accounts.exists", "the user " + name + " is someone else's; ask an admin"});
    done(status.error());
  });
}

void Accounts::create_token(const std::string& owner, const std::string& name, auth::Role role,
                            std::optional<SystemTime> expires, std::function<void(Result<NewToken>)> done) {
  if (name.empty() || name.size() > 64) return done(invalid("name: expected 1 to 64 characters"));
  auto owner_role = auth_.role_of(owner);
  if (!owner_role) return done(Error{"accounts.not_found", "no user named " + owner});
  if (!auth::allows(*owner_role, role)) {
    return done(invalid("role: " + owner + " has the " + std::string(auth::role_name(*owner_role)) +
                        " role; a token cannot have more"));
  }
  if (expires && *expires <= clock_.system_time()) return done(invalid("expires: found a time in the past"));
  const std::string secret = auth::random_token();
  const std::string id = auth::random_token().substr(0, 16);
  if (secret.empty() || id.empty()) return done(Error{"accounts.unavailable", "no randomness for a token"});
  NewToken made{ApiTokenRecord{id, name, owner, std::string(auth::role_name(role)), "", clock_.system_time(),
                               expires, std::nullopt},
                "tw_" + secret};
  made.record.digest = auth::sha256_hex(made.token);
  ApiTokenRecord record = made.record;
  commit(SaveApiToken{std::move(record)},
         [made = std::move(made), done = std::move(done)](const Status& status) {
           if (!status.ok()) return done(status.error());
           done(made);
         });
}

void Accounts::revoke_token(const std::string& id, const auth::Principal& by, Done done) {
  auto all = store_.api_tokens();
  if (!all) return done(all.error());
  auto it = std::find_if(all->begin(), all->end(), [&](const ApiTokenRecord& t) { return t.id == id; });
  if (it == all->end() || it->revoked) return done(Error{"accounts.not_found", "no live token " + id});
  if (by.role != auth::Role::kAdmin && it->owner != by.user)
    return done(Error{"accounts.forbidden", "only its owner or an admin may revoke token " + id});
  commit(RevokeApiToken{id, clock_.system_time()}, std::move(done));
}

Result<std::vector<ApiTokenRecord>> Accounts::tokens_for(const auth::Principal& reader) {
  auto all = store_.api_tokens();
  if (!all) return all.error();
  if (reader.role == auth::Role::kAdmin) return all;
  std::erase_if(*all, [&](const ApiTokenRecord& t) { return t.owner != reader.user; });
  return all;
}

}  // namespace trainwatch::catalog
