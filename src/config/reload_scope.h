// Which keys of the file a reload (SIGHUP) applies, and which are read only when `serve`
// starts. A reload that quietly kept a changed key would tell the operator the file is in
// force when it is not, so each key read only at start is named when it changes.
//
// Read only at start (a restart applies them):
//   server.listen, server.data_dir, server.advertise, server.max_connections,
//   server.max_connections_per_address: the listening socket, the SQLite file and the
//     connection budget are made once;
//   store.url: the store is opened once;
//   auth.oidc: the single sign-on client is built once with its provider's settings.
// Everything else is applied by the reload: monitors, notifications, maintenance, status
// pages, auth tokens, users and session_ttl, jobs.*, retention.raw (the next prune uses
// it), server.max_checks_in_flight and server.allow_local_channel_targets.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace trainwatch {

// The keys read only at start whose value in `next` differs from the running one, in the
// order the file documents them; empty when the reload applies all of `next`.
std::vector<std::string> keys_needing_restart(const Config& running, const Config& next);

}  // namespace trainwatch
