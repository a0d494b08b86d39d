// Loads the config file and validates what the config component cannot judge on its
// own (each notification provider's keys), so `check`, `serve` and `notify-test` report
// the same FILE:LINE:COL errors.
#pragma once

#include <string>

#include "config/loader.h"

namespace trainwatch::cli {

// The file `serve`, `check` and `notify-test` read when given none: where the Debian package
// and `cmake --install` under /usr put the server's config (deploy/config/trainwatch.yaml),
// so an operator edits one file. Fixed, not the install prefix's etc/: the path the docs,
// the unit and an operator's habit name is the same on every machine.
inline constexpr const char* kInstalledConfigPath = "/etc/trainwatch/trainwatch.yaml";

LoadedConfig load_checked_config(const std::string& path);

}  // namespace trainwatch::cli
