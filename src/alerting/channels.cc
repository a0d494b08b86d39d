#include "alerting/channels.h"

#include "alerting/channel_fields.h"
#include "alerting/providers/providers.h"

namespace trainwatch::alerting {

std::vector<Channel> build_channels(const Config& config, std::vector<ConfigError>& errors) {
  std::vector<Channel> out;
  if (config.notifications.size() > kMaxChannels) {
    errors.push_back(ConfigError{config.notifications[kMaxChannels].where, "notifications",
                                 "found " + std::to_string(config.notifications.size()) +
                                     " channels; expected at most " + std::to_string(kMaxChannels)});
    return out;
  }
  for (const ChannelConfig& c : config.notifications) {
    const ProviderType* type = nullptr;
    std::string expected;
    for (const auto& candidate : provider_types()) {
      if (c.type == candidate.name) type = &candidate;
      expected += (expected.empty() ? "" : ", ") + std::string(candidate.name);
    }
    if (type == nullptr) {
      if (!c.type.empty()) {
        errors.push_back(ConfigError{c.type_where, "notifications." + c.name + ".type",
                                     "found '" + c.type + "'; expected one of: " + expected});
      }
      continue;
    }
    ChannelFields fields(c, errors);
    auto timeout = fields.duration("timeout");
    auto provider = type->make(fields);  // calls fields.finish()
    if (provider == nullptr) continue;
    out.push_back(
        Channel{c.name, c.type, c.is_default, timeout.value_or(Millis(10'000)), std::move(provider)});
  }
  return out;
}

std::vector<ConfigError> check_channels(const Config& config) {
  std::vector<ConfigError> errors;
  build_channels(config, errors);
  return errors;
}

std::vector<std::string> channels_for(const MonitorConfig& monitor,
                                      const std::vector<ChannelConfig>& channels) {
  if (!monitor.notify.empty()) return monitor.notify;
  std::vector<std::string> out;
  for (const auto& c : channels) {
    if (c.is_default) out.push_back(c.name);
  }
  return out;
}

}  // namespace trainwatch::alerting
