#include "alerting/channel_fields.h"

#include <boost/url/parse.hpp>

#include "alerting/providers/providers.h"
#include "core/duration.h"

namespace trainwatch::alerting {

ChannelFields::ChannelFields(const ChannelConfig& channel, std::vector<ConfigError>& errors)
    : channel_(channel), errors_(errors) {}

std::string ChannelFields::path(const std::string& key) const {
  return "notifications." + (channel_.name.empty() ? std::string("?") : channel_.name) + "." + key;
}

void ChannelFields::error(const char* key, const std::string& message) {
  auto it = channel_.fields.find(key);
  const SourceLocation& where = it != channel_.fields.end() ? it->second.where : channel_.where;
  errors_.push_back(ConfigError{where, path(key), message});
}

std::string ChannelFields::shown(const char* key, const ChannelField& field) const {
  if (field.from_env) return "found a value from the environment";
  if (is_secret_key(channel_.type, key)) return "found a secret value";
  if (field.kind == ChannelField::Kind::kList) return "found a list";
  if (field.kind == ChannelField::Kind::kMap) return "found a mapping";
  return "found '" + field.text + "'";
}

const ChannelField* ChannelFields::find(const char* key, bool required) {
  known_.insert(key);
  auto it = channel_.fields.find(key);
  if (it == channel_.fields.end()) {
    if (required) errors_.push_back(ConfigError{channel_.where, path(key), "missing; expected a value"});
    return nullptr;
  }
  return &it->second;
}

std::optional<std::string> ChannelFields::string(const char* key, bool required) {
  const ChannelField* f = find(key, required);
  if (f == nullptr) return std::nullopt;
  if (f->kind != ChannelField::Kind::kScalar) {
    error(key, shown(key, *f) + "; expected a string");
    return std::nullopt;
  }
  if (f->text.empty() && required) {
    error(key, "found an empty value; expected a value");
    return std::nullopt;
  }
  return f->text;
}

std::optional<std::string> ChannelFields::url(const char* key, bool required,
                                              std::initializer_list<const char*> schemes) {
  auto text = string(key, required);
  if (!text) return std::nullopt;
  auto parsed = boost::urls::parse_absolute_uri(*text);
  bool scheme_ok = false;
  std::string expected;
  for (const char* s : schemes) {
    if (parsed && parsed->scheme() == s) scheme_ok = true;
    expected += (expected.empty() ? "" : " or ") + std::string(s) + "://";
  }
  if (!parsed || !scheme_ok || parsed->host().empty()) {
    const ChannelField& f = channel_.fields.at(key);
    // A URL may carry a token (Slack, Discord): a secret key's value is never shown.
    error(key, shown(key, f) + "; expected a " + expected + " URL with a host");
    return std::nullopt;
  }
  return text;
}

std::optional<std::vector<std::string>> ChannelFields::list(const char* key, bool required) {
  const ChannelField* f = find(key, required);
  if (f == nullptr) return std::nullopt;
  if (f->kind == ChannelField::Kind::kScalar) return std::vector<std::string>{f->text};
  if (f->kind == ChannelField::Kind::kList) {
    if (f->list.empty() && required) {
      error(key, "found an empty list; expected at least one value");
      return std::nullopt;
    }
    return f->list;
  }
  error(key, shown(key, *f) + "; expected a list of strings");
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> ChannelFields::map(const char* key) {
  const ChannelField* f = find(key, false);
  if (f == nullptr) return {};
  if (f->kind != ChannelField::Kind::kMap) {
    error(key, shown(key, *f) + "; expected a mapping of names to values");
    return {};
  }
  return f->map;
}

std::optional<bool> ChannelFields::boolean(const char* key) {
  const ChannelField* f = find(key, false);
  if (f == nullptr) return std::nullopt;
  if (f->kind == ChannelField::Kind::kScalar && (f->text == "true" || f->text == "false"))
    return f->text == "true";
  error(key, shown(key, *f) + "; expected true or false");
  return std::nullopt;
}

std::optional<Millis> ChannelFields::duration(const char* key) {
  const ChannelField* f = find(key, false);
  if (f == nullptr) return std::nullopt;
  if (f->kind == ChannelField::Kind::kScalar) {
    if (auto d = parse_duration(f->text); d && d->count() > 0) return d;
  }
  error(key, shown(key, *f) + "; expected a duration such as 500ms, 30s, 5m, 1h or 1d");
  return std::nullopt;
}

std::optional<std::string> ChannelFields::choice(const char* key,
                                                 std::initializer_list<const char*> choices) {
  auto text = string(key);
  if (!text) return std::nullopt;
  std::string expected;
  for (const char* c : choices) {
    if (*text == c) return text;
    expected += (expected.empty() ? "" : ", ") + std::string(c);
  }
  error(key, shown(key, channel_.fields.at(key)) + "; expected one of: " + expected);
  return std::nullopt;
}

void ChannelFields::finish() {
  std::string expected;
  for (const auto& k : known_) expected += (expected.empty() ? "" : ", ") + k;
  for (const auto& [key, field] : channel_.fields) {
    if (known_.count(key) != 0) continue;
    errors_.push_back(ConfigError{field.where, path(key),
                                  "unknown key for a " + channel_.type +
                                      " channel; expected one of: name, type, default, " + expected});
  }
}

}  // namespace trainwatch::alerting
