#include "config/tcp_tls_readers.h"

#include <algorithm>
#include <utility>

#include "core/duration.h"

namespace trainwatch::config_detail {

void read_tcp(Section& s, MonitorConfig& m) {
  TcpCheckSpec spec;
  if (auto host = s.string("host", true)) spec.host = *host;
  if (auto port = s.integer("port", 1, 65535)) {
    spec.port = static_cast<uint16_t>(*port);
  } else if (!s.has("port")) {
    s.diag().error(s.mark(), s.key_path("port"), "missing; expected a port number from 1 to 65535");
  }
  m.spec = spec;
}

void read_tls(Section& s, MonitorConfig& m) {
  TlsCheckSpec spec;
  if (auto host = s.string("host", true)) spec.host = *host;
  if (auto port = s.integer("port", 1, 65535)) {
    spec.port = static_cast<uint16_t>(*port);
  } else if (!s.has("port")) {
    s.diag().error(s.mark(), s.key_path("port"),
                   "missing; expected the port TLS is served on, such as 443, from 1 to 65535");
  }
  if (auto name = s.string("server_name")) spec.server_name = *name;
  if (auto file = s.string("ca_file")) spec.ca_file = *file;
  const auto down_before = s.duration("down_before");
  if (down_before) spec.down_before = *down_before;
  // Unset, the warning starts two weeks ahead, or with the DOWN when that is set earlier.
  spec.warn_before = std::max(spec.warn_before, spec.down_before);
  if (auto warn_before = s.duration("warn_before")) {
    if (*warn_before < spec.down_before) {
      s.diag().error(s.raw("warn_before").Mark(), s.key_path("warn_before"),
                     "found " + format_duration_config(*warn_before) + ", less than down_before " +
                         format_duration_config(spec.down_before) +
                         "; expected at least down_before (the warning comes before the DOWN)");
    }
    spec.warn_before = *warn_before;
  }
  m.spec = std::move(spec);
}

}  // namespace trainwatch::config_detail
