// Which of a status page's announcements show at a time: each from its `from` (inclusive)
// until its `until` (exclusive), in the file's order. `now` comes from the server's Clock,
// so a test moves it instead of waiting for a window to open.
#pragma once

#include <span>
#include <vector>

#include "config/web_config.h"

namespace trainwatch::web {

bool announcement_visible(const StatusPageAnnouncement& announcement, SystemTime now);

std::vector<const StatusPageAnnouncement*> visible_announcements(
    std::span<const StatusPageAnnouncement> announcements, SystemTime now);

}  // namespace trainwatch::web
