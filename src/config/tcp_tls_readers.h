// Readers of the monitor types that connect to a host and port: `type: tcp` (the port
// accepts connections) and `type: tls` (the certificate served there, and when it
// expires). Every key checked at load with a file:line:col message. Used only by the
// config loader.
#pragma once

#include "config/config.h"
#include "config/yaml_reader.h"

namespace trainwatch::config_detail {

void read_tcp(Section& s, MonitorConfig& m);
void read_tls(Section& s, MonitorConfig& m);

}  // namespace trainwatch::config_detail
