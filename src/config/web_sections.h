// Reads the `status_pages`, `auth` and `retention` sections into a Config. Used only by
// the config loader, after `monitors` is read (status pages name monitors).
#pragma once

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/yaml_reader.h"

namespace trainwatch::config_detail {

void read_status_pages(Diagnostics& diag, const YAML::Node& node, const std::vector<MonitorConfig>& monitors,
                       std::vector<StatusPageConfig>& out);
void read_auth(Diagnostics& diag, const YAML::Node& node, AuthConfig& out);
void read_retention(Diagnostics& diag, const YAML::Node& node, RetentionConfig& out);

}  // namespace trainwatch::config_detail
