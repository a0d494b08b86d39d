// People and their credentials as the store keeps them: users made in the dashboard or
// the API, the API tokens users made, and the audit log of every write. Plain values;
// auth/ decides what they allow, storage/ keeps them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/clock.h"

namespace trainwatch {

struct UserRecord {
  std::string name;
  std::string role;           // "viewer", "editor" or "admin"
  std::string password_hash;  // Argon2id; empty for a user who signs in only through OIDC
  std::string totp_secret;    // base32; empty: no second factor
  std::string source;         // "local" (made by an admin) or "oidc" (made at first sign-on)
  SystemTime created{};
  // A single sign-on user's identity at its provider (OpenID Connect Core 5.7: `iss` and
  // `sub`, never the user name a token claims); empty for others, and for a user made by
  // single sign-on before these were kept, until its next login.
  std::string oidc_issuer;
  std::string oidc_subject;
};

// An API token a user made. Only the SHA-256 of the token is kept: the token is shown
// once, when it is made.
struct ApiTokenRecord {
  std::string id;     // 16 random hex digits, what the dashboard and API name it by
  std::string name;   // what its owner called it ("ci", "laptop")
  std::string owner;  // the user's name
  std::string role;   // at most the owner's role when made; acts as min(this, owner's now)
  std::string digest;
  SystemTime created{};
  std::optional<SystemTime> expires;
  std::optional<SystemTime> revoked;
};

// One write through the API or the dashboard: who, what, when and from where.
struct AuditEntry {
  int64_t id = 0;  // the store's; 0 before it is stored
  SystemTime at{};
  std::string actor;       // a user, "token <name> of <user>", or "admin token"
  std::string actor_kind;  // "user", "user_token", "service_token"
  std::string action;      // "POST /api/v1/monitors/db/pause"
  std::string source;      // the client's address
};

}  // namespace trainwatch
