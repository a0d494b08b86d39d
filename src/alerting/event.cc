#include "alerting/event.h"
#include "core/enum_names.h"
#include "core/json_text.h"

#include <boost/json.hpp>

namespace trainwatch::alerting {

namespace json = boost::json;

namespace {

constexpr EnumNames<EventKind, 5> kEventKindNames{{{EventKind::kDown, "down"},
                                                   {EventKind::kUp, "up"},
                                                   {EventKind::kReminder, "reminder"},
                                                   {EventKind::kTest, "test"},
                                                   {EventKind::kWarning, "warning"}}};

}  // namespace

std::string_view to_string(EventKind kind) { return name_of(kEventKindNames, kind); }

std::optional<EventKind> event_kind_from_string(std::string_view text) {
  return value_of(kEventKindNames, text);
}

namespace {

json::value optional_ms(const std::optional<SystemTime>& t) {
  return t ? json::value(to_unix_ms(*t)) : json::value(nullptr);
}

std::optional<SystemTime> read_ms(const json::object& o, const char* key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_int64()) return std::nullopt;
  return from_unix_ms(v->as_int64());
}

std::string read_string(const json::object& o, const char* key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

// A list of [label, value] pairs; malformed entries are skipped.
std::vector<std::pair<std::string, std::string>> read_pairs(const json::object& o, std::string_view key) {
  std::vector<std::pair<std::string, std::string>> out;
  const json::value* list = o.if_contains(key);
  if (list == nullptr || !list->is_array()) return out;
  for (const auto& pair : list->as_array()) {
    if (!pair.is_array() || pair.as_array().size() != 2 || !pair.as_array()[0].is_string() ||
        !pair.as_array()[1].is_string()) {
      continue;
    }
    out.emplace_back(std::string(pair.as_array()[0].as_string()),
                     std::string(pair.as_array()[1].as_string()));
  }
  return out;
}

}  // namespace

std::string event_to_json(const AlertEvent& e) {
  json::array tags;
  for (const auto& t : e.tags) tags.emplace_back(t);
  json::array affected;
  for (const auto& a : e.affected) affected.emplace_back(a);
  json::array details;
  for (const auto& [label, value] : e.details)
    details.push_back(json::array{json::string(label), json::string(value)});
  json::array labels;
  for (const auto& [label, value] : e.labels)
    labels.push_back(json::array{json::string(label), json::string(value)});
  json::object o{{"kind", to_string(e.kind)},
                 {"monitor", e.monitor},
                 {"monitor_type", e.monitor_type},
                 {"target", e.target},
                 {"tags", std::move(tags)},
                 {"incident_id", e.incident_id ? json::value(*e.incident_id) : json::value(nullptr)},
                 {"cause", e.cause},
                 {"at_ms", to_unix_ms(e.at)},
                 {"since_ms", optional_ms(e.since)},
                 {"ended_ms", optional_ms(e.ended)},
                 {"http_status", e.http_status},
                 {"body_excerpt", e.body_excerpt},
                 {"latency_ms", e.latency_ms},
                 {"details", std::move(details)},
                 {"affected", std::move(affected)},
                 {"url", e.url},
                 {"snooze_url", e.snooze_url},
                 {"labels", std::move(labels)}};
  return json_text(o);
}

Result<AlertEvent> event_from_json(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return make_error("alerting.bad_event", "the stored event is not a JSON object");
  const json::object& o = v.as_object();
  auto kind = event_kind_from_string(read_string(o, "kind"));
  if (!kind) return make_error("alerting.bad_event", "the stored event has an unknown kind");
  AlertEvent e;
  e.kind = *kind;
  e.monitor = read_string(o, "monitor");
  e.monitor_type = read_string(o, "monitor_type");
  e.target = read_string(o, "target");
  if (const json::value* tags = o.if_contains("tags"); tags != nullptr && tags->is_array()) {
    for (const auto& t : tags->as_array()) {
      if (t.is_string()) e.tags.emplace_back(t.as_string());
    }
  }
  if (const json::value* id = o.if_contains("incident_id"); id != nullptr && id->is_int64())
    e.incident_id = id->as_int64();
  if (const json::value* list = o.if_contains("affected"); list != nullptr && list->is_array()) {
    for (const auto& a : list->as_array()) {
      if (a.is_string()) e.affected.emplace_back(a.as_string());
    }
  }
  e.cause = read_string(o, "cause");
  e.at = read_ms(o, "at_ms").value_or(SystemTime{});
  e.since = read_ms(o, "since_ms");
  e.ended = read_ms(o, "ended_ms");
  if (const json::value* s = o.if_contains("http_status"); s != nullptr && s->is_int64()) {
    e.http_status = static_cast<int>(s->as_int64());
  }
  e.body_excerpt = read_string(o, "body_excerpt");
  if (const json::value* l = o.if_contains("latency_ms"); l != nullptr && l->is_number())
    e.latency_ms = l->to_number<double>();
  e.url = read_string(o, "url");
  e.snooze_url = read_string(o, "snooze_url");
  e.details = read_pairs(o, "details");
  e.labels = read_pairs(o, "labels");
  return e;
}

}  // namespace trainwatch::alerting
