#include "web/monitor_form.h"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace trainwatch::web {
namespace {

namespace json = boost::json;

constexpr const char* kTypes = "http tcp tls dns icmp heartbeat job";
constexpr const char* kChecked = "http tcp tls dns icmp job";
constexpr const char* kProbes = "http tcp tls dns icmp";

std::string trim(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return "";
  const auto end = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(begin, end - begin + 1));
}

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, by);) {
    if (std::string t = trim(part); !t.empty()) out.push_back(std::move(t));
  }
  return out;
}

bool for_type(const FormField& f, const std::string& type) {
  if (*f.types == '\0') return true;
  for (const auto& t : split(f.types, ' ')) {
    if (t == type) return true;
  }
  return false;
}

// A number as JSON when the whole text is one, else the text (the loader names it).
json::value number_or_text(const std::string& text) {
  int64_t whole = 0;
  if (auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), whole);
      ec == std::errc() && end == text.data() + text.size()) {
    return whole;
  }
  double real = 0;
  if (auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), real);
      ec == std::errc() && end == text.data() + text.size()) {
    return real;
  }
  return json::value(text);
}

json::value field_json(const FormField& f, const std::string& text) {
  switch (f.kind) {
    case FieldKind::kNumber: return number_or_text(text);
    case FieldKind::kList:
    case FieldKind::kLines: {
      json::array items;
      for (auto& item : split(text, f.kind == FieldKind::kList ? ',' : '\n')) items.emplace_back(item);
      return items;
    }
    case FieldKind::kHeaders: {
      json::object headers;
      for (const auto& line : split(text, '\n')) {
        const auto colon = line.find(':');
        // A line without a colon goes in as its own key, which the loader then names.
        headers[trim(line.substr(0, colon))] = colon == std::string::npos ? "" : trim(line.substr(colon + 1));
      }
      return headers;
    }
    default: return json::value(text);
  }
}

std::string field_text(const FormField& f, const json::value& v) {
  if (v.is_string()) return std::string(v.as_string());
  if (v.is_array()) {
    std::string out;
    for (const auto& item : v.as_array()) {
      if (!out.empty()) out += f.kind == FieldKind::kList ? ", " : "\n";
      out += item.is_string() ? std::string(item.as_string()) : json::serialize(item);
    }
    return out;
  }
  if (v.is_object() && f.kind == FieldKind::kHeaders) {
    std::string out;
    for (const auto& [k, value] : v.as_object())
      out += std::string(k) + ": " +
             (value.is_string() ? std::string(value.as_string()) : json::serialize(value)) + "\n";
    return out;
  }
  return json::serialize(v);
}

// The object a nested key lives in ("thresholds.step_timeout": base["thresholds"]), made
// when `make`; nullptr when absent.
json::object* parent_of(json::object& base, const std::string& key, std::string& leaf, bool make) {
  const auto dot = key.find('.');
  if (dot == std::string::npos) {
    leaf = key;
    return &base;
  }
  leaf = key.substr(dot + 1);
  const std::string head = key.substr(0, dot);
  if (!base.contains(head) || !base[head].is_object()) {
    if (!make) return nullptr;
    base[head] = json::object();
  }
  return &base[head].as_object();
}

json::array picked(const FormValues& form, const std::string& prefix) {
  json::array out;
  for (const auto& [key, value] : form) {
    if (key.starts_with(prefix) && key.size() > prefix.size()) out.emplace_back(key.substr(prefix.size()));
  }
  return out;
}

// Sets `key` only to a text that says something: the template engine reads "" as true.
void set_text(json::object& o, const std::string& key, const std::string& text) {
  if (!text.empty()) o[key] = text;
}

}  // namespace

