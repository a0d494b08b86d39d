// Reads the alerting keys of the config file: `notifications:`, `maintenance:` and each
// monitor's `notify`, `notify_after`, `remind_every`. Used only by the config loader.
#pragma once

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/yaml_reader.h"

namespace trainwatch::config_detail {

void read_notifications(Diagnostics& diag, const YAML::Node& node, std::vector<ChannelConfig>& out);
void read_maintenance(Diagnostics& diag, const YAML::Node& node, std::vector<MaintenanceWindow>& out);
void read_monitor_alerting(Section& s, MonitorConfig& m);

// Every name in a monitor's `notify` and a window's `monitors` must exist.
void check_alerting_references(Diagnostics& diag, const YAML::Node& root, const Config& config);

}  // namespace trainwatch::config_detail
