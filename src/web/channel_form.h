// The dashboard's notification channel form, turned into the API's JSON object (so the
// dashboard and the API accept exactly the same channels, alerting/channel_spec.h), and
// back: a channel's readable settings as the form's text. Pure.
//
// The form has name, type, default (a checkbox) and two text areas, `settings` and
// `secrets`, one `key: value` a line; a list or mapping is written as JSON:
//   url: https://hooks.example.com/T0k3n
//   to: ["oncall@example.com", "ml@example.com"]
//   headers: {"Authorization": "Bearer s3cr3t"}
// Secrets are never shown back: the secrets area starts empty, and a secret left out of
// an edit keeps its stored value.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <boost/json.hpp>

#include "config/config.h"

namespace trainwatch::web {

struct ChannelFormError {
  std::string field;    // the form field: "settings" or "secrets"
  std::string message;  // "settings line 2: found 'url https://x'; expected key: value"
};

// The channel's JSON object from the form's fields, or what is wrong with a line.
// Exactly one of the two is set.
std::pair<std::optional<boost::json::object>, std::optional<ChannelFormError>> channel_form_object(
    const std::map<std::string, std::string>& form);

// The channel's settings an admin may read, one `key: value` a line, for an edit form.
std::string settings_text(const ChannelConfig& channel);

}  // namespace trainwatch::web
