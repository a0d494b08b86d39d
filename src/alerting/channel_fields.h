// Typed, error-collecting access to one notification channel's provider keys, with
// FILE:LINE:COL errors like the rest of the config. Each provider asks for its keys;
// finish() reports the rest as unknown. Values of secret keys (ProviderType::secret_keys),
// and of any key filled from `${NAME}`, are never echoed in a message.
#pragma once

#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "config/loader.h"

namespace trainwatch::alerting {

class ChannelFields {
 public:
  ChannelFields(const ChannelConfig& channel, std::vector<ConfigError>& errors);

  std::optional<std::string> string(const char* key, bool required = false);
  // An absolute URL whose scheme is one of `schemes`.
  std::optional<std::string> url(const char* key, bool required, std::initializer_list<const char*> schemes);
  // A list of strings; a single string counts as a list of one.
  std::optional<std::vector<std::string>> list(const char* key, bool required = false);
  std::vector<std::pair<std::string, std::string>> map(const char* key);
  std::optional<bool> boolean(const char* key);
  std::optional<Millis> duration(const char* key);
  // One of `choices`.
  std::optional<std::string> choice(const char* key, std::initializer_list<const char*> choices);

  void error(const char* key, const std::string& message);
  void finish();

  const ChannelConfig& channel() const { return channel_; }

 private:
  const ChannelField* find(const char* key, bool required);
  // "found 'x'", or "found a secret value" for one of the type's secret keys.
  std::string shown(const char* key, const ChannelField& field) const;
  std::string path(const std::string& key) const;

  const ChannelConfig& channel_;
  std::vector<ConfigError>& errors_;
  std::set<std::string> known_;
};

}  // namespace trainwatch::alerting
