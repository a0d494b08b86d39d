// The rule for a DNS name a dns monitor asks for (RFC 1035 section 2.3.4): labels of 1 to
// kMaxDnsLabelLength characters separated by dots, kMaxDnsNameLength characters in all,
// one optional trailing dot. Characters are those host names and service labels use
// (letters, digits, '-', '_') plus '*' for wildcard owners, so that whatever passes can
// be written on the wire without escapes. Pure; any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace trainwatch {

inline constexpr size_t kMaxDnsNameLength = 253;  // without the trailing dot; 255 bytes on the wire
inline constexpr size_t kMaxDnsLabelLength = 63;

// Why `name` breaks the rule, worded to follow "found '<name>'; " in an error message:
// "expected labels of at most 63 characters; label 2 has 70". Empty when it is valid.
std::string dns_name_problem(std::string_view name);

// The name without its trailing dot, as it is compared and shown.
std::string_view dns_name_without_root(std::string_view name);

}  // namespace trainwatch