const std::vector<FormField>& monitor_form_fields() {
  static const std::vector<FormField> kFields = {
      {"url", "URL", "http:// or https://", FieldKind::kText, "http", "", "https://example.com/health"},
      {"method", "Method", "", FieldKind::kSelect, "http", " GET HEAD POST PUT PATCH DELETE OPTIONS"},
      {"headers", "Headers", "one Name: value a line", FieldKind::kHeaders, "http", "",
       "Authorization: Bearer …"},
      {"body", "Request body", "", FieldKind::kArea, "http"},
      {"keyword", "Keyword", "the answer must contain it", FieldKind::kText, "http"},
      {"host", "Host", "a name or an address", FieldKind::kText, "tcp tls icmp", "", "10.0.0.5"},
      {"port", "Port", "", FieldKind::kNumber, "tcp tls", "", "443"},
      {"server_name", "Server name", "the certificate's name, when not the host", FieldKind::kText, "tls"},
      {"warn_before", "Warn before expiry", "a warning, no page", FieldKind::kText, "tls", "", "14d"},
      {"down_before", "Down before expiry", "", FieldKind::kText, "tls", "", "3d"},
      {"query", "Name to resolve", "", FieldKind::kText, "dns", "", "api.internal"},
      {"record", "Record", "", FieldKind::kSelect, "dns", " A AAAA CNAME MX TXT NS SOA"},
      {"resolver", "Resolver", "host:port; empty: the system's", FieldKind::kText, "dns", "", "10.0.0.2:53"},
      {"count", "Echo requests", "", FieldKind::kNumber, "icmp", "", "3"},
      {"conditions", "Conditions", "one a line", FieldKind::kLines, "http dns icmp", "", "[STATUS] == 200"},
      {"period", "Period", "a ping is expected this often", FieldKind::kText, "heartbeat", "", "1h"},
      {"schedule", "or a cron schedule", "instead of a period", FieldKind::kText, "heartbeat", "",
       "0 3 * * *"},
      {"tz", "Time zone", "of the schedule", FieldKind::kText, "heartbeat", "", "Europe/Berlin"},
      {"grace", "Grace", "how late a ping may be before it is down", FieldKind::kText, "heartbeat", "",
       "10m"},
      {"world_size", "World size", "ranks the job should have", FieldKind::kNumber, "job", "", "8"},
      {"thresholds.startup_timeout", "Startup timeout", "", FieldKind::kText, "job", "", "10m"},
      {"thresholds.step_timeout", "Step timeout", "empty: learned from the steps", FieldKind::kText, "job",
       "", "5m"},
      {"thresholds.straggler_ratio", "Straggler ratio", "slower than the median by this factor",
       FieldKind::kNumber, "job", "", "1.5"},
      {"interval", "Check every", "", FieldKind::kText, kChecked, "", "60s"},
      {"timeout", "Timeout", "", FieldKind::kText, kProbes, "", "10s"},
      {"retries", "Retries", "failed checks before it is down", FieldKind::kNumber, kChecked, "", "0"},
      {"tags", "Tags", "comma-separated", FieldKind::kList, "", "", "training, inference"},
      {"notify_after", "Notify after", "hold an alert this long", FieldKind::kText, "", "", "5m"},
      {"remind_every", "Remind every", "while it stays down", FieldKind::kText, "", "", "1h"},
  };
  return kFields;
}

json::object spec_from_form(const FormValues& form, json::object base) {
  auto value = [&form](const std::string& key) {
    auto it = form.find(key);
    return it == form.end() ? std::string() : trim(it->second);
  };
  const std::string type = value("type");
  if (!value("name").empty()) base["name"] = value("name");
  base["type"] = type;
  for (const FormField& f : monitor_form_fields()) {
    std::string leaf;
    const std::string text = value(f.key);
    json::object* parent = parent_of(base, f.key, leaf, !text.empty() && for_type(f, type));
    if (parent == nullptr) continue;
    if (text.empty() || !for_type(f, type)) {
      parent->erase(leaf);
    } else {
      (*parent)[leaf] = field_json(f, text);
    }
  }
  if (base.contains("thresholds") && base["thresholds"].is_object() && base["thresholds"].as_object().empty())
    base.erase("thresholds");
  for (const auto& [key, prefix] : {std::pair{"notify", "notify."}, std::pair{"depends_on", "dep."}}) {
    json::array names = picked(form, prefix);
    if (names.empty()) {
      base.erase(key);
    } else {
      base[key] = std::move(names);
    }
  }
  return base;
}

