// AdminAuth: who a request acts for (auth/principal.h), and so what it may do
// (auth/role.h). Credentials:
//   - admin tokens (config or environment): service tokens with the admin role, kept only
//     as SHA-256 digests;
//   - users from the config (auth.users) and from the store (made by an admin), who log
//     in with a password (Argon2id, auth/password_hash.h) and, when they have one, a
//     TOTP code (auth/totp.h); or through single sign-on, which opens a session for the
//     principal it vouches for (open_session);
//   - users' API tokens (core/accounts.h), kept as SHA-256 digests, acting with at most
//     their owner's current role.
// A token proves itself as `Authorization: Bearer <token>` (API clients) or once at the
// login page, which trades it for a session.
//
// Stored accounts change under every replica (another replica's admin revokes a token):
// set_accounts() replaces them from the store, and the server calls it at least every
// kAccountsRefresh, so a revoked token or removed user is refused within that on every
// replica. A change made through this replica applies at once.
//
// Sessions: a random 256-bit id in a cookie (HttpOnly, SameSite=Strict, Secure behind
// https) and, per session, a random CSRF token that every form and every write from the
// dashboard's script must echo. SameSite=Strict already keeps other sites' forms from
// carrying the cookie; the CSRF token covers browsers and proxies that drop SameSite.
//
// Bounds: at most kMaxSessions live sessions; a login beyond that evicts the session
// closest to expiry. Sessions expire after auth.session_ttl and do not survive a restart
// (everyone logs in again: sessions are cheap, secrets on disk are not).
//
// Guessing: every check of a token or password goes through gate()
// (auth/credential_gate.h, whose throttle's header has the threat model): wrong ones are
// counted per source and per credential, a source out of attempts is answered 429
// unchecked, and nobody waits for another source's failures.
//
// Reload: reconfigure() replaces the tokens and config users (SIGHUP). A session is worth
// what opened it: one opened with a token ends when that token is gone (removed, revoked,
// expired, its owner removed); one opened by a user ends when the user is removed, and
// acts with the user's role now.
//
// Threading: every call is safe from any thread (one mutex around tokens and sessions;
// the gate has its own).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/credential_gate.h"
#include "auth/principal.h"
#include "config/web_config.h"
#include "core/accounts.h"
#include "core/clock.h"
#include "core/result.h"

namespace trainwatch::auth {

struct Session {
  std::string id;
  std::string csrf_token;
  MonoTime expires{};
  Principal who;
  // The SHA-256 of the token it was opened with; empty for a password or single sign-on.
  std::string credential;
};

// A user as the dashboard lists them: from the config or the store.
struct UserView {
  std::string name;
  Role role = Role::kViewer;
  std::string source;  // "config", "local" or "oidc"
  bool second_factor = false;
};

// Why a password login failed, as the login page words it.
enum class LoginRefusal { kWrongCredentials, kNeedsCode, kWrongCode, kThrottled };

class AdminAuth {
 public:
  static constexpr size_t kMaxSessions = 1000;
  // How often the server reads the stored accounts again (set_accounts): the bound on how
  // long a token revoked on another replica still works here.
  static constexpr Millis kAccountsRefresh{500};

  AdminAuth(const AuthConfig& config, const Clock& clock);

  // Takes the tokens, users and session TTL of `config`. Returns true when tokens or
  // users changed; sessions whose credential is gone have then ended.
  bool reconfigure(const AuthConfig& config);

  // Replaces the stored users and API tokens (read from the store). Sessions of users no
  // longer there end; a session whose user's role changed acts with the new role.
  void set_accounts(std::vector<UserRecord> users, std::vector<ApiTokenRecord> tokens);

  // False when no admin token, no user and no single sign-on is configured: then nothing
  // can be changed through HTTP, and every reader is treated as an admin (a single-user
  // server). Single sign-on alone turns it on: its users are made at their first login,
  // and until then the dashboard's private views must not be open to all.
  bool enabled() const;
  // Who a bearer token acts for: an admin token, or a user's live API token.
  std::optional<Principal> bearer(std::string_view token) const;
  bool token_valid(std::string_view token) const { return bearer(token).has_value(); }
  Millis session_ttl() const;

  bool has_admin_tokens() const;
  // The users of both sources, config first, by name.
  std::vector<UserView> users() const;
  std::optional<UserView> user(std::string_view name) const;
  // The live role of a user, nullopt when there is none of that name.
  std::optional<Role> role_of(std::string_view user) const;

  // Where every check of a token or password passes: throttled and counted. Const:
  // readers that merely look at a token (views/audience.h) count their failures too, or
  // they would be an unthrottled oracle.
  CredentialGate& gate() const { return gate_; }

  // A new session for a valid token (an admin token or a user's API token, with its
  // role); nullopt for a wrong one. Callers check the token through gate() first
  // (auth/admin_token_check.h); this checks it again under the lock that inserts the
  // session, for a reload in between.
  std::optional<Session> login(std::string_view token);
  // A new session for a user's password (and TOTP code, for a user with a second
  // factor), checked through gate() with the user's name as the credential key: a wrong
  // name, password or code counts against `address` and the name; a code is accepted
  // once (a replayed one is wrong).
  struct PasswordLogin {
    std::optional<Session> session;
    LoginRefusal refusal = LoginRefusal::kWrongCredentials;
    Millis retry_after{};  // kThrottled
  };
  PasswordLogin login_user(std::string_view name, std::string_view password, std::string_view code,
                           std::string_view address);
  // A session for a principal another party vouched for (single sign-on).
  std::optional<Session> open_session(Principal who);

  // Where each authorized write is reported: the audit log (the server wires it to the
  // store, which calls `recorded` once the row is committed or refused). Unset: writes are
  // not audited (tests of other parts).
  using Recorded = std::function<void(const Status&)>;
  using AuditSink = std::function<void(AuditEntry, Recorded recorded)>;
  void set_audit_sink(AuditSink sink);
  // Reports one write `who` is allowed to make: `action` as "METHOD /path". `recorded`,
  // when given, runs once the row is stored (or refused), on the store's thread; at once
  // when no sink is set.
  void audit(const Principal& who, std::string action, std::string source, Recorded recorded = {}) const;
  void logout(std::string_view session_id);
  std::optional<Session> session(std::string_view session_id) const;

 private:
  bool digest_known(const std::string& digest) const;  // mu_ held
  // The user of that name: config first (a stored one of the same name is ignored).
  const UserRecord* find_user(std::string_view name) const;                           // mu_ held
  std::optional<Session> insert_session(Principal who, std::string credential = {});  // mu_ held
  std::optional<Principal> principal_of_digest(const std::string& digest) const;      // mu_ held
  // Ends the sessions of users gone, and lowers the role of those whose role fell.
  void reconcile_sessions();  // mu_ held

  const Clock& clock_;
  mutable std::mutex mu_;
  std::vector<std::string> digests_;  // sorted, so two token sets compare as sets
  std::vector<UserRecord> config_users_;
  std::vector<UserRecord> stored_users_;
  std::map<std::string, ApiTokenRecord, std::less<>> tokens_;   // by digest, live ones only
  std::map<std::string, int64_t, std::less<>> last_code_step_;  // by user: TOTP replay guard
  Millis ttl_;
  bool single_sign_on_ = false;  // auth.oidc is set
  AuditSink audit_sink_;
  std::map<std::string, Session, std::less<>> sessions_;  // by id
  mutable CredentialGate gate_;                           // has its own locks
};

// 32 random bytes from the OS's CSPRNG, as 64 hex digits.
std::string random_token();

}  // namespace trainwatch::auth
