#include "api/query_params.h"

#include <charconv>

#include "core/time_format.h"

namespace trainwatch::api {
namespace {

std::optional<int64_t> parse_int(const std::string& text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

Result<int64_t> int_param(const http::Request& request, const std::string& name, int64_t fallback,
                          int64_t min, int64_t max) {
  auto it = request.query.find(name);
  if (it == request.query.end()) return fallback;
  auto value = parse_int(it->second);
  if (!value || *value < min || *value > max) {
    return make_error("api.bad_param", "query parameter '" + name + "' is '" + it->second +
                                           "'; expected a whole number from " + std::to_string(min) + " to " +
                                           std::to_string(max));
  }
  return *value;
}

Result<PageParams> page_params(const http::Request& request, int64_t max_limit) {
  PageParams page;
  auto limit = int_param(request, "limit", 50, 1, max_limit);
  if (!limit) return limit.error();
  page.limit = static_cast<int>(*limit);
  if (request.query.count("before") != 0) {
    auto before = int_param(request, "before", 0, 1, INT64_MAX);
    if (!before) return before.error();
    page.before_id = *before;
  }
  return page;
}

Result<std::optional<int64_t>> time_ms_param(const http::Request& request, const std::string& name) {
  auto it = request.query.find(name);
  if (it == request.query.end()) return std::optional<int64_t>();
  if (auto ms = parse_int(it->second)) return std::optional<int64_t>(*ms);
  if (auto t = parse_rfc3339(it->second)) return std::optional<int64_t>(to_unix_ms(*t));
  return make_error("api.bad_param", "query parameter '" + name + "' is '" + it->second +
                                         "'; expected an RFC 3339 time such as 2026-11-29T09:00:00Z or "
                                         "milliseconds since the epoch");
}

}  // namespace trainwatch::api
