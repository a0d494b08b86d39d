// The table of provider types: the `type:` values a channel may have, which of each
// type's keys are secrets, and which types page someone.
#include "alerting/providers/providers.h"

#include <algorithm>

namespace trainwatch::alerting {

namespace {
constexpr const char* kUrlSecret[] = {"webhook_url"};
constexpr const char* kWebhookSecrets[] = {"url", "secret", "headers"};
constexpr const char* kEmailSecrets[] = {"password"};
constexpr const char* kPagerDutySecrets[] = {"routing_key"};
constexpr const char* kAlertmanagerSecrets[] = {"headers"};
constexpr const char* kNtfySecrets[] = {"token"};
constexpr const char* kTelegramSecrets[] = {"bot_token"};

constexpr ProviderType kProviderTypes[] = {
    {"slack", make_slack, kUrlSecret},
    {"discord", make_discord, kUrlSecret},
    {"webhook", make_webhook, kWebhookSecrets},
    {"email", make_email, kEmailSecrets},
    {"pagerduty", make_pagerduty, kPagerDutySecrets, /*pages=*/true, /*takes_template=*/false},
    {"alertmanager", make_alertmanager, kAlertmanagerSecrets, /*pages=*/true, /*takes_template=*/false},
    {"ntfy", make_ntfy, kNtfySecrets},
    {"telegram", make_telegram, kTelegramSecrets},
};
}  // namespace

std::span<const ProviderType> provider_types() { return kProviderTypes; }

const ProviderType* find_provider_type(std::string_view type) {
  for (const auto& t : kProviderTypes) {
    if (type == t.name) return &t;
  }
  return nullptr;
}

bool is_secret_key(std::string_view type, std::string_view key) {
  const ProviderType* t = find_provider_type(type);
  return t != nullptr && std::any_of(t->secret_keys.begin(), t->secret_keys.end(),
                                     [&](const char* secret) { return key == secret; });
}

bool pages_someone(std::string_view type) {
  const ProviderType* t = find_provider_type(type);
  return t != nullptr && t->pages;
}

}  // namespace trainwatch::alerting
