// The one rule for the names people give things: monitors (jobs included), notification
// channels, status-page slugs, and the job a training process reports under. A name is a
// URL path segment (/api/v1/jobs/{name}/report) and, for a job, a directory name on every
// node, so the rule is the strictest of those uses: 1 to kMaxNameLength of [a-z0-9._-],
// not starting with '.' ("." and ".." name directories). Pure; any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace trainwatch {

inline constexpr size_t kMaxNameLength = 63;

bool valid_name(std::string_view name);

// Why `name` breaks the rule, worded to follow "found '<name>'; " in an error message:
// "expected lower-case letters, digits, '.', '_' or '-'". Empty when the name is valid.
std::string name_problem(std::string_view name);

}  // namespace trainwatch
