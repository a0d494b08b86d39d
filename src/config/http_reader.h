// Reader of `type: http` monitors: URL, method, headers, body, redirects, TLS
// verification, keywords and conditions, every key checked at load with a file:line:col
// message, so a checker never meets a bad spec. Used only by the config loader.
#pragma once

#include "config/config.h"
#include "config/yaml_reader.h"

namespace trainwatch::config_detail {

void read_http(Section& s, MonitorConfig& m);

}  // namespace trainwatch::config_detail
