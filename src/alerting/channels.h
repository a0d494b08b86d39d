// Channels: the configured notification targets, each a provider built from its config
// keys, and which channels a monitor notifies.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "alerting/message.h"
#include "alerting/message_template.h"
#include "alerting/provider.h"
#include "config/config.h"
#include "config/loader.h"

namespace trainwatch::alerting {

struct Channel {
  std::string name;
  std::string type;
  bool is_default = false;
  Millis timeout{10'000};  // per request; `timeout:` in the channel's config
  std::shared_ptr<const Provider> provider;
  // Its `template:`; nullptr: the provider's own layout.
  std::shared_ptr<const MessageTemplate> text_template;
};

// The message `channel` sends for `event`: the one renderer's, with the channel's
// template rendered into it when it has one.
Message channel_message(const Channel& channel, const AlertEvent& event, SystemTime now);

// The bound on the number of channels (each has its own queue and one request in flight).
inline constexpr size_t kMaxChannels = 64;

// Builds every channel; errors (unknown type, missing or bad keys) are appended to
// `errors` with their FILE:LINE:COL, and the channel is left out.
std::vector<Channel> build_channels(const Config& config, std::vector<ConfigError>& errors);

// Only the errors: what `trainwatch check` reports beyond the loader's.
std::vector<ConfigError> check_channels(const Config& config);

// The channels a monitor notifies: its `notify` list, or the default channels.
std::vector<std::string> channels_for(const MonitorConfig& monitor,
                                      const std::vector<ChannelConfig>& channels);

}  // namespace trainwatch::alerting
