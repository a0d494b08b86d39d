#include "http/request_target.h"

#include <boost/url/parse.hpp>

#include <string_view>

namespace trainwatch::http {
namespace {

// RFC 3986's pchar without "%" (pct-encoded), plus "/": a path made only of these means
// the same decoded as sent.
bool plain_path_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("-._~!$&'()*+,;=:@/").find(c) != std::string_view::npos;
}

// A path with no escapes and no query (every ping URL, most of the API) is its own
// decoded form: taken as it is. Boost.URL's parse, decode and copy cost a ping more than
// its routing (callgrind), for the same result.
bool is_plain_path(std::string_view target) {
  if (target.empty() || target.front() != '/') return false;
  for (char c : target) {
    if (!plain_path_char(c)) return false;
  }
  return true;
}

}  // namespace

bool parse_target(Request& request) {
  if (is_plain_path(request.target)) {
    request.path = request.target;
    return true;
  }
  auto url = boost::urls::parse_origin_form(request.target);
  if (!url) return false;
  request.path = url->path();
  for (auto param : url->params()) request.query[param.key] = param.value;
  return true;
}

}  // namespace trainwatch::http
