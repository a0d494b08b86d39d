#include "auth/admin_token_check.h"

#include <string>

#include "auth/sha256.h"

namespace trainwatch::auth {

GateResult check_admin_token(const AdminAuth& auth, CredentialKind kind, std::string_view token,
                             std::string_view remote_address) {
  const std::string key = "token:" + sha256_hex(token).substr(0, 12);
  return auth.gate().attempt(kind, remote_address, key, [&] { return auth.token_valid(token); });
}

}  // namespace trainwatch::auth
