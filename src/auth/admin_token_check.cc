#include "auth/admin_token_check.h"

#include <string>

#include "auth/sha256.h"

namespace trainwatch::auth {

TokenCheck check_token(const AdminAuth& auth, CredentialKind kind, std::string_view token,
                       std::string_view remote_address) {
  const std::string key = "token:" + sha256_hex(token).substr(0, 12);
  std::optional<Principal> who;
  const GateResult gate = auth.gate().attempt(kind, remote_address, key, [&] {
    who = auth.bearer(token);
    return who.has_value();
  });
  if (gate.verdict != GateVerdict::kAccepted) who.reset();
  return TokenCheck{gate, std::move(who)};
}

}  // namespace trainwatch::auth
