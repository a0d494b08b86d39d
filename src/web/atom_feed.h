// An Atom feed (RFC 4287) as text: what a feed reader subscribes to. Pure: entries in,
// XML out. The status page's feed (web/status_feed.h) fills the entries from the page's
// model, so what a reader gets is what the page shows.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"

namespace trainwatch::web {

// A reader polls the whole document each time; the newest entries are all it needs, and
// the bound keeps the document small however long a page's history is.
inline constexpr size_t kMaxAtomEntries = 50;

struct AtomEntry {
  std::string id;  // a URI that names this entry for good (urn:…): readers key on it
  std::string title;
  SystemTime updated{};  // its latest change: readers show it again when this moves
  std::optional<SystemTime> published;
  std::string link;          // the page that shows it, absolute
  std::string content_html;  // HTML, escaped once more as the XML is written
};

struct AtomFeed {
  std::string id;
  std::string title;
  std::string subtitle;  // omitted when empty
  // The feed's own `updated` when it has no entry; with entries, the newest entry's.
  SystemTime updated{};
  std::string self_url;  // the feed's address
  std::string page_url;  // the page it follows (rel="alternate")
  std::vector<AtomEntry> entries;
};

// The document: entries newest first (by `updated`, then by id, so the order never
// depends on the input's), at most kMaxAtomEntries of them; times in RFC 3339 UTC.
std::string atom_xml(AtomFeed feed);

// Text made safe for XML 1.0 element text and quoted attributes: & < > " ' as entities,
// ill-formed UTF-8 and the characters XML 1.0 forbids outright (C0 controls but tab,
// newline and return; U+FFFE, U+FFFF) as U+FFFD, since no entity can carry those.
std::string xml_escape(std::string_view text);

}  // namespace trainwatch::web