FormValues form_from_spec(const json::object& spec) {
  FormValues out;
  for (const char* key : {"name", "type"}) {
    if (const auto* v = spec.if_contains(key); v && v->is_string()) out[key] = std::string(v->as_string());
  }
  json::object copy = spec;
  for (const FormField& f : monitor_form_fields()) {
    std::string leaf;
    json::object* parent = parent_of(copy, f.key, leaf, false);
    if (parent == nullptr) continue;
    if (const auto* v = parent->if_contains(leaf)) out[f.key] = field_text(f, *v);
  }
  for (const auto& [key, prefix] : {std::pair{"notify", "notify."}, std::pair{"depends_on", "dep."}}) {
    if (const auto* v = spec.if_contains(key); v && v->is_array()) {
      for (const auto& name : v->as_array()) {
        if (name.is_string()) out[prefix + std::string(name.as_string())] = "on";
      }
    }
  }
  return out;
}

std::string field_of_error(const std::string& message) {
  const auto colon = message.find(':');
  if (colon == std::string::npos) return "";
  std::string key = message.substr(0, colon);
  if (const auto bracket = key.find('['); bracket != std::string::npos) key.resize(bracket);
  if (key == "name" || key == "type" || key == "notify" || key == "depends_on") return key;
  for (const FormField& f : monitor_form_fields()) {
    if (key == f.key) return key;
  }
  // "headers.Host: ...": the headers field's.
  const auto dot = key.find('.');
  if (dot != std::string::npos && key.substr(0, dot) == "headers") return "headers";
  return "";
}

json::object monitor_form_model(const FormValues& values, const std::string& error,
                                const FormChoices& choices, bool editing) {
  auto value = [&values](const std::string& key) {
    auto it = values.find(key);
    return it == values.end() ? std::string() : it->second;
  };
  const std::string field = field_of_error(error);
  const std::string type = value("type").empty() ? std::string("http") : value("type");
  json::object m{{"name", value("name")}, {"editing", editing}};
  // An error no field of this type has is said above the form.
  bool beside = !field.empty();
  for (const FormField& f : monitor_form_fields()) {
    if (field == f.key && !for_type(f, type)) beside = false;
  }
  set_text(m, "top_error", beside ? std::string() : error);
  json::array types;
  for (const auto& t : split(kTypes, ' '))
    types.push_back(json::object{{"value", t}, {"selected", t == type}});
  m["types"] = std::move(types);
  set_text(m, "name_error", field == "name" ? error : "");
  set_text(m, "type_error", field == "type" ? error : "");
  json::array fields;
  for (const FormField& f : monitor_form_fields()) {
    json::object o{{"key", f.key},
                   {"id", "n-" + std::string(f.key)},
                   {"label", f.label},
                   {"types", *f.types ? f.types : kTypes},
                   {"value", value(f.key)},
                   {"placeholder", f.placeholder},
                   {"shown", for_type(f, type)}};
    set_text(o, "hint", f.hint);
    set_text(o, "for_types", *f.types ? std::string("for ") + f.types : std::string());
    set_text(o, "error", field == f.key ? error : std::string());
    o["area"] = f.kind == FieldKind::kLines || f.kind == FieldKind::kHeaders || f.kind == FieldKind::kArea;
    if (f.kind == FieldKind::kSelect) {
      json::array options;
      for (const auto& option : split(std::string("default") + f.options, ' ')) {
        const std::string v = option == "default" ? "" : option;
        options.push_back(json::object{{"value", v}, {"label", option}, {"selected", v == value(f.key)}});
      }
      o["options"] = std::move(options);
    }
    o["has_options"] = f.kind == FieldKind::kSelect;
    fields.push_back(std::move(o));
  }
  m["fields"] = std::move(fields);
  for (const auto& [key, prefix, list] : {std::tuple{"notify", "notify.", &choices.channels},
                                          std::tuple{"depends_on", "dep.", &choices.monitors}}) {
    json::array boxes;
    for (const auto& name : *list)
      boxes.push_back(json::object{{"name", std::string(prefix) + name},
                                   {"label", name},
                                   {"checked", !value(std::string(prefix) + name).empty()}});
    m[std::string(key) + "_boxes"] = std::move(boxes);
    set_text(m, std::string(key) + "_error", field == key ? error : "");
  }
  return m;
}

}  // namespace trainwatch::web
