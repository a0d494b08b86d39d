// What a monitor's dependencies (MonitorConfig::depends_on) say about its failure. Pure:
// the caller says which monitors are DOWN now.
//
// Example: node-3-health depends on [llama-job]. llama-job is DOWN when node-3-health's
// failures open an incident: explaining_parent() answers "llama-job", the incident is
// stored as caused by it, and alerting stays quiet for it (alerting/dependency_rule.h).
// Had llama-job been up, the answer is "": the incident is node-3-health's own.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace trainwatch::engine {

// The first of `depends_on` that is DOWN now; "" when none is.
std::string explaining_parent(const std::vector<std::string>& depends_on,
                              const std::function<bool(const std::string&)>& is_down);

}  // namespace trainwatch::engine
