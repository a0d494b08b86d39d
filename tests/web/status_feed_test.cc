#include "web/status_feed.h"

#include <gtest/gtest.h>

#include "core/time_format.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;

SystemTime at(const char* text) { return *parse_rfc3339(text); }

json::object incident(int64_t id, const char* started, json::value ended, json::array updates) {
  const bool ongoing = ended.is_null();
  return json::object{{"id", id},           {"monitor", "api"},   {"cause", "HTTP 503"},
                      {"started", started}, {"ended", ended},     {"ongoing", ongoing},
                      {"duration", "4m"},   {"updates", updates}, {"has_updates", !updates.empty()}};
}

json::object update(const char* status_title, const char* when, const char* text) {
  return json::object{{"status_title", status_title}, {"at", when}, {"text", text}};
}

json::object model() {
  return json::object{{"slug", "ml"},
                      {"title", "ML <status>"},
                      {"description", ""},
                      {"updated_at", "2026-05-01T12:00:00.000Z"},
                      {"announcements", json::array()},
                      {"groups", json::array()},
                      {"ongoing_incidents", json::array()},
                      {"incident_days", json::array()}};
}

TEST(StatusFeed, AnEmptyPageIsAFeedWithNoEntryDatedByThePage) {
  const AtomFeed feed = status_feed(model(), "http://h:8080");
  EXPECT_EQ(feed.id, "urn:trainwatch:status:ml");
  EXPECT_EQ(feed.title, "ML <status>");
  EXPECT_EQ(feed.page_url, "http://h:8080/status/ml");
  EXPECT_EQ(feed.self_url, "http://h:8080/status/ml/feed.atom");
  EXPECT_EQ(feed.updated, at("2026-05-01T12:00:00Z"));
  EXPECT_TRUE(feed.entries.empty());
}

TEST(StatusFeed, AnIncidentIsOneEntryDatedByItsLatestChangeWithItsUpdatesNewestFirst) {
  json::object m = model();
  // The page's model lists updates newest first already; the feed keeps that order.
  m["ongoing_incidents"] =
      json::array{incident(7, "2026-05-01T10:00:00.000Z", nullptr,
                           json::array{update("Identified", "2026-05-01T11:00:00.000Z", "NFS <lost> & back"),
                                       update("Investigating", "2026-05-01T10:30:00.000Z", "looking")})};
  const AtomFeed feed = status_feed(m, "");
  ASSERT_EQ(feed.entries.size(), 1u);
  const AtomEntry& e = feed.entries[0];
  EXPECT_EQ(e.id, "urn:trainwatch:status:ml:incident:7");
  EXPECT_EQ(e.title, "api: HTTP 503 (ongoing)");
  EXPECT_EQ(e.updated, at("2026-05-01T11:00:00Z"));
  EXPECT_EQ(e.published, at("2026-05-01T10:00:00Z"));
  EXPECT_EQ(e.link, "/status/ml#incident-7");
  // Escaped once as HTML here; the XML writer escapes it once more.
  const size_t identified = e.content_html.find("<strong>Identified</strong>");
  ASSERT_NE(identified, std::string::npos);
  EXPECT_LT(identified, e.content_html.find("<strong>Investigating</strong>"));
  EXPECT_NE(e.content_html.find("NFS &lt;lost&gt; &amp; back"), std::string::npos);
}

TEST(StatusFeed, AnEndedIncidentIsDatedByItsEndWhenNoUpdateCameLater) {
  json::object m = model();
  m["incident_days"] = json::array{json::object{
      {"date", "2026-04-30"},
      {"incidents",
       json::array{incident(3, "2026-04-30T08:00:00.000Z", "2026-04-30T09:00:00.000Z",
                            json::array{update("Monitoring", "2026-04-30T08:30:00.000Z", "x")})}}}};
  const AtomFeed feed = status_feed(m, "");
  ASSERT_EQ(feed.entries.size(), 1u);
  EXPECT_EQ(feed.entries[0].title, "api: HTTP 503 (resolved)");
  EXPECT_EQ(feed.entries[0].updated, at("2026-04-30T09:00:00Z"));
}

TEST(StatusFeed, MaintenanceAndAnnouncementsThePageShowsAreEntries) {
  json::object m = model();
  json::object in_window{{"name", "db"},
                         {"status", "maintenance"},
                         {"since", "2026-05-01T09:00:00.000Z"},
                         {"maintenance_until", "2026-05-01T14:00:00.000Z"}};
  json::object up{{"name", "web"},
                  {"status", "up"},
                  {"since", "2026-05-01T09:00:00.000Z"},
                  {"maintenance_until", nullptr}};
  m["groups"] = json::array{json::object{{"name", "g"}, {"monitors", json::array{in_window, up}}}};
  m["announcements"] = json::array{json::object{{"title", "Upgrade"},
                                                {"text", "Nodes restart"},
                                                {"from", "2026-05-01T08:00:00.000Z"},
                                                {"until", "2026-05-02T08:00:00.000Z"}}};
  const AtomFeed feed = status_feed(m, "");
  ASSERT_EQ(feed.entries.size(), 2u);
  EXPECT_EQ(feed.entries[0].id, "urn:trainwatch:status:ml:maintenance:db:2026-05-01T14:00:00.000Z");
  EXPECT_EQ(feed.entries[0].title, "db: maintenance until 2026-05-01 14:00:00 UTC");
  EXPECT_EQ(feed.entries[1].title, "Upgrade");
  EXPECT_EQ(feed.entries[1].updated, at("2026-05-01T08:00:00Z"));
}

}  // namespace
}  // namespace trainwatch::web
