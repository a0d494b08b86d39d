// A status page's Atom feed, built from the page's own model (web/status_page.h), the
// one every visitor gets: a feed reader sees what an anonymous visitor of the page sees,
// nothing more. Entries: each incident the page lists (its updates, newest first, in the
// content; `updated` its latest change), each monitor the page shows in maintenance, and
// each announcement the page shows now. Windows that have not begun are not on the page,
// so they are not in the feed either. At most kMaxAtomEntries, the newest. Pure.
#pragma once

#include <string_view>

#include <boost/json.hpp>

#include "web/atom_feed.h"

namespace trainwatch::web {

// `base_url`: scheme and host the reader reached the server at ("http://host:8080"; ""
// leaves the links relative). A page without entries is dated by the model's updated_at.
AtomFeed status_feed(const boost::json::object& page_model, std::string_view base_url);

}  // namespace trainwatch::web
