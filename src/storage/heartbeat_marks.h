// The stored pings a heartbeat monitor's deadlines are rebuilt from (Store::heartbeat_marks):
// a header of its own so that the heartbeat rules read this one row type without the
// whole store interface (storage/store.h).
#pragma once

#include <optional>

#include "core/clock.h"
#include "core/ping.h"

namespace trainwatch {

// What a heartbeat monitor's deadlines are rebuilt from after a restart.
struct HeartbeatMarks {
  std::optional<PingRecord> last_ping;    // the newest ping of any kind
  std::optional<PingRecord> last_finish;  // the newest success, fail or exit code
  std::optional<SystemTime> open_start;   // the newest start newer than last_finish
};

}  // namespace trainwatch
