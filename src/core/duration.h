// Durations as people write them in config ("500ms", "30s", "5m", "1h", "1d") and as
// they read them in messages ("2h 1m", "45s", "750ms").
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"

namespace trainwatch {

// Parses one number followed by one unit (ms, s, m, h, d). Returns nullopt for anything
// else, including negative numbers, missing units, and values over 365 days.
std::optional<Millis> parse_duration(std::string_view text);

// The two largest non-zero units: "2h 1m", "3d 4h", "45s", "750ms", "0s".
std::string format_duration(Millis d);

// Config spelling, exact and shortest: 90000ms -> "90s", 3600000 -> "1h".
std::string format_duration_config(Millis d);

}  // namespace trainwatch
