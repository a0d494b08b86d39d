#include "web/status_feed.h"

#include <string>

#include "core/html_escape.h"
#include "core/time_format.h"
#include "web/time_text.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;

std::string string_at(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::optional<SystemTime> time_at(const json::object& o, std::string_view key) {
  return parse_rfc3339(string_at(o, key));
}

// Entry ids name the page too: the same incident on two pages is two subscriptions' news.
std::string entry_id(const std::string& slug, std::string_view kind, std::string_view what) {
  return "urn:trainwatch:status:" + slug + ":" + std::string(kind) + ":" + std::string(what);
}

// The incident's story as the page tells it: when (and, once ended, how long), what
// caused it, then each update newest first.
std::string incident_html(const json::object& row) {
  const bool ongoing = row.at("ongoing").as_bool();
  std::string html = "<p>";
  if (ongoing) {
    // No "for 4 min": a reader keeps the entry, and the length would go stale in it.
    html += "Ongoing since " + html_escape(utc_text_of(string_at(row, "started")));
  } else {
    html += "From " + html_escape(utc_text_of(string_at(row, "started"))) + " to " +
            html_escape(utc_text_of(string_at(row, "ended"))) + " (" +
            html_escape(string_at(row, "duration")) + ")";
  }
  html += ".</p>";
  if (const std::string by = string_at(row, "caused_by"); !by.empty())
    html += "<p>Caused by " + html_escape(by) + ".</p>";
  for (const json::value& u : row.at("updates").as_array()) {
    const json::object& update = u.as_object();
    html += "<p><strong>" + html_escape(string_at(update, "status_title")) + "</strong> (" +
            html_escape(utc_text_of(string_at(update, "at"))) +
            "): " + html_escape(string_at(update, "text")) + "</p>";
  }
  return html;
}

AtomEntry incident_entry(const json::object& row, const std::string& slug, const std::string& page_url) {
  const std::string id = std::to_string(row.at("id").as_int64());
  AtomEntry e;
  e.id = entry_id(slug, "incident", id);
  e.title = string_at(row, "monitor") + ": " + string_at(row, "cause") +
            (row.at("ongoing").as_bool() ? " (ongoing)" : " (resolved)");
  e.published = time_at(row, "started");
  // Its latest change: opened, ended, or the newest update.
  e.updated = e.published.value_or(SystemTime{});
  if (auto ended = time_at(row, "ended"); ended && *ended > e.updated) e.updated = *ended;
  for (const json::value& u : row.at("updates").as_array()) {
    if (auto at = time_at(u.as_object(), "at"); at && *at > e.updated) e.updated = *at;
  }
  e.link = page_url + "#incident-" + id;
  e.content_html = incident_html(row);
  return e;
}

// A monitor the page shows in maintenance. The page tells when the window ends, not when
// it began, so the entry is dated by the monitor's state (`since`) and named by the end.
AtomEntry maintenance_entry(const json::object& monitor, const std::string& slug,
                            const std::string& page_url) {
  const std::string name = string_at(monitor, "name");
  const std::string until = string_at(monitor, "maintenance_until");
  AtomEntry e;
  e.id = entry_id(slug, "maintenance", name + ":" + until);
  e.title = name + ": maintenance" + (until.empty() ? std::string() : " until " + utc_text_of(until));
  e.updated = time_at(monitor, "since").value_or(SystemTime{});
  e.link = page_url;
  e.content_html = "<p>" + html_escape(name) + " is in a maintenance window" +
                   (until.empty() ? std::string() : " until " + html_escape(utc_text_of(until))) +
                   "; its checks go on, and the time counts as up.</p>";
  return e;
}

AtomEntry announcement_entry(const json::object& a, const std::string& slug, const std::string& page_url) {
  const std::string from = string_at(a, "from");
  AtomEntry e;
  // Named by its window and title: the page's config gives an announcement no id.
  e.id = entry_id(slug, "announcement", from + ":" + string_at(a, "until") + ":" + string_at(a, "title"));
  e.title = string_at(a, "title");
  e.published = time_at(a, "from");
  e.updated = e.published.value_or(SystemTime{});
  e.link = page_url;
  e.content_html = "<p>" + html_escape(string_at(a, "text")) + "</p><p>From " +
                   html_escape(utc_text_of(from)) + " to " + html_escape(utc_text_of(string_at(a, "until"))) +
                   ".</p>";
  return e;
}

}  // namespace

AtomFeed status_feed(const json::object& model, std::string_view base_url) {
  const std::string slug = string_at(model, "slug");
  AtomFeed feed;
  feed.page_url = std::string(base_url) + "/status/" + slug;
  feed.self_url = feed.page_url + "/feed.atom";
  feed.id = "urn:trainwatch:status:" + slug;
  feed.title = string_at(model, "title");
  feed.subtitle = string_at(model, "description");
  feed.updated = time_at(model, "updated_at").value_or(SystemTime{});
  for (const json::value& row : model.at("ongoing_incidents").as_array())
    feed.entries.push_back(incident_entry(row.as_object(), slug, feed.page_url));
  for (const json::value& day : model.at("incident_days").as_array()) {
    for (const json::value& row : day.as_object().at("incidents").as_array())
      feed.entries.push_back(incident_entry(row.as_object(), slug, feed.page_url));
  }
  for (const json::value& group : model.at("groups").as_array()) {
    for (const json::value& m : group.as_object().at("monitors").as_array()) {
      if (string_at(m.as_object(), "status") == "maintenance")
        feed.entries.push_back(maintenance_entry(m.as_object(), slug, feed.page_url));
    }
  }
  for (const json::value& a : model.at("announcements").as_array())
    feed.entries.push_back(announcement_entry(a.as_object(), slug, feed.page_url));
  return feed;
}

}  // namespace trainwatch::web
