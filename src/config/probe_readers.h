// Readers of the network probe monitor types, `type: dns` and `type: icmp`: every key
// checked at load with a file:line:col message, so a checker never meets a bad spec.
#pragma once

#include "config/config.h"
#include "config/yaml_reader.h"

namespace trainwatch::config_detail {

void read_dns(Section& s, MonitorConfig& m);
void read_icmp(Section& s, MonitorConfig& m);

}  // namespace trainwatch::config_detail
