// The system's resolver, as /etc/resolv.conf names it: what a dns monitor without a
// `resolver:` asks. Pure: the caller reads the file (kResolvConfPath) on each check, so an
// edited file counts from the next check on.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace trainwatch::checks {

inline constexpr const char* kResolvConfPath = "/etc/resolv.conf";

// The address of the first `nameserver` line ("10.255.255.53", "::1"); comments start
// with '#' or ';'. Nothing when no line names one.
std::optional<std::string> first_nameserver(std::string_view resolv_conf);

}  // namespace trainwatch::checks
