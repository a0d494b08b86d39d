#include "web/static_routes.h"

#include <string>

#include "web/assets.h"

namespace trainwatch::web {
namespace {

using http::Request;
using http::Responder;
using http::Response;

void static_file(const Request& request, const Responder& respond) {
  const std::string name = "static/" + request.params.at("rest");
  auto data = find_asset(name);
  if (!data) return respond(Response::problem(404, "no such file"));
  Response r;
  r.content_type = std::string(content_type_for(name));
  r.body = std::string(*data);
  r.headers.emplace_back("Cache-Control", "max-age=3600");
  respond(std::move(r));
}

}  // namespace

void add_static_routes(http::Router& router) {
  const std::vector<std::string> get = {"GET", "HEAD"};
  router.add(get, "/static/{rest...}",
             [](const Request& r, const Responder& respond) { static_file(r, respond); });
}

}  // namespace trainwatch::web
