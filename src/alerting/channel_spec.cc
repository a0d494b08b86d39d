#include "alerting/channel_spec.h"

#include <boost/json.hpp>

#include "alerting/channels.h"
#include "alerting/providers/providers.h"
#include "config/loader.h"
#include "core/json_text.h"

namespace trainwatch::alerting {
namespace {

namespace json = boost::json;

ChannelSpecError invalid(std::string field, const std::string& message) {
  std::string text = field.empty() ? message : field + ": " + message;
  return ChannelSpecError{std::move(field), make_error("channel.invalid", std::move(text))};
}

// "notifications[0].url" or "notifications.ops-hook.url" -> "url"; "" when it names no key.
std::string field_of(const std::string& key, const std::string& name) {
  for (const std::string& prefix : {std::string("notifications[0]."), "notifications." + name + "."}) {
    if (key.rfind(prefix, 0) == 0) return key.substr(prefix.size());
  }
  return "";
}

// The first error, as the API reports it: one field at a time, the one named first.
ChannelSpecError first_error(const std::vector<ConfigError>& errors, const std::string& name) {
  const ConfigError& e = errors.front();
  return invalid(field_of(e.key, name), e.message);
}

std::string string_or_empty(const json::object& o, const char* key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

// Secret keys the object leaves out take their stored value, when the type is the same.
void keep_stored_secrets(json::object& object, const std::string* stored) {
  if (stored == nullptr) return;
  boost::system::error_code ec;
  json::value previous = json::parse(*stored, ec);
  if (ec || !previous.is_object()) return;
  const std::string type = string_or_empty(object, "type");
  if (type.empty() || type != string_or_empty(previous.as_object(), "type")) return;
  const ProviderType* provider = find_provider_type(type);
  if (provider == nullptr) return;
  for (const char* key : provider->secret_keys) {
    if (object.contains(key)) continue;
    if (const json::value* kept = previous.as_object().if_contains(key)) object[key] = *kept;
  }
}

}  // namespace

std::pair<std::optional<ChannelSpec>, std::optional<ChannelSpecError>> parse_channel_spec(
    const std::string& body, const std::string* stored) {
  boost::system::error_code ec;
  json::value parsed = json::parse(body, ec);
  if (ec || !parsed.is_object()) {
    return {std::nullopt, invalid("", "the body must be one JSON object describing a notification channel")};
  }
  json::object& object = parsed.as_object();
  keep_stored_secrets(object, stored);
  // null removes a key (an optional secret, a setting back to its default).
  for (auto it = object.begin(); it != object.end();) {
    it = it->value().is_null() ? object.erase(it) : std::next(it);
  }
  const std::string name = string_or_empty(object, "name");
  const std::string text = json_text(object);
  // No environment: ${NAME} is an error naming the variable, never its value.
  LoadedConfig loaded = load_config_text("notifications: [" + text + "]", "body",
                                         [](const std::string&) { return std::optional<std::string>(); });
  if (!loaded.config) return {std::nullopt, first_error(loaded.errors, name)};
  if (loaded.config->notifications.size() != 1) {
    return {std::nullopt, invalid("", "the body must describe one notification channel")};
  }
  std::vector<ConfigError> errors = check_channels(*loaded.config);
  if (!errors.empty()) return {std::nullopt, first_error(errors, name)};
  return {ChannelSpec{std::move(loaded.config->notifications.front()), text}, std::nullopt};
}

std::vector<SecretState> secret_states(const ChannelConfig& channel) {
  std::vector<SecretState> out;
  const ProviderType* provider = find_provider_type(channel.type);
  if (provider == nullptr) return out;
  for (const char* key : provider->secret_keys) {
    auto it = channel.fields.find(key);
    const bool set = it != channel.fields.end() &&
                     (!it->second.text.empty() || !it->second.list.empty() || !it->second.map.empty());
    out.push_back(SecretState{key, set});
  }
  return out;
}

bool shows_value(const ChannelConfig& channel, const std::string& key) {
  auto it = channel.fields.find(key);
  return !is_secret_key(channel.type, key) && (it == channel.fields.end() || !it->second.from_env);
}

}  // namespace trainwatch::alerting
