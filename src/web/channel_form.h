// The dashboard's notification channel form, turned into the API's JSON object (so the
// dashboard and the API accept exactly the same channels, alerting/channel_spec.h), and
// back: a channel's readable settings as the form's text. Pure.
//
// The form has name, type, default (a checkbox), a field per key of the chosen type
// (channel_keys(): "k.<type>.<key>", a secret's "s.<type>.<key>", a password input never
// filled in), and two text areas for any other key, `settings` and `secrets`, one
// `key: value` a line; a list or mapping is written as JSON:
//   url: https://hooks.example.com/T0k3n
//   to: ["oncall@example.com", "ml@example.com"]
//   headers: {"Authorization": "Bearer s3cr3t"}
// Secrets are never shown back: the secrets area starts empty, and a secret left out of
// an edit keeps its stored value.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "config/config.h"

namespace trainwatch::web {

// One key of one channel type as the form asks for it.
enum class ChannelKeyKind { kText, kList, kMap, kChoice, kBoolean };
struct ChannelKey {
  const char* type;
  const char* key;
  const char* label;
  ChannelKeyKind kind;
  bool secret;
  const char* options = "";  // kChoice: space-separated
  const char* placeholder = "";
};
// Every type's keys (alerting/providers/), in the order the form shows them.
const std::vector<ChannelKey>& channel_keys();

struct ChannelFormError {
  std::string field;    // the form field: "settings" or "secrets"
  std::string message;  // "settings line 2: found 'url https://x'; expected key: value"
};

// The channel's JSON object from the form's fields, or what is wrong with a line.
// Exactly one of the two is set.
std::pair<std::optional<boost::json::object>, std::optional<ChannelFormError>> channel_form_object(
    const std::map<std::string, std::string>& form);

// The channel's settings an admin may read, one `key: value` a line, for an edit form:
// those without a field of their own (channel_keys()).
std::string settings_text(const ChannelConfig& channel);

// The readable settings that have a field, as the form's values ("k.<type>.<key>").
std::map<std::string, std::string> field_values(const ChannelConfig& channel);

}  // namespace trainwatch::web
