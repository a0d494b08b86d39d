// A heartbeat's cron schedule as the config holds it: the expression as written, parsed,
// and the zone it is read in. A value; copies share cctz's zone data, which never changes.
#pragma once

#include <optional>
#include <string>

#include <cctz/time_zone.h>

#include "core/clock.h"
#include "cron/expression.h"
#include "cron/next_fire.h"

namespace trainwatch::cron {

struct Schedule {
  std::string text;               // as written: "0 3 * * *"
  std::string zone_name = "UTC";  // as written: "Europe/Berlin"
  Expression expression;
  cctz::time_zone zone = cctz::utc_time_zone();

  // The first fire time strictly after `t` (next_fire.h); nullopt only for an expression
  // that never fires, which the config loader refuses.
  std::optional<SystemTime> next_after(SystemTime t) const { return next_fire(expression, zone, t); }

  // Same schedule: same text in the same zone (the parse is a function of the text).
  bool operator==(const Schedule& o) const { return text == o.text && zone_name == o.zone_name; }
};

}  // namespace trainwatch::cron
