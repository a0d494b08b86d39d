#include "auth/admin_auth.h"

#include <algorithm>

#include <openssl/rand.h>

#include "auth/password_hash.h"
#include "auth/sha256.h"
#include "auth/totp.h"
#include "core/constant_time.h"

namespace trainwatch::auth {

std::string random_token() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    // Without entropy no session id is safe; refusing is better than guessable ids.
    return {};
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

namespace {

std::vector<std::string> digests_of(const AuthConfig& config) {
  constexpr std::string_view kPrefix = "sha256:";
  std::vector<std::string> digests;
  digests.reserve(config.admin_tokens.size());
  for (const std::string& token : config.admin_tokens) {
    digests.push_back(token.rfind(kPrefix, 0) == 0 ? token.substr(kPrefix.size()) : auth::sha256_hex(token));
  }
  std::sort(digests.begin(), digests.end());
  digests.erase(std::unique(digests.begin(), digests.end()), digests.end());
  return digests;
}

std::vector<UserRecord> users_of(const AuthConfig& config) {
  std::vector<UserRecord> users;
  users.reserve(config.users.size());
  for (const UserConfig& u : config.users) {
    users.push_back(UserRecord{u.name, u.role, u.password_hash, u.totp_secret, "config", {}, "", ""});
  }
  return users;
}

bool same_users(const std::vector<UserRecord>& a, const std::vector<UserRecord>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const UserRecord& x, const UserRecord& y) {
    return x.name == y.name && x.role == y.role && x.password_hash == y.password_hash &&
           x.totp_secret == y.totp_secret;
  });
}

Role role_or_viewer(const std::string& name) { return parse_role(name).value_or(Role::kViewer); }

}  // namespace

AdminAuth::AdminAuth(const AuthConfig& config, const Clock& clock)
    : clock_(clock),
      digests_(digests_of(config)),
      config_users_(users_of(config)),
      ttl_(config.session_ttl),
      single_sign_on_(config.oidc.has_value()),
      gate_(clock) {}

bool AdminAuth::reconfigure(const AuthConfig& config) {
  std::vector<std::string> next = digests_of(config);
  std::vector<UserRecord> next_users = users_of(config);
  std::lock_guard lock(mu_);
  ttl_ = config.session_ttl;
  single_sign_on_ = config.oidc.has_value();
  const bool tokens_changed = next != digests_;
  const bool users_changed = !same_users(next_users, config_users_);
  if (!tokens_changed && !users_changed) return false;
  config_users_ = std::move(next_users);
  if (tokens_changed) digests_ = std::move(next);
  reconcile_sessions();
  return true;
}

void AdminAuth::set_accounts(std::vector<UserRecord> users, std::vector<ApiTokenRecord> tokens) {
  std::map<std::string, ApiTokenRecord, std::less<>> live;
  for (ApiTokenRecord& t : tokens) {
    if (!t.revoked) live.emplace(t.digest, std::move(t));
  }
  std::lock_guard lock(mu_);
  stored_users_ = std::move(users);
  tokens_ = std::move(live);
  reconcile_sessions();
}

void AdminAuth::reconcile_sessions() {
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    Session& s = it->second;
    // A session opened with a token lives as long as the token does, with its role now;
    // one opened by a user, as long as the user, with the user's role now.
    std::optional<Principal> now;
    if (!s.credential.empty()) {
      now = principal_of_digest(s.credential);
    } else if (const UserRecord* user = find_user(s.who.user)) {
      now = Principal{s.who.name, role_or_viewer(user->role), s.who.kind, s.who.user};
    }
    if (!now) {
      it = sessions_.erase(it);
      continue;
    }
    s.who = std::move(*now);
    ++it;
  }
}

const UserRecord* AdminAuth::find_user(std::string_view name) const {
  for (const UserRecord& u : config_users_) {
    if (u.name == name) return &u;
  }
  for (const UserRecord& u : stored_users_) {
    if (u.name == name) return &u;
  }
  return nullptr;
}

