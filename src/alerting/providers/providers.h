// The notification providers, one per file in this folder. Each factory reads and
// validates its channel's keys through ChannelFields (errors collected there) and returns
// nullptr when they are not valid.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "alerting/channel_fields.h"
#include "alerting/provider.h"

namespace trainwatch::alerting {

std::unique_ptr<Provider> make_slack(ChannelFields& fields);
std::unique_ptr<Provider> make_discord(ChannelFields& fields);
std::unique_ptr<Provider> make_webhook(ChannelFields& fields);
std::unique_ptr<Provider> make_email(ChannelFields& fields);
std::unique_ptr<Provider> make_pagerduty(ChannelFields& fields);
std::unique_ptr<Provider> make_alertmanager(ChannelFields& fields);
std::unique_ptr<Provider> make_ntfy(ChannelFields& fields);
std::unique_ptr<Provider> make_telegram(ChannelFields& fields);

struct ProviderType {
  const char* name;
  std::unique_ptr<Provider> (*make)(ChannelFields&);
  // The keys whose values are secrets (a URL with a token, a password, a routing key,
  // headers that carry credentials): write-only over the API and the dashboard, never
  // shown, logged or echoed in an error.
  std::span<const char* const> secret_keys;
  // Whether an alert there pages someone ("act now": PagerDuty, an Alertmanager routing to
  // on-call), so that a warning, which asks for no action, is kept out of it.
  bool pages = false;
  // Whether a channel of this type may carry a `template:` (message_template.h): not where
  // an alert is structured fields its receiver routes on (PagerDuty's summary and severity,
  // Alertmanager's labels).
  bool takes_template = true;
};

std::span<const ProviderType> provider_types();
// The type named `type`; nullptr when there is none.
const ProviderType* find_provider_type(std::string_view type);
// Whether `key` of a `type` channel holds a secret (false for an unknown type).
bool is_secret_key(std::string_view type, std::string_view key);
// Whether a `type` channel pages someone (false for an unknown type).
bool pages_someone(std::string_view type);

}  // namespace trainwatch::alerting
