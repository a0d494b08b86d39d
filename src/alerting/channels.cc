#include "alerting/channels.h"

#include "alerting/channel_fields.h"
#include "alerting/providers/providers.h"

namespace trainwatch::alerting {

namespace {

// The channel's compiled `template:` (nullptr when it has none); nullopt after an error.
std::optional<std::shared_ptr<const MessageTemplate>> read_template(const ProviderType& type,
                                                                    ChannelFields& fields) {
  auto text = fields.string("template");
  if (!text) return std::shared_ptr<const MessageTemplate>();
  if (!type.takes_template) {
    std::string takers;
    for (const auto& t : provider_types()) {
      if (t.takes_template) takers += (takers.empty() ? "" : ", ") + std::string(t.name);
    }
    fields.error("template", "a " + std::string(type.name) +
                                 " alert is structured fields its receiver routes on; templates are for " +
                                 takers);
    return std::nullopt;
  }
  auto compiled = MessageTemplate::compile(std::move(*text));
  if (!compiled) {
    fields.error("template", compiled.error().message);
    return std::nullopt;
  }
  return std::make_shared<const MessageTemplate>(std::move(*compiled));
}

}  // namespace

Message channel_message(const Channel& channel, const AlertEvent& event, SystemTime now) {
  Message message = render_message(event, now);
  if (channel.text_template) message.templated = channel.text_template->render(event, message, now);
  return message;
}

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
    auto text_template = read_template(*type, fields);
    auto provider = type->make(fields);  // calls fields.finish()
    if (provider == nullptr || !text_template) continue;
    out.push_back(Channel{c.name, c.type, c.is_default, timeout.value_or(Millis(10'000)), std::move(provider),
                          std::move(*text_template)});
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
