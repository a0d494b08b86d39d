#include "config/http_reader.h"

#include <set>
#include <string>
#include <utility>

#include <boost/url/parse.hpp>

#include "config/condition.h"
#include "config/conditions_reader.h"

namespace trainwatch::config_detail {
namespace {

// Plain HTTP has no certificate: [CERTIFICATE_EXPIRATION] there would always fail, so it
// is refused at load, where the URL can be corrected.
void refuse_certificate_conditions(Section& s) {
  const YAML::Node list = s.raw("conditions");
  if (!list.IsSequence()) return;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].IsScalar()) continue;
    auto condition = Condition::parse(list[i].Scalar());
    if (!condition || !condition->reads_certificate_expiration()) continue;
    s.diag().error(list[i].Mark(), s.key_path("conditions") + "[" + std::to_string(i) + "]",
                   "found [CERTIFICATE_EXPIRATION] on an http:// url, which has no certificate; "
                   "expected an https:// url");
  }
}

}  // namespace

void read_http(Section& s, MonitorConfig& m) {
  HttpCheckSpec spec;
  if (auto url = s.string("url", true)) {
    auto parsed = boost::urls::parse_uri(*url);
    if (!parsed || (parsed->scheme() != "http" && parsed->scheme() != "https") || parsed->host().empty()) {
      s.diag().error(s.raw("url").Mark(), s.key_path("url"),
                     "found '" + *url + "'; expected an http:// or https:// URL with a host");
    }
    spec.url = *url;
  }
  if (auto method = s.string("method")) {
    static const std::set<std::string> kMethods = {"GET",   "HEAD",   "POST",   "PUT",
                                                   "PATCH", "DELETE", "OPTIONS"};
    if (kMethods.count(*method) == 0) {
      s.diag().error(s.raw("method").Mark(), s.key_path("method"),
                     "found '" + *method + "'; expected GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS");
    }
    spec.method = *method;
  }
  if (YAML::Node headers = s.raw("headers"); headers.IsDefined() && !headers.IsNull()) {
    if (!headers.IsMap()) {
      s.diag().error(headers.Mark(), s.key_path("headers"),
                     describe(headers) + "; expected a mapping of header names to values");
    } else {
      for (auto it = headers.begin(); it != headers.end(); ++it) {
        std::string key = s.key_path("headers") + "." + it->first.Scalar();
        if (!it->second.IsScalar()) {
          s.diag().error(it->second.Mark(), key, describe(it->second) + "; expected a string");
          continue;
        }
        spec.headers.emplace_back(it->first.Scalar(), s.diag().expand(it->second, key));
      }
    }
  }
  if (auto body = s.string("body")) spec.body = *body;
  if (auto b = s.boolean("follow_redirects")) spec.follow_redirects = *b;
  if (auto b = s.boolean("tls_verify")) spec.tls_verify = *b;
  if (auto k = s.string("keyword")) spec.keyword = *k;
  if (auto k = s.string("keyword_absent")) spec.keyword_absent = *k;
  config_detail::read_conditions(s, "http",
                                 {"[STATUS]", "[RESPONSE_TIME]", "[BODY]", "[CERTIFICATE_EXPIRATION]"},
                                 /*json_paths=*/true, spec.conditions);
  if (spec.url.starts_with("http://")) refuse_certificate_conditions(s);
  m.spec = std::move(spec);
}

}  // namespace trainwatch::config_detail
