// The public status page's content, as one JSON object: GET /api/v1/status/{slug} returns
// it as is and GET /status/{slug} renders it through templates/status_page.mustache, so
// the two never disagree.
//
// Reads: per monitor on the page, at most kDays daily rollup rows and kMaxIncidentsRead
// incidents (the newest; older ones beyond that are not listed in the 30-day history);
// then the updates of the listed incidents in one read. Announcements show while `now` is
// in their window (web/announcements.h).
#pragma once

#include <boost/json.hpp>

#include "config/config.h"
#include "core/result.h"
#include "engine/engine.h"
#include "storage/store.h"

namespace trainwatch::web {

inline constexpr int kStatusDays = 90;
inline constexpr int kIncidentHistoryDays = 30;
inline constexpr int kMaxIncidentsRead = 100;

Result<boost::json::object> build_status_page(const StatusPageConfig& page, const engine::Engine& engine,
                                              Store& store, SystemTime now);

// The page's HTML from the model above. The 90 day bars of each monitor are written here,
// not by the template engine (1,800 list items through mustache took ~0.5 s a page); every
// text in them goes through html_escape.
std::string render_status_page_html(const boost::json::object& model);

}  // namespace trainwatch::web
