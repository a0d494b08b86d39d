// What a reload must not do by accident: empty the installation. Editors and config tools
// often truncate a file before they write it, so a SIGHUP that lands in between reads a
// file with no monitors at all; applying it would delete every file monitor's schedule
// and make every ping URL answer 404. An operator who means it says so in the file:
// `monitors: []` is an explicit, empty list and is applied.
//
// The empty file itself (nothing but white space and comments) is refused by the loader,
// at start as well (load_config_text); this guard adds the rule that needs the running
// config: the `monitors:` key gone while the running file has monitors.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "config/loader.h"

namespace trainwatch {

// Why `next` (loaded without errors) may not replace a running file config that has
// `running_file_monitors` monitors, or nullopt when it may.
std::optional<std::string> reload_refusal(size_t running_file_monitors, const LoadedConfig& next);

// For `trainwatch check`, which does not know the running config: a warning when the file
// has no `monitors:` key (a server whose file has monitors would refuse it on reload).
std::optional<std::string> missing_monitors_warning(const LoadedConfig& loaded);

}  // namespace trainwatch
