#include "web/announcements.h"

namespace trainwatch::web {

bool announcement_visible(const StatusPageAnnouncement& announcement, SystemTime now) {
  return announcement.from <= now && now < announcement.until;
}

std::vector<const StatusPageAnnouncement*> visible_announcements(
    std::span<const StatusPageAnnouncement> announcements, SystemTime now) {
  std::vector<const StatusPageAnnouncement*> out;
  for (const StatusPageAnnouncement& a : announcements) {
    if (announcement_visible(a, now)) out.push_back(&a);
  }
  return out;
}

}  // namespace trainwatch::web
