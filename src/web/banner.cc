#include "web/banner.h"

namespace trainwatch::web {

Banner overall_banner(std::span<const BannerInput> monitors) {
  size_t active = 0, down = 0, failing = 0;
  for (const BannerInput& m : monitors) {
    if (m.status == MonitorStatus::kPaused || m.in_maintenance) continue;
    ++active;
    if (m.status == MonitorStatus::kDown) {
      ++down;
    } else if (m.consecutive_failures > 0) {
      ++failing;
    }
  }
  if (active > 0 && down == active) return Banner::kMajorOutage;
  if (down > 0) return Banner::kPartialOutage;
  if (failing > 0) return Banner::kDegraded;
  return Banner::kOperational;
}

std::string_view banner_code(Banner b) {
  switch (b) {
    case Banner::kOperational: return "operational";
    case Banner::kDegraded: return "degraded";
    case Banner::kPartialOutage: return "partial_outage";
    case Banner::kMajorOutage: return "major_outage";
  }
  return "operational";
}

std::string_view banner_text(Banner b) {
  switch (b) {
    case Banner::kOperational: return "All systems operational";
    case Banner::kDegraded: return "Degraded performance";
    case Banner::kPartialOutage: return "Partial outage";
    case Banner::kMajorOutage: return "Major outage";
  }
  return "All systems operational";
}

std::string_view status_word(MonitorStatus s) {
  switch (s) {
    case MonitorStatus::kUp: return "Up";
    case MonitorStatus::kDown: return "Down";
    case MonitorStatus::kPending: return "Pending";
    case MonitorStatus::kPaused: return "Paused";
  }
  return "Pending";
}

std::string_view status_icon(MonitorStatus s) {
  switch (s) {
    case MonitorStatus::kUp: return "\u2713";
    case MonitorStatus::kDown: return "\u2715";
    case MonitorStatus::kPending: return "\u2026";
    case MonitorStatus::kPaused: return "\u275a\u275a";
  }
  return "\u2026";
}

}  // namespace trainwatch::web
