#include "web/channel_form.h"

#include "alerting/channel_spec.h"
#include "core/json_text.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  const auto end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

std::string field_value(const std::map<std::string, std::string>& form, const char* key) {
  auto it = form.find(key);
  return it == form.end() ? std::string() : it->second;
}

// Adds each `key: value` line of `text` to `out`; the error names the area and the line.
// A secret's line is never quoted back (the secrets area's text is secret).
std::optional<ChannelFormError> read_lines(const std::string& text, const char* area, bool secret,
                                           json::object& out) {
  size_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const std::string where = std::string(area) + " line " + std::to_string(line_no) + ": ";
    const std::string found = secret ? "found a line" : "found '" + line + "'";
    const size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0) {
      return ChannelFormError{area, where + found + "; expected key: value"};
    }
    const std::string key = trim(line.substr(0, colon));
    const std::string value = trim(line.substr(colon + 1));
    if (key == "name" || key == "type" || key == "default") {
      return ChannelFormError{area, where + "found '" + key + "'; expected it in its own field above"};
    }
    if (out.contains(key)) {
      return ChannelFormError{area, where + "found '" + key + "' again; expected each key once"};
    }
    if (!value.empty() && (value[0] == '[' || value[0] == '{' || value[0] == '"')) {
      boost::system::error_code ec;
      json::value parsed = json::parse(value, ec);
      if (ec) {
        return ChannelFormError{area, where + (secret ? "found a value" : "found '" + value + "'") +
                                          " that is not JSON; expected a JSON list, mapping or string"};
      }
      out[key] = std::move(parsed);
    } else {
      out[key] = value;
    }
  }
  return std::nullopt;
}

bool has_field(const std::string& type, const std::string& key) {
  for (const ChannelKey& k : channel_keys()) {
    if (type == k.type && key == k.key) return true;
  }
  return false;
}

std::vector<std::string> split_by(const std::string& text, char by) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(by, pos);
    if (end == std::string::npos) end = text.size();
    if (std::string item = trim(text.substr(pos, end - pos)); !item.empty()) out.push_back(std::move(item));
    pos = end + 1;
  }
  return out;
}

json::value key_json(const ChannelKey& k, const std::string& text) {
  switch (k.kind) {
    case ChannelKeyKind::kList: {
      json::array items;
      for (auto& item : split_by(text, ',')) items.emplace_back(item);
      return items;
    }
    case ChannelKeyKind::kMap: {
      json::object map;
      for (const auto& line : split_by(text, '\n')) {
        const auto colon = line.find(':');
        map[trim(line.substr(0, colon))] = colon == std::string::npos ? "" : trim(line.substr(colon + 1));
      }
      return map;
    }
    case ChannelKeyKind::kBoolean: return json::value(text == "yes" || text == "true");
    default: return json::value(text);
  }
}

// The chosen type's fields into `out`; a key also written in a text area is an error.
std::optional<ChannelFormError> read_fields(const std::map<std::string, std::string>& form,
                                            json::object& out) {
  const std::string type = field_value(form, "type");
  for (const ChannelKey& k : channel_keys()) {
    if (type != k.type) continue;
    const std::string name = std::string(k.secret ? "s." : "k.") + k.type + "." + k.key;
    const std::string text = trim(field_value(form, name.c_str()));
    if (text.empty()) continue;
    if (out.contains(k.key)) {
      return ChannelFormError{
          k.secret ? "secrets" : "settings",
          std::string(k.key) + ": found it in its field and in the text area; expected it once"};
    }
    out[k.key] = key_json(k, text);
  }
  return std::nullopt;
}

}  // namespace

