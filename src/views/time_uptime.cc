#include "views/time_uptime.h"

#include <algorithm>

namespace trainwatch::views {
namespace {

int64_t floor_to(int64_t ms, int64_t width) { return ms - (((ms % width) + width) % width); }

int64_t overlap(int64_t a_from, int64_t a_to, int64_t b_from, int64_t b_to) {
  return std::max<int64_t>(0, std::min(a_to, b_to) - std::max(a_from, b_from));
}

}  // namespace

std::vector<UptimeBucket> time_buckets(std::span<const Incident> incidents, int64_t watched_from_ms,
                                       int64_t now_ms, int64_t width_ms, int64_t from_ms, int64_t to_ms) {
  std::vector<UptimeBucket> out;
  if (width_ms <= 0) return out;
  const int64_t end = std::min(to_ms, now_ms);
  for (int64_t start = floor_to(std::max(from_ms, watched_from_ms), width_ms); start < end;
       start += width_ms) {
    const int64_t seen_from = std::max({start, watched_from_ms, from_ms});
    const int64_t seen_to = std::min(start + width_ms, end);
    if (seen_to <= seen_from) continue;
    int64_t down = 0;
    for (const Incident& i : incidents) {
      const int64_t ended = i.ended ? to_unix_ms(*i.ended) : now_ms;
      down += overlap(to_unix_ms(i.started), ended, seen_from, seen_to);
    }
    const int64_t seen = seen_to - seen_from;
    down = std::min(down, seen);  // incidents of one monitor never overlap; a bad row must not go below 0
    // Seconds, rounded up so that a watched bucket is never empty.
    const int64_t checks = (seen + 999) / 1000;
    out.push_back(UptimeBucket{start, checks, std::max<int64_t>(0, checks - (down + 999) / 1000), 0});
  }
  return out;
}

}  // namespace trainwatch::views
