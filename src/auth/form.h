// Parsing what browsers send: application/x-www-form-urlencoded bodies and Cookie headers.
// Both are bounded by the HTTP server's body and header limits; a malformed escape is
// kept as written rather than rejected (the caller validates the values it needs).
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace trainwatch::auth {

std::map<std::string, std::string> parse_form(std::string_view body);
// The value of one cookie from a Cookie header; "" when absent.
std::string cookie_value(std::string_view cookie_header, std::string_view name);

}  // namespace trainwatch::auth
