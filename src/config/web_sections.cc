#include "config/web_sections.h"

#include <algorithm>
#include <set>

#include "core/names.h"
#include "core/time_format.h"

namespace trainwatch::config_detail {
namespace {

bool is_sha256_form(const std::string& token) {
  constexpr std::string_view kPrefix = "sha256:";
  if (token.rfind(kPrefix, 0) != 0 || token.size() != kPrefix.size() + 64) return false;
  return std::all_of(token.begin() + kPrefix.size(), token.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::optional<StatusPageGroup> read_group(Diagnostics& diag, const YAML::Node& node, const std::string& path,
                                          const std::set<std::string>& known) {
  Section s(diag, node, path);
  if (!s.valid()) return std::nullopt;
  StatusPageGroup group;
  if (auto name = s.string("name", true)) group.name = *name;
  if (auto monitors = s.string_list("monitors")) {
    YAML::Node list = s.raw("monitors");
    for (size_t i = 0; i < monitors->size(); ++i) {
      if (known.count((*monitors)[i]) == 0) {
        diag.error(list[i].Mark(), s.key_path("monitors") + "[" + std::to_string(i) + "]",
                   "found '" + (*monitors)[i] + "'; expected the name of a monitor in `monitors`");
      }
    }
    group.monitors = *monitors;
  }
  s.finish();
  return group;
}

std::optional<StatusPageAnnouncement> read_announcement(Diagnostics& diag, const YAML::Node& node,
                                                        const std::string& path) {
  Section s(diag, node, path);
  if (!s.valid()) return std::nullopt;
  StatusPageAnnouncement a;
  bool ok = true;
  auto bounded = [&](const char* key, bool required, size_t max) {
    auto text = s.string(key, required);
    if (text && text->size() > max) {
      diag.error(s.raw(key).Mark(), s.key_path(key),
                 "found " + std::to_string(text->size()) + " bytes; expected at most " + std::to_string(max));
      ok = false;
    }
    if (required && !text) ok = false;
    return text.value_or("");
  };
  a.title = bounded("title", true, kMaxAnnouncementTitleBytes);
  a.text = bounded("text", false, kMaxAnnouncementTextBytes);
  auto read_time = [&](const char* key) -> std::optional<SystemTime> {
    auto text = s.string(key, true);
    if (!text) return std::nullopt;
    auto t = parse_rfc3339(*text);
    if (!t) {
      diag.error(s.raw(key).Mark(), s.key_path(key),
                 "found '" + *text + "'; expected an ISO 8601 (RFC 3339) time such as 2026-05-01T02:00:00Z");
    }
    return t;
  };
  auto from = read_time("from");
  auto until = read_time("until");
  if (from && until && *until <= *from) {
    diag.error(s.raw("until").Mark(), s.key_path("until"),
               "found a time not after `from`; expected a later time");
    ok = false;
  }
  a.from = from.value_or(SystemTime{});
  a.until = until.value_or(SystemTime{});
  a.severity = s.string("severity").value_or("info");
  if (a.severity != "info" && a.severity != "warning" && a.severity != "critical") {
    diag.error(s.raw("severity").Mark(), s.key_path("severity"),
               "found '" + a.severity + "'; expected info, warning or critical");
    ok = false;
  }
  s.finish();
  if (!ok || !from || !until) return std::nullopt;
  return a;
}

}  // namespace

void read_status_pages(Diagnostics& diag, const YAML::Node& node, const std::vector<MonitorConfig>& monitors,
                       std::vector<StatusPageConfig>& out) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsSequence()) {
    diag.error(node.Mark(), "status_pages", describe(node) + "; expected a list of status pages");
    return;
  }
  std::set<std::string> known;
  for (const auto& m : monitors) known.insert(m.name);
  std::set<std::string> slugs;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string path = "status_pages[" + std::to_string(i) + "]";
    Section s(diag, node[i], path);
    if (!s.valid()) continue;
    StatusPageConfig page;
    if (auto slug = s.string("slug", true)) {
      if (std::string problem = name_problem(*slug); !problem.empty()) {
        diag.error(s.raw("slug").Mark(), s.key_path("slug"), "found '" + *slug + "'; " + problem);
      } else if (!slugs.insert(*slug).second) {
        diag.error(s.raw("slug").Mark(), s.key_path("slug"),
                   "found '" + *slug + "' again; expected a unique slug");
      }
      page.slug = *slug;
    }
    if (auto title = s.string("title", true)) page.title = *title;
    if (auto description = s.string("description")) page.description = *description;
    if (YAML::Node groups = s.raw("groups"); groups.IsDefined() && !groups.IsNull()) {
      if (!groups.IsSequence()) {
        diag.error(groups.Mark(), s.key_path("groups"), describe(groups) + "; expected a list of groups");
      } else {
        for (size_t g = 0; g < groups.size(); ++g) {
          auto group =
              read_group(diag, groups[g], s.key_path("groups") + "[" + std::to_string(g) + "]", known);
          if (group) page.groups.push_back(std::move(*group));
        }
      }
    }
    if (YAML::Node list = s.raw("announcements"); list.IsDefined() && !list.IsNull()) {
      if (!list.IsSequence()) {
        diag.error(list.Mark(), s.key_path("announcements"),
                   describe(list) + "; expected a list of announcements");
      } else if (list.size() > kMaxAnnouncementsPerPage) {
        diag.error(list.Mark(), s.key_path("announcements"),
                   "found " + std::to_string(list.size()) + " announcements; expected at most " +
                       std::to_string(kMaxAnnouncementsPerPage));
      } else {
        for (size_t a = 0; a < list.size(); ++a) {
          auto announcement =
              read_announcement(diag, list[a], s.key_path("announcements") + "[" + std::to_string(a) + "]");
          if (announcement) page.announcements.push_back(std::move(*announcement));
        }
      }
    }
    s.finish();
    out.push_back(std::move(page));
  }
}

