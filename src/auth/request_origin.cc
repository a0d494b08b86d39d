#include "auth/request_origin.h"

#include <cctype>

namespace trainwatch::auth {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "scheme://host[:port]" lower-cased, with the scheme's default port removed.
std::string normalized(std::string_view origin) {
  std::string o = lower(origin);
  while (!o.empty() && o.back() == '/') o.pop_back();
  auto drop_default_port = [&](std::string_view scheme, std::string_view port) {
    if (o.starts_with(scheme) && o.ends_with(port) && o.size() > scheme.size() + port.size())
      o.resize(o.size() - port.size());
  };
  drop_default_port("http://", ":80");
  drop_default_port("https://", ":443");
  return o;
}

}  // namespace

std::string own_origin(std::string_view host, bool https) {
  return normalized(std::string(https ? "https://" : "http://") + std::string(host));
}

std::optional<std::string> cross_origin_refusal(const OriginFacts& facts) {
  if (!facts.origin.empty()) {
    const std::string own = own_origin(facts.host, facts.https);
    if (facts.host.empty() || normalized(facts.origin) != own) {
      return "the request comes from " + std::string(facts.origin) + ", not from this server's own origin " +
             own + " (Origin header); use this server's own pages";
    }
  }
  if (!facts.sec_fetch_site.empty()) {
    const std::string site = lower(facts.sec_fetch_site);
    if (site != "same-origin" && site != "none") {
      return "the browser says the request comes from another origin (Sec-Fetch-Site: " +
             std::string(facts.sec_fetch_site) + "); use this server's own pages";
    }
  }
  return std::nullopt;
}

}  // namespace trainwatch::auth
