// Reading typed query parameters; a bad value is a 400 problem naming the parameter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/result.h"
#include "http/server.h"

namespace trainwatch::api {

// The parameter as an integer in [min, max]; `fallback` when absent.
Result<int64_t> int_param(const http::Request& request, const std::string& name, int64_t fallback,
                          int64_t min, int64_t max);
// A page of a newest-first list: ?limit= (1..max_limit, default 50) and ?before= (an id).
struct PageParams {
  int limit = 50;
  std::optional<int64_t> before_id;
};
Result<PageParams> page_params(const http::Request& request, int64_t max_limit);

// The parameter as an RFC 3339 time or milliseconds since the epoch; nullopt when absent.
Result<std::optional<int64_t>> time_ms_param(const http::Request& request, const std::string& name);

}  // namespace trainwatch::api