namespace {

bool is_user_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '@' || c == '-';
  });
}

bool is_base32(std::string_view text) {
  size_t letters = 0;
  for (char c : text) {
    if (c == ' ' || c == '=') continue;
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '2' && c <= '7');
    if (!ok) return false;
    ++letters;
  }
  return letters >= 16;  // 80 bits
}

void read_users(Diagnostics& diag, const YAML::Node& list, std::vector<UserConfig>& out) {
  if (!list.IsSequence()) {
    diag.error(list.Mark(), "auth.users", describe(list) + "; expected a list of users");
    return;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < list.size(); ++i) {
    Section s(diag, list[i], "auth.users[" + std::to_string(i) + "]");
    if (!s.valid()) continue;
    UserConfig user;
    if (auto name = s.string("name", true)) {
      if (!is_user_name(*name)) {
        diag.error(s.raw("name").Mark(), s.key_path("name"),
                   "found '" + *name + "'; expected at most 64 of a-z 0-9 . _ @ -");
      } else if (!seen.insert(*name).second) {
        diag.error(s.raw("name").Mark(), s.key_path("name"),
                   "found '" + *name + "' twice; expected unique names");
      }
      user.name = *name;
    }
    if (auto role = s.string("role", true)) {
      if (*role != "viewer" && *role != "editor" && *role != "admin")
        diag.error(s.raw("role").Mark(), s.key_path("role"),
                   "found '" + *role + "'; expected viewer, editor or admin");
      user.role = *role;
    }
    if (auto hash = s.string("password_hash", true)) {
      if (hash->rfind("$argon2id$", 0) != 0 && hash->rfind("$argon2i$", 0) != 0) {
        diag.error(
            s.raw("password_hash").Mark(), s.key_path("password_hash"),
            "found something that is not an Argon2 hash; expected what `trainwatch hash-password` prints "
            "($argon2id$...)");
      }
      user.password_hash = *hash;
    }
    if (auto secret = s.string("totp_secret")) {
      if (!is_base32(*secret))
        diag.error(s.raw("totp_secret").Mark(), s.key_path("totp_secret"),
                   "found a secret that is not base32 of at least 80 bits; expected at least 16 of A-Z 2-7");
      user.totp_secret = *secret;
    }
    s.finish();
    out.push_back(std::move(user));
  }
}

bool is_http_url(const std::string& url) {
  const bool scheme = url.rfind("https://", 0) == 0 || url.rfind("http://", 0) == 0;
  return scheme && url.find_first_of(" \t\r\n") == std::string::npos;
}

