// Readers of training jobs: `type: job` monitors and the `jobs:` section (auto-created
// jobs, their token and notify list), both with `thresholds:`. Used only by the config
// loader; check_jobs_notify runs once `notifications` is read.
#pragma once

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/yaml_reader.h"

namespace trainwatch::config_detail {

void read_job(Section& s, MonitorConfig& m);
void read_jobs(Diagnostics& diag, const YAML::Node& node, JobsConfig& out);
void check_jobs_notify(Diagnostics& diag, const YAML::Node& root, const Config& config);

}  // namespace trainwatch::config_detail
