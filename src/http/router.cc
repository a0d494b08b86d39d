#include <algorithm>

#include "http/server.h"

namespace trainwatch::http {
namespace {

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> segments;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end > start) segments.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  return segments;
}

bool is_capture(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

bool is_rest_capture(std::string_view segment) {
  return is_capture(segment) && segment.size() > 5 && segment.substr(segment.size() - 4) == "...}";
}

// Matches a request path against a route's segments, filling captures on success.
bool match(const std::vector<std::string>& pattern, const std::vector<std::string>& path,
           std::map<std::string, std::string>& params) {
  params.clear();
  for (size_t i = 0; i < pattern.size(); ++i) {
    const std::string& want = pattern[i];
    if (is_rest_capture(want)) {
      if (i >= path.size()) return false;
      std::string rest;
      for (size_t j = i; j < path.size(); ++j) rest += (j == i ? "" : "/") + path[j];
      params[want.substr(1, want.size() - 5)] = rest;
      return true;
    }
    if (i >= path.size()) return false;
    if (is_capture(want)) {
      params[want.substr(1, want.size() - 2)] = path[i];
    } else if (want != path[i]) {
      return false;
    }
  }
  return pattern.size() == path.size();
}

}  // namespace

void Router::add(std::string method, const std::string& pattern, Handler handler) {
  routes_.push_back(Route{std::move(method), split_path(pattern), std::move(handler)});
}

void Router::add(const std::vector<std::string>& methods, const std::string& pattern,
                 const Handler& handler) {
  for (const auto& method : methods) add(method, pattern, handler);
}

void Router::dispatch(Request& request, Responder respond) const {
  const auto path = split_path(request.path);
  bool path_known = false;
  std::map<std::string, std::string> params;
  for (const Route& route : routes_) {
    if (!match(route.segments, path, params)) continue;
    path_known = true;
    if (route.method != request.method) continue;
    request.params = std::move(params);
    route.handler(request, std::move(respond));
    return;
  }
  if (path_known) {
    respond(Response::problem(405, "method " + request.method + " is not allowed on " + request.path));
  } else {
    respond(Response::problem(404, "no resource at " + request.path));
  }
}

}  // namespace trainwatch::http
