#include "web/atom_feed.h"

#include <gtest/gtest.h>

#include "core/time_format.h"

namespace trainwatch::web {
namespace {

SystemTime at(const char* text) { return *parse_rfc3339(text); }

AtomEntry entry(std::string id, const char* updated) {
  AtomEntry e;
  e.id = std::move(id);
  e.title = "title of " + e.id;
  e.updated = at(updated);
  e.link = "http://h/status/p#" + e.id;
  e.content_html = "<p>x</p>";
  return e;
}

AtomFeed feed_of(std::vector<AtomEntry> entries) {
  AtomFeed f;
  f.id = "urn:trainwatch:status:p";
  f.title = "Page";
  f.updated = at("2026-01-01T00:00:00Z");
  f.self_url = "http://h/status/p/feed.atom";
  f.page_url = "http://h/status/p";
  f.entries = std::move(entries);
  return f;
}

size_t count(const std::string& text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(XmlEscape, EscapesMarkupAndQuotes) {
  EXPECT_EQ(xml_escape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
  EXPECT_EQ(xml_escape("plain é ✕"), "plain é ✕");
}

TEST(XmlEscape, ReplacesWhatXmlCannotHoldAndKeepsWhitespace) {
  EXPECT_EQ(xml_escape(std::string("a\0b\x01\x1f", 5)),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(xml_escape("t\tn\nr\r"), "t\tn\nr\r");
  EXPECT_EQ(xml_escape("bad \xC3( utf8"), "bad \xEF\xBF\xBD( utf8");
  EXPECT_EQ(xml_escape("non\xEF\xBF\xBF"
                       "char"),
            "non\xEF\xBF\xBD"
            "char");
}

TEST(AtomXml, AnEmptyFeedHasItsHeadAndTheFallbackTime) {
  const std::string xml = atom_xml(feed_of({}));
  EXPECT_NE(xml.find("<feed xmlns=\"http://www.w3.org/2005/Atom\">"), std::string::npos);
  EXPECT_NE(xml.find("<id>urn:trainwatch:status:p</id>"), std::string::npos);
  EXPECT_NE(xml.find("<updated>2026-01-01T00:00:00.000Z</updated>"), std::string::npos);
  EXPECT_NE(
      xml.find("<link rel=\"self\" type=\"application/atom+xml\" href=\"http://h/status/p/feed.atom\"/>"),
      std::string::npos);
  EXPECT_NE(xml.find("<link rel=\"alternate\" type=\"text/html\" href=\"http://h/status/p\"/>"),
            std::string::npos);
  EXPECT_EQ(count(xml, "<entry>"), 0u);
  EXPECT_NE(xml.find("</feed>"), std::string::npos);
}

TEST(AtomXml, EntriesGoNewestFirstAndDateTheFeed) {
  const std::string xml =
      atom_xml(feed_of({entry("urn:a", "2026-03-01T00:00:00Z"), entry("urn:c", "2026-05-01T00:00:00Z"),
                        entry("urn:b", "2026-04-01T00:00:00Z")}));
  const size_t a = xml.find("<id>urn:a</id>");
  const size_t b = xml.find("<id>urn:b</id>");
  const size_t c = xml.find("<id>urn:c</id>");
  ASSERT_NE(a, std::string::npos);
  EXPECT_LT(c, b);
  EXPECT_LT(b, a);
  // The feed's updated is its newest entry's, written before any entry.
  EXPECT_LT(xml.find("<updated>2026-05-01T00:00:00.000Z</updated>"), xml.find("<entry>"));
}

TEST(AtomXml, EqualTimesAreOrderedByIdWhateverTheInputOrder) {
  const std::string one =
      atom_xml(feed_of({entry("urn:y", "2026-03-01T00:00:00Z"), entry("urn:x", "2026-03-01T00:00:00Z")}));
  const std::string two =
      atom_xml(feed_of({entry("urn:x", "2026-03-01T00:00:00Z"), entry("urn:y", "2026-03-01T00:00:00Z")}));
  EXPECT_EQ(one, two);
  EXPECT_LT(one.find("urn:x"), one.find("urn:y"));
}

TEST(AtomXml, KeepsOnlyTheNewestEntriesUpToTheBound) {
  std::vector<AtomEntry> many;
  for (size_t i = 0; i < kMaxAtomEntries + 7; ++i) {
    AtomEntry e = entry("urn:e" + std::to_string(i), "2026-01-01T00:00:00Z");
    e.updated += std::chrono::minutes(i);
    many.push_back(std::move(e));
  }
  const std::string xml = atom_xml(feed_of(std::move(many)));
  EXPECT_EQ(count(xml, "<entry>"), kMaxAtomEntries);
  EXPECT_NE(xml.find("<id>urn:e" + std::to_string(kMaxAtomEntries + 6) + "</id>"), std::string::npos);
  EXPECT_EQ(xml.find("<id>urn:e6</id>"), std::string::npos);  // among the 7 oldest, left out
  EXPECT_NE(xml.find("<id>urn:e7</id>"), std::string::npos);
}

TEST(AtomXml, EveryTextAndLinkIsEscaped) {
  AtomEntry e = entry("urn:<&>", "2026-03-01T00:00:00Z");
  e.title = "db <primary> & \"replica\" 'b'";
  e.link = "http://h/status/p#a\"b";
  e.content_html = "<p>a &amp; b</p>";
  AtomFeed f = feed_of({e});
  f.title = "Ops & <ML>";
  const std::string xml = atom_xml(f);
  EXPECT_NE(xml.find("<title>db &lt;primary&gt; &amp; &quot;replica&quot; &apos;b&apos;</title>"),
            std::string::npos);
  EXPECT_NE(xml.find("<id>urn:&lt;&amp;&gt;</id>"), std::string::npos);
  EXPECT_NE(xml.find("href=\"http://h/status/p#a&quot;b\""), std::string::npos);
  EXPECT_NE(xml.find("<content type=\"html\">&lt;p&gt;a &amp;amp; b&lt;/p&gt;</content>"), std::string::npos);
  EXPECT_NE(xml.find("<title>Ops &amp; &lt;ML&gt;</title>"), std::string::npos);
  EXPECT_EQ(xml.find("<ML>"), std::string::npos);
}

}  // namespace
}  // namespace trainwatch::web
