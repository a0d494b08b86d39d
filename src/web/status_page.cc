#include "web/status_page.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/duration.h"
#include "core/html_escape.h"
#include "core/redaction.h"
#include "core/time_format.h"
#include "views/monitor_uptime.h"
#include "views/shown_state.h"
#include "web/announcements.h"
#include "web/banner.h"
#include "web/pages.h"
#include "web/time_text.h"
#include "web/uptime_days.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;

json::object day_json(const DaySegment& d) {
  json::object o;
  o["date"] = d.date;
  o["uptime"] = d.uptime_pct ? json::value(*d.uptime_pct) : json::value(nullptr);
  o["level"] = d.level;
  o["incidents"] = d.incidents;
  o["label"] = d.label;
  return o;
}

// Newest first, as status pages show a timeline: the latest word is what a reader wants.
json::array update_rows(const std::vector<IncidentUpdate>& updates) {
  json::array out;
  for (auto it = updates.rbegin(); it != updates.rend(); ++it) {
    // Only what the admin wrote for the public: the status, the text, the time.
    out.push_back(json::object{{"status", to_string(it->status)},
                               {"status_title", status_title(it->status)},
                               {"at", format_rfc3339(it->at)},
                               {"at_utc", utc_text(it->at)},
                               {"text", it->text}});
  }
  return out;
}

json::object announcement_json(const StatusPageAnnouncement& a) {
  return json::object{{"title", a.title},
                      {"text", a.text},
                      {"severity", a.severity},
                      {"from", format_rfc3339(a.from)},
                      {"until", format_rfc3339(a.until)},
                      {"from_utc", utc_text(a.from)},
                      {"until_utc", utc_text(a.until)}};
}

// `shown`: the page's monitors. A cause upstream that the page does not show is not named:
// the page's owner left that monitor off it.
json::object incident_row(const Incident& i, SystemTime now, const std::vector<IncidentUpdate>& updates,
                          const std::set<std::string>& shown) {
  json::object o;
  // The incident's own number: the page's anchor for it and its feed entry's id.
  o["id"] = i.id;
  o["monitor"] = i.monitor;
  // A status page is public, whoever looks: what a target answered stays off it.
  o["cause"] = i.cause.empty() ? std::string("Unknown cause") : cause_for(i.cause, Audience::kPublic);
  if (!i.caused_by.empty() && shown.contains(i.caused_by)) o["caused_by"] = i.caused_by;
  o["started"] = format_rfc3339(i.started);
  o["ended"] = i.ended ? json::value(format_rfc3339(*i.ended)) : json::value(nullptr);
  o["ongoing"] = !i.ended.has_value();
  o["started_t"] = time_json(i.started, now);
  if (i.ended) o["ended_t"] = time_json(*i.ended, now);
  const auto end = i.ended.value_or(now);
  o["duration"] = duration_words(std::chrono::duration_cast<Millis>(end - i.started));
  o["updates"] = update_rows(updates);
  o["has_updates"] = !updates.empty();
  return o;
}

}  // namespace

namespace {

// One monitor's row: its status now and its day bars over kStatusDays. Its incidents of the
// last kIncidentHistoryDays (or still open) are added to `history`.
Result<json::object> monitor_row(const std::string& name, const engine::MonitorView& view, Store& store,
                                 SystemTime now, std::vector<Incident>& history) {
  const int64_t now_ms = to_unix_ms(now);
  const int64_t window_from = now_ms - now_ms % kDayMs - static_cast<int64_t>(kStatusDays - 1) * kDayMs;
  const int64_t history_from = now_ms - static_cast<int64_t>(kIncidentHistoryDays) * kDayMs;
  auto buckets = views::uptime_buckets(
      store, view, UptimeQuery{name, RollupResolution::kDay, window_from, now_ms + 1}, now);
  if (!buckets) return buckets.error();
  auto incidents = store.incidents(IncidentQuery{name, std::nullopt, kMaxIncidentsRead});
  if (!incidents) return incidents.error();
  std::vector<IncidentStart> starts;
  for (const Incident& i : *incidents) {
    starts.push_back(IncidentStart{to_unix_ms(i.started)});
    const bool recent =
        to_unix_ms(i.started) >= history_from || !i.ended || to_unix_ms(*i.ended) >= history_from;
    if (recent) history.push_back(i);
  }
  json::array days;
  for (const DaySegment& d : day_segments(*buckets, starts, now_ms, kStatusDays)) days.push_back(day_json(d));
  auto pct = uptime_percent(*buckets);
  json::object m;
  m["name"] = name;
  m["type"] = to_string(view.config->type);
  // As shown: "maintenance" inside a window (views/shown_state.h).
  const views::ShownState shown = views::shown_state(view);
  m["status"] = views::shown_code(shown);
  m["status_word"] = views::shown_word(shown);
  m["status_icon"] = views::shown_icon(shown);
  m["since"] = format_rfc3339(view.state.since);
  m["maintenance_until"] =
      view.maintenance_until ? json::value(format_rfc3339(*view.maintenance_until)) : json::value(nullptr);
  m["uptime_90d"] = pct ? json::value(*pct) : json::value(nullptr);
  m["uptime_90d_text"] = pct ? format_percent(*pct) : std::string("no data");
  m["days"] = std::move(days);
  return m;
}

// Newest first: the ongoing incidents as one list, the ended ones grouped by the UTC day
// each started.
struct IncidentLists {
  json::array ongoing;
  json::array days;
};

Result<IncidentLists> incident_lists(std::vector<Incident> history, const std::set<std::string>& shown,
                                     Store& store, SystemTime now) {
  std::sort(history.begin(), history.end(),
            [](const Incident& a, const Incident& b) { return a.started > b.started; });
  // One read for every listed incident's updates (the newest kMaxRowsPerBatch incidents
  // get theirs; a page listing more shows the rest without).
  std::vector<int64_t> ids;
  for (const Incident& i : history) {
    if (ids.size() < Store::kMaxRowsPerBatch) ids.push_back(i.id);
  }
  auto updates = store.incident_updates(ids);
  if (!updates) return updates.error();
  const std::vector<IncidentUpdate> no_updates;
  IncidentLists lists;
  std::string current_day;
  for (const Incident& i : history) {
    const auto it = updates->find(i.id);
    json::object row = incident_row(i, now, it == updates->end() ? no_updates : it->second, shown);
    if (!i.ended) {
      lists.ongoing.push_back(std::move(row));
      continue;
    }
    std::string day = format_rfc3339(i.started).substr(0, 10);
    if (day != current_day) {
      lists.days.push_back(json::object{{"date", day}, {"incidents", json::array()}});
      current_day = day;
    }
    lists.days.back().as_object()["incidents"].as_array().push_back(std::move(row));
  }
  return lists;
}

}  // namespace

