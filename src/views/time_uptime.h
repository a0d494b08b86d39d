// Uptime as time not DOWN, for monitors whose results are not a fixed-rate sample of time:
// heartbeats. A heartbeat stores a result only when its state changes or a deadline
// passes (a success that changes nothing is only a ping row), so its rollups count
// events, not time: a heartbeat down for 80 of 81 minutes holds one good result and one
// failed one, which reads 50 %. Its incidents say exactly when it was DOWN, so its
// buckets are made from them instead, in the rollups' own shape, so that every page sums
// them the same way (uptime = ok / checks):
//
//   checks = seconds of the bucket the monitor was watched (from its first result, up to now)
//   ok     = those seconds not inside an incident
//
// Worked example: first result 10:00, incident 10:01 to (open), now 11:21, one bucket per
// hour: 10:00 checks 3600 ok 60; 11:00 checks 1260 ok 0; uptime 60 / 4860 = 1.23 %.
// Pure.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/model.h"
#include "storage/store.h"

namespace trainwatch::views {

// Buckets of `width_ms` (an hour or a day, aligned on UTC) from `from_ms` up to `to_ms`,
// oldest first; those the monitor was not watched in (before `watched_from_ms`, after
// `now_ms`) are absent, as empty rollup buckets are. `incidents` in any order; open ones
// last until `now_ms`.
std::vector<UptimeBucket> time_buckets(std::span<const Incident> incidents, int64_t watched_from_ms,
                                       int64_t now_ms, int64_t width_ms, int64_t from_ms, int64_t to_ms);

}  // namespace trainwatch::views
