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

}  // namespace

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
  return {std::move(out), std::nullopt};
}

std::string settings_text(const ChannelConfig& channel) {
  std::string out;
  for (const auto& [key, field] : channel.fields) {
    if (!alerting::shows_value(channel, key)) continue;
    out += key + ": ";
    if (field.kind == ChannelField::Kind::kScalar) {
      out += field.text;
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
