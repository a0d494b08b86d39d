// The config sections of the pages and their access: public status pages, admin
// authentication and how long raw results are kept. Plain values, validated by
// read_web_sections() (config/web_sections.h) like every other section.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"

namespace trainwatch {

struct StatusPageGroup {
  std::string name;
  std::vector<std::string> monitors;  // names of monitors in the config, in display order
};

// A banner a status page shows above everything else from `from` (inclusive) until
// `until` (exclusive): planned maintenance, a known slowdown, a notice.
struct StatusPageAnnouncement {
  std::string title;  // at most kMaxAnnouncementTitleBytes
  std::string text;   // may be empty; at most kMaxAnnouncementTextBytes
  SystemTime from{};
  SystemTime until{};    // after `from`
  std::string severity;  // "info" (the default), "warning" or "critical": the banner's colour
};

inline constexpr size_t kMaxAnnouncementTitleBytes = 200;
inline constexpr size_t kMaxAnnouncementTextBytes = 4096;
// Per status page: a page is a glance, and a config file a person reads.
inline constexpr size_t kMaxAnnouncementsPerPage = 20;

struct StatusPageConfig {
  std::string slug;  // [a-z0-9._-]+, unique: /status/{slug}
  std::string title;
  std::string description;
  std::vector<StatusPageGroup> groups;
  std::vector<StatusPageAnnouncement> announcements;  // in the file's order
};

// A person who logs in to the dashboard with a password, managed as code. Users made in
// the dashboard live in the store instead; the same rules hold for both.
struct UserConfig {
  std::string name;           // [a-z0-9._@-]+, unique among config users
  std::string role;           // "viewer", "editor" or "admin" (auth/role.h)
  std::string password_hash;  // Argon2id, as `trainwatch hash-password` prints it
  std::string totp_secret;    // base32; empty: no second factor
};

// Single sign-on through an OpenID Connect provider (auth/id_token.h, web/sso_routes.h).
struct OidcRoleMapping {
  std::string group;
  std::string role;  // "viewer", "editor" or "admin"
};

struct OidcConfig {
  std::string issuer;  // https://idp.example/realms/x: discovery under it
  std::string client_id;
  std::string client_secret;  // often "${ENV}"
  std::string redirect_url;   // the server's public base + /login/oidc/callback
  std::vector<std::string> scopes{"openid", "profile", "email", "groups"};
  std::string username_claim = "preferred_username";  // falls back to `sub`
  std::string groups_claim = "groups";
  std::vector<OidcRoleMapping> role_mapping;  // highest match wins; none: no login
  std::string button_text;                    // "Log in with <button_text>"
  // Audiences an ID token may name beside client_id (when its azp is client_id): services
  // the provider issues one token for. Empty: a token for anyone else too is refused.
  std::vector<std::string> trusted_audiences;
};

struct AuthConfig {
  // Admin tokens as written: a plain token (often "${ENV_VAR}") or "sha256:<64 hex>" so
  // the file itself need not hold the secret. The auth component hashes plain ones when
  // it starts and keeps only digests. TRAINWATCH_ADMIN_TOKEN in the environment adds one.
  std::vector<std::string> admin_tokens;
  // How long a login session lasts; after that the login page asks again.
  Millis session_ttl{12 * 3'600'000};
  std::vector<UserConfig> users;
  std::optional<OidcConfig> oidc;
};

struct RetentionConfig {
  // Raw check results older than this are pruned; hourly and daily uptime rollups stay.
  Millis raw{14LL * 24 * 3'600'000};
};

}  // namespace trainwatch
