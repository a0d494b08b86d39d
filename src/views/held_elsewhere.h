// Reads of a job on a replica that does not hold it (jobs/job_peers.h): only the job's
// owner and standby apply its reports, so only they know its state now. Such a read is
// sent, as it came, to them, and their answer is the answer: a job looks the same through
// every replica, and none shows a state it stopped following.
#pragma once

#include <string>

#include "http/server.h"
#include "jobs/job_peers.h"

namespace trainwatch::views {

// True when the read went to the job's holders (`respond` is then called later, from a
// JobPeers thread): `peers` is set, the request did not come from another replica, and
// this replica does not hold `job`. When no holder answers: 503, saying so.
bool read_from_holders(jobs::JobPeers* peers, const std::string& job, const http::Request& request,
                       const http::Responder& respond);

}  // namespace trainwatch::views
