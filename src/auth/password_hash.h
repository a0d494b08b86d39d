// Local users' passwords, hashed with Argon2id (libsodium's crypto_pwhash_str): a
// memory-hard function, so a stolen database or config file costs an attacker 64 MiB and
// ~0.1 s per guess. The hash string carries its own salt and parameters, so hashes made
// with other parameters (a newer libsodium, `argon2` on the command line) verify too.
//
// Cost bound: a verification takes 64 MiB for ~0.1 s. At most kMaxConcurrentVerifications
// run at once in the process; more wait their turn (login is rare, and its guessing is
// throttled before it gets here: auth/admin_auth.h).
#pragma once

#include <string>
#include <string_view>

namespace trainwatch::auth {

inline constexpr int kMaxConcurrentVerifications = 2;

// "$argon2id$v=19$m=65536,t=2,p=1$...". Empty when the system is out of memory.
std::string hash_password(std::string_view password);

// Whether `password` matches `hash` (any crypto_pwhash_str form). False for a malformed hash.
bool verify_password(std::string_view hash, std::string_view password);

// Whether `text` has the form of a hash verify_password() reads: what the config checks.
bool looks_like_password_hash(std::string_view text);

}  // namespace trainwatch::auth
