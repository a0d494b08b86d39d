#include "views/incident_views.h"

#include <gtest/gtest.h>

#include "core/time_format.h"

namespace trainwatch::views {
namespace {

TEST(CheckUpdate, TakesEachKnownStatusAndKeepsTheTextAsWritten) {
  for (IncidentUpdateStatus s : kIncidentUpdateStatuses) {
    auto ok = check_update(to_string(s), "  <b>Loader</b> hangs  ");
    ASSERT_TRUE(ok.ok()) << ok.error().message;
    EXPECT_EQ(ok->status, s);
    EXPECT_EQ(ok->text, "  <b>Loader</b> hangs  ");
  }
}

TEST(CheckUpdate, AnUnknownStatusNamesTheAllowedOnes) {
  auto bad = check_update("fixed", "done");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, "update.invalid");
  EXPECT_NE(bad.error().message.find("investigating, identified, monitoring, resolved"), std::string::npos)
      << bad.error().message;
}

TEST(CheckUpdate, TheTextIsBoundedAndNotBlank) {
  EXPECT_TRUE(check_update("monitoring", std::string(kMaxIncidentUpdateTextBytes, 'x')).ok());
  auto long_text = check_update("monitoring", std::string(kMaxIncidentUpdateTextBytes + 1, 'x'));
  ASSERT_FALSE(long_text.ok());
  EXPECT_NE(long_text.error().message.find("at most 4096"), std::string::npos) << long_text.error().message;
  EXPECT_FALSE(check_update("monitoring", " \n\t").ok());
  EXPECT_FALSE(check_update("monitoring", std::string("a\0b", 3)).ok());
}

TEST(ParseUpdateBody, ReadsStatusAndText) {
  auto ok = parse_update_body(R"({"status": "identified", "text": "disk full on node 3"})");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->status, IncidentUpdateStatus::kIdentified);
  EXPECT_EQ(ok->text, "disk full on node 3");
}

TEST(ParseUpdateBody, RefusesWhatIsNotAnUpdate) {
  for (const char* body : {"", "[]", "not json", R"({"text": "x"})", R"({"status": 1, "text": "x"})",
                           R"({"status": "resolved"})", R"({"status": "resolved", "text": 5})",
                           R"({"status": "resolved", "text": "x", "author": "me"})"}) {
    auto bad = parse_update_body(body);
    EXPECT_FALSE(bad.ok()) << body;
    if (!bad.ok()) {
      EXPECT_EQ(bad.error().code, "update.invalid") << body;
    }
  }
  EXPECT_FALSE(parse_update_body(std::string(kMaxUpdateBodyBytes + 1, ' ')).ok());
}

TEST(ParseIncidentId, TakesOnlyAPositiveNumber) {
  EXPECT_EQ(parse_incident_id("42"), 42);
  for (const char* bad : {"", "0", "-3", "4x", " 4", "99999999999999999999"}) {
    EXPECT_FALSE(parse_incident_id(bad)) << bad;
  }
}

TEST(IncidentUpdateJson, ShowsTimeStatusAndText) {
  IncidentUpdate u{7, 3, *parse_rfc3339("2026-05-01T02:00:00Z"), IncidentUpdateStatus::kResolved, "back up"};
  auto o = incident_update_json(u);
  EXPECT_EQ(o.at("id").as_int64(), 7);
  EXPECT_EQ(o.at("at").as_string(), "2026-05-01T02:00:00.000Z");
  EXPECT_EQ(o.at("status").as_string(), "resolved");
  EXPECT_EQ(o.at("text").as_string(), "back up");
}

}  // namespace
}  // namespace trainwatch::views
