// Monitor dependencies (`depends_on`): which problems a set of monitors' dependencies
// has. Pure, so the config loader (file:line:col errors) and the API's monitor writes
// (problem+json errors) refuse exactly the same things.
//
// A problem points at one entry of one monitor's depends_on list:
//   - the monitor names itself;
//   - it names a monitor that does not exist;
//   - it closes a cycle, named in full: "a -> b -> c -> a" (each cycle once, at the
//     entry that leads back to where the walk entered it).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "config/config.h"

namespace trainwatch {

struct DependencyProblem {
  size_t monitor = 0;   // index into the list given
  size_t entry = 0;     // index into that monitor's depends_on
  std::string message;  // "found ...; expected ...", as config errors read
};

// Every problem, in list order of the monitors (cycles after the per-entry problems).
std::vector<DependencyProblem> dependency_problems(const std::vector<MonitorConfig>& monitors);

}  // namespace trainwatch
