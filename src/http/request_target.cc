#include "http/request_target.h"

#include <boost/url/parse.hpp>

namespace trainwatch::http {

bool parse_target(Request& request) {
  auto url = boost::urls::parse_origin_form(request.target);
  if (!url) return false;
  request.path = url->path();
  for (auto param : url->params()) request.query[param.key] = param.value;
  return true;
}

}  // namespace trainwatch::http
