// A token presented as `Authorization: Bearer <token>` or at /login — an admin token or a
// user's API token — checked through the auth's CredentialGate (auth/credential_gate.h):
// not at all while the client's source is out of attempts, and counted when wrong. Its
// credential key is "token:" and the first 12 hex digits of its SHA-256, so one wrong
// token repeated from many sources (a revoked token still in many clients' configs)
// counts against itself, while random guesses, each its own key, never drain the key of
// the right token. A shared secret (jobs.token, the agents') is checked the same way, in
// the same gate, by check_secret.
#pragma once

#include <optional>
#include <string_view>

#include "auth/admin_auth.h"
#include "auth/credential_gate.h"
#include "auth/principal.h"

namespace trainwatch::auth {

struct TokenCheck {
  GateResult gate;
  std::optional<Principal> who;  // set when gate.verdict is kAccepted
};

TokenCheck check_token(const AdminAuth& auth, CredentialKind kind, std::string_view token,
                       std::string_view remote_address);

// `presented` against `secret`, through `gate` under the key check_token uses: a source out
// of attempts is not checked, and a wrong one counts against it and against itself.
GateResult check_secret(CredentialGate& gate, CredentialKind kind, std::string_view presented,
                        std::string_view secret, std::string_view remote_address);

}  // namespace trainwatch::auth
