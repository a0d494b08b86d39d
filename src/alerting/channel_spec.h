// A notification channel as the API and the dashboard send it: one JSON object with the
// keys of one entry of the config file's `notifications:` list,
//   {"name": "ops-hook", "type": "webhook", "url": "https://hooks.example/T0k3n", "default": true}
// read by the config loader and validated by the channel's provider, so the file and the
// API accept exactly the same channels. Pure: no store, no clock.
//
// Secrets (ProviderType::secret_keys) are write-only. When a channel is replaced, a secret
// key the new object leaves out keeps its stored value (so an edit need not re-send the
// webhook URL); `null` removes an optional one. ${NAME} references are refused: an API
// client must not be able to read the server's environment.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/result.h"

namespace trainwatch::alerting {

struct ChannelSpec {
  ChannelConfig config;
  std::string json;  // what the store keeps: the object as sent, kept secrets merged in
};

// Why a channel's object was refused: `field` is the key it is about ("url"), or "" for
// the object as a whole; `error.code` is "channel.invalid"; the message starts with the
// field: "url: found a secret value; expected a http:// or https:// URL with a host".
struct ChannelSpecError {
  std::string field;
  Error error;
};

// Reads and validates one channel's JSON object. `stored` is the channel's stored JSON
// when the object replaces it (its secrets are kept, as above), nullptr for a new one.
// Returns the spec or why not; exactly one of the two is set.
std::pair<std::optional<ChannelSpec>, std::optional<ChannelSpecError>> parse_channel_spec(
    const std::string& body, const std::string* stored);

// One secret key of a channel's type and whether the channel has a value for it.
struct SecretState {
  std::string key;
  bool set = false;
};
// Every secret key of the channel's type, in the type's order.
std::vector<SecretState> secret_states(const ChannelConfig& channel);
// Whether the field's value may be shown to an admin: not a secret key, nor read from
// the environment (a file's ${NAME}).
bool shows_value(const ChannelConfig& channel, const std::string& key);

}  // namespace trainwatch::alerting