void read_oidc(Diagnostics& diag, const YAML::Node& node, std::optional<OidcConfig>& out) {
  Section s(diag, node, "auth.oidc");
  if (!s.valid()) return;
  OidcConfig oidc;
  auto url = [&](const char* key, std::string& field, const char* expected) {
    auto text = s.string(key, true);
    if (!text) return;
    if (!is_http_url(*text))
      diag.error(s.raw(key).Mark(), s.key_path(key), "found '" + *text + "'; expected " + expected);
    field = *text;
  };
  url("issuer", oidc.issuer, "the provider's issuer URL (https://...), as its discovery document names it");
  url("redirect_url", oidc.redirect_url,
      "this server's public URL followed by /login/oidc/callback (https://monitor.example/login/oidc/callback)");
  if (!oidc.redirect_url.empty() && oidc.redirect_url.find("/login/oidc/callback") == std::string::npos)
    diag.error(s.raw("redirect_url").Mark(), s.key_path("redirect_url"),
               "found '" + oidc.redirect_url + "'; expected it to end in /login/oidc/callback");
  if (auto id = s.string("client_id", true)) oidc.client_id = *id;
  if (auto secret = s.string("client_secret", true)) oidc.client_secret = *secret;
  if (auto scopes = s.string_list("scopes")) {
    if (std::find(scopes->begin(), scopes->end(), "openid") == scopes->end())
      diag.error(s.raw("scopes").Mark(), s.key_path("scopes"),
                 "found no openid; expected a list with openid");
    oidc.scopes = *scopes;
  }
  if (auto claim = s.string("username_claim")) oidc.username_claim = *claim;
  if (auto claim = s.string("groups_claim")) oidc.groups_claim = *claim;
  if (auto text = s.string("button_text")) oidc.button_text = *text;
  if (auto audiences = s.string_list("trusted_audiences")) oidc.trusted_audiences = *audiences;
  YAML::Node mapping = s.raw("role_mapping");
  if (!mapping.IsDefined() || mapping.IsNull()) {
    diag.error(
        s.mark(), s.key_path("role_mapping"),
        "missing; expected a list of {group, role}: nobody can log in through single sign-on without one");
  } else if (!mapping.IsSequence()) {
    diag.error(mapping.Mark(), s.key_path("role_mapping"),
               describe(mapping) + "; expected a list of {group, role}");
  } else {
    for (size_t i = 0; i < mapping.size(); ++i) {
      Section m(diag, mapping[i], s.key_path("role_mapping") + "[" + std::to_string(i) + "]");
      if (!m.valid()) continue;
      OidcRoleMapping entry;
      if (auto group = m.string("group", true)) entry.group = *group;
      if (auto role = m.string("role", true)) {
        if (*role != "viewer" && *role != "editor" && *role != "admin")
          diag.error(m.raw("role").Mark(), m.key_path("role"),
                     "found '" + *role + "'; expected viewer, editor or admin");
        entry.role = *role;
      }
      m.finish();
      oidc.role_mapping.push_back(std::move(entry));
    }
  }
  if (oidc.button_text.empty()) oidc.button_text = "single sign-on";
  s.finish();
  out = std::move(oidc);
}

}  // namespace

void read_auth(Diagnostics& diag, const YAML::Node& node, AuthConfig& out) {
  Section s(diag, node, "auth");
  if (YAML::Node tokens = s.raw("admin_tokens"); tokens.IsDefined() && !tokens.IsNull()) {
    if (!tokens.IsSequence()) {
      diag.error(tokens.Mark(), "auth.admin_tokens", describe(tokens) + "; expected a list of tokens");
    } else {
      for (size_t i = 0; i < tokens.size(); ++i) {
        const std::string key = "auth.admin_tokens[" + std::to_string(i) + "]";
        if (!tokens[i].IsScalar()) {
          diag.error(tokens[i].Mark(), key, describe(tokens[i]) + "; expected a string");
          continue;
        }
        std::string token = diag.expand(tokens[i], key);
        // Short tokens can be guessed; a digest can't be judged, only its form.
        bool hashed = token.rfind("sha256:", 0) == 0;
        if (hashed ? !is_sha256_form(token) : token.size() < 16) {
          diag.error(tokens[i].Mark(), key,
                     hashed ? "found a malformed digest; expected sha256: and 64 lower-case hex digits"
                            : "found a token of " + std::to_string(token.size()) +
                                  " characters; expected at least 16");
          continue;
        }
        out.admin_tokens.push_back(std::move(token));
      }
    }
  }
  if (auto ttl = s.duration("session_ttl")) {
    if (ttl->count() < 60'000)
      diag.error(s.raw("session_ttl").Mark(), "auth.session_ttl", "found less than 1m; expected at least 1m");
    out.session_ttl = *ttl;
  }
  if (YAML::Node users = s.raw("users"); users.IsDefined() && !users.IsNull())
    read_users(diag, users, out.users);
  if (YAML::Node oidc = s.raw("oidc"); oidc.IsDefined() && !oidc.IsNull()) read_oidc(diag, oidc, out.oidc);
  s.finish();
}

void read_retention(Diagnostics& diag, const YAML::Node& node, RetentionConfig& out) {
  Section s(diag, node, "retention");
  if (auto raw = s.duration("raw")) {
    // Hourly rollups are pruned with raw results, and the 7-day uptime reads them.
    if (raw->count() < 7LL * 24 * 3'600'000) {
      diag.error(
          s.raw("raw").Mark(), "retention.raw",
          "found less than 7d; expected at least 7d (the 7-day uptime reads hourly rollups kept as long)");
    }
    out.raw = *raw;
  }
  s.finish();
}

}  // namespace trainwatch::config_detail
