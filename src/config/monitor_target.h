// describe_target: the one text that says what a monitor watches, as its reader may see
// it. Lists, the API, status pages and alerts all show a monitor's target through it:
//   http       the URL; for Audience::kPublic without credentials or query (redact_url)
//   tcp, tls   host:port
//   dns        "api.internal A @127.0.0.1:5353", or "api.internal A" for the system's resolver
//   icmp       the host
//   heartbeat  "/ping/" and the token's first four characters: the token is a secret
//              (whoever has it can ping), its start tells two heartbeats apart
//   job        the job's API path
// Alerts are read by everyone in the team's channels, wider than the admins: they take
// the kPublic form.
#pragma once

#include <string>

#include "config/config.h"
#include "core/redaction.h"

namespace trainwatch {

std::string describe_target(const MonitorConfig& monitor, Audience audience);

}  // namespace trainwatch