Result<json::object> build_status_page(const StatusPageConfig& page, const engine::Engine& engine,
                                       Store& store, SystemTime now) {
  std::vector<BannerInput> banner_inputs;
  std::vector<Incident> history;
  std::set<std::string> shown;
  json::array groups;
  for (const StatusPageGroup& group : page.groups) {
    json::array monitors;
    for (const std::string& name : group.monitors) {
      auto view = engine.monitor(name);
      if (!view) continue;  // removed by a reload since the page was configured
      shown.insert(name);
      banner_inputs.push_back(BannerInput{view->state.status, view->state.consecutive_failures,
                                          view->maintenance_until.has_value()});
      auto row = monitor_row(name, *view, store, now, history);
      if (!row) return row.error();
      monitors.push_back(std::move(*row));
    }
    groups.push_back(json::object{{"name", group.name}, {"monitors", std::move(monitors)}});
  }
  auto incidents = incident_lists(std::move(history), shown, store, now);
  if (!incidents) return incidents.error();

  const Banner banner = overall_banner(banner_inputs);
  json::object out;
  out["slug"] = page.slug;
  out["title"] = page.title;
  out["description"] = page.description;
  out["updated_at"] = format_rfc3339(now);
  out["updated_t"] = time_json(now, now);
  out["banner"] = json::object{{"code", banner_code(banner)}, {"text", banner_text(banner)}};
  json::array announcements;
  for (const StatusPageAnnouncement* a : visible_announcements(page.announcements, now))
    announcements.push_back(announcement_json(*a));
  out["announcements"] = std::move(announcements);
  out["groups"] = std::move(groups);
  out["has_ongoing"] = !incidents->ongoing.empty();
  out["ongoing_incidents"] = std::move(incidents->ongoing);
  out["incident_days"] = std::move(incidents->days);
  return out;
}

std::string render_status_page_html(const json::object& model) {
  json::object m = model;
  m["page_title"] = model.at("title");
  // Advertised in the head, so a browser or feed reader given the page finds its feed.
  const std::string slug(model.at("slug").as_string());
  m["feed_url"] = "/status/" + slug + "/feed.atom";
  m["feed_title"] = std::string(model.at("title").as_string()) + " (Atom feed)";
  for (auto& group : m["groups"].as_array()) {
    for (auto& monitor : group.as_object()["monitors"].as_array()) {
      auto& mo = monitor.as_object();
      std::string bars;
      bars.reserve(64 * kStatusDays);
      // One item a day; its text is the tooltip (shown on hover by CSS) and what a screen
      // reader reads, so it is written once.
      for (const auto& day : mo["days"].as_array()) {
        const auto& d = day.as_object();
        bars += "<li class=\"d-";
        bars += html_escape(d.at("level").as_string());
        bars += "\"><span>";
        bars += html_escape(d.at("label").as_string());
        bars += "</span></li>";
      }
      mo.erase("days");
      mo["days_html"] = bars;
    }
  }
  return render_page("status_page", m);
}

}  // namespace trainwatch::web
