// The dashboard's monitor form, for every monitor type: its fields, each the key of a
// `monitors:` entry it writes (so the form, the API and the config file accept exactly
// the same monitors: the loader validates what the form makes), and the way back from a
// stored monitor to the form's values. Pure.
//
// A field belongs to the types it lists (none: every type); the page shows the fields of
// the chosen type (static/forms.js; with JavaScript off every field shows, under the
// types it is for) and the form turns only those into the monitor. On an edit, the
// stored monitor is the base: keys the form has no field for are kept as they were.
// `notify` and `depends_on` are pickers: a box a channel ("notify.<name>") and a box a
// monitor ("dep.<name>").
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <boost/json.hpp>

namespace trainwatch::web {

enum class FieldKind { kText, kNumber, kList, kLines, kHeaders, kSelect, kArea };

struct FormField {
  const char* key;  // "url", or "thresholds.step_timeout" for a nested key
  const char* label;
  const char* hint;
  FieldKind kind;
  const char* types;         // space-separated monitor types; "" for every type
  const char* options = "";  // kSelect: space-separated, the first one "default" when empty
  const char* placeholder = "";
};

const std::vector<FormField>& monitor_form_fields();

using FormValues = std::map<std::string, std::string>;

// The monitor's JSON object from the posted form, on `base`.
boost::json::object spec_from_form(const FormValues& form, boost::json::object base);

// The form's values from a stored monitor (its JSON object): the inverse of spec_from_form.
FormValues form_from_spec(const boost::json::object& spec);

// The field an error is about: "url: found 'x'; ..." is url's, "notify[0]: ..." the
// notify picker's, "thresholds.step_timeout: ..." that field's; "" when no field has it.
std::string field_of_error(const std::string& message);

struct FormChoices {
  std::vector<std::string> channels;  // for notify
  std::vector<std::string> monitors;  // for depends_on (the monitor itself left out)
};

// The template model (templates/monitor_form.mustache): every field with its value and,
// for the field `error` names, the error beside it.
boost::json::object monitor_form_model(const FormValues& values, const std::string& error,
                                       const FormChoices& choices, bool editing);

}  // namespace trainwatch::web
