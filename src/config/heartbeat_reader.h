// Reader of `type: heartbeat` monitors: a period or a cron schedule (with its tz), the
// grace, the ping token and the ping body limit, every key checked at load with a
// file:line:col message. Used only by the config loader.
#pragma once

#include "config/config.h"
#include "config/yaml_reader.h"

namespace trainwatch::config_detail {

void read_heartbeat(Section& s, MonitorConfig& m);

}  // namespace trainwatch::config_detail