bool AdminAuth::enabled() const {
  std::lock_guard lock(mu_);
  return !digests_.empty() || !config_users_.empty() || !stored_users_.empty() || single_sign_on_;
}

bool AdminAuth::has_admin_tokens() const {
  std::lock_guard lock(mu_);
  return !digests_.empty();
}

std::vector<UserView> AdminAuth::users() const {
  std::lock_guard lock(mu_);
  std::vector<UserView> out;
  auto add = [&](const UserRecord& u) {
    if (std::any_of(out.begin(), out.end(), [&](const UserView& v) { return v.name == u.name; })) return;
    out.push_back(UserView{u.name, role_or_viewer(u.role), u.source, !u.totp_secret.empty()});
  };
  for (const UserRecord& u : config_users_) add(u);
  for (const UserRecord& u : stored_users_) add(u);
  return out;
}

std::optional<UserView> AdminAuth::user(std::string_view name) const {
  std::lock_guard lock(mu_);
  const UserRecord* u = find_user(name);
  if (u == nullptr) return std::nullopt;
  return UserView{u->name, role_or_viewer(u->role), u->source, !u->totp_secret.empty()};
}

std::optional<Role> AdminAuth::role_of(std::string_view name) const {
  std::lock_guard lock(mu_);
  const UserRecord* u = find_user(name);
  if (u == nullptr) return std::nullopt;
  return role_or_viewer(u->role);
}

Millis AdminAuth::session_ttl() const {
  std::lock_guard lock(mu_);
  return ttl_;
}

bool AdminAuth::digest_known(const std::string& digest) const {
  bool found = false;
  // Every digest is compared, so the time taken does not say which one matched.
  for (const std::string& d : digests_) found = constant_time_equal(digest, d) || found;
  return found;
}

std::optional<Principal> AdminAuth::bearer(std::string_view token) const {
  if (token.empty()) return std::nullopt;
  const std::string digest = auth::sha256_hex(token);
  std::lock_guard lock(mu_);
  return principal_of_digest(digest);
}

std::optional<Principal> AdminAuth::principal_of_digest(const std::string& digest) const {
  if (digest_known(digest)) return Principal{"admin token", Role::kAdmin, Principal::Kind::kServiceToken, ""};
  // Looked up by its digest: the map's compare leaks at most which digest prefix was
  // near, which says nothing about a token (SHA-256 is one-way).
  auto it = tokens_.find(digest);
  if (it == tokens_.end()) return std::nullopt;
  const ApiTokenRecord& t = it->second;
  if (t.expires && *t.expires <= clock_.system_time()) return std::nullopt;
  const UserRecord* owner = find_user(t.owner);
  if (owner == nullptr) return std::nullopt;
  // A token never acts above its owner's role now: lowering a user lowers their tokens.
  const Role role = std::min(role_or_viewer(t.role), role_or_viewer(owner->role));
  return Principal{"token " + t.name + " of " + t.owner, role, Principal::Kind::kUserToken, t.owner};
}

std::optional<Session> AdminAuth::login(std::string_view token) {
  const std::string digest = token.empty() ? std::string() : auth::sha256_hex(token);
  std::lock_guard lock(mu_);
  // Checked under the lock that inserts the session: a reload or refresh that drops this
  // token either comes first (refused here) or after (and ends this session too).
  auto who = digest.empty() ? std::nullopt : principal_of_digest(digest);
  if (!who) return std::nullopt;
  return insert_session(std::move(*who), digest);
}

