#include "views/notification_views.h"

#include "alerting/channel_spec.h"
#include "core/time_format.h"

namespace trainwatch::views {
namespace {

namespace json = boost::json;

json::value time_json(const std::optional<SystemTime>& t) {
  return t ? json::value(format_rfc3339(*t)) : json::value(nullptr);
}

json::value admin_text_or_null(const std::string& text, Audience audience) {
  return text.empty() || audience != Audience::kAdmin ? json::value(nullptr) : json::value(text);
}

}  // namespace

std::string_view health_word(const alerting::ChannelHealth& h) {
  if (h.consecutive_failures > 0) return "failing";
  if (h.last_success) return "ok";
  return "unknown";
}

json::object channel_json(const alerting::ChannelHealth& h, Audience audience) {
  const auto& c = h.counters;
  return json::object{{"name", h.name},
                      {"type", h.type},
                      {"target", admin_text_or_null(h.target, audience)},
                      {"default", h.is_default},
                      {"health", health_word(h)},
                      {"queued", h.queued},
                      {"held", h.held},
                      {"backlog_in_store", h.backlog_in_store},
                      {"in_flight", h.in_flight},
                      {"consecutive_failures", h.consecutive_failures},
                      {"last_success", time_json(h.last_success)},
                      {"last_failure", time_json(h.last_failure)},
                      {"last_error", admin_text_or_null(h.last_error, audience)},
                      {"next_attempt", time_json(h.next_attempt)},
                      {"totals", json::object{{"delivered", c.delivered},
                                              {"error", c.error},
                                              {"rejected", c.rejected},
                                              {"gave_up", c.gave_up},
                                              {"cancelled", c.cancelled}}}};
}

json::object delivery_json(const Delivery& d, Audience audience) {
  return json::object{
      {"id", d.id},
      {"channel", d.spec.channel},
      {"monitor", d.spec.monitor},
      {"incident_id", d.spec.incident_id ? json::value(*d.spec.incident_id) : json::value(nullptr)},
      {"kind", d.spec.kind},
      {"status", to_string(d.status)},
      {"attempts", d.attempts},
      {"created", format_rfc3339(d.spec.created)},
      {"due", format_rfc3339(d.spec.due)},
      {"first_attempt", time_json(d.first_attempt)},
      {"last_attempt", time_json(d.last_attempt)},
      {"next_attempt", time_json(d.next_attempt)},
      {"finished", time_json(d.finished)},
      {"http_status", d.http_status != 0 ? json::value(d.http_status) : json::value(nullptr)},
      {"last_error", admin_text_or_null(d.last_error, audience)}};
}

json::object settings_json(const ChannelConfig& channel) {
  json::object out;
  for (const auto& [key, field] : channel.fields) {
    if (!alerting::shows_value(channel, key)) continue;
    if (field.kind == ChannelField::Kind::kScalar) {
      out[key] = field.text;
    } else if (field.kind == ChannelField::Kind::kList) {
      json::array items;
      for (const auto& item : field.list) items.emplace_back(item);
      out[key] = std::move(items);
    } else {
      json::object items;
      for (const auto& [name, value] : field.map) items[name] = value;
      out[key] = std::move(items);
    }
  }
  return out;
}

json::object secrets_json(const ChannelConfig& channel) {
  json::object out;
  for (const auto& s : alerting::secret_states(channel)) out[s.key] = s.set ? "set" : "not set";
  // A file's value read from the environment is as secret as a secret key's.
  for (const auto& [key, field] : channel.fields) {
    if (!alerting::shows_value(channel, key) && !out.contains(key)) out[key] = "set";
  }
  return out;
}

json::object catalog_channel_json(const alerting::CatalogChannel& channel,
                                  const alerting::ChannelHealth* health, Audience audience,
                                  const std::string& file_name) {
  alerting::ChannelHealth blank;
  if (health == nullptr) {
    blank.name = channel.config.name;
    blank.type = channel.config.type;
    blank.is_default = channel.config.is_default;
    health = &blank;
  }
  json::object out = channel_json(*health, audience);
  out["source"] = channel.from_file ? "file" : "api";
  out["read_only"] = channel.from_file;
  out["read_only_reason"] =
      channel.from_file ? json::value("from " + file_name + ", read-only") : json::value(nullptr);
  if (audience == Audience::kAdmin) {
    out["settings"] = settings_json(channel.config);
    out["secrets"] = secrets_json(channel.config);
  }
  return out;
}

}  // namespace trainwatch::views
