// StoreOutages: the spans in which this process's store could not take or show pings
// (writes refused or late, stored pings unreadable), observed once a second by the engine.
// A heartbeat pinged then was refused by the server, not missed by its sender: its
// deadline moves by the outage (heartbeat/rules.h, move_deadlines), and while one lasts
// no deadline is judged (the pings that would clear it may be the ones refused). Pure:
// observations in, ended spans out.
//
// Bound: the kKept most recent ended spans (a replica that takes a heartbeat over moves
// its restored deadline by them); older ones are forgotten.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>

#include "core/clock.h"

namespace trainwatch::engine {

struct OutageSpan {
  MonoTime from{};
  MonoTime to{};
};

class StoreOutages {
 public:
  static constexpr size_t kKept = 64;

  // Whether the store is out at `now`; the span that ends with this observation, if any.
  // `since`: when the trouble seen now began, if earlier than `now` (a write that has
  // waited 5 s on a locked table was held from its start, not from when it counted as
  // late); an outage that lasts starts at the earliest such time.
  std::optional<OutageSpan> observe(bool out, MonoTime now, MonoTime since);
  // Out since, while an outage lasts.
  std::optional<MonoTime> out_since() const { return began_; }
  // The ended spans, oldest first.
  const std::deque<OutageSpan>& ended() const { return ended_; }

 private:
  std::optional<MonoTime> began_;
  std::deque<OutageSpan> ended_;
};

}  // namespace trainwatch::engine