AdminAuth::PasswordLogin AdminAuth::login_user(std::string_view name, std::string_view password,
                                               std::string_view code, std::string_view address) {
  PasswordLogin out;
  // Passed (the attempt given back) when the password is right; the code is part of it.
  auto check = [&]() -> bool {
    std::optional<UserRecord> user;
    {
      std::lock_guard lock(mu_);
      if (const UserRecord* u = find_user(name)) user = *u;
    }
    if (!user) {
      // As long as a wrong password, so the time taken does not say which names exist.
      static const std::string kUnknownUserHash = hash_password(random_token());
      verify_password(kUnknownUserHash, password);
      return false;
    }
    // The hash is checked outside the lock: it takes ~0.1 s on purpose.
    if (user->password_hash.empty() || !verify_password(user->password_hash, password)) return false;
    if (!user->totp_secret.empty()) {
      if (code.empty()) {
        out.refusal = LoginRefusal::kNeedsCode;
        return true;  // the password was right: nothing was guessed wrong
      }
      const auto secret = decode_base32_secret(user->totp_secret);
      const int64_t step =
          secret ? matching_totp_step(*secret, code, clock_.system_time()).value_or(-1) : int64_t{-1};
      std::lock_guard lock(mu_);
      auto last = last_code_step_.find(user->name);
      if (step < 0 || (last != last_code_step_.end() && step <= last->second)) {
        out.refusal = LoginRefusal::kWrongCode;
        return false;
      }
      last_code_step_[user->name] = step;
    }
    std::lock_guard lock(mu_);
    // The user may have been removed while the hash was checked.
    const UserRecord* now = find_user(name);
    if (now == nullptr) return false;
    out.session =
        insert_session(Principal{now->name, role_or_viewer(now->role), Principal::Kind::kUser, now->name});
    return true;
  };
  const GateResult gate = gate_.attempt(CredentialKind::kLogin, address, "user:" + std::string(name), check);
  if (gate.verdict == GateVerdict::kThrottled) {
    out.refusal = LoginRefusal::kThrottled;
    out.retry_after = gate.retry_after;
  }
  return out;
}

void AdminAuth::set_audit_sink(AuditSink sink) {
  std::lock_guard lock(mu_);
  audit_sink_ = std::move(sink);
}

void AdminAuth::audit(const Principal& who, std::string action, std::string source, Recorded recorded) const {
  AuditSink sink;
  {
    std::lock_guard lock(mu_);
    sink = audit_sink_;
  }
  if (!sink) {
    if (recorded) recorded(Ok{});
    return;
  }
  sink(AuditEntry{0, clock_.system_time(), who.name, std::string(kind_name(who.kind)), std::move(action),
                  std::move(source)},
       std::move(recorded));
}

std::optional<Session> AdminAuth::open_session(Principal who) {
  std::lock_guard lock(mu_);
  return insert_session(std::move(who));
}

std::optional<Session> AdminAuth::insert_session(Principal who, std::string credential) {
  Session s{random_token(), random_token(), {}, std::move(who), std::move(credential)};
  if (s.id.empty() || s.csrf_token.empty()) return std::nullopt;
  const MonoTime now = clock_.monotonic_time();
  s.expires = now + ttl_;
  std::erase_if(sessions_, [&](const auto& entry) { return entry.second.expires <= now; });
  if (sessions_.size() >= kMaxSessions) {
    auto oldest = std::min_element(sessions_.begin(), sessions_.end(), [](const auto& a, const auto& b) {
      return a.second.expires < b.second.expires;
    });
    sessions_.erase(oldest);
  }
  sessions_.emplace(s.id, s);
  return s;
}

void AdminAuth::logout(std::string_view session_id) {
  std::lock_guard lock(mu_);
  if (auto it = sessions_.find(session_id); it != sessions_.end()) sessions_.erase(it);
}

std::optional<Session> AdminAuth::session(std::string_view session_id) const {
  if (session_id.empty()) return std::nullopt;
  std::lock_guard lock(mu_);
  auto it = sessions_.find(session_id);
  if (it == sessions_.end() || it->second.expires <= clock_.monotonic_time()) return std::nullopt;
  return it->second;
}

}  // namespace trainwatch::auth
