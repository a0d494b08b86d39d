#include "config/reload_scope.h"

namespace trainwatch {
namespace {

bool same_oidc(const std::optional<OidcConfig>& a, const std::optional<OidcConfig>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  if (a->role_mapping.size() != b->role_mapping.size()) return false;
  for (size_t i = 0; i < a->role_mapping.size(); ++i) {
    const OidcRoleMapping& x = a->role_mapping[i];
    const OidcRoleMapping& y = b->role_mapping[i];
    if (x.group != y.group || x.role != y.role) return false;
  }
  return a->issuer == b->issuer && a->client_id == b->client_id && a->client_secret == b->client_secret &&
         a->redirect_url == b->redirect_url && a->scopes == b->scopes &&
         a->username_claim == b->username_claim && a->groups_claim == b->groups_claim &&
         a->button_text == b->button_text && a->trusted_audiences == b->trusted_audiences;
}

}  // namespace

std::vector<std::string> keys_needing_restart(const Config& running, const Config& next) {
  std::vector<std::string> keys;
  const ServerConfig& a = running.server;
  const ServerConfig& b = next.server;
  if (a.listen.host != b.listen.host || a.listen.port != b.listen.port) keys.push_back("server.listen");
  if (a.data_dir != b.data_dir) keys.push_back("server.data_dir");
  if (a.advertise != b.advertise) keys.push_back("server.advertise");
  if (a.max_connections != b.max_connections) keys.push_back("server.max_connections");
  if (a.max_connections_per_address != b.max_connections_per_address)
    keys.push_back("server.max_connections_per_address");
  if (running.store.url != next.store.url) keys.push_back("store.url");
  if (!same_oidc(running.auth.oidc, next.auth.oidc)) keys.push_back("auth.oidc");
  return keys;
}

}  // namespace trainwatch
