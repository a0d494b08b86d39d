// Loads the config file and validates what the config component cannot judge on its
// own (each notification provider's keys), so `check`, `serve` and `notify-test` report
// the same FILE:LINE:COL errors.
#pragma once

#include <string>

#include "config/loader.h"

namespace trainwatch::cli {

LoadedConfig load_checked_config(const std::string& path);

}  // namespace trainwatch::cli
