#include "auth/admin_token_check.h"

#include <string>

#include "auth/sha256.h"
#include "core/constant_time.h"

namespace trainwatch::auth {
namespace {

std::string credential_key(std::string_view token) { return "token:" + sha256_hex(token).substr(0, 12); }

}  // namespace

TokenCheck check_token(const AdminAuth& auth, CredentialKind kind, std::string_view token,
                       std::string_view remote_address) {
  std::optional<Principal> who;
  const GateResult gate = auth.gate().attempt(kind, remote_address, credential_key(token), [&] {
    who = auth.bearer(token);
    return who.has_value();
  });
  if (gate.verdict != GateVerdict::kAccepted) who.reset();
  return TokenCheck{gate, std::move(who)};
}

GateResult check_secret(CredentialGate& gate, CredentialKind kind, std::string_view presented,
                        std::string_view secret, std::string_view remote_address) {
  return gate.attempt(kind, remote_address, credential_key(presented),
                      [&] { return constant_time_equal(presented, secret); });
}

}  // namespace trainwatch::auth
