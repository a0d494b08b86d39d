#include "alerting/message_template.h"

#include <algorithm>

#include <kainjow/mustache.hpp>

#include "alerting/providers/provider_util.h"
#include "core/duration.h"
#include "core/time_format.h"

namespace trainwatch::alerting {

namespace {

namespace mustache = kainjow::mustache;

constexpr char kBadTemplate[] = "alerting.bad_template";

Error bad_template(const std::string& what) { return Error{kBadTemplate, what}; }

bool known_variable(std::string_view name) {
  return std::find(kTemplateVariables.begin(), kTemplateVariables.end(), name) != kTemplateVariables.end();
}

std::string_view trimmed(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

std::string known_list() {
  std::string out;
  for (auto name : kTemplateVariables) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

// What is wrong with the tag `inside` ({{...}} without its braces) that starts at byte
// `at` of the template; "" when nothing.
std::string tag_problem(std::string_view inside, size_t at) {
  const std::string where = " at character " + std::to_string(at + 1);
  std::string_view tag = trimmed(inside);
  if (tag.empty()) return "an empty tag" + where;
  const char sigil = tag.front();
  if (sigil == '!') return "";  // a comment
  if (sigil == '>') return "a partial ({{>...}})" + where + "; templates have no partials";
  if (sigil == '=') return "a change of delimiters" + where + "; templates use {{ }} only";
  if (sigil == '#' || sigil == '^' || sigil == '/' || sigil == '&') tag = trimmed(tag.substr(1));
  if (known_variable(tag)) return "";
  return "{{" + std::string(tag) + "}}" + where + " is not a variable; expected one of: " + known_list();
}

// Every tag's name is a variable of the list (kainjow renders an unknown one as "").
std::string first_tag_problem(const std::string& text) {
  size_t pos = 0;
  while ((pos = text.find("{{", pos)) != std::string::npos) {
    const bool triple = text.compare(pos, 3, "{{{") == 0;
    const size_t open = pos + (triple ? 3 : 2);
    const size_t close = text.find(triple ? "}}}" : "}}", open);
    if (close == std::string::npos)
      return "a tag opened at character " + std::to_string(pos + 1) + " is not closed";
    if (auto problem = tag_problem(std::string_view(text).substr(open, close - open), pos); !problem.empty())
      return problem;
    pos = close + (triple ? 3 : 2);
  }
  return "";
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string label(const AlertEvent& e, std::string_view name) {
  for (const auto& [key, value] : e.labels) {
    if (key == name) return value;
  }
  return "";
}

// The variables the alert has; the others stay absent, so their sections are skipped.
mustache::data variables(const AlertEvent& e, const Message& m, SystemTime now) {
  std::vector<std::pair<std::string_view, std::string>> values{
      {"state", std::string(to_string(e.kind))},
      {"monitor", e.monitor},
      {"monitor_type", e.monitor_type},
      {"target", e.target},
      {"tags", joined(e.tags)},
      {"title", m.title},
      {"headline", m.headline},
      {"summary", m.summary},
      {"cause", e.cause},
      {"at", format_rfc3339(e.at)},
      {"since", e.since ? format_rfc3339(*e.since) : ""},
      {"duration",
       e.since ? format_duration(std::chrono::duration_cast<Millis>((e.ended ? *e.ended : now) - *e.since))
               : ""},
      {"incident_id", e.incident_id ? std::to_string(*e.incident_id) : ""},
      {"http_status", e.http_status != 0 ? std::to_string(e.http_status) : ""},
      {"url", e.url},
      {"snooze_url", e.snooze_url},
      {"job", label(e, "training_job")},
      {"reason", label(e, "reason")},
      {"rank", label(e, "rank")},
      {"node", label(e, "node")},
      {"affected", joined(e.affected)},
  };
  mustache::data data;
  for (const auto& [name, value] : values) {
    if (!value.empty()) data.set(std::string(name), value);  // set() copies: it takes a const data&
  }
  return data;
}

}  // namespace

Result<MessageTemplate> MessageTemplate::compile(std::string text) {
  if (text.size() > kMaxTemplateBytes)
    return bad_template("found " + std::to_string(text.size()) + " bytes; expected at most " +
                        std::to_string(kMaxTemplateBytes));
  if (auto problem = first_tag_problem(text); !problem.empty()) return bad_template(problem);
  const mustache::mustache parsed(text);
  if (!parsed.is_valid()) return bad_template(parsed.error_message());
  return MessageTemplate(std::move(text));
}

std::string MessageTemplate::render(const AlertEvent& event, const Message& message, SystemTime now) const {
  mustache::mustache parsed(text_);
  parsed.set_custom_escape([](const std::string& s) { return s; });  // plain text: see the header
  return cut_text(parsed.render(variables(event, message, now)), kMaxTemplatedBytes);
}

}  // namespace trainwatch::alerting
