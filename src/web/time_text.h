// Times and durations as people read them on the pages: "3 min ago", "in 2 h",
// "down for 3 min", with the exact time in UTC for the tooltip,
// "2026-12-06 04:45:48 UTC". A raw RFC 3339 string stays in `datetime` attributes and the
// API, never in the text a person reads. Pure.
//
// Templates show a time as
//   {{#since_t}}<time datetime="{{iso}}" title="{{utc}}" data-ago>{{ago}}</time>{{/since_t}}
// and static/times.js moves the "ago" text on with the clock between two renders.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include "core/clock.h"

namespace trainwatch::web {

// Up to two units, the larger first: "0 s", "45 s", "3 min", "2 h 5 min", "1 day 4 h",
// "12 days". Below a second: "250 ms". Negative durations read as their size.
std::string duration_words(Millis d);

// "just now" within 5 s; "45 s ago", "3 min ago", "2 h 5 min ago", "3 days ago"; for a
// time ahead of `now`, "in 3 min".
std::string ago_text(SystemTime t, SystemTime now);

// "2026-12-06 04:45:48 UTC".
std::string utc_text(SystemTime t);

// {"iso": RFC 3339, "ago": ago_text, "for": duration_words(now - t), "utc": utc_text}: what
// the <time> markup above reads ("for 3 min" reads {{for}} with data-for).
boost::json::object time_json(SystemTime t, SystemTime now);

// For each key of `row` holding an RFC 3339 time (as the JSON views write them), adds
// key + "_t": its time_json, and key + "_utc": its utc_text. Other values are left alone.
void add_time_fields(boost::json::object& row, std::initializer_list<const char*> keys, SystemTime now);

// "2026-12-06 04:45:48 UTC" for an RFC 3339 time; any other text as it is.
std::string utc_text_of(std::string_view rfc3339);

}  // namespace trainwatch::web