const std::vector<ChannelKey>& channel_keys() {
  using K = ChannelKeyKind;
  static const std::vector<ChannelKey> kKeys = {
      {"slack", "webhook_url", "Webhook URL", K::kText, true, "", "https://hooks.slack.com/services/…"},
      {"discord", "webhook_url", "Webhook URL", K::kText, true, "", "https://discord.com/api/webhooks/…"},
      {"webhook", "url", "URL", K::kText, true, "", "https://hooks.example.com/…"},
      {"webhook", "secret", "Signing secret", K::kText, true},
      {"webhook", "headers", "Headers", K::kMap, true, "", "Authorization: Bearer …"},
      {"email", "smtp_url", "SMTP server", K::kText, false, "", "smtps://smtp.example.com:465"},
      {"email", "from", "From", K::kText, false, "", "trainwatch@example.com"},
      {"email", "to", "To", K::kList, false, "", "oncall@example.com, ml@example.com"},
      {"email", "username", "User name", K::kText, false},
      {"email", "password", "Password", K::kText, true},
      {"email", "starttls", "STARTTLS", K::kChoice, false, "required try off"},
      {"email", "tls_verify", "Verify the certificate", K::kBoolean, false, "yes no"},
      {"pagerduty", "routing_key", "Routing key", K::kText, true},
      {"pagerduty", "severity", "Severity", K::kChoice, false, "critical error warning info"},
      {"pagerduty", "url", "Events API URL", K::kText, false, "", "https://events.pagerduty.com/v2/enqueue"},
      {"alertmanager", "url", "Alertmanager URL", K::kText, false, "", "http://alertmanager:9093"},
      {"alertmanager", "labels", "Labels", K::kMap, false, "", "team: ml"},
      {"alertmanager", "headers", "Headers", K::kMap, true, "", "Authorization: Bearer …"},
      {"alertmanager", "resend_every", "Resend every", K::kText, false, "", "5m"},
      {"ntfy", "url", "Server", K::kText, false, "", "https://ntfy.sh"},
      {"ntfy", "topic", "Topic", K::kText, false, "", "ml-alerts"},
      {"ntfy", "token", "Access token", K::kText, true},
      {"telegram", "bot_token", "Bot token", K::kText, true},
      {"telegram", "chat_id", "Chat id", K::kText, false, "", "-1001234567890"},
      {"telegram", "url", "API URL", K::kText, false, "", "https://api.telegram.org"},
  };
  return kKeys;
}

std::pair<std::optional<json::object>, std::optional<ChannelFormError>> channel_form_object(
    const std::map<std::string, std::string>& form) {
  json::object out{{"name", trim(field_value(form, "name"))}, {"type", field_value(form, "type")}};
  if (field_value(form, "default") == "on") out["default"] = true;
  if (auto error = read_lines(field_value(form, "settings"), "settings", false, out))
    return {std::nullopt, error};
  json::object secrets;
  if (auto error = read_lines(field_value(form, "secrets"), "secrets", true, secrets))
    return {std::nullopt, error};
  for (auto& [key, value] : secrets) {
    if (out.contains(key)) {
      return {std::nullopt, ChannelFormError{"secrets", "secrets: found '" + std::string(key) +
                                                            "' in the settings too; expected it once"}};
    }
    out[key] = std::move(value);
  }
  if (auto error = read_fields(form, out)) return {std::nullopt, error};
  return {std::move(out), std::nullopt};
}

std::map<std::string, std::string> field_values(const ChannelConfig& channel) {
  std::map<std::string, std::string> out;
  for (const ChannelKey& k : channel_keys()) {
    if (channel.type != k.type || k.secret || !alerting::shows_value(channel, k.key)) continue;
    auto it = channel.fields.find(k.key);
    if (it == channel.fields.end()) continue;
    const ChannelField& field = it->second;
    std::string text;
    if (field.kind == ChannelField::Kind::kScalar) {
      text = field.text;
      if (k.kind == ChannelKeyKind::kBoolean) text = text == "true" ? "yes" : text == "false" ? "no" : text;
    } else if (field.kind == ChannelField::Kind::kList) {
      for (const auto& item : field.list) text += (text.empty() ? "" : ", ") + item;
    } else {
      for (const auto& [name, value] : field.map) text += name + ": " + value + "\n";
    }
    out[std::string("k.") + k.type + "." + k.key] = text;
  }
  return out;
}

std::string settings_text(const ChannelConfig& channel) {
  std::string out;
  for (const auto& [key, field] : channel.fields) {
    if (!alerting::shows_value(channel, key) || has_field(channel.type, key)) continue;
    out += key + ": ";
    if (field.kind == ChannelField::Kind::kScalar) {
      // Read back as itself (read_lines) unless it starts like JSON, spans lines or has
      // spaces at its ends (a template: "{{state}}: {{monitor}}"): then as a JSON string.
      const std::string& text = field.text;
      const bool quoted =
          !text.empty() && (text.find_first_of("[{\"") == 0 || text.find('\n') != std::string::npos ||
                            text.front() == ' ' || text.back() == ' ');
      out += quoted ? json_text(json::value(text)) : text;
    } else if (field.kind == ChannelField::Kind::kList) {
      json::array items;
      for (const auto& item : field.list) items.emplace_back(item);
      out += json_text(items);
    } else {
      json::object items;
      for (const auto& [name, value] : field.map) items[name] = value;
      out += json_text(items);
    }
    out += "\n";
  }
  return out;
}

}  // namespace trainwatch::web
