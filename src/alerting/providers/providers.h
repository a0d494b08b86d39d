// The notification providers, one per file in this folder. Each factory reads and
// validates its channel's keys through ChannelFields (errors collected there) and returns
// nullptr when they are not valid.
#pragma once

#include <memory>
#include <span>

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
};

std::span<const ProviderType> provider_types();

}  // namespace trainwatch::alerting
