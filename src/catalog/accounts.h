// Accounts: the users and API tokens kept in the store, and the one path that changes
// them. AdminAuth decides with what it is given; this keeps it given the store's truth:
// refresh() reads both tables and hands them over, on a timer every
// AdminAuth::kAccountsRefresh (what another replica changed reaches this one within
// that), and after each change made through this replica once it commits (so its own
// writes apply at once). A change is answered only after it committed.
//
// Rules the API and the dashboard share: names are unique across config and stored users,
// and a config user is changed only in the file ("accounts.read_only"); a token acts with
// at most its owner's role; the last stored admin cannot be removed or lowered while no
// admin comes from the config or an admin token (nobody could manage users after).
//
// Threading: every call is safe from any thread; `done` runs on the store's writer thread
// (or the caller's, for a refusal).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "auth/admin_auth.h"
#include "core/clock.h"
#include "core/result.h"
#include "core/timer.h"
#include "storage/store.h"

namespace trainwatch::catalog {

// A token as made: its record, and the token itself, which is shown this once.
struct NewToken {
  ApiTokenRecord record;
  std::string token;
};

class Accounts {
 public:
  static constexpr int kMinPasswordLength = 12;

  Accounts(Store& store, auth::AdminAuth& auth, const Clock& clock, TimerFactory& timers);
  ~Accounts();

  // Reads the stored users and tokens and hands them to the auth. Then every
  // AdminAuth::kAccountsRefresh until the Accounts is destroyed. A read that fails keeps
  // what the auth had (logged, throttled) and is tried again at the next tick.
  Status start();
  Status refresh();

  using Done = std::function<void(const Status&)>;
  // A user made by an admin (source "local"): "accounts.invalid" for a bad name, role or
  // a password shorter than kMinPasswordLength, "accounts.exists" for a taken name.
  void create_user(const std::string& name, const std::string& role, const std::string& password, Done done);
  // A user's new role and/or password (empty: unchanged).
  void update_user(const std::string& name, const std::string& role, const std::string& password, Done done);
  void delete_user(const std::string& name, Done done);
  // The user single sign-on vouched for: the provider's `issuer` and `subject` are who the
  // person is (OpenID Connect Core 5.7), never the name its token claims. The user of that
  // subject, found whatever `name` says now, or at its first login one made under `name`;
  // either way given `role`, what the provider's claims map to now. `done` gets the user's
  // name once committed (their session opens then), or "accounts.exists" when `name` is a
  // config or local user's, or another subject's: nobody signs on as someone else.
  void upsert_sso_user(const std::string& name, const std::string& issuer, const std::string& subject,
                       auth::Role role, std::function<void(Result<std::string>)> done);

  // A token for `owner` acting with `role` (at most the owner's), valid until `expires`.
  void create_token(const std::string& owner, const std::string& name, auth::Role role,
                    std::optional<SystemTime> expires, std::function<void(Result<NewToken>)> done);
  // Revokes a token; `by` may revoke only their own tokens unless they are an admin.
  void revoke_token(const std::string& id, const auth::Principal& by, Done done);
  // Tokens as listed: every one for an admin, a user's own otherwise.
  Result<std::vector<ApiTokenRecord>> tokens_for(const auth::Principal& reader);

 private:
  void tick();
  // Writes `op`; once committed, refreshes and then tells `done`, so the answer comes
  // after the auth knows the change. A full queue is told at once.
  void commit(WriteOp op, Done done);
  // Whether removing or lowering `name` leaves someone able to manage users.
  bool leaves_an_admin(const std::string& name) const;

  Store& store_;
  auth::AdminAuth& auth_;
  // Held across a refresh's read and hand-over: two refreshes at once (the timer's and one
  // after a write) would otherwise race, and the older read could land last and bring a
  // revoked token back until the next tick.
  std::mutex refresh_mu_;
  const Clock& clock_;
  std::unique_ptr<Timer> timer_;
};

}  // namespace trainwatch::catalog
