// Times as the API and messages show them: RFC 3339 in UTC with milliseconds,
// "2026-11-29T09:41:07.250Z".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"

namespace trainwatch {

std::string format_rfc3339(SystemTime t);
std::optional<SystemTime> parse_rfc3339(std::string_view text);

}  // namespace trainwatch
